// Shared pieces of sap_bench, sap_ablate and sap_longrun: main()'s error handling and exit
// codes, command-line parsing with clear errors, scene loading (JSON scenes and bare MJCF files),
// solver-option overrides, host information, integer histograms for iteration statistics, and a
// terminal progress bar.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sap/backend/buffer.hpp"
#include "sap/scene.hpp"
#include "sap/solver_options.hpp"

namespace sap::bench {

// A usage error (unknown option, bad number, ...): reported with a pointer to --help, exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The main() of every bench tool: returns run(argc, argv) (0 success; a tool may return other
// codes, e.g. 3 for failed world-steps). A UsageError prints "TOOL: error: WHAT" and
// "(see TOOL --help)" on stderr and gives 2; any other exception prints "TOOL: error: WHAT" and
// gives 1.
int tool_main(const char* tool, int (*run)(int, char**), int argc, char** argv);

// Prints `help` on stdout and exits with 0 (-h, --help).
[[noreturn]] void print_help_and_exit(const char* help);

// Walks argv. Options take their value as the next argument or after '=' (--steps=100).
class ArgReader {
 public:
  ArgReader(int argc, char** argv) : args_(argv + 1, argv + argc) {}
  bool done() const { return i_ >= args_.size(); }
  // Next argument; when it is "--name=value" it returns "--name" and keeps value for value().
  std::string next();
  // The value of the option just returned by next(); throws UsageError when there is none.
  std::string value(const std::string& option);
  bool has_inline_value() const { return inline_.has_value; }

 private:
  struct Inline {
    bool has_value = false;
    std::string text;
  };
  std::vector<std::string> args_;
  std::size_t i_ = 0;
  Inline inline_;
};

// Strict number parsing: the whole text must be a number in [lo, hi]; errors name the option.
long long parse_int(const std::string& option, const std::string& text, long long lo, long long hi);
double parse_double(const std::string& option, const std::string& text, double lo, double hi);
// "1,2,4,8" -> {1, 2, 4, 8}; each entry a positive integer.
std::vector<int> parse_int_list(const std::string& option, const std::string& text, int lo, int hi);

// How a scene file becomes a Scene. JSON scenes go through load_scene; a path ending in .xml is
// an MJCF model wrapped into a scene with the defaults documented in docs/benchmarks.md.
struct SceneLoadOptions {
  double dt = 0;                  // > 0: overrides the scene's time step
  std::string keyframe;           // MJCF only: initial qpos and constant controls from this keyframe
  bool drop_unsupported = false;  // MJCF/URDF only: see ImportOptions::drop_unsupported
  bool floating_base = false;     // URDF only: the root link gets a free joint
  bool ground = false;            // URDF only: a ground plane under the robot (see urdf_scene)
};
Scene load_bench_scene(const std::string& path, const SceneLoadOptions& options);

// Options both executables take: the scene (the one positional argument), --dt, --keyframe,
// --drop-unsupported, --backend, --threads, --quiet.
struct CommonOptions {
  std::string scene_path;
  SceneLoadOptions load;
  Backend backend = Backend::Auto;
  int threads = 0;
  int emulated_lanes = 0;  // > 0: CPU backend with emulated GPU teams (barrier counts, tests)
  bool quiet = false;
};
// Handles argument `a` (just read from r) when it is a common option or the scene; otherwise
// throws UsageError for an unknown option or a second positional argument. Call it last in the
// option chain.
void parse_common_option(ArgReader& r, const std::string& a, CommonOptions& o);
// After the loop: a scene was given.
void check_common_options(const CommonOptions& o);
// The option loop of a tool built on CommonOptions: -h/--help prints `help` and exits 0; every
// other argument goes first to `tool_option`, which returns true when the option is its own
// (reading any value with r.value(a)); an own option that did not read its inline value is an
// error ("--steps" fine, "--quiet=1" not); all else goes to parse_common_option. Ends with
// check_common_options.
void parse_arguments(int argc, char** argv, const char* help, CommonOptions& o,
                     const std::function<bool(ArgReader& r, const std::string& a)>& tool_option);

// Solver overrides from the command line: --preset, --line-search, --set key=value (in order).
struct SolverOverrides {
  std::string preset;       // "" = keep
  std::string line_search;  // "" = keep
  std::vector<std::pair<std::string, std::string>> sets;
  bool any() const { return !preset.empty() || !line_search.empty() || !sets.empty(); }
};
// Splits "key=value"; throws UsageError naming the option when there is no '=' or no key.
std::pair<std::string, std::string> parse_key_value(const std::string& option, const std::string& text);
// Applies the overrides to `options` (set_solver_option) and resolves once so that range errors
// surface before any simulator is built. Errors are UsageError naming the offending option.
void apply_solver_overrides(SolverOptions& options, const SolverOverrides& o);
// Short description of a resolved configuration (preset, precisions, modes, line search).
nlohmann::json config_json(const SolverConfig& c);

// Host information: "model name" of /proc/cpuinfo and the number of hardware threads.
std::string cpu_model_name();
int cpu_hardware_threads();
// Local time, ISO 8601.
std::string iso_time_now();

// Histogram of non-negative integers (iteration counts): mean, percentiles, max.
class IntHistogram {
 public:
  void add(int value);
  long long count() const { return count_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  int max() const { return max_; }
  // Smallest value v such that at least fraction p of the samples are <= v (nearest rank).
  int percentile(double p) const;
  long long sum() const { return sum_; }

 private:
  std::vector<long long> bins_;
  long long count_ = 0, sum_ = 0;
  int max_ = 0;
};

// Progress bar on stderr, drawn only when stderr is a terminal, the caller did not ask for
// quiet, and the run is expected to take more than ~3 s (estimated after 1 s).
class Progress {
 public:
  Progress(std::string label, long long total, bool enabled);
  ~Progress() { finish(); }
  void update(long long done);
  void finish();

 private:
  std::string label_;
  long long total_;
  bool enabled_, shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};
bool stderr_is_terminal();

// The fields every JSON record starts with: tool, format_version (1), date, scene (its name) and
// scene_file (the path as given).
nlohmann::json record_header(const char* tool, const Scene& scene, const std::string& scene_file);
// A JSON number, or null when not finite (JSON has no NaN/Inf).
nlohmann::json finite_or_null(double x);
// Writes `j` to `path` (indent < 0: compact); throws std::runtime_error naming the file on failure.
void write_json_file(const std::string& path, const nlohmann::json& j, int indent = 2);

}  // namespace sap::bench
