// fp64 retry of failed fp32 steps (issue 18, solver option fp64_retry; docs/solver.md). The case
// is a fixed-base UR5 whose 1 cm end-effector box rests on the floor with rigid contact
// (tests/data/ur5_box_floor_rigid.json: k = 1e12, tau_d = 0, near_rigid_threshold = 0). Under
// approx32 the fp32 Newton factorisation fails on every step and, without the retry, the world
// freezes (rejected steps keep the state). With the retry the failed world repeats the same step
// with every stage in fp64: its state must equal, bit for bit, the step of a solver configured in
// fp64 from the same inputs, and the worlds whose fp32 step succeeded must be untouched
// (bit-identical to a run without the retry). (Issue 18's original ur5_box_floor.json no longer
// fails in fp32: its failure was the 1e-12 contact weight of the massless end-effector link,
// tests/test_contact_jacobian.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "sap/scene.hpp"
#include "sap/simulator.hpp"
#include "sap/solver_options.hpp"
#include "sap/status.hpp"

namespace {

using namespace sap;

Scene ur5_scene() { return load_scene(std::string(SAP_SOURCE_DIR) + "/tests/data/ur5_box_floor_rigid.json"); }

SolverOptions approx32(bool retry, bool all_fp64 = false) {
  SolverOptions o;
  o.contact_preset_variant = Preset::Approx32;
  set_solver_option(o, "fp64_retry", retry ? "true" : "false");
  set_solver_option(o, "near_rigid_threshold", "0");  // the scene's: rigid contact, no floor on R
  if (all_fp64) {
    for (const char* k : {"free_motion_solve_precision", "contact_solve_precision", "contact_linear_solve_precision",
                          "sap_contact_weight_precision"})
      set_solver_option(o, k, "fp64");
    set_solver_option(o, "use_f64_boundary_pose", "true");
  }
  return o;
}

SimulatorOptions sim_options(const SolverOptions& s, int nworld) {
  SimulatorOptions o;
  o.nworld = nworld;
  o.backend = Backend::CPU;
  o.threads = 1;
  o.override_solver = true;
  o.solver = s;
  return o;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Worlds 0 and 2 start at the zero pose (the box on the floor); world 1 has its shoulder lifted
// by 0.5 rad, so its box is in the air and its fp32 step succeeds.
void lift_world_1(Simulator& sim) {
  std::vector<double> q = sim.state().qpos.world_to_host(1);
  q[1] -= 0.5;  // shoulder_lift_joint
  sim.state().qpos.world_from_host(1, q.data());
}

TEST(Fp64Retry, WithoutItTheBoxOnTheFloorFreezesTheWorld) {
  const Scene scene = ur5_scene();
  Simulator sim(scene, sim_options(approx32(false), 1));
  sim.reset();
  const std::vector<double> q0 = sim.state().qpos.world_to_host(0);
  for (int i = 0; i < 20; ++i) sim.step();
  const int st = sim.solver().world_status()[0];
  EXPECT_TRUE(st & kStatusFactorizationFailed) << status_string(st);
  EXPECT_TRUE(same_bits(sim.state().qpos.world_to_host(0), q0));  // frozen
  EXPECT_EQ(sim.failed_worlds(), std::vector<int>{0});
}

TEST(Fp64Retry, RetriedStepEqualsTheFp64StepAndLeavesOtherWorldsAlone) {
  const Scene scene = ur5_scene();
  Simulator retry(scene, sim_options(approx32(true), 3));
  Simulator fp32(scene, sim_options(approx32(false), 3));
  Simulator fp64(scene, sim_options(approx32(false, /*all_fp64=*/true), 3));
  for (Simulator* s : {&retry, &fp32, &fp64}) {
    s->reset();
    lift_world_1(*s);
  }
  EXPECT_TRUE(retry.solver().fp64_retry_active());
  EXPECT_FALSE(fp32.solver().fp64_retry_active());
  EXPECT_FALSE(fp64.solver().fp64_retry_active());
  std::vector<int> expected_retries(3, 0);
  for (int i = 0; i < 20; ++i) {
    // Same inputs for all three: start every step from the retry run's state.
    for (Simulator* s : {&fp32, &fp64})
      for (int w = 0; w < 3; ++w) {
        s->state().qpos.world_from_host(w, retry.state().qpos.world_to_host(w).data());
        s->state().qvel.world_from_host(w, retry.state().qvel.world_to_host(w).data());
      }
    retry.step();
    fp32.step();
    fp64.step();
    const std::vector<int> st = retry.solver().world_status(), st32 = fp32.solver().world_status(),
                           st64 = fp64.solver().world_status();
    SCOPED_TRACE("step " + std::to_string(i));
    if (i == 0) {  // the boxes on the floor fail in fp32 from the first step, the lifted one does not
      EXPECT_TRUE(st32[0] & kStatusFactorizationFailed) << status_string(st32[0]);
      EXPECT_TRUE(st32[2] & kStatusFactorizationFailed) << status_string(st32[2]);
      EXPECT_FALSE(st32[1] & kStatusFp64RetryOn) << status_string(st32[1]);
    }
    for (int w = 0; w < 3; ++w) {
      SCOPED_TRACE("world " + std::to_string(w));
      const bool retried = (st32[w] & kStatusFp64RetryOn) != 0;
      expected_retries[static_cast<std::size_t>(w)] += retried;
      Simulator& ref = retried ? fp64 : fp32;
      EXPECT_EQ(st[w], retried ? (st64[w] | kStatusFp64Retry) : st32[w]) << status_string(st[w]);
      EXPECT_TRUE(same_bits(retry.state().qpos.world_to_host(w), ref.state().qpos.world_to_host(w)));
      EXPECT_TRUE(same_bits(retry.state().qvel.world_to_host(w), ref.state().qvel.world_to_host(w)));
    }
  }
  EXPECT_EQ(retry.solver().fp64_retries(), expected_retries);
  EXPECT_TRUE(retry.failed_worlds().empty());
}

// Over 1,000 steps (2 s) the world keeps moving and no step is rejected; the box stays on the
// floor (within the contact's compliance) instead of hanging where it froze.
TEST(Fp64Retry, TheUr5NoLongerFreezes) {
  const Scene scene = ur5_scene();
  Simulator sim(scene, sim_options(approx32(true), 1));
  sim.reset();
  const std::vector<double> q0 = sim.state().qpos.world_to_host(0);
  int rejected = 0;
  for (int i = 0; i < 1000; ++i) {
    sim.step();
    rejected += (sim.solver().world_status()[0] & kStatusFailed) != 0;
  }
  EXPECT_EQ(rejected, 0);
  EXPECT_TRUE(sim.failed_worlds().empty());
  EXPECT_GT(sim.solver().fp64_retries()[0], 0);
  const std::vector<double> q = sim.state().qpos.world_to_host(0);
  double moved = 0;
  for (std::size_t i = 0; i < q.size(); ++i) moved = std::max(moved, std::abs(q[i] - q0[i]));
  EXPECT_GT(moved, 1e-2);
  for (double x : q) EXPECT_TRUE(std::isfinite(x));
}

}  // namespace
