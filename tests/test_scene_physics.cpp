// Whole scenes through the Simulator (collision + SAP): stacking, the two Warp scenes, and the
// consistency of the presets (approx32 ~ approx64; drake = approx64 + its four mode choices), and
// bitwise determinism across runs, thread counts and world chunkings.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "sap/simulator.hpp"

using namespace sap;

namespace {

std::string scene_path(const std::string& name) { return std::string(SAP_SOURCE_DIR) + "/scenes/" + name + ".json"; }

SimulatorOptions cpu(int nworld = 1) {
  SimulatorOptions o;
  o.nworld = nworld;
  o.backend = Backend::CPU;
  o.threads = 2;
  return o;
}

Eigen::VectorXd host(const BatchedArray<double>& a, int w) {
  const std::vector<double> h = a.world_to_host(w);
  return Eigen::Map<const Eigen::VectorXd>(h.data(), static_cast<Eigen::Index>(h.size()));
}

// World position and z axis of the body of free joint j.
struct FreePose {
  Eigen::Vector3d p, z_axis;
};
FreePose free_pose(const Model& m, const Eigen::VectorXd& q, int joint) {
  const int a = m.jnt_qposadr[static_cast<std::size_t>(joint)];
  const Eigen::Quaterniond r(q[a + 3], q[a + 4], q[a + 5], q[a + 6]);
  return {q.segment<3>(a), r.normalized().toRotationMatrix().col(2)};
}

}  // namespace

// Five stacked cubes stay standing for 5 s: every box keeps its column (drift < 5 mm), its
// height (within the contact compression) and stays upright; no world fails.
TEST(Scenes, FiveBoxStackStaysStandingFor5s) {
  const Scene scene = load_scene(scene_path("box_stack_5"));
  for (const char* preset : {"approx32", "drake"}) {
    SimulatorOptions o = cpu();
    o.override_solver = true;
    o.solver = scene.solver;
    o.solver.contact_preset_variant = parse_preset(preset);
    Simulator sim(scene, o);
    const Eigen::VectorXd q0 = host(sim.state().qpos, 0);
    const int steps = static_cast<int>(std::lround(5.0 / scene.dt));
    for (int k = 0; k < steps; ++k) sim.step();
    EXPECT_TRUE(sim.failed_worlds().empty()) << preset;
    const Eigen::VectorXd q = host(sim.state().qpos, 0);
    for (int j = 0; j < scene.model.njnt; ++j) {
      const FreePose a = free_pose(scene.model, q0, j), b = free_pose(scene.model, q, j);
      EXPECT_LT((b.p - a.p).head<2>().norm(), 5e-3) << preset << " box " << j;
      // Settling closes the 1 mm gaps and compresses the contacts a little: < 1 cm per level.
      EXPECT_NEAR(b.p.z(), a.p.z(), 0.01 * (j + 1)) << preset << " box " << j;
      EXPECT_GT(b.z_axis.z(), 0.999) << preset << " box " << j;
    }
    EXPECT_LT(host(sim.state().qvel, 0).norm(), 1e-2) << preset;
  }
}

// Warp's free_cube: released spinning above the ground, the cube lands and comes to rest on a
// face: at rest, center at its half-size above the ground, one body axis vertical.
TEST(Scenes, FreeCubeSpinsLandsAndRests) {
  const Scene scene = load_scene(scene_path("free_cube"));
  Simulator sim(scene, cpu());
  const Eigen::VectorXd v0 = host(sim.state().qvel, 0);
  EXPECT_GT(v0.tail<3>().norm(), 5.0);  // it starts spinning
  double min_z = 1e9;
  const int steps = static_cast<int>(std::lround(3.0 / scene.dt));
  for (int k = 0; k < steps; ++k) {
    sim.step();
    min_z = std::min(min_z, host(sim.state().qpos, 0)[2]);
  }
  EXPECT_TRUE(sim.failed_worlds().empty());
  const Eigen::VectorXd q = host(sim.state().qpos, 0), v = host(sim.state().qvel, 0);
  EXPECT_LT(v.norm(), 1e-2) << v.transpose();
  const double half = 0.02;
  EXPECT_NEAR(q[2], half, 2e-3);  // resting on a face (within the contact compression)
  EXPECT_GT(min_z, half - 5e-3);  // never tunnels into the ground
  const Eigen::Matrix3d R = Eigen::Quaterniond(q[3], q[4], q[5], q[6]).normalized().toRotationMatrix();
  EXPECT_GT(R.row(2).cwiseAbs().maxCoeff(), 0.999);  // a body axis is vertical
}

// Warp's multi_joints: the limited prismatic joint stays within [-0.3, 0.3] (up to the
// compliance of the limit constraint at h = 10 ms); the two free 1 m boxes come to rest (rb1
// falls onto the edge of rb2) without interpenetrating (every contact phi > -1 cm) and above
// the ground; nothing fails.
TEST(Scenes, MultiJointsRespectsLimitsAndSettles) {
  const Scene scene = load_scene(scene_path("multi_joints"));
  Simulator sim(scene, cpu());
  const Model& m = scene.model;
  int prismatic = -1;
  for (int j = 0; j < m.njnt; ++j)
    if (m.jnt_type[static_cast<std::size_t>(j)] == kJointSlide) prismatic = j;
  ASSERT_GE(prismatic, 0);
  ASSERT_TRUE(m.jnt_limited[static_cast<std::size_t>(prismatic)]);
  const double lo = m.jnt_range[2 * static_cast<std::size_t>(prismatic)];
  const double hi = m.jnt_range[2 * static_cast<std::size_t>(prismatic) + 1];
  const int qa = m.jnt_qposadr[static_cast<std::size_t>(prismatic)];
  double qmin = 1e9, qmax = -1e9;
  const int steps = static_cast<int>(std::lround(4.0 / scene.dt));
  for (int k = 0; k < steps; ++k) {
    sim.step();
    const double x = host(sim.state().qpos, 0)[qa];
    qmin = std::min(qmin, x);
    qmax = std::max(qmax, x);
  }
  EXPECT_TRUE(sim.failed_worlds().empty());
  EXPECT_GE(qmin, lo - 5e-3);
  EXPECT_LE(qmax, hi + 5e-3);
  EXPECT_LT(qmin, lo + 0.05);  // gravity drives the slider onto its lower limit
  const Eigen::VectorXd q = host(sim.state().qpos, 0), v = host(sim.state().qvel, 0);
  const int ncon = sim.contacts().counts_host()[0];
  const std::vector<double> phi = sim.contacts().phi.world_to_host(0);
  EXPECT_GT(ncon, 0);
  for (int c = 0; c < ncon; ++c) EXPECT_GT(phi[static_cast<std::size_t>(c)], -0.01) << "contact " << c;
  for (int j = 0; j < m.njnt; ++j) {
    if (m.jnt_type[static_cast<std::size_t>(j)] != kJointFree) continue;
    const int b = m.jnt_bodyid[static_cast<std::size_t>(j)];
    const int da = m.jnt_dofadr[static_cast<std::size_t>(j)];
    EXPECT_LT(v.segment<6>(da).norm(), 0.05) << m.body_names[static_cast<std::size_t>(b)];
    EXPECT_GT(q[m.jnt_qposadr[static_cast<std::size_t>(j)] + 2], 0.49) << m.body_names[static_cast<std::size_t>(b)];
  }
}

namespace {
// One step of `options` from the state `from` of a scene; returns qvel and qpos of world 0.
std::pair<Eigen::VectorXd, Eigen::VectorXd> one_step(const Scene& scene, const SolverOptions& options,
                                                     const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  SimulatorOptions o = cpu();
  o.override_solver = true;
  o.solver = options;
  Simulator sim(scene, o);
  sim.state().qpos.world_from_host(0, q.data());
  sim.state().qvel.world_from_host(0, v.data());
  sim.step();
  return {host(sim.state().qvel, 0), host(sim.state().qpos, 0)};
}
}  // namespace

class PresetConsistency : public ::testing::TestWithParam<std::string> {};

// approx32 and approx64 agree closely; drake equals approx64 with its four mode choices
// overridden (weights, contact point, position map, Coriolis); each of those overrides alone
// changes the step (so each is wired), the precision overrides alone reproduce approx32.
TEST_P(PresetConsistency, PresetsDifferOnlyWhereTheirModesDiffer) {
  const Scene scene = load_scene(scene_path(GetParam()));
  // A state in contact: advance the scene 0.3 s with its own options.
  Simulator warm(scene, cpu());
  for (int k = 0; k < static_cast<int>(0.3 / scene.dt); ++k) warm.step();
  const Eigen::VectorXd q = host(warm.state().qpos, 0);
  Eigen::VectorXd v = host(warm.state().qvel, 0);
  ASSERT_GT(warm.contacts().counts_host()[0], 0) << "the consistency check needs contacts";
  // Sliding and spinning contacts make every mode matter (at a symmetric rest they need not).
  for (int j = 0; j < scene.model.njnt; ++j)
    if (scene.model.jnt_type[static_cast<std::size_t>(j)] == kJointFree) {
      const int da = scene.model.jnt_dofadr[static_cast<std::size_t>(j)];
      v.segment<6>(da) += (Eigen::VectorXd(6) << 0.3, -0.2, 0.0, 0.5, 0.4, 1.0).finished();
    }

  SolverOptions base = scene.solver;
  base.contact_preset_variant = Preset::Approx64;
  // SAP's cone, on which every mode acts (its R carries the contact weight; the Hunt-Crossley
  // rows use the weight only in their near-rigid clamp and impact regularisation, inactive here).
  base.contact_approximation = ContactApproximation::Sap;
  const auto r64 = one_step(scene, base, q, v);
  SolverOptions o32 = base;
  o32.contact_preset_variant = Preset::Approx32;
  const auto r32 = one_step(scene, o32, q, v);
  const double scale = std::max(1.0, r64.first.norm());
  EXPECT_LT((r32.first - r64.first).norm() / scale, 1e-3) << "approx32 vs approx64";

  SolverOptions drake = base;
  drake.contact_preset_variant = Preset::Drake;
  const auto rd = one_step(scene, drake, q, v);
  SolverOptions all = base;
  all.contact_weight_mode = ContactWeightMode::DiagDelassus;
  all.contact_point_mode = ContactPointMode::ContactMidpoint;
  all.position_integration = PositionIntegrationMode::SapEuler;
  all.coriolis = CoriolisMode::Explicit;
  const auto ra = one_step(scene, all, q, v);
  EXPECT_EQ((ra.first - rd.first).norm(), 0.0) << "approx64 + drake's modes must be drake";
  EXPECT_EQ((ra.second - rd.second).norm(), 0.0);

  // Precision overrides alone turn approx64 into approx32 exactly.
  SolverOptions prec = base;
  prec.free_motion_solve_precision = Precision::F32;
  prec.contact_linear_solve_precision = Precision::F32;
  prec.sap_contact_weight_precision = Precision::F32;
  prec.use_f64_boundary_pose = false;
  const auto rp = one_step(scene, prec, q, v);
  EXPECT_EQ((rp.first - r32.first).norm(), 0.0);

  // Each mode override alone changes the step.
  auto with = [&](auto set) {
    SolverOptions o = base;
    set(o);
    return one_step(scene, o, q, v);
  };
  const auto rw = with([](SolverOptions& o) { o.contact_weight_mode = ContactWeightMode::DiagDelassus; });
  const auto rc = with([](SolverOptions& o) { o.contact_point_mode = ContactPointMode::ContactMidpoint; });
  const auto ri = with([](SolverOptions& o) { o.position_integration = PositionIntegrationMode::SapEuler; });
  EXPECT_GT((rw.first - r64.first).norm(), 0.0) << "contact_weight_mode has no effect";
  EXPECT_GT((rc.first - r64.first).norm(), 0.0) << "contact_point_mode has no effect";
  EXPECT_GT((ri.second - r64.second).norm(), 0.0) << "position_integration has no effect on positions";
  // The position map enters the solve only through the contacts' gap, which the midpoint map
  // takes half a step ahead, phi + (h/2) J_n v (docs/sap-math.md §8.5): from a state at rest the
  // two maps solve the same problem.
  EXPECT_GT((ri.first - r64.first).norm(), 0.0) << "position_integration does not reach the contacts' gap";
  const Eigen::VectorXd rest = Eigen::VectorXd::Zero(v.size());
  SolverOptions euler = base;
  euler.position_integration = PositionIntegrationMode::SapEuler;
  EXPECT_EQ((one_step(scene, euler, q, rest).first - one_step(scene, base, q, rest).first).norm(), 0.0)
      << "from rest, position_integration must not change velocities";
}

INSTANTIATE_TEST_SUITE_P(ContactScenes, PresetConsistency,
                         ::testing::Values("box_stack_5", "sphere_on_ground", "box_on_incline", "free_cube",
                                           "multi_joints"));

// ------------------------------------------------------------------------------------------
// Determinism of whole contact-rich scenes (collision + SAP through the Simulator), extending
// BatchInvariance in test_free_motion.cpp (contact-free solver) and
// CollisionPipeline.DeterministicAcrossThreadsAndBatchSizes (collision alone): each world's
// trajectory is bitwise the same across repeated runs, CPU thread counts 1, 2 and 7, and world
// chunkings (the same per-world initial states run in batches of different sizes and order).

namespace {

struct DeterminismCase {
  const char* scene;
  int nworld, steps;
  double lower = 0;  // every free body starts this much lower (m): contacts sooner, fewer steps
};
void PrintTo(const DeterminismCase& c, std::ostream* os) {
  *os << c.scene << ", " << c.nworld << " worlds, " << c.steps << " steps";
}

// Final qpos and qvel of each world, whose initial state is that of scene world ids[i]
// (qpos0/qvel0 plus the per-world perturbation of world ids[i]).
std::vector<std::vector<double>> run_worlds(const Scene& scene, const std::vector<int>& ids, int threads, int steps,
                                            int* contacts = nullptr) {
  SimulatorOptions o = cpu(static_cast<int>(ids.size()));
  o.threads = threads;
  o.scene_controls = false;  // schedules may depend on the world index; these scenes have none
  Simulator sim(scene, o);
  sim.reset();
  std::vector<double> q, v;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    scene_initial_state(scene, ids[i], q, v);
    sim.state().qpos.world_from_host(static_cast<int>(i), q.data());
    sim.state().qvel.world_from_host(static_cast<int>(i), v.data());
  }
  for (int k = 0; k < steps; ++k) sim.step();
  EXPECT_TRUE(sim.failed_worlds().empty());
  if (contacts) {
    *contacts = 0;
    for (int n : sim.solver().diagnostics().contacts) *contacts += n;
  }
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::vector<double> x = sim.state().qpos.world_to_host(static_cast<int>(i));
    const std::vector<double> xv = sim.state().qvel.world_to_host(static_cast<int>(i));
    x.insert(x.end(), xv.begin(), xv.end());
    out.push_back(x);
  }
  return out;
}

}  // namespace

class Determinism : public ::testing::TestWithParam<DeterminismCase> {};

TEST_P(Determinism, BitwiseAcrossRunsThreadsAndChunkings) {
  const DeterminismCase c = GetParam();
  const std::string path = scene_path(c.scene);
  Scene scene = load_scene(path);
  // Distinct worlds: a deterministic per-world perturbation (a function of (seed, world) only).
  scene.perturbation.qpos_std = 1e-3;
  scene.perturbation.qvel_std = 0.02;
  scene.perturbation.seed = 2024;
  for (int j = 0; j < scene.model.njnt; ++j)
    if (scene.model.jnt_type[static_cast<std::size_t>(j)] == kJointFree)
      scene.qpos0[static_cast<std::size_t>(scene.model.jnt_qposadr[static_cast<std::size_t>(j)] + 2)] -= c.lower;
  std::vector<int> all(static_cast<std::size_t>(c.nworld));
  for (int w = 0; w < c.nworld; ++w) all[static_cast<std::size_t>(w)] = w;
  int contacts = 0;
  const auto ref = run_worlds(scene, all, 1, c.steps, &contacts);
  EXPECT_GE(contacts, 4 * c.nworld) << "contact-rich at the end of the run";
  // The worlds really differ (else chunking would test nothing).
  EXPECT_NE(ref[0], ref[static_cast<std::size_t>(c.nworld - 1)]);
  auto expect_same = [&](const std::vector<std::vector<double>>& got, const std::vector<int>& ids,
                         const std::string& what) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::vector<double>& a = ref[static_cast<std::size_t>(ids[i])];
      const std::vector<double>& b = got[i];
      EXPECT_TRUE(a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0)
          << c.scene << ": world " << ids[i] << " differs (" << what << ")";
    }
  };
  expect_same(run_worlds(scene, all, 1, c.steps), all, "repeated run");
  for (int threads : {2, 7})
    expect_same(run_worlds(scene, all, threads, c.steps), all, std::to_string(threads) + " threads");
  // Chunkings: the last worlds alone in reverse order, the first ones, a single world.
  const std::vector<int> tail = {c.nworld - 1, c.nworld - 2}, head = {0, 1}, one = {c.nworld / 2};
  expect_same(run_worlds(scene, tail, 2, c.steps), tail, "batch {last, last-1}");
  expect_same(run_worlds(scene, head, 7, c.steps), head, "batch {0, 1}, 7 threads");
  expect_same(run_worlds(scene, one, 1, c.steps), one, "single world");
}

// On one CPU thread, 16 worlds run in chunks of four, and the fused solve runs a chunk's worlds
// side by side with their Newton systems factored in SIMD lanes (SapSolveKernel::solve_worlds):
// each world's trajectory is bitwise its trajectory alone, with the fp32 linear solve (approx32)
// and the fp64 one (drake).
TEST(WorldLanes, SolvedTogetherAsAlone) {
  for (const char* name : {"humanoid", "box_stack_5"})
    for (const char* preset : {"approx32", "drake"}) {
      Scene scene = load_scene(scene_path(name));
      scene.solver.contact_preset_variant = parse_preset(preset);
      scene.perturbation.qpos_std = 1e-3;
      scene.perturbation.qvel_std = 0.02;
      scene.perturbation.seed = 7;
      const int nworld = 16, steps = 120;
      std::vector<int> all(nworld);
      for (int w = 0; w < nworld; ++w) all[static_cast<std::size_t>(w)] = w;
      const auto together = run_worlds(scene, all, 1, steps);
      EXPECT_NE(together[0], together[nworld - 1]) << "the worlds differ";
      for (int w : {0, 5, 10, 15}) {
        const auto alone = run_worlds(scene, {w}, 1, steps);
        EXPECT_TRUE(std::memcmp(alone[0].data(), together[static_cast<std::size_t>(w)].data(),
                                alone[0].size() * sizeof(double)) == 0)
            << name << " " << preset << ": world " << w << " differs from its run alone";
      }
    }
}

INSTANTIATE_TEST_SUITE_P(ContactRich, Determinism,
                         ::testing::Values(DeterminismCase{"box_stack_5", 5, 250},
                                           DeterminismCase{"sphere_pile", 3, 50, 0.245},
                                           DeterminismCase{"humanoid", 4, 200}),
                         [](const ::testing::TestParamInfo<DeterminismCase>& i) { return std::string(i.param.scene); });
