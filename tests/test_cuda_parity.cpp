// CUDA backend against the fp64 CPU oracle: the same scenes from the same initial states, 100
// steps. fp64 presets within 1e-10 relative, the fp32 path within 1e-4. Skipped (with a
// message) where no CUDA device is present: CI never has one.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>

#include "sap/simulator.hpp"

using namespace sap;

namespace {

bool have_device() { return cuda_compiled() && cuda_device_count() > 0; }

std::string scene_path(const std::string& name) { return std::string(SAP_SOURCE_DIR) + "/scenes/" + name + ".json"; }

struct Trajectory {
  std::vector<Eigen::VectorXd> qpos, qvel;  // per step, all worlds concatenated
};

Trajectory run(const Scene& scene, Backend backend, const std::string& preset, int nworld, int steps) {
  SimulatorOptions o;
  o.nworld = nworld;
  o.backend = backend;
  o.threads = 2;
  o.override_solver = true;
  o.solver = scene.solver;
  o.solver.contact_preset_variant = preset;
  Simulator sim(scene, o);
  Trajectory t;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    const std::vector<double> q = sim.state().qpos.buffer().to_host(), v = sim.state().qvel.buffer().to_host();
    t.qpos.emplace_back(Eigen::Map<const Eigen::VectorXd>(q.data(), static_cast<Eigen::Index>(q.size())));
    t.qvel.emplace_back(Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size())));
  }
  EXPECT_TRUE(sim.failed_worlds().empty()) << backend_name(backend) << " " << preset;
  return t;
}

// Largest relative difference over the trajectory, per quantity.
double max_rel(const std::vector<Eigen::VectorXd>& a, const std::vector<Eigen::VectorXd>& b) {
  double e = 0;
  for (std::size_t k = 0; k < a.size(); ++k) e = std::max(e, (a[k] - b[k]).norm() / std::max(1.0, b[k].norm()));
  return e;
}

}  // namespace

class CudaParity : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaParity, MatchesCpuOracle) {
  if (!have_device())
    GTEST_SKIP() << "no CUDA device (cuda_compiled=" << cuda_compiled()
                 << "): CUDA parity with the fp64 CPU oracle needs a GPU";
  const Scene scene = load_scene(scene_path(GetParam()));
  const int nworld = 8, steps = 100;
  // fp64 presets: CUDA fp64 vs CPU fp64, same arithmetic up to FMA contraction and reductions.
  for (const char* preset : {"approx64", "drake"}) {
    const Trajectory cpu = run(scene, Backend::CPU, preset, nworld, steps);
    const Trajectory gpu = run(scene, Backend::CUDA, preset, nworld, steps);
    EXPECT_LT(max_rel(gpu.qvel, cpu.qvel), 1e-10) << GetParam() << " " << preset << " qvel";
    EXPECT_LT(max_rel(gpu.qpos, cpu.qpos), 1e-10) << GetParam() << " " << preset << " qpos";
  }
  // fp32 path against the fp64 oracle.
  const Trajectory oracle = run(scene, Backend::CPU, "approx64", nworld, steps);
  const Trajectory gpu32 = run(scene, Backend::CUDA, "approx32", nworld, steps);
  EXPECT_LT(max_rel(gpu32.qpos, oracle.qpos), 1e-4) << GetParam() << " approx32 qpos";
}

// Contact-free scenes are smooth, so long horizons stay comparable; contact scenes are compared
// over 100 steps, before contact switching can amplify round-off differences.
INSTANTIATE_TEST_SUITE_P(Scenes, CudaParity,
                         ::testing::Values("pendulum", "double_pendulum", "free_tumbling_box", "multi_joints",
                                           "sphere_on_ground", "box_stack_5", "free_cube", "pd_arm"));

// Selecting CUDA without a device (or in a CPU-only build) is a clear error, never a crash.
TEST(CudaBackend, RequestWithoutDeviceIsAClearError) {
  if (have_device()) GTEST_SKIP() << "a CUDA device is present";
  try {
    Context ctx(Backend::CUDA);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cuda"), std::string::npos) << msg;
    EXPECT_TRUE(msg.find("no CUDA device") != std::string::npos || msg.find("no CUDA backend") != std::string::npos)
        << msg;
  }
  // Auto falls back to the CPU.
  Context ctx(Backend::Auto, 1);
  EXPECT_EQ(ctx.backend(), Backend::CPU);
}
