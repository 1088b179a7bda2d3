// sap_rollout_bench: env-steps/s of the robot-learning rollout loop (docs/rollouts.md) next to
// plain stepping, and the overhead of the rollout API (issue 13). Usage: --help and
// docs/benchmarks.md.
//
// Two simulators of the same scene and world count run in lock step, in rounds (each: reset,
// warm-up, timed env steps):
//   rollout  per env step: control write (a PD policy plus noise written into control_view,
//            reading qpos_view/qvel_view), step(n), observation read (body_pos_view,
//            contact_flag_view: the done test), subset reset of the done worlds (seeded noise).
//   plain    per env step: step() x n, timed alone; the same controls (copied from the rollout
//            simulator) and the same resets (same mask and seed) are applied outside its timer,
//            so both simulators compute identical physics (the final states are compared).
// env-steps/s = nworld x iters x rounds / timed wall (one env step = n physics steps).
// API overhead = rollout wall / plain wall - 1 over identical physics; it includes everything
// the rollout loop adds to the physics (policy evaluation and control write, pose and contact
// observations, done test, resets). The rollout loop's phases are also timed (synchronising the
// backend between phases on CUDA).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "sap/simulator.hpp"

namespace sap::bench {
namespace {

constexpr const char* kHelp = R"(usage: sap_rollout_bench SCENE [options]

Measures env-steps/s of the rollout loop (control write, step(n), observation read, subset reset)
next to plain stepping (step() x n, same controls and resets applied outside its timer, so that
both compute identical physics), and the overhead of the rollout API: rollout wall / plain wall - 1
(also the median over env steps, robust to preemption on a loaded machine).

options:
  --worlds N            number of worlds (default: the scene's num_worlds)
  --iters N             timed policy steps per round (default 50)
  --substeps N          physics steps per policy step, step(n) (default 4)
  --warmup N            untimed policy steps per round (default 5)
  --rounds N            rounds of (plain, rollout), summed (default 3)
  --fall-fraction F     a world is done when its root body's height falls below F x its initial
                        height (default 0.6)
  --episode N           ... or after N policy steps (default 25); world w starts its first
                        episode at age w mod N, so that resets are spread over the env steps
  --max-overhead PCT    exit 3 when the API overhead exceeds PCT % (default: no check)
  --backend B           cpu, cuda or auto (default auto)
  --threads N           CPU threads (default 0 = all)
  --dt SEC              override the scene's time step
  --json OUT            write the results as JSON to OUT
  --quiet               no summary on stdout
  -h, --help            this help
)";

struct Options : CommonOptions {
  int worlds = 0, iters = 50, substeps = 4, warmup = 5, rounds = 3, episode = 25;
  double fall_fraction = 0.6, max_overhead = -1;
  std::string json_path;
};

Options parse_options(int argc, char** argv) {
  Options o;
  parse_arguments(argc, argv, kHelp, o, [&](ArgReader& r, const std::string& a) {
    if (a == "--worlds") o.worlds = static_cast<int>(parse_int(a, r.value(a), 1, 1 << 24));
    else if (a == "--iters") o.iters = static_cast<int>(parse_int(a, r.value(a), 1, 1 << 30));
    else if (a == "--substeps") o.substeps = static_cast<int>(parse_int(a, r.value(a), 1, 1 << 20));
    else if (a == "--warmup") o.warmup = static_cast<int>(parse_int(a, r.value(a), 0, 1 << 30));
    else if (a == "--rounds") o.rounds = static_cast<int>(parse_int(a, r.value(a), 1, 1 << 20));
    else if (a == "--episode") o.episode = static_cast<int>(parse_int(a, r.value(a), 1, 1 << 30));
    else if (a == "--fall-fraction") o.fall_fraction = parse_double(a, r.value(a), 0.0, 1.0);
    else if (a == "--max-overhead") o.max_overhead = parse_double(a, r.value(a), 0.0, 1e6);
    else if (a == "--json") {
      o.json_path = r.value(a);
      if (o.json_path.empty()) throw UsageError("option --json expects a file name");
    } else return false;
    return true;
  });
  return o;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Phases {
  double control = 0, step = 0, observe = 0, reset = 0;
  double total() const { return control + step + observe + reset; }
};

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  const Scene scene = load_bench_scene(o.scene_path, o.load);
  const Model& m = scene.model;
  SimulatorOptions so;
  so.nworld = o.worlds;
  so.backend = o.backend;
  so.threads = o.threads;
  so.scene_controls = false;
  Simulator plain(scene, so), roll(scene, so);
  const int nw = roll.nworld(), nu = m.nu, nq = m.nq, nv = m.nv, n = o.substeps;
  const bool cuda = roll.context().backend() == Backend::CUDA;
  const int root = m.nbody > 1 ? 1 : 0;

  // Views, fixed for the simulator's lifetime.
  ArrayView ctrl = roll.control_view(), qpos = roll.qpos_view(), qvel = roll.qvel_view();
  ArrayView pos = roll.body_pos_view(), flag = roll.contact_flag_view();
  std::vector<double> host_u(static_cast<std::size_t>(nw) * nu), hq, hv, hp;
  std::vector<int> hf, done(static_cast<std::size_t>(nw), 0), age(static_cast<std::size_t>(nw), 0);
  std::vector<double> z0(static_cast<std::size_t>(nw));
  {
    const std::vector<double> p = roll.body_pos(0);
    for (int w = 0; w < nw; ++w) z0[static_cast<std::size_t>(w)] = p[3 * static_cast<std::size_t>(root) + 2];
  }
  plain.set_control(std::vector<double>(static_cast<std::size_t>(nw) * nu, 0.0));
  std::vector<double> mirror_u;
  std::uint64_t last_seed = 0;
  int last_ndone = 0;

  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::uint64_t seed = 1;
  long long resets = 0, episodes_len_sum = 0, episodes = 0, contacts_on = 0;

  auto policy_step = [&](Phases* ph) {
    auto sync = [&] {
      if (cuda) roll.context().synchronize();
    };
    double t0 = now();
    // control write: PD of every actuated dof toward 0 from the observation, plus noise
    const double* q = static_cast<const double*>(qpos.data);
    const double* v = static_cast<const double*>(qvel.data);
    if (cuda) {
      hq = roll.state().qpos.buffer().to_host();
      hv = roll.state().qvel.buffer().to_host();
      q = hq.data();
      v = hv.data();
    }
    double* u = cuda ? host_u.data() : static_cast<double*>(ctrl.data);
    for (int w = 0; w < nw; ++w)
      for (int i = 0; i < nu; ++i) {
        const std::size_t iu = static_cast<std::size_t>(i);
        const int dof = m.actuator_dofadr[iu];
        const int qa = m.jnt_qposadr[static_cast<std::size_t>(m.dof_jntid[static_cast<std::size_t>(dof)])];
        const double g = m.actuator_gear[iu] != 0 ? m.actuator_gear[iu] : 1.0;
        const double tau = -20.0 * q[static_cast<std::size_t>(w) * nq + qa] - 2.0 * v[static_cast<std::size_t>(w) * nv + dof];
        u[static_cast<std::size_t>(w) * nu + iu] = m.actuator_type[iu] == kActMotor ? tau / g + noise(rng) : noise(rng);
      }
    if (cuda) roll.set_control(host_u.data(), DType::F64);
    sync();
    double t1 = now();
    roll.step(n);
    sync();
    double t2 = now();
    // observation read: root height and contact flags
    const double* p = static_cast<const double*>(pos.data);
    const int* f = static_cast<const int*>(flag.data);
    if (cuda) {
      hp = pos.to_host<double>();
      hf = flag.to_host<int>();
      p = hp.data();
      f = hf.data();
    }
    int ndone = 0;
    for (int w = 0; w < nw; ++w) {
      const std::size_t ws = static_cast<std::size_t>(w);
      const double z = p[w * pos.strides[0] + 3 * root + 2];
      for (int b = 0; b < m.nbody; ++b) contacts_on += f[w * flag.strides[0] + b];
      ++age[ws];
      done[ws] = (z < o.fall_fraction * z0[ws] || age[ws] >= o.episode) ? 1 : 0;
      if (done[ws]) {
        ++ndone;
        episodes_len_sum += age[ws];
        ++episodes;
        age[ws] = 0;
      }
    }
    double t3 = now();
    if (ndone > 0) {
      ResetOptions r;
      r.qpos_noise = 0.01;
      r.seed = seed++;
      roll.reset(WorldSelection::mask(done), r);
      resets += ndone;
      last_seed = r.seed;
    }
    sync();
    double t4 = now();
    last_ndone = ndone;
    if (ph) {
      ph->control += t1 - t0;
      ph->step += t2 - t1;
      ph->observe += t3 - t2;
      ph->reset += t4 - t3;
    }
  };

  // The plain simulator mirrors one env step of the rollout simulator: same controls (copied
  // before its timer), n single steps (timed), same reset (after its timer).
  auto plain_step = [&]() {
    mirror_u = roll.control().ctrl.buffer().to_host();
    plain.set_control(mirror_u);
    plain.context().synchronize();
    const double t0 = now();
    for (int k = 0; k < n; ++k) plain.step();
    plain.context().synchronize();
    const double t = now() - t0;
    if (last_ndone > 0) {
      ResetOptions r;
      r.qpos_noise = 0.01;
      r.seed = last_seed;
      plain.reset(WorldSelection::mask(done), r);
    }
    return t;
  };

  double wall_plain = 0, wall_roll = 0;
  std::vector<double> ratios;  // per env step: rollout / plain
  Phases ph;
  for (int round = 0; round < o.rounds; ++round) {
    roll.reset();
    plain.reset();
    for (int w = 0; w < nw; ++w) age[static_cast<std::size_t>(w)] = w % o.episode;
    for (int k = 0; k < o.warmup; ++k) {
      policy_step(nullptr);
      plain_step();
    }
    for (int k = 0; k < o.iters; ++k) {
      roll.context().synchronize();
      const double t0 = now();
      policy_step(&ph);
      roll.context().synchronize();
      const double tr = now() - t0, tp = plain_step();
      wall_roll += tr;
      wall_plain += tp;
      ratios.push_back(tr / tp);
    }
  }
  const bool identical = plain.state().qpos.buffer().to_host() == roll.state().qpos.buffer().to_host() &&
                         plain.state().qvel.buffer().to_host() == roll.state().qvel.buffer().to_host();
  const double env_steps = double(nw) * o.iters * o.rounds;
  const double eps_plain = env_steps / wall_plain, eps_roll = env_steps / wall_roll;
  const double overhead = wall_roll / wall_plain - 1.0;
  std::sort(ratios.begin(), ratios.end());
  const double median_overhead = ratios[ratios.size() / 2] - 1.0;  // robust to preemption spikes
  const double outside = (ph.control + ph.observe + ph.reset) / ph.step;

  nlohmann::json j;
  j["tool"] = "sap_rollout_bench";
  j["scene"] = scene.name;
  j["device"] = roll.context().device_name();
  j["cpu"] = cpu_model_name();
  j["time"] = iso_time_now();
  j["nworld"] = nw;
  j["substeps"] = n;
  j["iters"] = o.iters;
  j["rounds"] = o.rounds;
  j["dt"] = scene.dt;
  j["env_steps_per_s_plain"] = eps_plain;
  j["env_steps_per_s_rollout"] = eps_roll;
  j["physics_steps_per_s_plain"] = eps_plain * n;
  j["ms_per_env_step"] = {{"control_write", 1e3 * ph.control / (o.iters * o.rounds)},
                          {"step_n", 1e3 * ph.step / (o.iters * o.rounds)},
                          {"observation_read", 1e3 * ph.observe / (o.iters * o.rounds)},
                          {"subset_reset", 1e3 * ph.reset / (o.iters * o.rounds)}};
  j["api_overhead_percent"] = 100.0 * overhead;
  j["api_overhead_median_percent"] = 100.0 * median_overhead;
  j["outside_step_n_percent"] = 100.0 * outside;
  j["identical_physics"] = identical;
  j["resets"] = resets;
  j["mean_episode_length"] = episodes ? double(episodes_len_sum) / double(episodes) : 0.0;
  if (!o.json_path.empty()) {
    std::ofstream f(o.json_path);
    if (!f) throw std::runtime_error("cannot write " + o.json_path);
    f << j.dump(2) << "\n";
  }
  if (!o.quiet) {
    const double per = 1e3 / (o.iters * o.rounds);
    std::printf("sap_rollout_bench  %s  (%s)\n", scene.name.c_str(), o.scene_path.c_str());
    std::printf("  run           %s, nworld %d, step(%d) per env step, dt %g s, %d rounds x %d env steps after %d "
                "warm-up\n",
                roll.context().device_name().c_str(), nw, n, scene.dt, o.rounds, o.iters, o.warmup);
    std::printf("  plain         %.4g env-steps/s  (step() x %d per env step, nothing else timed; %.4g physics "
                "world-steps/s)\n",
                eps_plain, n, eps_plain * n);
    std::printf("  rollout       %.4g env-steps/s  (control write, step(%d), observation read, subset reset)\n",
                eps_roll, n);
    std::printf("  phases        ms per env step: control write %.4g | step(n) %.4g | observation read %.4g | "
                "subset reset %.4g\n",
                per * ph.control, per * ph.step, per * ph.observe, per * ph.reset);
    std::printf("  API overhead  %+.2f %% (rollout wall / plain wall - 1, identical physics: final states %s)\n",
                100.0 * overhead, identical ? "identical" : "DIFFER");
    std::printf("                median over env steps of (rollout / plain - 1): %+.2f %%\n", 100.0 * median_overhead);
    std::printf("                of which outside step(n): %.2f %% of the step(n) time (control write + observation "
                "read + reset)\n",
                100.0 * outside);
    std::printf("  episodes      %lld resets, mean length %.1f env steps\n", resets,
                episodes ? double(episodes_len_sum) / double(episodes) : 0.0);
  }
  if (!identical) {
    std::fprintf(stderr, "sap_rollout_bench: the plain and rollout simulators diverged (not identical physics)\n");
    return 4;
  }
  if (o.max_overhead >= 0 && 100.0 * overhead > o.max_overhead) {
    std::fprintf(stderr, "sap_rollout_bench: API overhead %.2f %% exceeds --max-overhead %g %%\n", 100.0 * overhead,
                 o.max_overhead);
    return 3;
  }
  return 0;
}

}  // namespace
}  // namespace sap::bench

int main(int argc, char** argv) { return sap::bench::tool_main("sap_rollout_bench", sap::bench::run, argc, argv); }
