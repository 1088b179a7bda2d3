// Robot-learning rollout with the rollout API (docs/rollouts.md): MuJoCo's humanoid in N worlds
// (default 4096), a PD-to-standing policy plus noise acting every 4 physics steps (decimation),
// episodes that end when the torso falls below a height and restart by a subset reset with
// seeded noise, and a summary (env-steps/s, episode lengths, resets, retries, failures).
//
//   rollout_humanoid [--nworld N] [--iters K] [--backend cpu|cuda|auto] [--threads T] [--scene S]
//                    --scene S     a JSON scene with a body named 'torso' (default: the
//                                  repository's scenes/humanoid.json)
//                    [--compare]   also time the same loop through the plain API (rollout overhead)
//
// The policy runs on the host over zero-copy views (CPU backend: the simulator's own memory;
// CUDA: the example copies the qpos/qvel views to the host, a policy on the GPU would read the
// DLPack tensors instead).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sap/sap.hpp"
#include "sap/simulator.hpp"

namespace {

struct Args {
  int nworld = 4096, iters = 100, threads = 0;
  std::string backend = "auto", scene = "";
  bool compare = false;
};

constexpr int kDecimation = 4;
constexpr double kFallHeight = 0.4;  // torso below this: episode over (the squat keyframe starts at 0.6)

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", s.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (s == "--nworld") a.nworld = std::atoi(next());
    else if (s == "--iters") a.iters = std::atoi(next());
    else if (s == "--threads") a.threads = std::atoi(next());
    else if (s == "--backend") a.backend = next();
    else if (s == "--scene") a.scene = next();
    else if (s == "--compare") a.compare = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--nworld N] [--iters K] [--backend cpu|cuda|auto] [--threads T] [--scene S] "
                   "[--compare]\n",
                   argv[0]);
      return 2;
    }
  }
  if (a.scene.empty()) a.scene = std::string(SAP_EXAMPLE_SOURCE_DIR) + "/scenes/humanoid.json";
  sap::Scene scene;
  try {
    scene = sap::load_scene(a.scene);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rollout_humanoid: %s\n", e.what());
    return 1;
  }
  const sap::Model& m = scene.model;
  sap::SimulatorOptions o;
  o.nworld = a.nworld;
  o.backend = sap::parse_backend(a.backend);
  o.threads = a.threads;
  o.scene_controls = false;
  o.retry.depth = 2;  // rescue worlds whose step fails with 2 or 4 sub-steps
  const int nw = a.nworld, nu = m.nu, nq = m.nq, nv = m.nv;
  const int torso = m.body_id("torso");
  if (torso < 0) {
    std::fprintf(stderr, "rollout_humanoid: %s: the scene has no body named 'torso'\n", a.scene.c_str());
    return 1;
  }

  // ---- the rollout loop
  auto run = [&](bool rollout_api, std::vector<int>* lengths, long long* resets) {
    sap::Simulator sim(scene, o);
    const bool cuda = sim.context().backend() == sap::Backend::CUDA;
    sap::ArrayView qpos = sim.qpos_view(), qvel = sim.qvel_view();
    std::vector<double> hq, hv;  // host copies (CUDA, or the plain API)
    std::vector<float> u(static_cast<std::size_t>(nw) * nu, 0.0f);
    std::vector<double> ud(u.size());
    std::vector<int> done(static_cast<std::size_t>(nw)), age(static_cast<std::size_t>(nw), 0);
    std::mt19937 rng(1);
    std::normal_distribution<float> noise(0.0f, 0.05f);
    double t_sim = 0;
    std::uint64_t seed = 1;
    for (int it = 0; it < a.iters; ++it) {
      const double* q;
      const double* v;
      if (rollout_api && !cuda) {  // zero copy
        q = static_cast<const double*>(qpos.data);
        v = static_cast<const double*>(qvel.data);
      } else {
        hq = sim.state().qpos.buffer().to_host();
        hv = sim.state().qvel.buffer().to_host();
        q = hq.data();
        v = hv.data();
      }
      // policy: PD of every actuated hinge to 0 (standing straight), motor units, plus noise
      for (int w = 0; w < nw; ++w)
        for (int i = 0; i < nu; ++i) {
          const int dof = m.actuator_dofadr[static_cast<std::size_t>(i)];
          const int qa = dof + 1;  // free root: qpos has one more coordinate than qvel before the hinges
          const double tau = -60.0 * q[static_cast<std::size_t>(w) * nq + qa] - 4.0 * v[static_cast<std::size_t>(w) * nv + dof];
          const double c = std::max(-1.0, std::min(1.0, tau / m.actuator_gear[static_cast<std::size_t>(i)]));
          u[static_cast<std::size_t>(w) * nu + i] = static_cast<float>(c) + noise(rng);
        }
      const double t0 = now();
      if (rollout_api) {
        sim.set_control(u.data(), sap::DType::F32);
        sim.step(kDecimation);
      } else {
        std::copy(u.begin(), u.end(), ud.begin());
        sim.set_control(ud);
        for (int k = 0; k < kDecimation; ++k) sim.step();
      }
      // episode ends: torso height (body pose view of the current state / plain: host kinematics-free qpos z)
      int n = 0;
      if (rollout_api) {
        sap::ArrayView pos = sim.body_pos_view();
        std::vector<double> hp;
        const double* p = static_cast<const double*>(pos.data);
        if (cuda) {
          hp = pos.to_host<double>();
          p = hp.data();
        }
        for (int w = 0; w < nw; ++w)
          n += done[static_cast<std::size_t>(w)] = p[w * pos.strides[0] + 3 * torso + 2] < kFallHeight;
      } else {
        const std::vector<double> hq2 = sim.state().qpos.buffer().to_host();
        for (int w = 0; w < nw; ++w) n += done[static_cast<std::size_t>(w)] = hq2[static_cast<std::size_t>(w) * nq + 2] < kFallHeight;
      }
      if (n > 0) {
        sap::ResetOptions r;
        r.qpos_noise = 0.01;
        r.seed = seed++;
        if (rollout_api) sim.reset(sap::WorldSelection::mask(done), r);
        else sim.reset(sap::WorldSelection::mask(done), r);  // same physics in both loops
      }
      t_sim += now() - t0;
      for (int w = 0; w < nw; ++w) {
        ++age[static_cast<std::size_t>(w)];
        if (done[static_cast<std::size_t>(w)]) {
          if (lengths) lengths->push_back(age[static_cast<std::size_t>(w)]);
          age[static_cast<std::size_t>(w)] = 0;
        }
      }
      if (resets) *resets += n;
    }
    sim.context().synchronize();
    const sap::WorldCounters c = sim.counters();
    long long retries = 0, failures = 0;
    for (int w = 0; w < nw; ++w) retries += c.retries[static_cast<std::size_t>(w)], failures += c.failures[static_cast<std::size_t>(w)];
    std::printf("  %-8s %s: %.4g env-steps/s (%d worlds x %d policy steps in %.3f s of simulator calls), "
                "retried steps %lld, failed world-steps since reset %lld\n",
                rollout_api ? "rollout" : "plain", sim.context().device_name().c_str(),
                double(nw) * a.iters / t_sim, nw, a.iters, t_sim, retries, failures);
    return std::make_pair(t_sim, sim.state().qpos.buffer().to_host());
  };

  std::printf("rollout_humanoid: %s, nworld %d, decimation %d, dt %g s, fall height %.2f m\n", scene.name.c_str(), nw,
              kDecimation, scene.dt, kFallHeight);
  std::vector<int> lengths;
  long long resets = 0;
  const auto r1 = run(true, &lengths, &resets);
  double mean = 0;
  for (int l : lengths) mean += l;
  std::printf("  episodes ended %zu (resets %lld), mean length %.1f policy steps\n", lengths.size(), resets,
              lengths.empty() ? 0.0 : mean / lengths.size());
  if (a.compare) {
    const auto r0 = run(false, nullptr, nullptr);
    const bool same = r0.second == r1.second;
    std::printf("  rollout API overhead vs plain stepping: %+.2f %% (final states %s)\n",
                100.0 * (r1.first - r0.first) / r0.first, same ? "identical" : "DIFFER");
    if (!same) return 3;
  }
  return 0;
}
