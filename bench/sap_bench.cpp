// sap_bench: throughput and solver statistics of one scene over nworld worlds, or a scaling
// sweep over nworld. Usage and the meaning of every figure: --help and docs/benchmarks.md.
//
// Timing protocol (why two passes): reading per-step diagnostics or stage clocks copies data to
// the host and, on CUDA, synchronises the stream after every step, which would slow the loop it
// measures. So the throughput comes from a timed pass with no reads at all (one synchronise at
// its end), and the statistics (stage times, Newton and line-search iterations, contacts) from
// a second pass that resets the worlds and replays the same steps, reading after every k-th step
// (--stats-every). Stepping is deterministic, so the second pass sees the same world-steps.
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "sap/mjcf.hpp"
#include "sap/simulator.hpp"
#include "sap/status.hpp"

namespace sap::bench {
namespace {

constexpr const char* kHelp = R"(usage: sap_bench SCENE [options]

Steps every world of SCENE (a JSON scene, an MJCF .xml or a URDF .urdf model) and reports throughput, per-stage
times and solver statistics. With --scaling/--scaling-max it sweeps the number of worlds instead.

options:
  --worlds N            number of worlds (default: the scene's num_worlds)
  --steps N             timed steps (default 200)
  --warmup N            untimed steps before timing (default 10)
  --graph N             time the steps as step(N), N at a time: on CUDA the replay of a CUDA graph
                        of N steps (captured in the warm-up), on the CPU N plain steps; --steps must
                        be a multiple of N (default 0: step(), plain launches)
  --min-time SEC        repeat the timed window (reset, warm-up, steps) until the timed total
                        reaches SEC seconds (default 0: once; for short runs, e.g. scaling)
  --dt SEC              override the scene's time step
  --preset P            solver preset: approx32, approx64 or drake (overrides the scene's)
  --line-search L       line search: monotone_decay, armijo_decay or exact_root
  --set key=value       any solver option by name (repeatable; see solver_options.hpp)
  --backend B           cpu, cuda or auto (default auto: CUDA when a device is present)
  --threads N           CPU threads (default 0 = all hardware threads)
  --emulated-lanes N    CPU backend running team stages on emulated GPU teams of N lanes (slow;
                        prints block barriers per world-step per kernel, as the CUDA build has)
  --stats-every K       read diagnostics after every K-th step of the statistics pass
                        (default 1; 0 skips the statistics pass; scaling mode default 0)
  --json OUT            write the results as JSON to OUT
  --memory-detail       list the bytes per world of every per-world array under "memory"
  --scaling LIST        scaling mode: comma-separated world counts, e.g. 1,2,4,...,16384
  --scaling-max N       scaling mode: powers of two from 1 up to N (caps --scaling when both)
  --keyframe NAME       MJCF only: start from this keyframe (qpos, and ctrl held constant)
  --drop-unsupported    MJCF/URDF only: drop elements without a counterpart instead of failing
  --floating-base       URDF only: the root link gets a free joint (legged robots, humanoids)
  --ground              URDF only: a ground plane under the robot (floating robots are lifted
                        onto it; fixed ones keep their base, the plane below their lowest geom)
  --quiet               no summary on stdout and no progress bar
  -h, --help            this help

Throughput = nworld x steps / wall time of the timed pass (no diagnostics reads in it).
Realtime factor = simulated seconds per wall second: per world (steps x dt / wall) and aggregate
(x nworld). See docs/benchmarks.md.
)";

struct Options : CommonOptions {
  int worlds = 0;
  long long steps = 200, warmup = 10;
  int graph = 0;  // > 0: the timed steps as step(graph)
  double min_time = 0;
  SolverOverrides solver;
  int stats_every = -1;  // -1: mode default
  std::string json_path;
  std::vector<int> scaling;
  int scaling_max = 0;
  bool scaling_mode = false;
  bool memory_detail = false;
};

Options parse_options(int argc, char** argv) {
  Options o;
  const int kMaxWorlds = 1 << 24;
  parse_arguments(argc, argv, kHelp, o, [&](ArgReader& r, const std::string& a) {
    if (a == "--worlds") {
      o.worlds = static_cast<int>(parse_int(a, r.value(a), 1, kMaxWorlds));
    } else if (a == "--steps") {
      o.steps = parse_int(a, r.value(a), 1, 1LL << 40);
    } else if (a == "--warmup") {
      o.warmup = parse_int(a, r.value(a), 0, 1LL << 40);
    } else if (a == "--graph") {
      o.graph = static_cast<int>(parse_int(a, r.value(a), 0, 1 << 20));
    } else if (a == "--min-time") {
      o.min_time = parse_double(a, r.value(a), 0.0, 1e6);
    } else if (a == "--preset") {
      o.solver.preset = r.value(a);
    } else if (a == "--line-search") {
      o.solver.line_search = r.value(a);
    } else if (a == "--set") {
      o.solver.sets.push_back(parse_key_value(a, r.value(a)));
    } else if (a == "--stats-every") {
      o.stats_every = static_cast<int>(parse_int(a, r.value(a), 0, 1 << 30));
    } else if (a == "--json") {
      o.json_path = r.value(a);
      if (o.json_path.empty()) throw UsageError("option --json expects a file name");
    } else if (a == "--scaling") {
      o.scaling = parse_int_list(a, r.value(a), 1, kMaxWorlds);
      o.scaling_mode = true;
    } else if (a == "--memory-detail") {
      o.memory_detail = true;
    } else if (a == "--scaling-max") {
      o.scaling_max = static_cast<int>(parse_int(a, r.value(a), 1, kMaxWorlds));
      o.scaling_mode = true;
    } else {
      return false;
    }
    return true;
  });
  if (o.graph > 0 && o.steps % o.graph != 0)
    throw UsageError("--steps " + std::to_string(o.steps) + " is not a multiple of --graph " + std::to_string(o.graph));
  if (o.scaling_mode) {
    if (o.worlds > 0) throw UsageError("--worlds and --scaling/--scaling-max exclude each other");
    if (o.scaling.empty())
      for (int n = 1; n <= o.scaling_max; n *= 2) o.scaling.push_back(n);
    if (o.scaling_max > 0) {
      o.scaling.erase(std::remove_if(o.scaling.begin(), o.scaling.end(), [&](int n) { return n > o.scaling_max; }),
                      o.scaling.end());
      if (o.scaling.empty())
        throw UsageError("--scaling-max " + std::to_string(o.scaling_max) + " leaves no world count of --scaling");
    }
    std::sort(o.scaling.begin(), o.scaling.end());
    o.scaling.erase(std::unique(o.scaling.begin(), o.scaling.end()), o.scaling.end());
  }
  if (o.stats_every < 0) o.stats_every = o.scaling_mode ? 0 : 1;
  return o;
}

// ---------------------------------------------------------------------------------------------

struct RunResult {
  int nworld = 0;
  long long steps = 0, warmup = 0;
  int graph = 0;                   // steps timed as step(graph) (0: step())
  double setup_s = 0, wall_s = 0;  // wall_s: total over the repeats of the timed window
  int repeats = 0;
  long long rss_growth = -1;  // resident-memory growth while the simulator exists (bytes)
  std::string device;
  int collision_pairs = 0;        // candidate pairs with a narrow phase
  bool collision_convex = false;  // some pair needs the convex solvers (else the analytic-only kernel)
  int threads = 1;
  // statistics pass
  bool have_stats = false;
  int stats_every = 0;
  long long sampled_steps = 0;
  double stats_wall_s = 0;
  double t_collide = 0, t_free_motion = 0, t_setup = 0, t_solve = 0, t_integrate = 0;  // sums (ms)
  IntHistogram newton, line_search, contacts;
  long long truncated_total = 0;
  std::map<std::string, long long> status_counts;
  // end of the timed pass (and any failure seen in the statistics pass)
  std::set<int> failed_worlds;
  int nonfinite_state_worlds = 0;
  // steps repeated in fp64 after an fp32 failure (fp64_retry), over both passes, and rescued
  long long fp64_retries = 0, fp64_rescued = 0, fp64_overflow = 0;
  int fp64_capacity = 0;  // worlds the fp64 retry steps at once
  int fp64_retry_worlds = 0;
  // final state of the timed pass: max |qvel| over worlds and dofs, worlds at rest
  double final_max_qvel = 0;
  int final_rest_worlds = 0;
  std::string final_digest;  // FNV-1a 64 of the final qpos and qvel bytes (bit-identity checks)
  // --emulated-lanes: per-kernel launch and barrier counts of the timed pass
  std::vector<EmuKernelStats> emulation;
  long long emulated_world_steps = 0;
  // Global memory per world on the run's backend: every live Buffer, (2 worlds - 1 world);
  // the solver's dynamics workspace and constraint buffers; the largest single array.
  long long mem_total = -1, mem_solver_data = 0, mem_solver_solve = 0, mem_largest = 0;
  std::string mem_largest_name;
  std::vector<std::pair<std::string, long long>> mem_detail;  // Simulator::buffer_bytes_per_world
  std::vector<std::pair<std::string, long long>> on_chip;     // SolverSAP::on_chip_bytes_per_world
};

long long memory_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  long long kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return -1;
}

long long resident_bytes() {
  std::ifstream f("/proc/self/statm");
  long long size = 0, resident = 0;
  if (!(f >> size >> resident)) return -1;
  return resident * static_cast<long long>(sysconf(_SC_PAGESIZE));
}

constexpr double kRestSpeed = 1e-3;  // |qvel_i| below this in every dof: the world is at rest

int count_nonfinite_worlds(Simulator& sim) {
  const auto q = sim.state().qpos.buffer().to_host();
  const auto v = sim.state().qvel.buffer().to_host();
  const std::size_t nq = sim.state().qpos.per_world(), nv = sim.state().qvel.per_world();
  int bad = 0;
  for (int w = 0; w < sim.nworld(); ++w) {
    bool ok = true;
    for (std::size_t i = 0; i < nq && ok; ++i) ok = std::isfinite(q[static_cast<std::size_t>(w) * nq + i]);
    for (std::size_t i = 0; i < nv && ok; ++i) ok = std::isfinite(v[static_cast<std::size_t>(w) * nv + i]);
    bad += ok ? 0 : 1;
  }
  return bad;
}

RunResult run_once(const Scene& scene, const Options& o, int nworld, int stats_every, const SolverOptions* solver) {
  RunResult r;
  r.nworld = nworld;
  r.steps = o.steps;
  r.warmup = o.warmup;
  r.graph = o.graph;
  SimulatorOptions so;
  so.nworld = nworld;
  so.backend = o.backend;
  so.threads = o.threads;
  so.emulated_lanes = o.emulated_lanes;
  if (solver) {
    so.override_solver = true;
    so.solver = *solver;
  }
  {  // bytes per world: the difference of the live buffer bytes of 2 and 1 worlds after one
     // step (buffers allocated by the first step included), and the simulator's breakdown
    const Backend b = resolve_backend(o.backend);
    long long live[2] = {0, 0};
    for (int n = 1; n <= 2; ++n) {
      SimulatorOptions sm = so;
      sm.nworld = n;
      const long long before = buffer_bytes_live(b);
      Simulator probe(scene, sm);
      probe.step();
      probe.context().synchronize();
      live[n - 1] = buffer_bytes_live(b) - before;
      if (n == 2) {
        r.mem_detail = probe.buffer_bytes_per_world();
        r.on_chip = probe.solver().on_chip_bytes_per_world();
        for (const auto& [name, bytes] : r.mem_detail) {
          if (name.rfind("data.", 0) == 0) r.mem_solver_data += bytes;
          else if (name.rfind("solve.", 0) == 0 || name.rfind("solver.", 0) == 0 || name.rfind("fp64.", 0) == 0)
            r.mem_solver_solve += bytes;
          if (bytes > r.mem_largest) r.mem_largest = bytes, r.mem_largest_name = name;
        }
      }
    }
    r.mem_total = live[1] - live[0];
  }
  const long long rss0 = resident_bytes();
  const auto t_setup0 = std::chrono::steady_clock::now();
  Simulator sim(scene, so);
  sim.context().synchronize();
  r.setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_setup0).count();
  r.device = sim.context().device_name();
  r.collision_pairs = sim.collision().active_pair_count();
  r.collision_convex = sim.collision().uses_convex_solvers();
  r.threads = sim.context().threads();
  const bool progress = !o.quiet;
  const std::string tag = std::to_string(nworld) + " world" + (nworld == 1 ? "" : "s");

  sim.context().reset_emulation_stats();
  // Pass 1: timed, no reads. With --min-time the same window (reset, warm-up, steps) is
  // repeated until the timed total reaches it, so every nworld times the same physics.
  {
    Progress bar("timing " + tag, o.steps, progress && o.min_time <= 0);
    while (true) {
      if (r.repeats > 0) sim.reset();
      for (long long i = 0; i < o.warmup; ++i) sim.step();
      // --graph: one untimed step(N) after the warm-up (the capture, in the first window; every
      // window does it, so that each times the same physics).
      if (o.graph > 0) sim.step(o.graph);
      sim.context().synchronize();
      const auto t0 = std::chrono::steady_clock::now();
      const int chunk = o.graph > 0 ? o.graph : 1;
      for (long long i = 0; i < o.steps; i += chunk) {
        if (o.graph > 0) sim.step(o.graph);
        else sim.step();
        bar.update(i + chunk);
      }
      sim.context().synchronize();
      r.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++r.repeats;
      r.emulated_world_steps += static_cast<long long>(nworld) * (o.warmup + o.graph + o.steps);
      if (r.wall_s >= o.min_time) break;
    }
  }
  r.emulation = sim.context().emulation_stats();
  const long long rss1 = resident_bytes();
  if (rss0 >= 0 && rss1 >= 0) r.rss_growth = rss1 - rss0;
  for (int w : sim.failed_worlds()) r.failed_worlds.insert(w);
  auto read_fp64_retries = [&] {
    r.fp64_retries = r.fp64_rescued = r.fp64_overflow = 0;
    r.fp64_retry_worlds = 0;
    r.fp64_capacity = sim.solver().fp64_retry_capacity();
    const std::vector<int> retries = sim.solver().fp64_retries(), rescued = sim.solver().fp64_rescued(),
                           overflow = sim.solver().fp64_retry_overflow();
    for (std::size_t w = 0; w < retries.size(); ++w) {
      r.fp64_retries += retries[w];
      r.fp64_rescued += rescued[w];
      r.fp64_overflow += overflow[w];
      r.fp64_retry_worlds += retries[w] > 0;
    }
  };
  read_fp64_retries();
  r.nonfinite_state_worlds = count_nonfinite_worlds(sim);
  {  // final-state line: max |qvel| and the worlds whose every |qvel_i| < kRestSpeed
    const auto q = sim.state().qpos.buffer().to_host();
    const auto v = sim.state().qvel.buffer().to_host();
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the raw bytes of qpos, then qvel
    auto hash = [&h](const std::vector<double>& x) {
      const unsigned char* b = reinterpret_cast<const unsigned char*>(x.data());
      for (std::size_t i = 0; i < x.size() * sizeof(double); ++i) h = (h ^ b[i]) * 1099511628211ULL;
    };
    hash(q);
    hash(v);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    r.final_digest = hex;
    const std::size_t nv = sim.state().qvel.per_world();
    for (int w = 0; w < sim.nworld(); ++w) {
      double m = 0;
      for (std::size_t i = 0; i < nv; ++i) m = std::max(m, std::abs(v[static_cast<std::size_t>(w) * nv + i]));
      r.final_max_qvel = std::max(r.final_max_qvel, m);
      r.final_rest_worlds += m < kRestSpeed ? 1 : 0;
    }
  }

  // Pass 2: statistics, replaying the same steps from reset and reading every k-th step.
  if (stats_every > 0) {
    r.have_stats = true;
    r.stats_every = stats_every;
    sim.reset();
    for (long long i = 0; i < o.warmup + o.graph; ++i) sim.step();  // --graph: step(N) == N steps
    Progress bar("statistics " + tag, o.steps, progress);
    const auto t0 = std::chrono::steady_clock::now();
    for (long long i = 0; i < o.steps; ++i) {
      sim.step();
      bar.update(i + 1);
      if (i % stats_every != 0) continue;
      const StepTimes t = sim.last_step_times();
      r.t_collide += t.collide;
      r.t_free_motion += t.solver.free_motion;
      r.t_setup += t.solver.contact_setup;
      r.t_solve += t.solver.solve;
      r.t_integrate += t.solver.integrate;
      const StepDiagnostics d = sim.solver().diagnostics();
      for (int w = 0; w < nworld; ++w) {
        const std::size_t k = static_cast<std::size_t>(w);
        r.newton.add(d.newton_iterations[k]);
        r.line_search.add(d.line_search_iterations[k]);
        r.contacts.add(d.contacts[k]);
        r.truncated_total += d.truncated_contacts[k];
        const int s = d.status[k];
        if (s & kStatusConverged) ++r.status_counts["converged"];
        if (s & kStatusIterationLimit) ++r.status_counts["iteration_limit"];
        if (s & kStatusLineSearchFailed) ++r.status_counts["line_search_failed"];
        if (s & kStatusNotDescent) ++r.status_counts["not_descent"];
        if (s & kStatusNonFinite) ++r.status_counts["non_finite"];
        if (s & kStatusFactorizationFailed) ++r.status_counts["factorization_failed"];
        if (s & kStatusFp64Retry) ++r.status_counts["fp64_retry"];
        if (s & kStatusCoriolisFallback) ++r.status_counts["coriolis_fallback"];
        if (s & kStatusFailureMask) r.failed_worlds.insert(w);
      }
      ++r.sampled_steps;
    }
    sim.context().synchronize();
    r.stats_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    read_fp64_retries();
  }
  return r;
}

// ---------------------------------------------------------------------------------------------

nlohmann::json run_json(const Scene& scene, const RunResult& r) {
  using nlohmann::json;
  json j;
  const double steps = static_cast<double>(r.steps) * r.repeats;
  const double world_steps = static_cast<double>(r.nworld) * steps;
  const double sim_time = steps * scene.dt;
  j["nworld"] = r.nworld;
  j["steps"] = r.steps;
  j["warmup"] = r.warmup;
  j["graph_steps"] = r.graph;
  j["setup_s"] = r.setup_s;
  j["collision"] = {{"pairs", r.collision_pairs}, {"kernel", r.collision_convex ? "convex" : "analytic"}};
  j["wall_s"] = r.wall_s;
  j["world_steps_per_s"] = finite_or_null(world_steps / r.wall_s);
  j["repeats"] = r.repeats;
  j["steps_per_s"] = finite_or_null(steps / r.wall_s);
  j["ms_per_step"] = finite_or_null(1e3 * r.wall_s / steps);
  j["realtime_factor_per_world"] = finite_or_null(sim_time / r.wall_s);
  j["realtime_factor_aggregate"] = finite_or_null(static_cast<double>(r.nworld) * sim_time / r.wall_s);
  j["failed_worlds"] = r.failed_worlds.size();
  std::vector<int> ids(r.failed_worlds.begin(), r.failed_worlds.end());
  if (ids.size() > 32) ids.resize(32);
  j["failed_world_ids"] = ids;  // the first 32
  j["nonfinite_state_worlds"] = r.nonfinite_state_worlds;
  j["fp64_retry"] = {{"steps", r.fp64_retries},
                     {"rescued", r.fp64_rescued},
                     {"worlds", r.fp64_retry_worlds},
                     {"overflow", r.fp64_overflow},
                     {"capacity", r.fp64_capacity}};
  j["final_state"] = {{"max_abs_qvel", finite_or_null(r.final_max_qvel)},
                      {"worlds_at_rest", r.final_rest_worlds},
                      {"digest", r.final_digest},
                      {"rest_threshold", kRestSpeed}};
  if (!r.emulation.empty()) {
    json e = json::array();
    for (const EmuKernelStats& k : r.emulation) {
      const auto per_world_step = [&](long long n) {
        return r.emulated_world_steps > 0 ? double(n) / double(r.emulated_world_steps) : 0.0;
      };
      e.push_back({{"kernel", k.kernel},
                   {"team", k.team},
                   {"launches", k.launches},
                   {"block_barriers_per_world_step", per_world_step(k.barriers)},
                   {"max_block_barriers_per_world_launch", k.max_barriers_per_world},
                   {"warp_syncs_per_world_step", per_world_step(k.warp_syncs)},
                   {"max_warp_syncs_per_world_launch", k.max_warp_syncs_per_world},
                   {"warp_collectives_per_world_step", per_world_step(k.collectives)}});
    }
    j["emulation"] = e;
  }
  if (r.mem_total >= 0)
    j["memory_per_world"] = {{"total_bytes", r.mem_total},
                             {"solver_workspace_bytes", r.mem_solver_data},
                             {"constraint_buffers_bytes", r.mem_solver_solve},
                             {"other_bytes", r.mem_total - r.mem_solver_data - r.mem_solver_solve},
                             {"largest_array", r.mem_largest_name},
                             {"largest_array_bytes", r.mem_largest}};
  if (r.mem_total >= 0) {
    nlohmann::json arrays = nlohmann::json::object();
    for (const auto& [name, bytes] : r.mem_detail) arrays[name] = bytes;
    j["memory_per_world"]["arrays"] = arrays;
    nlohmann::json on_chip = nlohmann::json::object();
    for (const auto& [name, bytes] : r.on_chip) on_chip[name] = bytes;
    j["memory_per_world"]["on_chip_bytes"] = on_chip;
  }
  j["host_rss_growth_mib"] = r.rss_growth >= 0 ? nlohmann::json(static_cast<double>(r.rss_growth) / 1048576.0)
                                               : nlohmann::json(nullptr);
  if (!r.have_stats) {
    j["stats"] = nullptr;
    j["stages_ms"] = nullptr;
    return j;
  }
  const double n = static_cast<double>(r.sampled_steps);
  json st;
  st["collide"] = r.t_collide / n;
  st["free_motion"] = r.t_free_motion / n;
  st["contact_setup"] = r.t_setup / n;
  st["solve"] = r.t_solve / n;
  st["integrate"] = r.t_integrate / n;
  st["total"] = (r.t_collide + r.t_free_motion + r.t_setup + r.t_solve + r.t_integrate) / n;
  j["stages_ms"] = st;
  json s;
  s["every"] = r.stats_every;
  s["sampled_steps"] = r.sampled_steps;
  s["world_steps"] = r.newton.count();
  s["pass_wall_s"] = r.stats_wall_s;
  s["newton_iterations"] = {{"mean", r.newton.mean()},
                            {"p50", r.newton.percentile(0.5)},
                            {"p95", r.newton.percentile(0.95)},
                            {"max", r.newton.max()}};
  s["line_search_iterations"] = {{"mean", r.line_search.mean()},
                                 {"p95", r.line_search.percentile(0.95)},
                                 {"max", r.line_search.max()}};
  s["contacts_per_world"] = {{"mean", r.contacts.mean()}, {"max", r.contacts.max()}};
  s["truncated_contacts_total"] = r.truncated_total;
  json sc = json::object();
  for (const char* k :
       {"converged", "iteration_limit", "line_search_failed", "not_descent", "non_finite", "factorization_failed",
        "fp64_retry", "coriolis_fallback"}) {
    const auto it = r.status_counts.find(k);
    sc[k] = it == r.status_counts.end() ? 0LL : it->second;
  }
  s["status_world_steps"] = sc;
  j["stats"] = s;
  return j;
}

nlohmann::json meta_json(const Scene& scene, const Options& o, const SolverOptions& solver, int max_rigid_contact,
                         const RunResult& any) {
  using nlohmann::json;
  json j = record_header("sap_bench", scene, o.scene_path);
  j["backend"] = any.device.rfind("CPU", 0) == 0 ? "cpu" : "cuda";
  j["device"] = any.device;
  j["threads"] = any.threads;
  j["cpu_model"] = cpu_model_name();
  j["cpu_hardware_threads"] = cpu_hardware_threads();
  j["dt"] = scene.dt;
  j["model"] = {{"nbody", scene.model.nbody}, {"nq", scene.model.nq},       {"nv", scene.model.nv},
                {"ngeom", scene.model.ngeom}, {"npair", scene.model.npair}, {"nu", scene.model.nu}};
  std::map<std::string, int> geom_types;  // geoms by type (robot corpus table)
  for (int g = 0; g < scene.model.ngeom; ++g) ++geom_types[geom_type_name(scene.model.geom_type[static_cast<std::size_t>(g)])];
  j["model"]["geom_types"] = geom_types;
  j["max_rigid_contact"] = max_rigid_contact;
  j["solver"] = config_json(solver.resolve());
  json ov = json::array();
  if (!o.solver.preset.empty()) ov.push_back("contact_preset_variant=" + o.solver.preset);
  if (!o.solver.line_search.empty()) ov.push_back("line_search_variant=" + o.solver.line_search);
  for (const auto& kv : o.solver.sets) ov.push_back(kv.first + "=" + kv.second);
  j["solver_overrides"] = ov;
  j["warnings"] = scene.warnings;
  return j;
}

// How the contact capacity was chosen (docs/collision.md, "Capacity"): "scene" (given by the
// scene) or "estimate" with the probe's figures.
void add_capacity_estimate(nlohmann::json& j, const ContactCapacityEstimate& e) {
  if (e.pair_bound == 0 && e.capacity == 0 && j["max_rigid_contact"].get<int>() > 0) {
    j["contact_capacity_source"] = "scene";
    return;
  }
  j["contact_capacity_source"] = "estimate";
  j["contact_capacity_estimate"] = {{"pair_bound", e.pair_bound},
                                    {"probe_steps", e.probe_steps},
                                    {"probe_max_contacts", e.probe_max}};
}

double num(const nlohmann::json& x) { return x.is_number() ? x.get<double>() : std::nan(""); }

// 79260.3 -> "79,260"; 12.345 -> "12.35"; small values keep 4 significant digits.
std::string human(double x) {
  if (!std::isfinite(x)) return "n/a";
  char buf[64];
  if (std::fabs(x) < 1000) {
    std::snprintf(buf, sizeof buf, "%.4g", x);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.0f", x);
  std::string d = buf, out;
  const std::size_t lead = d[0] == '-' ? 1 : 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    out += d[i];
    const std::size_t rest = d.size() - 1 - i;
    if (i >= lead && rest > 0 && rest % 3 == 0) out += ',';
  }
  return out;
}

void print_summary(const Scene& scene, const Options& o, const nlohmann::json& meta, const RunResult& r,
                   const nlohmann::json& rec) {
  std::printf("sap_bench  %s  (%s)\n", scene.name.c_str(), o.scene_path.c_str());
  std::printf("  device        %s; host %s, %d hardware threads\n", r.device.c_str(), cpu_model_name().c_str(),
              cpu_hardware_threads());
  std::printf("  model         nbody %d, nq %d, nv %d, ngeom %d, contact capacity %d per world", scene.model.nbody,
              scene.model.nq, scene.model.nv, scene.model.ngeom, meta["max_rigid_contact"].get<int>());
  if (meta.contains("contact_capacity_estimate")) {
    const auto& e = meta["contact_capacity_estimate"];
    std::printf(" (estimate: %d-step probe met %d, pair bound %d)", e["probe_steps"].get<int>(),
                e["probe_max_contacts"].get<int>(), e["pair_bound"].get<int>());
  } else {
    std::printf(" (scene)");
  }
  std::printf("\n");
  std::printf("  collision     %d candidate pairs, %s\n", r.collision_pairs,
              r.collision_convex ? "kernel with the convex solvers (GJK/EPA, heightfield)"
                                 : "analytic pairs only (kernel without the convex solvers)");
  const auto& sv = meta["solver"];
  std::printf("  solver        %s, line search %s%s\n", sv["preset"].get<std::string>().c_str(),
              sv["line_search_variant"].get<std::string>().c_str(),
              meta["solver_overrides"].empty() ? ""
                                               : (" (overrides: " + meta["solver_overrides"].dump() + ")").c_str());
  std::printf("  run           nworld %d, dt %g s, %lld timed steps after %lld warm-up steps%s%s (setup %.3f s)\n",
              r.nworld, scene.dt, r.steps, r.warmup + r.graph,
              r.graph > 0 ? (", timed as step(" + std::to_string(r.graph) + ")").c_str() : "",
              r.repeats > 1 ? (", " + std::to_string(r.repeats) + " repeats").c_str() : "", r.setup_s);
  std::printf("  throughput    %s world-steps/s  (%s steps/s, %.4g ms per step, wall %.3f s)\n",
              human(num(rec["world_steps_per_s"])).c_str(), human(num(rec["steps_per_s"])).c_str(),
              num(rec["ms_per_step"]), r.wall_s);
  std::printf("  realtime      %s x per world, %s x aggregate (simulated s per wall s)\n",
              human(num(rec["realtime_factor_per_world"])).c_str(),
              human(num(rec["realtime_factor_aggregate"])).c_str());
  if (r.have_stats) {
    const auto& st = rec["stages_ms"];
    std::printf("  stages        ms/step: collide %.4g | free motion %.4g | contact setup %.4g | solve %.4g | "
                "integrate %.4g | sum %.4g\n",
                st["collide"].get<double>(), st["free_motion"].get<double>(), st["contact_setup"].get<double>(),
                st["solve"].get<double>(), st["integrate"].get<double>(), st["total"].get<double>());
    const auto& s = rec["stats"];
    std::printf("  statistics    over %lld world-steps (%s of a replay pass, %.2f s)\n",
                s["world_steps"].get<long long>(),
                r.stats_every == 1 ? "every step" : ("every " + std::to_string(r.stats_every) + "th step").c_str(),
                r.stats_wall_s);
    std::printf("  newton        mean %.3g, p95 %d, max %d iterations per world-step\n", r.newton.mean(),
                r.newton.percentile(0.95), r.newton.max());
    std::printf("  line search   mean %.3g, max %d evaluations per world-step\n", r.line_search.mean(),
                r.line_search.max());
    std::printf("  contacts      mean %.3g, max %d per world\n", r.contacts.mean(), r.contacts.max());
    std::printf("  truncated     %lld contacts (total over world-steps)\n", r.truncated_total);
    const auto& sc = s["status_world_steps"];
    std::printf("  exit status   converged %lld, iteration limit %lld, line search failed %lld, not descent %lld "
                "(world-steps)\n",
                sc["converged"].get<long long>(), sc["iteration_limit"].get<long long>(),
                sc["line_search_failed"].get<long long>(), sc["not_descent"].get<long long>());
    if (sc["coriolis_fallback"].get<long long>() > 0)
      std::printf("  coriolis      %lld world-steps took the explicit Coriolis terms (midpoint passes not contracting)\n",
                  sc["coriolis_fallback"].get<long long>());
  } else {
    std::printf("  statistics    skipped (--stats-every 0)\n");
  }
  std::printf("  fp64 retry    %lld world-steps repeated in fp64 after an fp32 failure, %lld rescued, in %d worlds",
              r.fp64_retries, r.fp64_rescued, r.fp64_retry_worlds);
  if (r.fp64_overflow > 0) std::printf("; %lld not repeated (more failed worlds than the capacity)", r.fp64_overflow);
  std::printf("\n");
  std::printf("  failed        %zu worlds%s", r.failed_worlds.size(), r.failed_worlds.empty() ? "" : " (first:");
  int shown = 0;
  for (int w : r.failed_worlds) {
    if (shown++ == 8) break;
    std::printf(" %d", w);
  }
  std::printf("%s; non-finite state in %d worlds\n", r.failed_worlds.empty() ? "" : ")", r.nonfinite_state_worlds);
  std::printf("  final state   max |qvel| %.4g, %d of %d worlds at rest (every |qvel_i| < %g)\n", r.final_max_qvel,
              r.final_rest_worlds, r.nworld, kRestSpeed);
  if (rec.contains("memory_per_world")) {
    const auto& mem = rec["memory_per_world"];
    std::printf("  memory        %lld bytes per world (solver workspace %lld, constraint buffers %lld, state, "
                "contacts and collision %lld; largest array %s %lld)\n",
                mem["total_bytes"].get<long long>(), mem["solver_workspace_bytes"].get<long long>(),
                mem["constraint_buffers_bytes"].get<long long>(), mem["other_bytes"].get<long long>(),
                mem["largest_array"].get<std::string>().c_str(), mem["largest_array_bytes"].get<long long>());
    if (mem.contains("on_chip_bytes")) {
      std::printf("  on chip       per world, team shared memory (not in the bytes above):");
      for (auto it = mem["on_chip_bytes"].begin(); it != mem["on_chip_bytes"].end(); ++it)
        std::printf(" %s %lld", it.key().c_str(), it.value().get<long long>());
      std::printf("\n");
    }
    if (o.memory_detail && mem.contains("arrays"))
      for (auto it = mem["arrays"].begin(); it != mem["arrays"].end(); ++it)
        std::printf("    %-32s %8lld\n", it.key().c_str(), it.value().get<long long>());
  }
  if (!scene.warnings.empty()) {
    const std::vector<NoteGroup> groups = group_notes(scene.warnings);
    std::printf("  scene notes   %zu kinds\n", groups.size());
    for (const NoteGroup& g : groups) std::printf("    %5d x %s\n", g.count, g.kind.c_str());
  }
  if (rec.contains("emulation")) {
    std::printf("  emulated      teams of %d lanes; per world-step (timed pass): block barriers, warp syncs, "
                "warp collectives\n", o.emulated_lanes);
    double total = 0, total_warp = 0, total_coll = 0;
    for (const auto& k : rec["emulation"]) {
      if (!k["team"].get<bool>()) continue;
      total += k["block_barriers_per_world_step"].get<double>();
      total_warp += k["warp_syncs_per_world_step"].get<double>();
      total_coll += k["warp_collectives_per_world_step"].get<double>();
      std::printf("    %-40s %10.1f %10.1f %10.1f  (max %lld / %lld in one world-launch)\n",
                  k["kernel"].get<std::string>().c_str(), k["block_barriers_per_world_step"].get<double>(),
                  k["warp_syncs_per_world_step"].get<double>(), k["warp_collectives_per_world_step"].get<double>(),
                  k["max_block_barriers_per_world_launch"].get<long long>(),
                  k["max_warp_syncs_per_world_launch"].get<long long>());
    }
    std::printf("    %-40s %10.1f %10.1f %10.1f\n", "total", total, total_warp, total_coll);
  }
}

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  // Fail fast on --backend cuda without a device; say when --threads has no effect.
  if (resolve_backend(o.backend) == Backend::CUDA && o.threads > 0)
    std::fprintf(stderr, "sap_bench: note: --threads applies to the CPU backend only; ignored on CUDA\n");
  const Scene scene = load_bench_scene(o.scene_path, o.load);
  SolverOptions solver = scene.solver;
  const bool override_solver = o.solver.any();
  if (override_solver) apply_solver_overrides(solver, o.solver);
  // The contact capacity the simulators will use: the scene's, else the probe estimate, which
  // is computed once here and passed on (every Simulator below would repeat the probe).
  Scene sized_scene = scene;
  ContactCapacityEstimate estimate;
  if (sized_scene.max_rigid_contact == 0) {
    estimate = estimate_scene_contact_capacity(scene, override_solver ? &solver : nullptr);
    sized_scene.max_rigid_contact = estimate.capacity;
  }
  const int max_rigid_contact = sized_scene.max_rigid_contact;

  if (!o.scaling_mode) {
    const int nworld = o.worlds > 0 ? o.worlds : scene.num_worlds;
    const RunResult r = run_once(sized_scene, o, nworld, o.stats_every, override_solver ? &solver : nullptr);
    nlohmann::json rec = meta_json(scene, o, solver, max_rigid_contact, r);
    add_capacity_estimate(rec, estimate);
    rec["mode"] = "single";
    const nlohmann::json run_rec = run_json(scene, r);
    for (auto it = run_rec.begin(); it != run_rec.end(); ++it) rec[it.key()] = it.value();
    if (!o.quiet) print_summary(scene, o, rec, r, rec);
    if (!o.json_path.empty()) write_json_file(o.json_path, rec);
    return r.failed_worlds.empty() && r.nonfinite_state_worlds == 0 ? 0 : 3;
  }

  // Scaling sweep: one simulator per world count, timed pass only unless --stats-every K.
  nlohmann::json out;
  nlohmann::json records = nlohmann::json::array();
  std::string stopped;
  bool any_failed = false;
  if (!o.quiet)
    std::printf("sap_bench scaling  %s  (%s), %lld steps%s after %lld warm-up steps\n%8s %8s %10s %14s %12s %12s %8s\n",
                scene.name.c_str(), o.scene_path.c_str(), o.steps,
                o.min_time > 0 ? (", repeated for >= " + human(o.min_time) + " s").c_str() : "", o.warmup, "nworld",
                "repeats", "wall s", "world-steps/s", "ms/step", "RTF aggr.", "failed");
  const bool cpu = resolve_backend(o.backend) == Backend::CPU;
  for (std::size_t i = 0; i < o.scaling.size(); ++i) {
    const int n = o.scaling[i];
    RunResult r;
    try {
      r = run_once(sized_scene, o, n, o.stats_every, override_solver ? &solver : nullptr);
    } catch (const std::bad_alloc&) {
      stopped = "out of memory at nworld " + std::to_string(n);
      break;
    } catch (const std::runtime_error& e) {
      // CUDA allocation failures arrive as runtime_error; anything else is a real error.
      const std::string what = e.what();
      if (what.find("memory") == std::string::npos && what.find("alloc") == std::string::npos) throw;
      stopped = "allocation failed at nworld " + std::to_string(n) + ": " + what;
      break;
    }
    if (out.empty()) {
      out = meta_json(scene, o, solver, max_rigid_contact, r);
      add_capacity_estimate(out, estimate);
    }
    nlohmann::json rec = run_json(scene, r);
    records.push_back(rec);
    any_failed = any_failed || !r.failed_worlds.empty() || r.nonfinite_state_worlds > 0;
    if (!o.quiet) {
      std::printf("%8d %8d %10.3f %14s %12.4g %12.4g %8zu\n", n, r.repeats, r.wall_s,
                  human(num(rec["world_steps_per_s"])).c_str(), num(rec["ms_per_step"]),
                  num(rec["realtime_factor_aggregate"]), r.failed_worlds.size());
      std::fflush(stdout);
    }
    // On the CPU, stop before a world count whose memory (extrapolated from this one's resident
    // growth) would not fit in 80% of the available memory: Linux kills rather than failing.
    const long long avail = memory_available_bytes();
    if (cpu && i + 1 < o.scaling.size() && r.rss_growth > 0 && avail > 0) {
      const double per_world = static_cast<double>(r.rss_growth) / n;
      const double need = per_world * o.scaling[i + 1];
      if (need > 0.8 * static_cast<double>(avail)) {
        stopped = "stopped before nworld " + std::to_string(o.scaling[i + 1]) + ": about " +
                  std::to_string(static_cast<long long>(need / 1048576)) + " MiB needed, " +
                  std::to_string(avail / 1048576) + " MiB available";
        break;
      }
    }
  }
  if (out.empty()) throw std::runtime_error("scaling: no world count could run (" + stopped + ")");
  out["mode"] = "scaling";
  out["steps"] = o.steps;
  out["min_time_s"] = o.min_time;
  out["warmup"] = o.warmup;
  out["stats_every"] = o.stats_every;
  out["records"] = records;
  out["stopped"] = stopped.empty() ? nlohmann::json(nullptr) : nlohmann::json(stopped);
  if (!o.quiet) {
    std::printf("  device %s; host %s, %d hardware threads\n", out["device"].get<std::string>().c_str(),
                cpu_model_name().c_str(), cpu_hardware_threads());
    if (!stopped.empty()) std::printf("  %s\n", stopped.c_str());
  }
  if (!o.json_path.empty()) write_json_file(o.json_path, out);
  return any_failed ? 3 : 0;
}

}  // namespace
}  // namespace sap::bench

int main(int argc, char** argv) { return sap::bench::tool_main("sap_bench", sap::bench::run, argc, argv); }
