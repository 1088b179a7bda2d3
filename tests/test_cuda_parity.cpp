// CUDA backend against the fp64 CPU oracle, with tolerances a correct GPU can meet:
// - one step from identical uploaded states (the initial state and one after warm-up): the
//   velocities within the bound of backend_parity.hpp, derived from each solve's stopping test
//   and the precision of the setup (the GPU contracts a*b+c into FMAs, reduces over 32 lanes
//   in another order and solves by columns, so bitwise equality is not expected); statuses and
//   contact counts equal, Newton iteration counts within one;
// - contact-free trajectories (smooth: no contact switching amplifies round-off), 100 steps,
//   within 1e-9 relative for fp64 presets and 1e-4 for approx32 (a bound on accumulated
//   rounding: 100 steps of ~1e2 operations of relative error eps, with margin).
// Build with -DSAP_CUDA_FMAD=OFF (-fmad=false) to remove the FMA differences.
// Skipped (with a message) where no CUDA device is present: CI never has one.
#include <gtest/gtest.h>

#include "backend_parity.hpp"
#include "sap/mjcf.hpp"
#include "scene_cases.hpp"

using namespace sap;
using namespace sap::testing;

namespace {

bool have_device() { return cuda_compiled() && cuda_device_count() > 0; }

// Why a parity case cannot run here ("" when it can).
std::string skip_reason(const std::string& scene) {
  if (!have_device())
    return "no CUDA device (cuda_compiled=" + std::to_string(cuda_compiled()) +
           "): CUDA parity with the fp64 CPU oracle needs a GPU";
  return "";
}

SimulatorOptions options(const Scene& scene, Backend backend, const std::string& preset) {
  SimulatorOptions o = parity_options(scene, preset);
  o.nworld = 8;
  o.backend = backend;
  o.threads = 2;
  return o;
}

// One step on the GPU against one on the CPU oracle from the same state: the initial state and
// one after the warm-up, under each preset.
void expect_one_step_parity(const Scene& scene, const std::string& name) {
  for (const char* preset : {"approx64", "approx32", "drake"}) {
    Simulator cpu(scene, options(scene, Backend::CPU, preset));
    Simulator gpu(scene, options(scene, Backend::CUDA, preset));
    const double eps = setup_epsilon(cpu.solver().config());
    const int warmup = warmup_steps(scene);
    for (int k = 0; k <= warmup; ++k) {
      if (k == 0 || k == warmup) {
        copy_state(cpu, gpu);
        Simulator probe(scene, options(scene, Backend::CPU, preset));
        copy_state(cpu, probe);
        probe.step();
        gpu.step();
        expect_step_agrees(record_step(probe), record_step(gpu), scene.model.nq, eps,
                           name + " " + preset + (k == 0 ? " initial" : " warm"), 1);
      }
      if (k < warmup) cpu.step();
    }
  }
}

}  // namespace

class CudaParity : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaParity, OneStepMatchesCpuOracle) {
  if (const std::string why = skip_reason(GetParam()); !why.empty()) GTEST_SKIP() << why;
  expect_one_step_parity(load_named(GetParam()), GetParam());
}

TEST_P(CudaParity, ContactFreeTrajectoryMatchesCpuOracle) {
  if (const std::string why = skip_reason(GetParam()); !why.empty()) GTEST_SKIP() << why;
  const Scene scene = load_named(GetParam());
  for (const char* preset : {"approx64", "approx32", "drake"}) {
    Simulator cpu(scene, options(scene, Backend::CPU, preset));
    Simulator gpu(scene, options(scene, Backend::CUDA, preset));
    const double tol = std::string(preset) == "approx32" ? 1e-4 : 1e-9;
    for (int k = 0; k < 100; ++k) {
      cpu.step();
      gpu.step();
      const StepRecord a = record_step(cpu), b = record_step(gpu);
      bool contact = false;
      for (int n : a.diag.contacts) contact = contact || n > 0;
      if (contact) break;  // the comparison covers the contact-free part of the trajectory
      for (int w = 0; w < cpu.nworld(); ++w) {
        const WorldComparison c = compare_world(a, b, w, scene.model.nq, setup_epsilon(cpu.solver().config()));
        ASSERT_LE(c.rel_v, tol) << GetParam() << " " << preset << " step " << k << " world " << w;
        ASSERT_LE(c.rel_q, tol) << GetParam() << " " << preset << " step " << k << " world " << w;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenes, CudaParity,
                         ::testing::Values("pendulum", "double_pendulum", "free_tumbling_box", "multi_joints",
                                           "sphere_on_ground", "box_stack_5", "free_cube", "pd_arm", "franka_cube",
                                           "humanoid"),
                         [](const auto& info) { return info.param; });

// Torsional and rolling friction (condim 4 and 6, docs/sap-math.md §3.9) on the GPU: the
// kernels' kAngular instantiations (launch/launches_impl.hpp) against the CPU oracle. A ball
// (condim 6) spinning and rolling, a box (condim 4) and an ellipsoid (condim 6, a convex pair:
// the collision kernel with the convex solvers) spinning on a plane (condim 4: each pair takes
// the larger).
TEST(CudaParityAngular, OneStepMatchesCpuOracle) {
  if (const std::string why = skip_reason("condim46"); !why.empty()) GTEST_SKIP() << why;
  Scene scene = load_mjcf_string(R"(<mujoco><option timestep="0.002" cone="elliptic"/><worldbody>
      <geom type="plane" size="2 2 0.1" condim="4" friction="0.8 0.02 0.002"/>
      <body pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="1" condim="6"/></body>
      <body pos="0.5 0 0.05"><freejoint/><geom type="box" size="0.05 0.05 0.05" mass="1" condim="4"/></body>
      <body pos="-0.5 0 0.06"><freejoint/><geom type="ellipsoid" size="0.1 0.08 0.06" mass="1" condim="6"/></body>
    </worldbody></mujoco>)",
                                 "condim46.xml");
  scene.qvel0 = {1.0, 0.3, 0.0, -2.0, 10.0, 15.0, 0.0, 0.0, 0.0, 0.0, 0.0, 20.0, 0.5, 0.0, 0.0, 0.0, 0.0, 10.0};
  expect_one_step_parity(scene, "condim46");
}

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
