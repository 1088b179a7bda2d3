// Memory per world sized by need (docs/gpu.md, "Memory per world"): the contact capacity
// estimate, the Jacobian row bound, the per-world byte breakdown, and that none of it changes
// the physics (bit-identical trajectories at the estimated and at the old fixed capacity).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/free_motion.hpp"
#include "sap/backend/launch_cpu.hpp"
#include "sap/sap.hpp"
#include "test_models.hpp"

namespace {

using namespace sap;
using namespace sap::testing;

std::string scene_path(const std::string& name) { return std::string(SAP_SOURCE_DIR) + "/scenes/" + name + ".json"; }

// dofs on the path from body b to its root, as a set.
std::set<int> dof_path(const Model& m, int b) {
  std::set<int> out;
  for (int a = b; a > 0; a = m.body_parentid[static_cast<std::size_t>(a)])
    for (int k = 0; k < m.body_dofnum[static_cast<std::size_t>(a)]; ++k)
      out.insert(m.body_dofadr[static_cast<std::size_t>(a)] + k);
  return out;
}

// Brute force over every body pair with explicit sets (independent of the dof_parentid walk).
int brute_max_pair_dofs(const Model& m) {
  std::size_t best = 0;
  for (int a = 0; a < m.nbody; ++a)
    for (int b = a; b < m.nbody; ++b) {
      std::set<int> u = dof_path(m, a);
      const std::set<int> pb = dof_path(m, b);
      u.insert(pb.begin(), pb.end());
      best = std::max(best, u.size());
    }
  return static_cast<int>(best);
}

TEST(MemoryPerWorld, BodyPairDofBoundMatchesBruteForce) {
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(9000 + seed);
    RandomTreeOptions o;
    o.nbody = 3 + seed % 9;
    o.free_root = seed % 3 != 0;
    const Model m = random_tree(rng, o);
    EXPECT_EQ(max_body_pair_dofs(m), brute_max_pair_dofs(m)) << "seed " << seed;
  }
}

TEST(MemoryPerWorld, HumanoidJacobianRowIsTheTwoLegUnion) {
  const Scene s = load_scene(scene_path("humanoid"));
  // Free root (6) + abdomen (3) + two legs (hip 3, knee 1, ankle 2 each): 6 + 3 + 6 + 6.
  EXPECT_EQ(max_body_pair_dofs(s.model), 21);
  EXPECT_EQ(max_body_pair_dofs(s.model), brute_max_pair_dofs(s.model));
}

TEST(MemoryPerWorld, CapacityEstimateFollowsTheDocumentedRule) {
  for (const char* name : {"humanoid", "box_stack_5", "franka_cube", "sphere_on_ground", "pendulum"}) {
    const Scene s = load_scene(scene_path(name));
    const ContactCapacityEstimate e = estimate_scene_contact_capacity(s);
    EXPECT_EQ(e.pair_bound, estimate_contact_capacity(s.model, 1024)) << name;
    if (e.pair_bound == 0) {
      EXPECT_EQ(e.capacity, 0) << name;
      EXPECT_EQ(e.probe_steps, 0) << name;
      continue;
    }
    EXPECT_EQ(e.probe_steps, std::min(kContactProbeMaxSteps, static_cast<int>(std::ceil(kContactProbeSeconds / s.dt - 1e-9))))
        << name;
    EXPECT_EQ(e.capacity, std::min(e.pair_bound, std::max(kContactProbeFloor, kContactProbeFactor * e.probe_max))) << name;
    EXPECT_LE(e.probe_max, e.pair_bound) << name;
    // The simulator uses it when neither the options nor the scene give a capacity.
    SimulatorOptions so;
    so.nworld = 1;
    so.backend = Backend::CPU;
    so.threads = 1;
    EXPECT_EQ(Simulator(s, so).max_rigid_contact(), s.max_rigid_contact > 0 ? s.max_rigid_contact : e.capacity) << name;
  }
  // The humanoid falls and lies on its floor within the probe: a dozen contacts, not zero.
  const ContactCapacityEstimate h = estimate_scene_contact_capacity(load_scene(scene_path("humanoid")));
  EXPECT_GE(h.probe_max, 8);
  EXPECT_LT(h.capacity, 64);  // below the old fixed capacity
}

TEST(MemoryPerWorld, ExplicitCapacityOverridesTheEstimate) {
  Scene s = load_scene(scene_path("humanoid"));
  SimulatorOptions so;
  so.nworld = 1;
  so.backend = Backend::CPU;
  so.max_rigid_contact = 5;
  EXPECT_EQ(Simulator(s, so).max_rigid_contact(), 5);
  so.max_rigid_contact = 0;
  s.max_rigid_contact = 7;
  EXPECT_EQ(Simulator(s, so).max_rigid_contact(), 7);
}

// Final qpos/qvel bits of every world after n steps.
std::vector<double> run(const Scene& s, int capacity, int nworld, int steps, long long* truncated) {
  SimulatorOptions so;
  so.nworld = nworld;
  so.backend = Backend::CPU;
  so.threads = 2;
  so.max_rigid_contact = capacity;
  Simulator sim(s, so);
  *truncated = 0;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    *truncated += sim.contacts().total_dropped();
  }
  std::vector<double> out = sim.state().qpos.buffer().to_host();
  const std::vector<double> v = sim.state().qvel.buffer().to_host();
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

bool bit_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// With enough capacity, the capacity only sizes buffers: the trajectories at the estimated
// capacity are bit-identical to those at the old fixed capacity of the scenes (64), and a
// capacity below the need truncates, which is counted (not silent).
TEST(MemoryPerWorld, EstimatedCapacityLeavesTrajectoriesBitIdentical) {
  for (const char* name : {"humanoid", "box_stack_5", "franka_cube"}) {
    const Scene s = load_scene(scene_path(name));
    const int est = estimate_scene_contact_capacity(s).capacity;
    long long trunc_est = 0, trunc_old = 0;
    const std::vector<double> a = run(s, est, 2, 150, &trunc_est);
    const std::vector<double> b = run(s, 64, 2, 150, &trunc_old);
    EXPECT_EQ(trunc_est, 0) << name;
    EXPECT_EQ(trunc_old, 0) << name;
    EXPECT_TRUE(bit_equal(a, b)) << name << ": capacity " << est << " vs 64";
  }
  long long trunc = 0;
  run(load_scene(scene_path("box_stack_5")), 2, 1, 20, &trunc);
  EXPECT_GT(trunc, 0) << "box_stack_5 needs more than 2 contacts: the overflow must be counted";
}

// Final qpos/qvel bits after `steps` steps of a scene under a preset, with the solver's on-chip
// budget (on_chip_bytes) given, on `lanes` emulated lanes (0: the one-lane CPU backend). Also
// returns the per-world bytes of the global Newton Hessian and factor buffers.
std::vector<double> run_on_chip(const Scene& s, const char* preset, int on_chip_bytes, int lanes, int steps,
                                long long* system_bytes) {
  SimulatorOptions so;
  so.nworld = 2;
  so.backend = Backend::CPU;
  so.threads = lanes > 0 ? 1 : 2;
  so.emulated_lanes = lanes;
  so.override_solver = true;
  so.solver = s.solver;
  so.solver.contact_preset_variant = parse_preset(preset);
  set_solver_option(so.solver, "on_chip_bytes", std::to_string(on_chip_bytes));
  Simulator sim(s, so);
  for (int k = 0; k < steps; ++k) sim.step();
  *system_bytes = 0;
  for (const auto& e : sim.buffer_bytes_per_world())
    if (e.first == "solve.H" || e.first == "data.chol" || e.first == "data.chol_first" || e.first == "data.crb")
      *system_bytes += e.second;
  std::vector<double> out = sim.state().qpos.buffer().to_host();
  const std::vector<double> v = sim.state().qvel.buffer().to_host();
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

// The free-motion and Newton working sets in team shared memory (on_chip_bytes, docs/gpu.md)
// only move values: the trajectories equal those with every working set in global memory,
// bit for bit, on every preset, on one lane and on 32 emulated lanes (where each team's
// shared memory is its own and lanes race on it if a barrier is missing); and the global
// H / factor / scratch buffers are gone.
TEST(MemoryPerWorld, OnChipWorkingSetsLeaveTrajectoriesBitIdentical) {
  for (const char* name : {"humanoid", "box_stack_5", "constrained_mechanisms"})
    for (const char* preset : {"approx32", "approx64", "drake"}) {
      const Scene s = load_scene(scene_path(name));
      long long global_bytes = 0, on_chip_global_bytes = 0;
      const std::vector<double> a = run_on_chip(s, preset, 0, 0, 60, &global_bytes);
      const std::vector<double> b = run_on_chip(s, preset, 1 << 16, 0, 60, &on_chip_global_bytes);
      EXPECT_TRUE(bit_equal(a, b)) << name << " " << preset;
      EXPECT_GT(global_bytes, 0) << name << " " << preset;
      EXPECT_EQ(on_chip_global_bytes, 0) << name << " " << preset << ": H, chol or the scratch still global";
    }
  const Scene s = load_scene(scene_path("humanoid"));
  long long unused = 0;
  const std::vector<double> a = run_on_chip(s, "approx32", 0, 32, 12, &unused);
  const std::vector<double> b = run_on_chip(s, "approx32", 1 << 16, 32, 12, &unused);
  EXPECT_TRUE(bit_equal(a, b)) << "32 emulated lanes, on chip against global";
}

// A budget below a working set keeps it in global memory (and the Newton system of the split
// path, which the library solve reads, is always global).
TEST(MemoryPerWorld, OnChipBudgetDecidesWhatStaysGlobal) {
  const Scene s = load_scene(scene_path("humanoid"));
  long long bytes = 0;
  run_on_chip(s, "approx32", 1024, 0, 1, &bytes);
  EXPECT_GT(bytes, 0);
  SimulatorOptions so;
  so.nworld = 1;
  so.backend = Backend::CPU;
  so.override_solver = true;
  so.solver = s.solver;
  set_solver_option(so.solver, "linear_solver", "reference");
  Simulator sim(s, so);
  long long h = 0, crb = 0;
  for (const auto& e : sim.buffer_bytes_per_world()) {
    if (e.first == "solve.H") h = e.second;
    if (e.first == "data.crb") crb = e.second;
  }
  EXPECT_EQ(h, 28LL * 28 * 8) << "the split path's H is global";
  EXPECT_EQ(crb, 0) << "the free-motion scratch is still on chip";
}

// DataLayout::A_fp32: with free motion in fp32 every entry of A = M + h D is an fp32 value, so
// storing A in fp32 changes nothing. Kinematics and free motion of the humanoid and of
// constrained_mechanisms (tendon damping in A) at random states, once with A in fp64 and once
// in fp32: the same A entries and the same v*, bit for bit; with fp64 free motion the entries
// are not all fp32 values (why the layout is tied to the fp32 stage).
TEST(MemoryPerWorld, Fp32FreeMotionStoresAExactlyInFp32) {
  for (const char* name : {"humanoid", "constrained_mechanisms"}) {
    const Scene scene = load_scene(scene_path(name));
    const Model& model = scene.model;
    ModelStorage storage(model, Backend::CPU);
    const ModelView mv = storage.view();
    State state(model, 1, Backend::CPU);
    Control control(model, 1, Backend::CPU);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-0.3, 0.3);
    std::vector<double> q = state.qpos.world_to_host(0), v(static_cast<std::size_t>(model.nv));
    for (double& x : q) x += u(rng);
    for (double& x : v) x = 3 * u(rng);
    state.qpos.world_from_host(0, q.data());
    state.qvel.world_from_host(0, v.data());
    int status = 0;
    auto free_motion = [&](bool a_fp32, bool f32, std::vector<double>* A, std::vector<double>* v_star) {
      DataLayout layout;
      layout.mass_matrix_in_A = true;
      layout.A_fp32 = a_fp32;
      Data data(model, 1, Backend::CPU, layout);
      const DataView d = data.view();
      CpuTeam team(nullptr);
      const State& in = state;
      if (f32) {
        KinematicsKernel<float>{mv, in.qpos.slab(), d}(0, team);
        FreeMotionKernel<float>{mv, in.view(), control.view(), 2e-3, 2, d, &status}(0, team);
      } else {
        KinematicsKernel<double>{mv, in.qpos.slab(), d}(0, team);
        FreeMotionKernel<double>{mv, in.view(), control.view(), 2e-3, 2, d, &status}(0, team);
      }
      A->clear();
      const RealValues a = d.A_values(0);
      for (long long k = 0; k < static_cast<long long>(model.nv_pad) * model.nv_pad; ++k) A->push_back(a[k]);
      *v_star = data.v_star.world_to_host(0);
    };
    std::vector<double> A64, A32, vs64, vs32;
    free_motion(false, true, &A64, &vs64);
    free_motion(true, true, &A32, &vs32);
    EXPECT_TRUE(bit_equal(A64, A32)) << name;
    EXPECT_TRUE(bit_equal(vs64, vs32)) << name;
    EXPECT_EQ(status, 0) << name;
    std::vector<double> Ad, vsd;
    free_motion(false, false, &Ad, &vsd);
    EXPECT_TRUE(std::any_of(Ad.begin(), Ad.end(), [](double x) { return double(float(x)) != x; }))
        << name << ": premise: fp64 free motion gives entries that fp32 cannot hold";
  }
}

// Every per-world byte is named: the breakdown sums to the growth of the live buffer bytes per
// added world, after a step (lazy step buffers included) and after the pose and contact
// observations are requested.
TEST(MemoryPerWorld, NamedBreakdownAccountsForEveryByte) {
  for (const char* name : {"humanoid", "box_stack_5", "constrained_mechanisms", "sphere_on_ground"}) {
    const Scene s = load_scene(scene_path(name));
    for (const bool observe : {false, true}) {
      long long live[2] = {0, 0}, named = 0;
      for (int n = 1; n <= 2; ++n) {
        SimulatorOptions so;
        so.nworld = n;
        so.backend = Backend::CPU;
        so.threads = 1;
        const long long before = buffer_bytes_live(Backend::CPU);
        Simulator sim(s, so);
        if (observe) {
          sim.body_pos_view();
          sim.contact_force_view();
        }
        sim.step();
        live[n - 1] = buffer_bytes_live(Backend::CPU) - before;
        if (n == 2)
          for (const auto& e : sim.buffer_bytes_per_world()) named += e.second;
        if (n == 2 && observe) {
          bool has_pose = false;
          for (const auto& e : sim.buffer_bytes_per_world()) has_pose = has_pose || e.first == "sim.body_pos";
          EXPECT_TRUE(has_pose) << name;
        }
      }
      EXPECT_EQ(named, live[1] - live[0]) << name << (observe ? " (observations on)" : "");
    }
  }
}

// The humanoid's per-world bytes at 20 contacts per world and default options (approx32): at
// most issue 12's 32 KB (137 KB in the old layout at 64 contacts; docs/gpu.md). A regression
// guard on the storage choices, not a speed claim. The capacity is pinned: the estimate (twice
// the most contacts of a 1 s probe of the fall) follows the chaotic trajectory (20 at main
// 03c3335, 24 once approx32 took one Coriolis pass), and the bytes grow with it (docs/gpu.md).
TEST(MemoryPerWorld, HumanoidBytesPerWorld) {
  const Scene s = load_scene(scene_path("humanoid"));
  SimulatorOptions so;
  so.nworld = 1;
  so.backend = Backend::CPU;
  so.max_rigid_contact = 20;
  Simulator sim(s, so);
  sim.step();
  long long total = 0, jac = 0;
  for (const auto& e : sim.buffer_bytes_per_world()) {
    total += e.second;
    if (e.first == "solve.con_jac_val" || e.first == "solve.con_jac_val32") jac += e.second;
  }
  // approx32 (the scene's preset): stage 2 in fp32, its Jacobian stored in fp32.
  EXPECT_EQ(jac, static_cast<long long>(sim.max_rigid_contact()) * 21 * 3 * 4);
  EXPECT_LE(total, 32 * 1024);
}

}  // namespace
