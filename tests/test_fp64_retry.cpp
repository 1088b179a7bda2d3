// fp64 retry of failed fp32 steps (issue 18, solver option fp64_retry; docs/solver.md). The case
// is a fixed-base UR5 whose 1 cm end-effector box rests on the floor with rigid contact
// (tests/data/ur5_box_floor_rigid.json: k = 1e13, tau_d = 0, near_rigid_threshold = 0). Under
// approx32 the fp32 Newton factorisation fails on every step and, without the retry, the world
// freezes (rejected steps keep the state). With the retry the failed world repeats the same step
// with every stage in fp64: its state must equal, bit for bit, the step of a solver configured in
// fp64 from the same inputs, and the worlds whose fp32 step succeeded must be untouched
// (bit-identical to a run without the retry). (Issue 18's original ur5_box_floor.json no longer
// fails in fp32: its failure was the 1e-12 contact weight of the massless end-effector link,
// tests/test_contact_jacobian.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/fp64_retry.hpp"

#include "sap/backend/buffer.hpp"
#include "sap/scene.hpp"
#include "sap/simulator.hpp"
#include "sap/solver_options.hpp"
#include "sap/status.hpp"

namespace {

using namespace sap;

Scene ur5_scene() { return load_scene(std::string(SAP_SOURCE_DIR) + "/tests/data/ur5_box_floor_rigid.json"); }

SolverOptions approx32(bool retry, bool all_fp64 = false, int capacity = 0) {
  SolverOptions o;
  o.contact_preset_variant = Preset::Approx32;
  set_solver_option(o, "fp64_retry", retry ? "true" : "false");
  set_solver_option(o, "fp64_retry_capacity", std::to_string(capacity));
  set_solver_option(o, "near_rigid_threshold", "0");  // the scene's: rigid contact, no floor on R
  set_solver_option(o, "contact_approximation", "sap");  // the scene's: R_n = 1 / (h^2 k) on SAP's cone
  if (all_fp64) {
    for (const char* k : {"free_motion_solve_precision", "contact_solve_precision", "contact_linear_solve_precision",
                          "sap_contact_weight_precision"})
      set_solver_option(o, k, "fp64");
    set_solver_option(o, "use_f64_boundary_pose", "true");
  }
  return o;
}

SimulatorOptions sim_options(const SolverOptions& s, int nworld, int lanes = 0) {
  SimulatorOptions o;
  o.nworld = nworld;
  o.backend = Backend::CPU;
  o.threads = 1;
  o.emulated_lanes = lanes;
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

// How the retry runs: its capacity (worlds repeated at once; 0 = automatic, here all 3), as in a
// CUDA graph (one round, no host read; the failed worlds past the capacity overflow) or not
// (as many rounds as needed), on one lane or on emulated teams of 8 lanes (the compact solver's
// unused slots are skipped worlds, which every team stage leaves at once).
struct RetryCase {
  int capacity;
  bool in_graph;
  int lanes;
};

class Fp64RetryRuns : public ::testing::TestWithParam<RetryCase> {};

// Worlds 0 and 2 fail in fp32, world 1 does not. Every world whose fp32 step failed and that
// found a slot must equal, bit for bit, the fp64 solver's step from the same inputs; every other
// world must equal the fp32 solver's step (untouched). With capacity 1 in a graph, world 0
// takes the slot and world 2 overflows (counted, its fp32 outcome kept).
TEST_P(Fp64RetryRuns, RetriedStepEqualsTheFp64StepAndLeavesOtherWorldsAlone) {
  const RetryCase rc = GetParam();
  const Scene scene = ur5_scene();
  Simulator retry(scene, sim_options(approx32(true, false, rc.capacity), 3, rc.lanes));
  Simulator fp32(scene, sim_options(approx32(false), 3, rc.lanes));
  Simulator fp64(scene, sim_options(approx32(false, /*all_fp64=*/true), 3, rc.lanes));
  for (Simulator* s : {&retry, &fp32, &fp64}) {
    s->reset();
    lift_world_1(*s);
  }
  EXPECT_TRUE(retry.solver().fp64_retry_active());
  EXPECT_FALSE(fp32.solver().fp64_retry_active());
  EXPECT_FALSE(fp64.solver().fp64_retry_active());
  EXPECT_EQ(retry.solver().fp64_retry_capacity(), rc.capacity > 0 ? rc.capacity : 3);
  if (rc.in_graph) {
    retry.solver().prepare_fp64_retry(retry.contacts().capacity());
    retry.solver().set_fp64_retry_in_graph(true);
  }
  std::vector<int> expected_retries(3, 0), expected_overflow(3, 0);
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
    int rank = 0;  // the failed worlds take the slots in world order
    for (int w = 0; w < 3; ++w) {
      SCOPED_TRACE("world " + std::to_string(w));
      const bool failed = (st32[w] & kStatusFp64RetryOn) != 0;
      const bool retried = failed && (!rc.in_graph || rank++ < retry.solver().fp64_retry_capacity());
      expected_retries[static_cast<std::size_t>(w)] += retried;
      expected_overflow[static_cast<std::size_t>(w)] += failed && !retried;
      Simulator& ref = retried ? fp64 : fp32;
      EXPECT_EQ(st[w], retried ? (st64[w] | kStatusFp64Retry) : st32[w]) << status_string(st[w]);
      EXPECT_TRUE(same_bits(retry.state().qpos.world_to_host(w), ref.state().qpos.world_to_host(w)));
      EXPECT_TRUE(same_bits(retry.state().qvel.world_to_host(w), ref.state().qvel.world_to_host(w)));
    }
  }
  EXPECT_EQ(retry.solver().fp64_retries(), expected_retries);
  EXPECT_EQ(retry.solver().fp64_retry_overflow(), expected_overflow);
  const bool all_retried = !rc.in_graph || retry.solver().fp64_retry_capacity() >= 2;
  if (all_retried) {
    EXPECT_EQ(expected_overflow, std::vector<int>(3, 0));
    EXPECT_TRUE(retry.failed_worlds().empty());
  } else {
    EXPECT_GT(expected_overflow[2], 0);  // the case does overflow (world 2 at least at step 0)
  }
}

INSTANTIATE_TEST_SUITE_P(Capacities, Fp64RetryRuns,
                         ::testing::Values(RetryCase{0, false, 0}, RetryCase{1, false, 0}, RetryCase{0, true, 0},
                                           RetryCase{1, true, 0}, RetryCase{2, true, 0}, RetryCase{1, false, 8},
                                           RetryCase{1, true, 8}),
                         [](const auto& info) {
                           const RetryCase& c = info.param;
                           return "capacity" + std::to_string(c.capacity) + (c.in_graph ? "_graph" : "_rounds") +
                                  (c.lanes ? "_lanes" + std::to_string(c.lanes) : "");
                         });

// The slot assignment against a serial oracle: 1,000 worlds (4 chunks) with random statuses
// (failed with a retry bit, skipped, already repeated, converged), capacity 37. The chunks run
// in reverse order (the launch may run them in any order). Round 1 takes the first 37 worlds to
// repeat in world order and counts the rest as overflow when asked; after merging (the merged
// worlds carry kStatusFp64Retry), round 2 takes the next 37.
TEST(Fp64RetrySlots, FirstWorldsToRepeatInWorldOrder) {
  const int nworld = 1000, capacity = 37, nchunk = (nworld + kRetryChunk - 1) / kRetryChunk;
  std::mt19937 rng(7);
  const int kinds[] = {kStatusFactorizationFailed, kStatusLineSearchFailed | kStatusIterationLimit,
                       kStatusFactorizationFailed | kStatusSkipped, kStatusLineSearchFailed | kStatusFp64Retry,
                       kStatusConverged, kStatusIterationLimit};
  std::vector<int> status(nworld);
  for (int& st : status) st = kinds[rng() % 6];
  std::vector<int> chunk_count(nchunk, -1), world_of(capacity, 99), active(capacity, 99), overflow(nworld, 0);
  auto total = [&] {  // worlds to repeat: the chunk counts of the round just run
    int n = 0;
    for (int c : chunk_count) n += c;
    return n;
  };
  auto round = [&](bool count_overflow) {
    for (int c = nchunk - 1; c >= 0; --c) RetryChunkCountKernel{status.data(), nworld, chunk_count.data()}(c, 0);
    for (int c = nchunk - 1; c >= 0; --c)
      RetrySlotKernel{status.data(),   nworld,          nchunk,        chunk_count.data(),
                      capacity,        world_of.data(), active.data(), count_overflow ? overflow.data() : nullptr}(c, 0);
  };
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("round " + std::to_string(r));
    std::vector<int> expected;  // the oracle: every world to repeat, in world order
    for (int w = 0; w < nworld; ++w)
      if (!(status[w] & (kStatusSkipped | kStatusFp64Retry)) && (status[w] & kStatusFp64RetryOn)) expected.push_back(w);
    ASSERT_GT(static_cast<int>(expected.size()), 2 * capacity);
    round(/*count_overflow=*/r == 0);
    EXPECT_EQ(total(), static_cast<int>(expected.size()));
    for (int s = 0; s < capacity; ++s) {
      EXPECT_EQ(world_of[s], expected[static_cast<std::size_t>(s)]);
      EXPECT_EQ(active[s], 1);
    }
    if (r == 0)
      for (int w = 0; w < nworld; ++w) {
        const bool past = std::find(expected.begin() + capacity, expected.end(), w) != expected.end();
        EXPECT_EQ(overflow[w], past ? 1 : 0) << "world " << w;
      }
    for (int s = 0; s < capacity; ++s) status[world_of[s]] |= kStatusFp64Retry;  // merged
  }
  // A last round with fewer worlds than slots clears the slots past them.
  std::vector<int> few(nworld, kStatusConverged);
  few[3] = few[900] = kStatusLineSearchFailed;
  status = few;
  round(false);
  EXPECT_EQ(total(), 2);
  EXPECT_EQ(world_of[0], 3);
  EXPECT_EQ(world_of[1], 900);
  for (int s = 2; s < capacity; ++s) {
    EXPECT_EQ(world_of[s], -1);
    EXPECT_EQ(active[s], 0);
  }
}

// On a GPU: the retry inside CUDA graphs (step() replays a captured graph) against plain launches
// on the same device: same kernels, same order, so the same bits; the failed worlds are retried
// (kStatusFp64Retry, counters) and none is left failed. Skipped where no CUDA device is present.
TEST(Fp64Retry, InsideACudaGraphEqualsPlainLaunchesOnTheGpu) {
  if (!(cuda_compiled() && cuda_device_count() > 0))
    GTEST_SKIP() << "no CUDA device (cuda_compiled=" << cuda_compiled() << "): the graph path needs a GPU";
  const Scene scene = ur5_scene();
  SimulatorOptions graph_options = sim_options(approx32(true), 3), plain_options = graph_options;
  graph_options.backend = plain_options.backend = Backend::CUDA;
  graph_options.cuda_graphs = true;
  plain_options.cuda_graphs = false;
  Simulator graph(scene, graph_options), plain(scene, plain_options);
  for (Simulator* s : {&graph, &plain}) {
    s->reset();
    lift_world_1(*s);
  }
  for (int i = 0; i < 20; ++i) {
    graph.step(1);  // step(n) replays a captured graph; step() is the plain form, never captured
    plain.step();
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(graph.solver().world_status(), plain.solver().world_status());
    for (int w = 0; w < 3; ++w) {
      EXPECT_TRUE(same_bits(graph.state().qpos.world_to_host(w), plain.state().qpos.world_to_host(w)));
      EXPECT_TRUE(same_bits(graph.state().qvel.world_to_host(w), plain.state().qvel.world_to_host(w)));
    }
    if (i == 0) {
      const std::vector<int> st = graph.solver().world_status();
      EXPECT_TRUE(st[0] & kStatusFp64Retry) << status_string(st[0]);
      EXPECT_FALSE(st[1] & kStatusFp64Retry) << status_string(st[1]);
      EXPECT_TRUE(st[2] & kStatusFp64Retry) << status_string(st[2]);
    }
  }
  EXPECT_EQ(graph.solver().fp64_retries(), plain.solver().fp64_retries());
  EXPECT_GT(graph.solver().fp64_retries()[0], 0);
  EXPECT_EQ(graph.solver().fp64_retry_overflow(), std::vector<int>(3, 0));
  EXPECT_TRUE(graph.failed_worlds().empty());
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
