// Stage 2 (src/kernels/contact_rows.hpp): contact weights of the approximate presets'
// `body_inertia` mode. A contact moves the rigid body that carries its link, and links joined by
// fixed joints are one rigid body: the weight is the directional mobility of the weld group
// (docs/sap-math.md §3.2). The case is the legged robots of example-robot-data 6.0.0 (issue 18):
// ANYmal's colliding "base" link has 1 mg and a rank-1 inertia with its mass in a welded
// "base_inertia" link, bolt's and quadruped's feet are massless or inertia-less links welded to
// the shank. Weighing the link alone gave a non-finite weight (singular inertia) or the 1e-12
// floor (massless link), and those worlds failed on every step under approx32 and approx64.
//
// tests/data/welded_links_split.urdf is such a body (rank-1 1 mg base, mass in a welded link,
// two massless sphere feet); welded_links_single.urdf is the same rigid body as one link.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <vector>

#include "sap/rollout.hpp"
#include "sap/scene.hpp"
#include "sap/simulator.hpp"
#include "sap/solver_options.hpp"
#include "model/solve_data.hpp"
#include "scene_cases.hpp"

namespace {

using namespace sap;

constexpr double kMass = 4.0;                                           // the box's mass (URDF)
const Eigen::Vector3d kInertia(0.0166666666667, 0.0566666666667, 0.0666666666667);  // about the com
constexpr double kHalfHeight = 0.05;                                    // box half-extent along z

Scene welded_scene(const std::string& which) {
  return load_scene(std::string(SAP_SOURCE_DIR) + "/tests/data/welded_links_" + which + ".json");
}

SimulatorOptions options(Preset preset) {
  SimulatorOptions o = sap::testing::cpu_preset_options(preset);
  // SAP's cone, whose regularisation R_t = sigma w, R_n >= beta^2 w / (4 pi^2) carries the weight
  // on every contact (the Hunt-Crossley rows use it only in their near-rigid clamp and impact
  // regularisation): the bounds below were set on it.
  o.solver.contact_approximation = ContactApproximation::Sap;
  return o;
}

// The rigid body's mobility 1/M + r^T I^-1 r summed over three orthonormal directions c_k,
// r = a x c_k, a = x - o: sum_k c_k^T [a]x^T I^-1 [a]x c_k = trace([a]x^T I^-1 [a]x), so the
// weight (the mean over the contact frame) is 1/M + trace([a]x^T I^-1 [a]x) / 3 whatever the
// tangent basis.
double rigid_body_weight(double mass, const Eigen::Vector3d& a, const Eigen::Matrix3d& inertia_world) {
  Eigen::Matrix3d skew;
  skew << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return 1.0 / mass + (skew.transpose() * inertia_world.inverse() * skew).trace() / 3.0;
}

// Both models, over the landing: every contact weight equals the analytic mobility of the whole
// rigid body at the contact point. For the split model that body is the weld group: the 4 kg
// link plus the 1 mg base whose inertia 1e-6 (1 1 1; 1 1 1; 1 1 1) is singular on its own (the
// group's com stays at the root origin; every link's com is there). The split model's welded
// links are what the old per-link weight could not weigh (non-finite, or the 1e-12 floor).
TEST(ContactWeightBodyInertia, WeldedLinksAreWeighedAsOneRigidBody) {
  for (const char* which : {"single", "split"}) {
    SCOPED_TRACE(which);
    const bool split = std::string(which) == "split";
    const double mass = kMass + (split ? 1e-6 : 0.0);
    Eigen::Matrix3d inertia_body = kInertia.asDiagonal();
    if (split) inertia_body += 1e-6 * Eigen::Matrix3d::Ones();  // the base link's rank-1 inertia
    Scene scene = welded_scene(which);
    Simulator sim(scene, options(Preset::Approx64));
    sim.reset();
    int checked = 0;
    for (int step = 0; step < 150; ++step) {
      const std::vector<double> q = sim.state().qpos.world_to_host(0);  // the step's start pose
      sim.step();
      ASSERT_TRUE(sim.failed_worlds().empty()) << "step " << step;
      const int n = sim.contacts().counts_host()[0];
      if (n == 0) continue;
      const Eigen::Vector3d com(q[0], q[1], q[2]);  // the com is the root link's origin
      const Eigen::Quaterniond rot(q[3], q[4], q[5], q[6]);
      const Eigen::Matrix3d R = rot.normalized().toRotationMatrix();
      const Eigen::Matrix3d inertia_world = R * inertia_body * R.transpose();
      const std::vector<int> body = sim.contacts().body.world_to_host(0);
      const std::vector<double> x0 = sim.contacts().x0.world_to_host(0), x1 = sim.contacts().x1.world_to_host(0);
      const std::vector<double> weight = sim.solver().solve_data().con_weight.world_to_host(0);
      for (int c = 0; c < n; ++c) {
        ASSERT_TRUE(body[2 * c] == 0 || body[2 * c + 1] == 0) << "only ground contacts expected";
        const double* x = body[2 * c] == 0 ? &x1[3 * c] : &x0[3 * c];  // the robot's witness point
        const double expected = rigid_body_weight(mass, Eigen::Vector3d(x[0], x[1], x[2]) - com, inertia_world);
        ASSERT_NEAR(weight[c], expected, 1e-10 * expected) << "step " << step << " contact " << c;
        ++checked;
      }
    }
    EXPECT_GE(checked, 100) << "too few contacts: the body never landed";
  }
}

// Per-world mass scale s (Simulator::set_world_params, MassScale: every body's mass and inertia
// times s) reaches the weights: world 1 (s = 2.5) weighs each contact as the rigid body of mass
// s M and inertia s I, i.e. its mobility over s, at its own pose; world 0 (no parameters) as the
// model. Constraint setup reads the per-world rows where it uses them (ReadsWorldModel,
// include/sap/model.hpp), on the CPU and on emulated GPU teams.
TEST(ContactWeightBodyInertia, PerWorldMassScaleScalesTheWeldGroupWeight) {
  const double scale[2] = {1.0, 2.5};
  for (int lanes : {0, 8}) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    Scene scene = welded_scene("split");
    SimulatorOptions o = options(Preset::Approx64);
    o.nworld = 2;
    o.emulated_lanes = lanes;
    Simulator sim(scene, o);
    sim.reset();
    sim.set_world_params(WorldParam::MassScale, scale);
    Eigen::Matrix3d inertia_body = kInertia.asDiagonal();
    inertia_body += 1e-6 * Eigen::Matrix3d::Ones();
    int checked[2] = {0, 0};
    for (int step = 0; step < 80; ++step) {
      std::vector<double> q[2];
      for (int w = 0; w < 2; ++w) q[w] = sim.state().qpos.world_to_host(w);
      sim.step();
      ASSERT_TRUE(sim.failed_worlds().empty()) << "step " << step;
      for (int w = 0; w < 2; ++w) {
        const int n = sim.contacts().counts_host()[w];
        const Eigen::Vector3d com(q[w][0], q[w][1], q[w][2]);
        const Eigen::Quaterniond rot(q[w][3], q[w][4], q[w][5], q[w][6]);
        const Eigen::Matrix3d R = rot.normalized().toRotationMatrix();
        const Eigen::Matrix3d inertia_world = scale[w] * (R * inertia_body * R.transpose());
        const std::vector<int> body = sim.contacts().body.world_to_host(w);
        const std::vector<double> x0 = sim.contacts().x0.world_to_host(w), x1 = sim.contacts().x1.world_to_host(w);
        const std::vector<double> weight = sim.solver().solve_data().con_weight.world_to_host(w);
        for (int c = 0; c < n; ++c) {
          const double* x = body[2 * c] == 0 ? &x1[3 * c] : &x0[3 * c];
          const double expected =
              rigid_body_weight(scale[w] * (kMass + 1e-6), Eigen::Vector3d(x[0], x[1], x[2]) - com, inertia_world);
          ASSERT_NEAR(weight[c], expected, 1e-10 * expected) << "world " << w << " step " << step << " contact " << c;
          ++checked[w];
        }
      }
    }
    EXPECT_GE(checked[0], 20);
    EXPECT_GE(checked[1], 20);
  }
}

// The physical run, on every preset: released 2 cm above the ground with a small tilt, the split
// body lands, comes to rest on its box and feet, and moves exactly as the single-link body (to
// the 1 mg it lacks); no world fails, the body rests on the floor (compressed by the contact
// compliance, less than 1 mm) and its mechanical energy ends below the release energy.
TEST(ContactWeightBodyInertia, SplitBodyRestsLikeTheSingleLinkOnEveryPreset) {
  for (Preset preset : {Preset::Approx32, Preset::Approx64, Preset::Drake}) {
    SCOPED_TRACE(to_string(preset));
    Scene split = welded_scene("split"), single = welded_scene("single");
    Simulator a(split, options(preset)), b(single, options(preset));
    a.reset();
    b.reset();
    const double energy0 = a.energy()[0].total();
    double max_diff = 0;
    for (int step = 0; step < 1000; ++step) {
      a.step();
      b.step();
      const std::vector<double> qa = a.state().qpos.world_to_host(0), qb = b.state().qpos.world_to_host(0);
      for (std::size_t i = 0; i < qa.size(); ++i) max_diff = std::max(max_diff, std::abs(qa[i] - qb[i]));
    }
    EXPECT_TRUE(a.failed_worlds().empty());
    EXPECT_TRUE(b.failed_worlds().empty());
    EXPECT_LT(max_diff, 1e-5) << "split and single-link bodies diverge";
    const std::vector<double> q = a.state().qpos.world_to_host(0), v = a.state().qvel.world_to_host(0);
    double speed = 0;
    for (double x : v) speed = std::max(speed, std::abs(x));
    EXPECT_LT(speed, 1e-3) << "not at rest after 2 s";
    EXPECT_LT(q[2], kHalfHeight) << "the box must press into the floor (compliant contact)";
    EXPECT_GT(q[2], kHalfHeight - 1e-3) << "sunk by more than 1 mm";
    EXPECT_LT(a.energy()[0].total(), energy0) << "mechanical energy grew";
  }
}

// A point mass (1 kg, zero inertia) 0.25 m from a hinge: a valid model (M = m l^2) whose
// free-body mobility is unbounded, so body_inertia cannot weigh its contacts; they take the
// diag_delassus weight, which for one hinge dof is w = |J|^2 / (3 A) (W = J J^T / A has
// Frobenius norm |J|^2), |J| the contact point's distance from the hinge axis and A = m l^2.
// Before, the weight was non-finite and the world failed at the first contact on approx32 and
// approx64 (drake weighs by diag_delassus anyway, at the contact midpoint: its weight is not
// checked here). Physically: released at 1 rad, the bob swings down, hits the ground and rests
// on it at the angle where its sphere touches z = 0 (cos(theta) = (0.29 - 0.05) / 0.25), sunk by
// less than 1 mm; the impact dissipates energy, and the swing before it may change it only by
// the integrator's error (midpoint position update of the approximate presets: < 1 %).
TEST(ContactWeightBodyInertia, SingularGroupInertiaFallsBackToTheDelassusWeight) {
  const double pivot_z = 0.29, arm = 0.25, radius = 0.05, A = 1.0 * arm * arm;
  const double rest_angle = std::acos((pivot_z - radius) / arm);
  for (Preset preset : {Preset::Approx32, Preset::Approx64, Preset::Drake}) {
    SCOPED_TRACE(to_string(preset));
    Scene scene = load_scene(std::string(SAP_SOURCE_DIR) + "/tests/data/point_mass_pendulum.json");
    Simulator sim(scene, options(preset));
    sim.reset();
    const double e0 = sim.energy()[0].total();
    double e_max = e0;
    int checked = 0;
    const bool approx = preset != Preset::Drake;
    for (int step = 0; step < 1000; ++step) {
      sim.step();
      e_max = std::max(e_max, sim.energy()[0].total());
      const int n = sim.contacts().counts_host()[0];
      if (n == 0 || checked >= 50 || !approx) continue;
      const std::vector<int> body = sim.contacts().body.world_to_host(0);
      const std::vector<double> x0 = sim.contacts().x0.world_to_host(0), x1 = sim.contacts().x1.world_to_host(0);
      const std::vector<double> weight = sim.solver().solve_data().con_weight.world_to_host(0);
      const double* x = body[0] == 0 ? &x1[0] : &x0[0];  // the bob's witness point
      const double dist2 = x[0] * x[0] + (x[2] - pivot_z) * (x[2] - pivot_z);  // from the y axis through the pivot
      const double expected = dist2 / (3 * A);
      // approx32 computes the weight in fp32
      EXPECT_NEAR(weight[0], expected, (preset == Preset::Approx32 ? 1e-6 : 1e-12) * expected) << "step " << step;
      ++checked;
    }
    if (approx) EXPECT_GT(checked, 10) << "the bob never touched the ground";
    EXPECT_TRUE(sim.failed_worlds().empty());
    EXPECT_LE(e_max, 1.01 * e0) << "energy grew";
    EXPECT_LT(sim.energy()[0].total(), e0 - 0.1) << "the impact dissipated nothing";
    const double angle = sim.state().qpos.world_to_host(0)[0], speed = sim.state().qvel.world_to_host(0)[0];
    EXPECT_LT(std::abs(speed), 1e-3);
    EXPECT_GT(angle, 0.0);  // it rests on its side of the ground, not through it
    EXPECT_LT(angle, rest_angle);
    const double sphere_bottom = pivot_z - arm * std::cos(angle) - radius;
    EXPECT_LT(sphere_bottom, 0.0);
    EXPECT_GT(sphere_bottom, -1e-3);
  }
}

// Constraint setup's joint-limit and PD rows on teams (one joint per lane, the limit rows
// compacted in joint order by a prefix sum over the lanes; one actuator per lane, its row the
// count of PD actuators before it) equal the one-lane rows bit for bit: humanoid (21 limited
// hinges: several chunks at 3 lanes) with every limited joint slightly past alternating bounds,
// one joint with a range inside its window (both rows); pd_arm (PD actuators).
TEST(ConstraintSetupRows, LimitAndPdRowsOnTeamsEqualTheOneLaneRows) {
  for (const std::string name : {"humanoid", "pd_arm"}) {
    SCOPED_TRACE(name);
    Scene scene = load_scene(std::string(SAP_SOURCE_DIR) + "/scenes/" + name + ".json");
    Model& m = scene.model;
    std::vector<double> q0, v0(static_cast<std::size_t>(m.nv), 0.0);
    {
      SimulatorOptions o;
      o.nworld = 1;
      o.backend = Backend::CPU;
      Simulator probe(scene, o);
      q0 = probe.state().qpos.world_to_host(0);
    }
    int limited = 0, both = -1;
    for (int j = 0; j < m.njnt; ++j) {
      if (!m.jnt_limited[j] || (m.jnt_type[j] != kJointHinge && m.jnt_type[j] != kJointSlide)) continue;
      double& q = q0[static_cast<std::size_t>(m.jnt_qposadr[j])];
      if (both < 0) {  // range within the window 2 h |v| of q: both rows
        both = j;
        v0[static_cast<std::size_t>(m.jnt_dofadr[j])] = 1.0;
        m.jnt_range[2 * j] = q - 1e-3;
        m.jnt_range[2 * j + 1] = q + 1e-3;
      } else {
        q = limited % 2 ? m.jnt_range[2 * j + 1] + 1e-4 : m.jnt_range[2 * j] - 1e-4;  // past a bound
      }
      ++limited;
    }
    ASSERT_GE(limited, 2);
    struct Rows {
      std::vector<int> lim_count, lim_dof, pd_dof;
      std::vector<double> lim_param, pd_param;
    };
    auto rows = [&](int lanes) {
      SimulatorOptions o;
      o.nworld = 2;
      o.backend = Backend::CPU;
      o.threads = 1;
      o.emulated_lanes = lanes;
      Simulator sim(scene, o);
      for (int w = 0; w < 2; ++w) {
        sim.state().qpos.world_from_host(w, q0.data());
        sim.state().qvel.world_from_host(w, v0.data());
      }
      sim.step();
      SolveData& sd = sim.solver().solve_data();
      return Rows{sd.lim_count.buffer().to_host(), sd.lim_dof.buffer().to_host(), sd.pd_dof.buffer().to_host(),
                  sd.lim_param.buffer().to_host(), sd.pd_param.buffer().to_host()};
    };
    const Rows one = rows(0);
    EXPECT_EQ(one.lim_count[0], limited + 1);  // one row per joint, two for `both`
    if (name == "pd_arm") EXPECT_FALSE(one.pd_dof.empty());
    for (int lanes : {3, 32, 33}) {
      SCOPED_TRACE("lanes " + std::to_string(lanes));
      const Rows team = rows(lanes);
      EXPECT_EQ(team.lim_count, one.lim_count);
      EXPECT_EQ(team.lim_dof, one.lim_dof);
      EXPECT_EQ(team.pd_dof, one.pd_dof);
      EXPECT_EQ(team.lim_param, one.lim_param);  // exact: same arithmetic per row
      EXPECT_EQ(team.pd_param, one.pd_param);
    }
  }
}

}  // namespace
