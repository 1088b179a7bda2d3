// sap_longrun: long runs for reliability (issue 14). Steps a scene for many steps on a few
// worlds and samples, every K steps, the pose of one free body (default: the free body that
// starts highest, e.g. the top box of a stack, the humanoid's root) in world 0, its drift since
// the end of settling, the largest speed over all worlds, and failures / non-finite states.
// A resting scene should show a steady compliance offset and a creep bounded by SAP's stiction
// regularisation (docs/solver.md, "Resting contact: offset and creep"); see docs/reliability.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "sap/simulator.hpp"
#include "sap/status.hpp"

namespace {

constexpr const char* kHelp = R"(usage: sap_longrun SCENE [options]

Steps SCENE on the CPU and samples one free body of world 0 every K steps: position, drift
since the end of settling, the largest |qvel| entry over all worlds, failed steps, non-finite
states. Exit code 1 if any world failed or went non-finite.

options:
  --steps N       steps (default 100000)
  --worlds N      worlds (default 2)
  --every K       sample period in steps (default 1000)
  --settle N      steps before the drift reference is taken (default 2000)
  --joint NAME    free joint to watch (default: the free joint that starts highest)
  --threads N     CPU threads (default 1)
  --csv OUT       samples as CSV
  -h, --help      this help
)";

// Reported by tool_main with a pointer to --help, exit code 2.
[[noreturn]] void usage_error(const std::string& what) { throw sap::bench::UsageError(what); }

long parse_count(const std::string& opt, const char* text, long lo) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < lo)
    usage_error(opt + ": expected an integer >= " + std::to_string(lo) + ", got '" + text + "'");
  return v;
}

int run(int argc, char** argv) {
  std::string scene_path, joint_name, csv;
  long steps = 100000, worlds = 2, every = 1000, settle = 2000, threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") sap::bench::print_help_and_exit(kHelp);
    else if (a == "--steps") steps = parse_count(a, value(), 1);
    else if (a == "--worlds") worlds = parse_count(a, value(), 1);
    else if (a == "--every") every = parse_count(a, value(), 1);
    else if (a == "--settle") settle = parse_count(a, value(), 0);
    else if (a == "--threads") threads = parse_count(a, value(), 1);
    else if (a == "--joint") joint_name = value();
    else if (a == "--csv") csv = value();
    else if (!a.empty() && a[0] == '-') usage_error("unknown option '" + a + "'");
    else if (scene_path.empty()) scene_path = a;
    else usage_error("more than one scene given");
  }
  if (scene_path.empty()) usage_error("no scene given");
  const sap::Scene scene = sap::load_scene(scene_path);
  const sap::Model& m = scene.model;
  int joint = -1;
  for (int j = 0; j < m.njnt; ++j) {
    if (m.jnt_type[static_cast<std::size_t>(j)] != sap::kJointFree) continue;
    const double z = scene.qpos0[static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(j)] + 2)];
    if (!joint_name.empty()
            ? m.jnt_names[static_cast<std::size_t>(j)] == joint_name
            : joint < 0 ||
                  z > scene.qpos0[static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(joint)] + 2)])
      joint = j;
  }
  if (joint < 0)
    usage_error(joint_name.empty() ? "the scene has no free joint to watch" : "no free joint '" + joint_name + "'");
  const std::size_t adr = static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(joint)]);

  sap::SimulatorOptions o;
  o.nworld = static_cast<int>(worlds);
  o.backend = sap::Backend::CPU;
  o.threads = static_cast<int>(threads);
  sap::Simulator sim(scene, o);
  sim.reset();
  std::FILE* out = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
  if (!csv.empty() && !out) usage_error("cannot write '" + csv + "'");
  const char* header = "step,time_s,x,y,z,drift_xy,drift_z,max_abs_qvel,failed_steps,nonfinite_worlds\n";
  if (out) std::fputs(header, out);
  std::printf("scene %s: %ld worlds, %ld steps of %g s, watching joint '%s'\n", scene.name.c_str(), worlds, steps,
              scene.dt, m.jnt_names[static_cast<std::size_t>(joint)].c_str());
  std::printf("%10s %10s %12s %12s %12s %11s %11s %11s %6s %6s\n", "step", "t (s)", "x", "y", "z", "drift_xy",
              "drift_z", "max|qvel|", "failed", "nonfin");
  double ref[3] = {0, 0, 0};
  long failed = 0;
  int nonfinite = 0;
  double max_drift_xy = 0, max_drift_z = 0;
  for (long k = 1; k <= steps; ++k) {
    sim.step();
    failed += static_cast<long>(sim.failed_worlds().size());
    if (k != settle && k % every != 0 && k != steps) continue;
    const std::vector<double> q = sim.state().qpos.world_to_host(0);
    double vmax = 0;
    nonfinite = 0;
    for (int w = 0; w < sim.nworld(); ++w) {
      bool finite = true;
      for (double x : sim.state().qpos.world_to_host(w)) finite = finite && std::isfinite(x);
      for (double x : sim.state().qvel.world_to_host(w)) {
        finite = finite && std::isfinite(x);
        vmax = std::max(vmax, std::abs(x));
      }
      nonfinite += !finite;
    }
    if (k == settle) std::copy(q.begin() + static_cast<long>(adr), q.begin() + static_cast<long>(adr) + 3, ref);
    const bool settled = k >= settle;
    const double dxy = settled ? std::hypot(q[adr] - ref[0], q[adr + 1] - ref[1]) : 0.0;
    const double dz = settled ? q[adr + 2] - ref[2] : 0.0;
    max_drift_xy = std::max(max_drift_xy, dxy);
    max_drift_z = std::max(max_drift_z, std::abs(dz));
    std::printf("%10ld %10.3f %12.8f %12.8f %12.8f %11.3e %11.3e %11.3e %6ld %6d\n", k, k * scene.dt, q[adr],
                q[adr + 1], q[adr + 2], dxy, dz, vmax, failed, nonfinite);
    if (out)
      std::fprintf(out, "%ld,%.6f,%.12g,%.12g,%.12g,%.6e,%.6e,%.6e,%ld,%d\n", k, k * scene.dt, q[adr], q[adr + 1],
                   q[adr + 2], dxy, dz, vmax, failed, nonfinite);
  }
  if (out) std::fclose(out);
  const double span = (steps - settle) * scene.dt;
  std::printf("summary: failed steps %ld, non-finite worlds %d, max drift after settling: xy %.3e m, z %.3e m "
              "over %.1f s (mean xy creep %.3e m/s)\n",
              failed, nonfinite, max_drift_xy, max_drift_z, span, span > 0 ? max_drift_xy / span : 0.0);
  return failed == 0 && nonfinite == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return sap::bench::tool_main("sap_longrun", run, argc, argv); }
