#include "bench_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>
#include <type_traits>

#include "sap/mjcf.hpp"
#include "sap/model_builder.hpp"
#include "sap/simulator.hpp"

namespace sap::bench {

// ---------------------------------------------------------------------------------------------
// Arguments

std::string ArgReader::next() {
  std::string a = args_[i_++];
  inline_ = {};
  // "--name=value": split, unless the argument is a bare "--".
  if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
    const std::size_t eq = a.find('=');
    if (eq != std::string::npos) {
      inline_.has_value = true;
      inline_.text = a.substr(eq + 1);
      a.resize(eq);
    }
  }
  return a;
}

std::string ArgReader::value(const std::string& option) {
  if (inline_.has_value) {
    inline_.has_value = false;
    return inline_.text;
  }
  if (i_ >= args_.size()) throw UsageError("option " + option + " expects a value");
  return args_[i_++];
}

long long parse_int(const std::string& option, const std::string& text, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)
    throw UsageError("option " + option + ": expected an integer, got '" + text + "'");
  if (v < lo || v > hi)
    throw UsageError("option " + option + ": expected an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + text);
  return v;
}

double parse_double(const std::string& option, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw UsageError("option " + option + ": expected a finite number, got '" + text + "'");
  if (v < lo || v > hi) {
    std::ostringstream s;
    s << "option " << option << ": expected a number in [" << lo << ", " << hi << "], got " << text;
    throw UsageError(s.str());
  }
  return v;
}

std::vector<int> parse_int_list(const std::string& option, const std::string& text, int lo, int hi) {
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.push_back(static_cast<int>(parse_int(option, item, lo, hi)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::pair<std::string, std::string> parse_key_value(const std::string& option, const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("option " + option + ": expected key=value, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// ---------------------------------------------------------------------------------------------
// Scenes

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// A bare MJCF model as a scene (load_mjcf): the file's time step (<option timestep>), one
// world, the model's reference configuration qpos0 at rest (or a keyframe's qpos), constant
// controls (zero, or the keyframe's ctrl), the default solver options (approx32) and a contact
// capacity from estimate_contact_capacity (Simulator's default when max_rigid_contact is 0).
Scene mjcf_scene(const std::string& path, const SceneLoadOptions& o) {
  ImportReport report;
  ImportOptions io;
  io.drop_unsupported = o.drop_unsupported;
  Scene s = load_mjcf(path, &report, io);
  if (!o.keyframe.empty()) {
    const ImportReport::Keyframe* key = nullptr;
    std::string names;
    for (const auto& k : report.keyframes) {
      if (k.name == o.keyframe) key = &k;
      names += (names.empty() ? "" : ", ") + k.name;
    }
    if (!key)
      throw UsageError("option --keyframe: " + path + " has no keyframe '" + o.keyframe +
                       "' (it has: " + (names.empty() ? std::string("none") : names) + ")");
    if (key->qpos.size() == s.qpos0.size()) {
      // The keyframe is the stated initial state: its own note on the joint limits replaces qpos0's.
      s.qpos0 = key->qpos;
      s.warnings.erase(std::remove_if(s.warnings.begin(), s.warnings.end(),
                                      [](const std::string& w) {
                                        return w.find(kInitialStateLimitsNote) != std::string::npos;
                                      }),
                       s.warnings.end());
      const std::string note = initial_state_limits_note(s.model, s.qpos0, path + " keyframe '" + o.keyframe + "'");
      if (!note.empty()) s.warnings.push_back(note);
    }
    for (std::size_t i = 0; i < key->ctrl.size() && i < s.controls.size(); ++i) s.controls[i].value = key->ctrl[i];
  }
  return s;
}

}  // namespace

// A bare URDF model as a scene, with the defaults of an MJCF one (above): dt 0.002 (URDF has
// no time step), zero controls (URDF declares no actuators); no floor unless --ground adds one
// (URDF has none; a JSON scene with a ground plane gives full control). A URDF states no initial
// configuration: load_urdf starts at zero, except for hinge/slide joints whose zero lies outside
// their range, which start at the nearest limit, with a note (sap/scene.hpp; Kinova Jaco's
// joints 2, 3 and 5 have ranges [0.82, 5.46], [0.33, 5.95], [0.52, 5.76] rad: at zero the arm
// is folded into itself, 37 contacts up to 7 cm deep, and diverges on every preset).
Scene urdf_scene(const std::string& path, const SceneLoadOptions& o) {
  ImportReport report;
  ImportOptions io;
  io.drop_unsupported = o.drop_unsupported;
  Scene s = load_urdf(path, &report, io, o.floating_base);
  const std::vector<double> start = s.qpos0;
  const std::vector<std::string> notes = s.warnings;
  double lift = 0;
  if (o.ground) {
    // --ground: the lowest point of the geoms' bounding spheres at qpos0 decides where the plane
    // goes: a floating robot is lifted so that it rests on z = 0 (its root's z in qpos0); a
    // fixed one keeps its base where the file puts it, with the plane at z = min(0, lowest).
    double zmin = 0;
    if (s.model.ngeom > 0) {
      Scene probe;
      probe.model = s.model;
      probe.dt = 0.002;
      probe.num_worlds = 1;
      probe.qpos0 = start;
      probe.qvel0.assign(static_cast<std::size_t>(s.model.nv), 0.0);
      SimulatorOptions so;
      so.nworld = 1;
      so.backend = Backend::CPU;
      so.threads = 1;
      Simulator sim(probe, so);
      sim.reset();
      const std::vector<double> bp = sim.body_pos(0), bq = sim.body_quat(0);
      zmin = std::numeric_limits<double>::infinity();
      for (int g = 0; g < s.model.ngeom; ++g) {
        const std::size_t gi = static_cast<std::size_t>(g), b = static_cast<std::size_t>(s.model.geom_bodyid[gi]);
        const double w = bq[4 * b], u[3] = {bq[4 * b + 1], bq[4 * b + 2], bq[4 * b + 3]};
        const double* v = &s.model.geom_pos[3 * gi];
        // z of R(q) v = v + 2w (u x v) + 2 u x (u x v)
        const double uxv[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        const double z = v[2] + 2 * w * uxv[2] + 2 * (u[0] * uxv[1] - u[1] * uxv[0]);
        zmin = std::min(zmin, bp[3 * b + 2] + z - s.model.geom_rbound[gi]);
      }
    }
    ModelBuilder b;
    GeomSpec plane;
    plane.name = "ground";
    plane.type = kGeomPlane;
    plane.stiffness = 1e12;  // rigid, as the importers' static geoms (docs/model-import.md)
    plane.friction = 1.0;
    if (!o.floating_base) plane.pos = {0, 0, std::min(0.0, zmin)};
    lift = o.floating_base ? -zmin : 0;
    b.add_geom(0, plane);
    ImportReport again;
    add_urdf(path, b, &again, io, o.floating_base);
    s.model = b.finalize();
  }
  s.source = path;
  s.name = std::filesystem::path(path).stem().string();
  s.description = "URDF model " + path;
  s.dt = 0.002;
  s.num_worlds = 1;
  s.qpos0 = start;
  if (o.floating_base && s.model.nq >= 3) s.qpos0[2] += lift;  // the root's free joint comes first
  s.qvel0.assign(static_cast<std::size_t>(s.model.nv), 0.0);
  s.controls.assign(static_cast<std::size_t>(s.model.nu), ControlSchedule{});
  s.warnings = notes;
  return s;
}

Scene load_bench_scene(const std::string& path, const SceneLoadOptions& o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error("scene file '" + path +
                             "' not found (expected a JSON scene, e.g. scenes/box_stack_5.json, "
                             "or an MJCF .xml file)");
  Scene s;
  if ((o.floating_base || o.ground) && !ends_with(path, ".urdf"))
    throw UsageError("options --floating-base and --ground apply to URDF (.urdf) files only");
  if (ends_with(path, ".xml")) {
    s = mjcf_scene(path, o);
  } else if (ends_with(path, ".urdf")) {
    if (!o.keyframe.empty()) throw UsageError("option --keyframe applies to MJCF (.xml) files only");
    s = urdf_scene(path, o);
  } else {
    if (!o.keyframe.empty())
      throw UsageError(
          "option --keyframe applies to MJCF (.xml) files only; JSON scenes name their keyframe in their assets");
    if (o.drop_unsupported)
      throw UsageError("option --drop-unsupported applies to MJCF (.xml) and URDF (.urdf) files only; JSON scenes set it per asset");
    s = load_scene(path);
  }
  if (o.dt > 0) s.dt = o.dt;
  return s;
}

void apply_solver_overrides(SolverOptions& options, const SolverOverrides& o) {
  auto set = [&](const std::string& option, const std::string& key, const std::string& value) {
    try {
      set_solver_option(options, key, value);
    } catch (const std::invalid_argument& e) {
      std::string msg = "option " + option + ": " + e.what();
      const auto& names = solver_option_names();
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        msg += " (known solver options:";
        for (const auto& n : names) msg += " " + n;
        msg += ")";
      }
      throw UsageError(msg);
    }
  };
  if (!o.preset.empty()) set("--preset", "contact_preset_variant", o.preset);
  if (!o.line_search.empty()) set("--line-search", "line_search_variant", o.line_search);
  for (const auto& kv : o.sets) set("--set " + kv.first + "=" + kv.second, kv.first, kv.second);
  try {
    (void)options.resolve();
  } catch (const std::exception& e) {
    throw UsageError(std::string("solver options: ") + e.what());
  }
}

nlohmann::json config_json(const SolverConfig& c) {
  nlohmann::json j;
  j["preset"] = to_string(c.preset);
  // Every option of the table, enumerations by name, numbers and booleans as JSON values.
  visit_solver_config(c, [&](const char* name, const auto& value) {
    if constexpr (std::is_enum_v<std::decay_t<decltype(value)>>) j[name] = to_string(value);
    else j[name] = value;
  });
  return j;
}

// ---------------------------------------------------------------------------------------------
// Host

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) break;
      std::size_t b = colon + 1;
      while (b < line.size() && line[b] == ' ') ++b;
      return line.substr(b);
    }
  }
  return "unknown CPU";
}

int cpu_hardware_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::string iso_time_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Statistics

void IntHistogram::add(int value) {
  if (value < 0) value = 0;
  if (static_cast<std::size_t>(value) >= bins_.size()) bins_.resize(static_cast<std::size_t>(value) + 1, 0);
  ++bins_[static_cast<std::size_t>(value)];
  ++count_;
  sum_ += value;
  max_ = std::max(max_, value);
}

int IntHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  const long long rank = std::max(1LL, static_cast<long long>(std::ceil(p * static_cast<double>(count_))));
  long long seen = 0;
  for (std::size_t v = 0; v < bins_.size(); ++v) {
    seen += bins_[v];
    if (seen >= rank) return static_cast<int>(v);
  }
  return max_;
}

// ---------------------------------------------------------------------------------------------
// Progress

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, long long total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && total > 0 && stderr_is_terminal()) {
  start_ = last_ = std::chrono::steady_clock::now();
}

void Progress::update(long long done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!shown_) {
    // Show only runs expected to last more than ~3 s, judged after the first second.
    if (elapsed < 1.0 || done <= 0) return;
    if (elapsed * static_cast<double>(total_) / static_cast<double>(done) < 3.0) return;
    shown_ = true;
  } else if (std::chrono::duration<double>(now - last_).count() < 0.2) {
    return;
  }
  last_ = now;
  const double frac = static_cast<double>(done) / static_cast<double>(total_);
  const int width = 30;
  const int fill = static_cast<int>(frac * width);
  const double eta = done > 0 ? elapsed * (1.0 / frac - 1.0) : 0.0;
  std::fprintf(stderr, "\r%s [%-*s] %lld/%lld  %.0f s left ", label_.c_str(), width,
               std::string(static_cast<std::size_t>(fill), '#').c_str(), done, total_, eta);
  std::fflush(stderr);
}

void Progress::finish() {
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  shown_ = false;
  enabled_ = false;
}

// ---------------------------------------------------------------------------------------------
// Output

nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

void write_json_file(const std::string& path, const nlohmann::json& j, int indent) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  f << j.dump(indent) << "\n";
  if (!f) throw std::runtime_error("error writing '" + path + "'");
}

void parse_common_option(ArgReader& r, const std::string& a, CommonOptions& o) {
  if (a == "--dt") {
    o.load.dt = parse_double(a, r.value(a), 1e-9, 10.0);
  } else if (a == "--backend") {
    const std::string b = r.value(a);
    try {
      o.backend = parse_backend(b);
    } catch (const std::exception&) {
      throw UsageError("option --backend: expected cpu, cuda or auto, got '" + b + "'");
    }
  } else if (a == "--threads") {
    o.threads = static_cast<int>(parse_int(a, r.value(a), 0, 4096));
  } else if (a == "--emulated-lanes") {
    o.emulated_lanes = static_cast<int>(parse_int(a, r.value(a), 1, 1024));
  } else if (a == "--keyframe") {
    o.load.keyframe = r.value(a);
  } else if (a == "--drop-unsupported") {
    o.load.drop_unsupported = true;
  } else if (a == "--floating-base") {
    o.load.floating_base = true;
  } else if (a == "--ground") {
    o.load.ground = true;
  } else if (a == "--quiet") {
    o.quiet = true;
  } else if (a.size() > 1 && a[0] == '-') {
    throw UsageError("unknown option '" + a + "'");
  } else if (o.scene_path.empty()) {
    o.scene_path = a;
  } else {
    throw UsageError("unexpected argument '" + a + "' (the scene is already '" + o.scene_path + "')");
  }
  if (r.has_inline_value()) throw UsageError("option " + a + " takes no value");
}

void check_common_options(const CommonOptions& o) {
  if (o.scene_path.empty()) throw UsageError("missing SCENE (a JSON scene file or an MJCF .xml file)");
}

void parse_arguments(int argc, char** argv, const char* help, CommonOptions& o,
                     const std::function<bool(ArgReader& r, const std::string& a)>& tool_option) {
  ArgReader r(argc, argv);
  while (!r.done()) {
    const std::string a = r.next();
    if (a == "-h" || a == "--help") print_help_and_exit(help);
    if (!tool_option(r, a)) {
      parse_common_option(r, a, o);
      continue;
    }
    if (r.has_inline_value()) throw UsageError("option " + a + " takes no value");
  }
  check_common_options(o);
}

nlohmann::json record_header(const char* tool, const Scene& scene, const std::string& scene_file) {
  nlohmann::json j;
  j["tool"] = tool;
  j["format_version"] = 1;
  j["date"] = iso_time_now();
  j["scene"] = scene.name;
  j["scene_file"] = scene_file;
  return j;
}

int tool_main(const char* tool, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n(see %s --help)\n", tool, e.what(), tool);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    return 1;
  }
}

void print_help_and_exit(const char* help) {
  std::fputs(help, stdout);
  std::exit(0);
}

}  // namespace sap::bench
