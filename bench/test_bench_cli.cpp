// Command-line tests of sap_bench and sap_ablate, run as child processes (and the URDF scene
// builder of bench_common in process): every scene under
// sap_bench for a few steps on the CPU with a self-consistent JSON record, both sap_ablate
// modes with their CSV/JSON outputs, and malformed options (clear message, exit code 1 or 2,
// never a crash).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_common.hpp"
#include "sap/backend/buffer.hpp"
#include "sap/simulator.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ProcResult {
  int exit_code = -1;
  bool signaled = false;
  std::string output;  // stdout and stderr
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

ProcResult run(const std::string& exe, const std::vector<std::string>& args) {
  std::string cmd = quote(exe);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " 2>&1";
  ProcResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.signaled = WIFSIGNALED(st);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string source_dir() { return SAP_SOURCE_DIR; }

std::vector<std::string> scene_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(source_dir() + "/scenes"))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return json::parse(f);
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sap_bench_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Every scene: a few steps on 2 worlds, and a record whose figures agree with each other.

class BenchScene : public ::testing::TestWithParam<std::string> {};

TEST_P(BenchScene, RunsWithSaneRecord) {
  const std::string scene = source_dir() + "/scenes/" + GetParam() + ".json";
  TempDir tmp;
  const std::string out = tmp.file("rec.json");
  const ProcResult r = run(SAP_BENCH_EXE, {scene, "--worlds", "2", "--steps", "5", "--warmup", "1", "--backend", "cpu",
                                           "--json", out, "--quiet"});
  ASSERT_FALSE(r.signaled) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;  // 3 would mean failed worlds or a non-finite state
  const json j = read_json(out);
  std::ifstream sf(scene);
  const json sj = json::parse(sf);

  EXPECT_EQ(j.at("tool"), "sap_bench");
  EXPECT_EQ(j.at("mode"), "single");
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("device").get<std::string>().rfind("CPU", 0), 0u);
  EXPECT_EQ(j.at("nworld"), 2);
  EXPECT_EQ(j.at("steps"), 5);
  EXPECT_EQ(j.at("warmup"), 1);
  const double dt = sj.at("simulation").value("dt", 0.001);
  EXPECT_DOUBLE_EQ(j.at("dt").get<double>(), dt);
  for (const char* k : {"nbody", "nq", "nv", "ngeom", "nu"}) EXPECT_TRUE(j.at("model").contains(k)) << k;

  // Throughput and realtime factors follow from the wall time by their definitions.
  const double wall = j.at("wall_s").get<double>();
  ASSERT_TRUE(std::isfinite(wall) && wall > 0);
  EXPECT_EQ(j.at("repeats"), 1);  // no --min-time: the timed window runs once
  const double ws = j.at("world_steps_per_s").get<double>();
  EXPECT_TRUE(std::isfinite(ws) && ws > 0);
  EXPECT_NEAR(ws, 2.0 * 5.0 / wall, 1e-9 * ws);
  const double rtf1 = j.at("realtime_factor_per_world").get<double>();
  EXPECT_NEAR(rtf1, 5.0 * dt / wall, 1e-9 * rtf1);
  EXPECT_NEAR(j.at("realtime_factor_aggregate").get<double>(), 2.0 * rtf1, 1e-9 * rtf1);

  EXPECT_EQ(j.at("failed_worlds"), 0);
  EXPECT_EQ(j.at("nonfinite_state_worlds"), 0);

  const json& st = j.at("stages_ms");
  double sum = 0;
  for (const char* k : {"collide", "free_motion", "contact_setup", "solve", "integrate"}) {
    const double t = st.at(k).get<double>();
    EXPECT_TRUE(std::isfinite(t) && t >= 0) << k;
    sum += t;
  }
  EXPECT_NEAR(st.at("total").get<double>(), sum, 1e-9 * sum + 1e-12);

  const json& s = j.at("stats");
  EXPECT_EQ(s.at("sampled_steps"), 5);
  EXPECT_EQ(s.at("world_steps"), 10);
  const json& nw = s.at("newton_iterations");
  const int max_it = j.at("solver").at("max_iterations").get<int>();
  EXPECT_GE(nw.at("mean").get<double>(), 0.0);
  EXPECT_LE(nw.at("mean").get<double>(), nw.at("max").get<double>());
  EXPECT_LE(nw.at("p95").get<int>(), nw.at("max").get<int>());
  EXPECT_LE(nw.at("max").get<int>(), max_it);
  const int cap = j.at("max_rigid_contact").get<int>();
  const json& c = s.at("contacts_per_world");
  EXPECT_LE(c.at("max").get<int>(), cap);
  EXPECT_LE(c.at("mean").get<double>(), c.at("max").get<double>() + 1e-12);
  EXPECT_GE(s.at("truncated_contacts_total").get<long long>(), 0);
  // A scene without a contact capacity cannot report contacts.
  if (sj.at("simulation").value("max_rigid_contact", -1) == 0) EXPECT_EQ(c.at("max"), 0);
  const json& sc = s.at("status_world_steps");
  EXPECT_EQ(sc.at("non_finite"), 0);
  EXPECT_EQ(sc.at("factorization_failed"), 0);
  EXPECT_LE(sc.at("converged").get<long long>(), 10);
}

INSTANTIATE_TEST_SUITE_P(AllScenes, BenchScene, ::testing::ValuesIn(scene_files()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(BenchCli, StatsSamplingAndSkipping) {
  TempDir tmp;
  const std::string scene = source_dir() + "/scenes/box_stack_5.json";
  ProcResult r = run(SAP_BENCH_EXE, {scene, "--worlds", "3", "--steps", "5", "--warmup", "0", "--backend", "cpu",
                                     "--stats-every", "2", "--json", tmp.file("a.json"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = read_json(tmp.file("a.json"));
  EXPECT_EQ(j["stats"]["sampled_steps"], 3);  // steps 0, 2, 4
  EXPECT_EQ(j["stats"]["world_steps"], 9);
  r = run(SAP_BENCH_EXE,
          {scene, "--steps", "3", "--backend", "cpu", "--stats-every", "0", "--json", tmp.file("b.json"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = read_json(tmp.file("b.json"));
  EXPECT_TRUE(j["stats"].is_null());
  EXPECT_TRUE(j["stages_ms"].is_null());
  EXPECT_EQ(j["nworld"], 1);  // the scene's num_worlds
}

TEST(BenchCli, SolverOverridesReachTheRecord) {
  TempDir tmp;
  const ProcResult r = run(SAP_BENCH_EXE, {source_dir() + "/scenes/box_stack_5.json", "--steps", "2", "--backend",
                                           "cpu", "--preset", "drake", "--line-search", "exact_root", "--set",
                                           "max_iterations=7", "--json", tmp.file("a.json"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = read_json(tmp.file("a.json"));
  EXPECT_EQ(j["solver"]["preset"], "drake");
  EXPECT_EQ(j["solver"]["line_search_variant"], "exact_root");
  EXPECT_EQ(j["solver"]["max_iterations"], 7);
  EXPECT_EQ(j["solver"]["contact_weight_mode"], "diag_delassus");
}

TEST(BenchCli, ScalingWritesOneRecordPerWorldCount) {
  TempDir tmp;
  const std::string scene = source_dir() + "/scenes/box_stack_5.json";
  ProcResult r = run(SAP_BENCH_EXE, {scene, "--scaling", "4,1,2", "--steps", "2", "--warmup", "0", "--backend", "cpu",
                                     "--json", tmp.file("s.json"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = read_json(tmp.file("s.json"));
  EXPECT_EQ(j["mode"], "scaling");
  ASSERT_EQ(j["records"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const json& rec = j["records"][i];
    EXPECT_EQ(rec["nworld"], 1 << i);
    const double ws = rec["world_steps_per_s"].get<double>();
    EXPECT_TRUE(std::isfinite(ws) && ws > 0);
    EXPECT_NEAR(ws, rec["nworld"].get<double>() * 2.0 * rec["repeats"].get<double>() / rec["wall_s"].get<double>(),
                1e-9 * ws);
    EXPECT_EQ(rec["failed_worlds"], 0);
  }
  EXPECT_TRUE(j["stopped"].is_null());
  r = run(SAP_BENCH_EXE, {scene, "--scaling-max", "5", "--steps", "1", "--warmup", "0", "--backend", "cpu", "--json",
                          tmp.file("t.json"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = read_json(tmp.file("t.json"));
  std::vector<int> n;
  for (const auto& rec : j["records"]) n.push_back(rec["nworld"].get<int>());
  EXPECT_EQ(n, (std::vector<int>{1, 2, 4}));
}

// --min-time repeats the timed window: the timed total reaches it, and throughput counts every
// repeat.
TEST(BenchCli, MinTimeRepeatsTheTimedWindow) {
  TempDir tmp;
  const ProcResult r = run(SAP_BENCH_EXE,
                           {source_dir() + "/scenes/pendulum.json", "--steps", "3", "--warmup", "0", "--backend", "cpu",
                            "--min-time", "0.05", "--stats-every", "0", "--json", tmp.file("m.json"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = read_json(tmp.file("m.json"));
  const double wall = j["wall_s"].get<double>();
  EXPECT_GE(wall, 0.05);
  EXPECT_GT(j["repeats"].get<int>(), 1);
  EXPECT_NEAR(j["world_steps_per_s"].get<double>(), 3.0 * j["repeats"].get<double>() / wall,
              1e-9 * j["world_steps_per_s"].get<double>());
}

// Every option of --help is documented in docs/benchmarks.md.
TEST(BenchCli, HelpOptionsAreDocumented) {
  std::ifstream f(source_dir() + "/docs/benchmarks.md");
  ASSERT_TRUE(f.good()) << "docs/benchmarks.md missing";
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  for (const char* exe : {SAP_BENCH_EXE, SAP_ABLATE_EXE, SAP_ROLLOUT_BENCH_EXE}) {
    const ProcResult r = run(exe, {"--help"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // Option lines of the help: "  --name ..." or "  -h, --help".
    const std::regex opt(R"(^\s+(?:-[a-z], )?(--[a-z][a-z-]*))");
    std::set<std::string> opts;
    std::stringstream lines(r.output);
    std::string line;
    std::smatch m;
    while (std::getline(lines, line))
      if (std::regex_search(line, m, opt)) opts.insert(m[1].str());
    EXPECT_GT(opts.size(), 8u);
    for (const auto& o : opts) EXPECT_NE(doc.find("`" + o), std::string::npos) << exe << ": " << o << " not documented";
  }
}

// ---------------------------------------------------------------------------------------------
// Malformed input: a clear message, a non-zero exit code, no crash.

struct BadCase {
  std::vector<std::string> args;  // after the executable; "@SCENE" = box_stack_5.json
  int exit_code;
  std::string message;
};

void expect_error(const char* exe, const BadCase& c, const std::string& scene) {
  std::vector<std::string> args;
  for (const auto& a : c.args) args.push_back(a == "@SCENE" ? scene : a);
  const ProcResult r = run(exe, args);
  std::string cmd;
  for (const auto& a : args) cmd += " " + a;
  EXPECT_FALSE(r.signaled) << cmd << "\n" << r.output;
  EXPECT_EQ(r.exit_code, c.exit_code) << cmd << "\n" << r.output;
  EXPECT_NE(r.output.find("error: "), std::string::npos) << cmd << "\n" << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << cmd << "\nexpected '" << c.message << "' in:\n" << r.output;
}

TEST(BenchCli, MalformedOptions) {
  const std::string scene = source_dir() + "/scenes/box_stack_5.json";
  const std::vector<BadCase> cases = {
      {{"@SCENE", "--bogus"}, 2, "unknown option '--bogus'"},
      {{"@SCENE", "--worlds", "abc"}, 2, "option --worlds: expected an integer, got 'abc'"},
      {{"@SCENE", "--worlds", "0"}, 2, "option --worlds: expected an integer in [1,"},
      {{"@SCENE", "--steps", "1.5"}, 2, "option --steps: expected an integer"},
      {{"@SCENE", "--steps"}, 2, "option --steps expects a value"},
      {{"@SCENE", "--warmup=-1"}, 2, "option --warmup"},
      {{"@SCENE", "--dt", "-0.1"}, 2, "option --dt"},
      {{"@SCENE", "--preset", "fast"}, 2, "approx64"},
      {{"@SCENE", "--line-search", "bisect"}, 2, "exact_root"},
      {{"@SCENE", "--set", "no_such_option=1"}, 2, "no_such_option"},
      {{"@SCENE", "--set", "rho=2"}, 2, "rho"},
      {{"@SCENE", "--set", "rho"}, 2, "expected key=value"},
      {{"@SCENE", "--backend", "gpu"}, 2, "expected cpu, cuda or auto, got 'gpu'"},
      {{"@SCENE", "--threads", "x"}, 2, "option --threads"},
      {{"@SCENE", "--scaling", "1,,2"}, 2, "option --scaling"},
      {{"@SCENE", "--worlds", "2", "--scaling", "1,2"}, 2, "exclude each other"},
      {{"@SCENE", "--keyframe", "home"}, 2, "MJCF"},
      {{"@SCENE", "--floating-base"}, 2, "URDF (.urdf) files only"},
      {{"@SCENE", "--ground"}, 2, "URDF (.urdf) files only"},
      {{"@SCENE", "--quiet=1"}, 2, "takes no value"},
      {{"@SCENE", "other.json"}, 2, "unexpected argument"},
      {{}, 2, "missing SCENE"},
      {{"no/such/scene.json"}, 1, "scene file 'no/such/scene.json' not found"},
  };
  for (const auto& c : cases) expect_error(SAP_BENCH_EXE, c, scene);
}

// --graph N times the steps as step(N) after one untimed step(N): the same physics as N more
// warm-up steps and plain steps (final digests equal); a step count that is no multiple is refused.
TEST(BenchCli, GraphStepsAreTheSamePhysics) {
  TempDir tmp;
  const std::string scene = source_dir() + "/scenes/box_stack_5.json";
  const ProcResult g = run(SAP_BENCH_EXE, {scene, "--worlds", "2", "--steps", "8", "--warmup", "3", "--graph", "4",
                                           "--backend", "cpu", "--json", tmp.file("g.json"), "--quiet"});
  const ProcResult p = run(SAP_BENCH_EXE, {scene, "--worlds", "2", "--steps", "8", "--warmup", "7", "--backend", "cpu",
                                           "--json", tmp.file("p.json"), "--quiet"});
  ASSERT_EQ(g.exit_code, 0) << g.output;
  ASSERT_EQ(p.exit_code, 0) << p.output;
  const json jg = read_json(tmp.file("g.json")), jp = read_json(tmp.file("p.json"));
  EXPECT_EQ(jg["graph_steps"].get<int>(), 4);
  EXPECT_EQ(jp["graph_steps"].get<int>(), 0);
  EXPECT_EQ(jg["final_state"]["digest"], jp["final_state"]["digest"]);
  EXPECT_EQ(jg["stats"]["newton_iterations"], jp["stats"]["newton_iterations"]);  // the statistics pass replays the same steps
  expect_error(SAP_BENCH_EXE, {{"@SCENE", "--steps", "10", "--graph", "4"}, 2, "not a multiple of --graph 4"}, scene);
}

TEST(BenchCli, BadSceneFilesNameTheFile) {
  TempDir tmp;
  const std::string bad_json = tmp.file("broken.json");
  std::ofstream(bad_json) << "{ \"schema_version\": 1, \"simulation\": { \"dt\": -1 } }";
  expect_error(SAP_BENCH_EXE, {{bad_json}, 1, bad_json}, "");
  const std::string bad_text = tmp.file("garbage.json");
  std::ofstream(bad_text) << "{ not json";
  expect_error(SAP_BENCH_EXE, {{bad_text}, 1, bad_text}, "");
  const std::string bad_xml = tmp.file("broken.xml");
  std::ofstream(bad_xml) << "<mujoco><worldbody><body";
  expect_error(SAP_BENCH_EXE, {{bad_xml}, 1, bad_xml}, "");
  // Issue 14: 100,000 nested arrays crashed sap_bench with SIGSEGV (stack overflow).
  const std::string deep = tmp.file("deep.json");
  std::ofstream(deep) << std::string(100000, '[') << std::string(100000, ']');
  expect_error(SAP_BENCH_EXE, {{deep}, 1, deep + ": /0/0/0"}, "");
}

TEST(BenchCli, CudaWithoutDeviceIsAClearError) {
  if (sap::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  const std::string scene = source_dir() + "/scenes/box_stack_5.json";
  for (const char* exe : {SAP_BENCH_EXE, SAP_ABLATE_EXE}) {
    const ProcResult r = run(exe, {scene, "--backend", "cuda", "--steps", "1"});
    EXPECT_FALSE(r.signaled);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("backend 'cuda' requested, but"), std::string::npos) << r.output;
  }
}

// ---------------------------------------------------------------------------------------------
// sap_ablate

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Csv read_csv(const std::string& path) {
  Csv c;
  std::ifstream f(path);
  std::string line;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::stringstream s(l);
    std::string cell;
    while (std::getline(s, cell, ',')) out.push_back(cell);
    return out;
  };
  if (std::getline(f, line)) c.header = split(line);
  while (std::getline(f, line))
    if (!line.empty()) c.rows.push_back(split(line));
  return c;
}

const json& comparison(const json& j, const std::string& name) {
  for (const auto& c : j.at("comparisons"))
    if (c.at("name") == name) return c;
  throw std::runtime_error("no comparison " + name);
}

TEST(AblateCli, TrajectoryAndOneStepOutputs) {
  TempDir tmp;
  const std::string scene = source_dir() + "/scenes/sphere_on_ground.json";
  const int steps = 3, nworld = 2;
  json runs[2];
  const char* modes[2] = {"trajectory", "one-step"};
  for (int m = 0; m < 2; ++m) {
    const std::string js = tmp.file(std::string(modes[m]) + ".json"), cs = tmp.file(std::string(modes[m]) + ".csv");
    const ProcResult r = run(SAP_ABLATE_EXE,
                             {scene, "--worlds", std::to_string(nworld), "--steps", std::to_string(steps), "--backend",
                              "cpu", "--mode", modes[m], "--variant", "same=approx64:rho=0.8", "--variant",
                              "dd=approx64:contact_weight_mode=diag_delassus", "--json", js, "--csv", cs, "--quiet"});
    ASSERT_FALSE(r.signaled) << r.output;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json j = read_json(js);
    runs[m] = j;
    EXPECT_EQ(j.at("mode"), modes[m]);
    EXPECT_EQ(j.at("nworld"), nworld);
    ASSERT_EQ(j.at("time").size(), static_cast<std::size_t>(steps));
    std::vector<std::string> names;
    for (const auto& c : j.at("comparisons")) names.push_back(c.at("name"));
    EXPECT_EQ(names, (std::vector<std::string>{"precision", "model", "same", "dd"}));
    ASSERT_EQ(j.at("variants").size(), 5u);
    for (const auto& v : j.at("variants")) {
      ASSERT_EQ(v.at("failed_worlds_per_step").size(), static_cast<std::size_t>(steps));
      for (int f : v.at("failed_worlds_per_step")) EXPECT_EQ(f, 0) << v.at("name");
    }
    for (const auto& c : j.at("comparisons")) {
      ASSERT_EQ(c.at("dv_world").size(), static_cast<std::size_t>(steps));
      for (std::size_t s = 0; s < static_cast<std::size_t>(steps); ++s) {
        ASSERT_EQ(c.at("dv_world")[s].size(), static_cast<std::size_t>(nworld));
        double mean = 0, mx = 0;
        for (double x : c.at("dv_world")[s]) {
          mean += x / nworld;
          mx = std::max(mx, x);
        }
        EXPECT_NEAR(c.at("dv_mean")[s].get<double>(), mean, 1e-15 + 1e-12 * mean);
        EXPECT_EQ(c.at("dv_max")[s].get<double>(), mx);
      }
    }
    // A variant whose one factor equals the preset's default is the same configuration:
    // stepping is deterministic, so its difference is exactly zero.
    for (double x : comparison(j, "same").at("dv_max")) EXPECT_EQ(x, 0.0);
    // fp32 vs fp64 during free fall: a rounding-level difference of the velocity (~1 m/s),
    // not zero (the variants do differ) and far below any physical effect.
    for (double x : comparison(j, "precision").at("dv_max")) {
      EXPECT_GT(x, 0.0);
      EXPECT_LT(x, 1e-5);
    }
    // CSV: one row per step and comparison, equal to the JSON aggregates.
    const Csv csv = read_csv(cs);
    EXPECT_EQ(csv.header, (std::vector<std::string>{"step", "time", "comparison", "a", "b", "dv_mean", "dv_max",
                                                    "dq_mean", "dq_max"}));
    ASSERT_EQ(csv.rows.size(), static_cast<std::size_t>(steps * 4));
    for (const auto& row : csv.rows) {
      ASSERT_EQ(row.size(), 9u);
      const std::size_t s = static_cast<std::size_t>(std::stoi(row[0]) - 1);
      const json& c = comparison(j, row[2]);
      EXPECT_DOUBLE_EQ(std::stod(row[5]), c.at("dv_mean")[s].get<double>());
      EXPECT_DOUBLE_EQ(std::stod(row[8]), c.at("dq_max")[s].get<double>());
    }
  }
  // Both modes start from the same initial state: their first step is identical.
  for (const char* name : {"precision", "model", "dd"})
    for (const char* q : {"dv_max", "dq_max"})
      EXPECT_EQ(comparison(runs[0], name).at(q)[0], comparison(runs[1], name).at(q)[0]) << name << " " << q;
}

TEST(AblateCli, MalformedOptions) {
  const std::string scene = source_dir() + "/scenes/box_stack_5.json";
  const std::vector<BadCase> cases = {
      {{"@SCENE", "--mode", "sideways"}, 2, "expected trajectory or one-step"},
      {{"@SCENE", "--variant", "fast:rho=0.5"}, 2, "unknown preset 'fast'"},
      {{"@SCENE", "--variant", "approx64:bogus=1"}, 2, "bogus"},
      {{"@SCENE", "--variant", "approx64:rho"}, 2, "expected key=value"},
      {{"@SCENE", "--variant", "approx64"}, 2, "taken by a preset"},
      {{"@SCENE", "--variant", "x=approx64", "--variant", "x=drake"}, 2, "two variants are named 'x'"},
      {{"@SCENE", "--reference", "nobody", "--mode", "one-step"}, 2, "no variant named 'nobody'"},
      {{"@SCENE", "--steps", "zero"}, 2, "option --steps"},
      {{"@SCENE", "--set", "rho=7"}, 2, "rho"},
      {{"@SCENE", "--frobnicate"}, 2, "unknown option"},
      {{"missing.json"}, 1, "not found"},
  };
  for (const auto& c : cases) expect_error(SAP_ABLATE_EXE, c, scene);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// sap_fidelity (issue 31): the contact-fidelity sweep's command line. Its options are documented
// in docs/solver.md ("Contact fidelity"); one group runs and writes a record per world whose
// figures satisfy the case's bounds; malformed options are clear errors.

TEST(FidelityCli, OneGroupWritesAPassingRecordPerWorld) {
  const std::string out = (fs::temp_directory_path() / "sap_fidelity_cli.json").string();
  const ProcResult r = run(SAP_FIDELITY_EXE, {"--shape", "sphere", "--dt", "1e-2", "--config", "drake/lagged", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(out);
  const json j = json::parse(f);
  ASSERT_EQ(j.size(), 60u) << "4 masses x 5 stiffnesses x 3 angles";
  int judged = 0;
  for (const json& w : j) {
    EXPECT_EQ(w.at("shape"), "sphere");
    EXPECT_EQ(w.at("approximation"), "lagged");
    EXPECT_FALSE(w.at("failed").get<bool>());
    if (!w.at("judged").get<bool>()) continue;
    ++judged;
    EXPECT_TRUE(w.at("pass").get<bool>()) << w.dump();
    EXPECT_LE(std::abs(w.at("figure").get<double>()), 0.02) << w.dump();
  }
  EXPECT_GT(judged, 40);
  std::remove(out.c_str());
  std::ifstream doc(source_dir() + "/docs/solver.md");
  std::stringstream ss;
  ss << doc.rdbuf();
  const ProcResult help = run(SAP_FIDELITY_EXE, {"--help"});
  ASSERT_EQ(help.exit_code, 0);
  const std::regex opt(R"(^\s+(?:-[a-z], )?(--[a-z][a-z-]*))");
  std::stringstream lines(help.output);
  std::string line;
  std::smatch m;
  int options = 0;
  while (std::getline(lines, line))
    if (std::regex_search(line, m, opt)) {
      ++options;
      EXPECT_NE(ss.str().find("`" + m[1].str()), std::string::npos) << m[1].str() << " not documented in docs/solver.md";
    }
  EXPECT_GE(options, 8);
}

TEST(FidelityCli, MalformedOptions) {
  const std::vector<BadCase> cases = {
      {{"--config", "fast/lagged"}, 2, "preset 'fast' is not approx32, approx64 or drake"},
      {{"--config", "drake/soft"}, 2, "approximation 'soft' is not sap, similar, lagged or default"},
      {{"--shape", "torus"}, 2, "--shape torus: unknown shape"},
      {{"--dt", "2e-3"}, 2, "the sweep's time steps are 1e-4, 1e-3, 5e-3, 1e-2"},
      {{"--threads", "0"}, 2, "expected an integer >= 1"},
      {{"--set", "sigma=-1"}, 2, "sigma"},
      {{"--set", "sigma"}, 2, "expected key=value"},
      {{"--frobnicate"}, 2, "unknown option --frobnicate"},
  };
  for (const auto& c : cases) expect_error(SAP_FIDELITY_EXE, c, "");
}

// ---------------------------------------------------------------------------------------------
// sap_rollout_bench (issue 13): the rollout loop next to plain stepping over identical physics.

TEST(RolloutBench, RecordsThroughputAndOverheadOverIdenticalPhysics) {
  TempDir tmp;
  const std::string out = tmp.file("rollout.json");
  const ProcResult r = run(SAP_ROLLOUT_BENCH_EXE, {source_dir() + "/scenes/pd_arm.json", "--worlds", "6", "--iters",
                                                   "12", "--rounds", "1", "--warmup", "1", "--episode", "5",
                                                   "--backend", "cpu", "--threads", "1", "--json", out});
  ASSERT_FALSE(r.signaled) << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;  // 4: the two simulators diverged
  EXPECT_NE(r.output.find("API overhead"), std::string::npos) << r.output;
  const json j = read_json(out);
  EXPECT_TRUE(j["identical_physics"].get<bool>());
  EXPECT_GT(j["env_steps_per_s_plain"].get<double>(), 0);
  EXPECT_GT(j["env_steps_per_s_rollout"].get<double>(), 0);
  EXPECT_GT(j["resets"].get<long long>(), 0);  // episodes of 5 env steps: subset resets ran
  for (const char* k : {"control_write", "step_n", "observation_read", "subset_reset"})
    EXPECT_GE(j["ms_per_env_step"][k].get<double>(), 0) << k;
}

TEST(RolloutBench, CudaWithoutDeviceIsAClearError) {
  if (sap::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  const ProcResult r = run(SAP_ROLLOUT_BENCH_EXE, {source_dir() + "/scenes/pd_arm.json", "--backend", "cuda"});
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("backend 'cuda' requested, but"), std::string::npos) << r.output;
}

TEST(RolloutBench, RejectsBadOptions) {
  const ProcResult r = run(SAP_ROLLOUT_BENCH_EXE, {source_dir() + "/scenes/pd_arm.json", "--substeps", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--substeps"), std::string::npos) << r.output;
}

// A URDF scene starts where the URDF's joint limits allow (load_urdf, sap/scene.hpp): tests/data/folded_arm.urdf
// has its elbow's zero outside its range [2.5, 3.8] rad, with the forearm folded 5 cm deep into
// the base, as Kinova Jaco's zero (issue 18: that start sent the arm to 1e13 rad/s in four steps
// on every preset). The elbow starts at its lower limit, a scene note says so, and from there
// the arm falls under gravity on every preset: no failed world, the elbow stays in its range
// (to the limit rows' compliance), and the mechanical energy never exceeds the start's (from
// the folded zero pose the limit row and the 5 cm contact inject it).
TEST(BenchUrdfScene, ZeroPoseOutsideTheJointLimitsStartsAtTheNearestLimit) {
  sap::bench::SceneLoadOptions o;
  o.ground = true;
  const sap::Scene scene = sap::bench::load_bench_scene(source_dir() + "/tests/data/folded_arm.urdf", o);
  ASSERT_EQ(scene.qpos0.size(), 2u);
  EXPECT_EQ(scene.qpos0[0], 0.0);  // shoulder: 0 is inside [-1.5, 1.5]
  EXPECT_EQ(scene.qpos0[1], 2.5);  // elbow: 0 is outside [2.5, 3.8]
  int notes = 0;
  for (const std::string& w : scene.warnings)
    notes += w.find("initial state outside the joint limits: a URDF states no initial configuration") !=
             std::string::npos;
  EXPECT_EQ(notes, 1);
  for (sap::Preset preset : {sap::Preset::Approx32, sap::Preset::Approx64, sap::Preset::Drake}) {
    SCOPED_TRACE(sap::to_string(preset));
    sap::SimulatorOptions so;
    so.nworld = 1;
    so.backend = sap::Backend::CPU;
    so.threads = 1;
    so.override_solver = true;
    so.solver.contact_preset_variant = preset;
    sap::Simulator sim(scene, so);
    sim.reset();
    const double e0 = sim.energy()[0].total();
    double e_max = e0, elbow_min = 10, elbow_max = -10;
    for (int i = 0; i < 1000; ++i) {
      sim.step();
      e_max = std::max(e_max, sim.energy()[0].total());
      const double elbow = sim.state().qpos.world_to_host(0)[1];
      elbow_min = std::min(elbow_min, elbow);
      elbow_max = std::max(elbow_max, elbow);
    }
    EXPECT_TRUE(sim.failed_worlds().empty());
    EXPECT_LE(e_max, e0 + 1e-6) << "energy grew";
    EXPECT_GT(elbow_min, 2.5 - 1e-3);
    EXPECT_LT(elbow_max, 3.8 + 1e-3);
  }
}
