// MJCF import of models that Debian's MuJoCo 2.2.2 cannot read (Unitree G1, Franka Panda, a
// model using MuJoCo 3 features), checked against reference values that
// tools/reference/mujoco_reference.py wrote with the PyPI `mujoco` package (tests/data/mujoco/*.json):
// compiled constants, keyframes, body poses, the mass matrix and the bias forces at random
// (q, v) to 1e-10 relative.
//
// MuJoCo stores body inertias as principal moments plus a principal frame. Debian's 2.2.2
// computes that frame only to ~1e-7 (see tests/oracle/test_mujoco_oracle.cpp); the MuJoCo
// that wrote these fixtures (4.0) reproduces our tensors to rounding (measured: M and bias
// agree to 2e-15 relative on the Panda, whose inertias are given as fullinertia), so no
// substitution is needed here.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "import_test_util.hpp"
#include "sap/dynamics.hpp"
#include "sap/mjcf.hpp"
#include "sap/solver_sap.hpp"

namespace {

using nlohmann::json;
using sap_test::near_rel;

constexpr double kTol = 1e-10;

Eigen::VectorXd vecj(const json& j) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(j.size()));
  for (std::size_t i = 0; i < j.size(); ++i) v[static_cast<Eigen::Index>(i)] = j[i].get<double>();
  return v;
}
Eigen::VectorXd vecd(const std::vector<double>& x, std::size_t start, std::size_t n) {
  return Eigen::Map<const Eigen::VectorXd>(x.data() + start, static_cast<Eigen::Index>(n));
}

// Our actuator forces at (q, v, ctrl) against MuJoCo's qfrc_actuator, end to end through the
// solver: one SAP step of h = 1e-9 s without contacts gives M (v1 - v0) = h (tau(q + h v1, v1) -
// bias) for the implicit PD rows and the explicit motors, so tau = M (v1 - v0)/h + bias up to
// O(h) terms (h kp v / tau and h kd / M, below 1e-6 here; cancellation in v1 - v0 adds ~1e-10).
void check_actuator_force(const sap::Model& m, const json& smp) {
  const Eigen::VectorXd q = vecj(smp["qpos"]), v = vecj(smp["qvel"]), ctrl = vecj(smp["ctrl"]);
  const Eigen::VectorXd ref = vecj(smp["qfrc_actuator"]);
  sap::Context ctx(sap::Backend::CPU, 1);
  sap::SolverOptions o;
  o.contact_preset_variant = sap::parse_preset("approx64");
  sap::SolverSAP solver(m, ctx, 1, o);
  sap::State s0(m, 1, sap::Backend::CPU), s1(m, 1, sap::Backend::CPU);
  sap::Control c(m, 1, sap::Backend::CPU);
  sap::Contacts none(1, 0, sap::Backend::CPU);
  s0.qpos.world_from_host(0, q.data());
  s0.qvel.world_from_host(0, v.data());
  c.ctrl.world_from_host(0, ctrl.data());
  const double h = 1e-9;
  solver.step(s0, s1, c, none, h);
  ASSERT_EQ(solver.world_status()[0] & sap::kStatusFailureMask, 0);
  const std::vector<double> v1 = s1.qvel.world_to_host(0);
  sap::DynamicsEvaluator ev(m);
  ev.compute(q, v);
  const Eigen::VectorXd tau =
      ev.mass_matrix() * (Eigen::Map<const Eigen::VectorXd>(v1.data(), m.nv) - v) / h + ev.bias();
  for (int i = 0; i < m.nv; ++i)
    EXPECT_NEAR(tau[i], ref[i], 1e-5 * std::max(1.0, std::fabs(ref[i]))) << "dof " << i;
}

void check_fixture(const std::string& name) {
  const std::string fixture = std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/" + name + ".json";
  std::ifstream in(fixture);
  ASSERT_TRUE(in.good()) << "missing fixture " << fixture << " (run tools/reference/mujoco_reference.py)";
  const json ref = json::parse(in);
  const std::string model_path = std::string(SAP_SOURCE_DIR) + "/" + ref["model"].get<std::string>();
  SCOPED_TRACE(model_path + " vs MuJoCo " + ref["mujoco_version"].get<std::string>());

  sap::ImportOptions opt;
  opt.drop_unsupported = false;  // nothing is dropped: the Panda's finger equality is a coupler
  sap::ImportReport report;
  const sap::Model m = sap::load_mjcf(model_path, &report, opt).model;

  ASSERT_EQ(m.nq, ref["nq"].get<int>());
  ASSERT_EQ(m.nv, ref["nv"].get<int>());
  ASSERT_EQ(m.nbody, ref["nbody"].get<int>());
  ASSERT_EQ(m.njnt, ref["njnt"].get<int>());
  ASSERT_EQ(m.nu, ref["nu"].get<int>());
  EXPECT_DOUBLE_EQ(m.timestep, ref["timestep"].get<double>());
  EXPECT_TRUE(near_rel(Eigen::Vector3d(m.gravity[0], m.gravity[1], m.gravity[2]), vecj(ref["gravity"]), 1e-15));

  // Bodies (MuJoCo's numbering), masses and inertias.
  for (int b = 1; b < m.nbody; ++b) {
    const std::size_t bs = static_cast<std::size_t>(b);
    SCOPED_TRACE("body " + m.body_names[bs]);
    EXPECT_EQ(m.body_names[bs], ref["body_names"][bs].get<std::string>());
    EXPECT_EQ(m.body_parentid[bs], ref["body_parentid"][bs].get<int>());
    EXPECT_NEAR(m.body_mass[bs], ref["body_mass"][bs].get<double>(), 1e-12 * std::max(1.0, m.body_mass[bs]));
    EXPECT_TRUE(near_rel(vecd(m.body_ipos, 3 * bs, 3), vecj(ref["body_ipos"]).segment(3 * b, 3), 1e-12, 1e-3));
    EXPECT_TRUE(near_rel(vecd(m.body_inertia, 6 * bs, 6), vecj(ref["body_inertia_full"][bs]), kTol));
  }
  // Joints and dofs.
  const Eigen::VectorXd range = vecj(ref["jnt_range"]), spring = vecj(ref["qpos_spring"]);
  for (int j = 0; j < m.njnt; ++j) {
    const std::size_t js = static_cast<std::size_t>(j);
    SCOPED_TRACE("joint " + m.jnt_names[js]);
    EXPECT_EQ(m.jnt_names[js], ref["jnt_names"][js].get<std::string>());
    EXPECT_EQ(m.jnt_type[js], ref["jnt_type"][js].get<int>());
    if (m.jnt_type[js] == sap::kJointHinge || m.jnt_type[js] == sap::kJointSlide) {
      EXPECT_EQ(m.jnt_limited[js], ref["jnt_limited"][js].get<int>());
      if (m.jnt_limited[js]) {
        EXPECT_DOUBLE_EQ(m.jnt_range[2 * js], range[2 * j]);
        EXPECT_DOUBLE_EQ(m.jnt_range[2 * js + 1], range[2 * j + 1]);
      }
      EXPECT_DOUBLE_EQ(m.jnt_stiffness[js], ref["jnt_stiffness"][js].get<double>());
      EXPECT_DOUBLE_EQ(m.jnt_springref[js], spring[m.jnt_qposadr[js]]);
    }
  }
  EXPECT_TRUE(near_rel(vecd(m.qpos0, 0, static_cast<std::size_t>(m.nq)), vecj(ref["qpos0"]), 1e-12, 1.0));
  EXPECT_TRUE(
      near_rel(vecd(m.dof_armature, 0, static_cast<std::size_t>(m.nv)), vecj(ref["dof_armature"]), 1e-15, 1e-300));
  EXPECT_TRUE(
      near_rel(vecd(m.dof_damping, 0, static_cast<std::size_t>(m.nv)), vecj(ref["dof_damping"]), 1e-15, 1e-300));

  // Actuators: MuJoCo's force on the joint is G clamp(g0 ctrl + b1 G q + b2 G qdot, forcerange)
  // (gear G, b0 = 0); ours with gear g is clamp(g^2 kp (ctrl/g - q) - g^2 kd qdot, g forcerange),
  // so the coefficients must satisfy g^2 kp = -G^2 b1, g kp = G g0 (position form),
  // g^2 kd = -G^2 b2, and g forcerange = G forcerange_MuJoCo (docs/model-import.md, "Actuators").
  for (int u = 0; u < m.nu; ++u) {
    const std::size_t us = static_cast<std::size_t>(u);
    SCOPED_TRACE("actuator " + m.actuator_names[us]);
    EXPECT_EQ(m.actuator_names[us], ref["actuator_names"][us].get<std::string>());
    const int trn = ref["actuator_trnid"][us].get<int>();
    if (m.actuator_tendonid[us] >= 0) EXPECT_EQ(m.actuator_tendonid[us], trn);
    else EXPECT_EQ(m.actuator_dofadr[us], m.jnt_dofadr[static_cast<std::size_t>(trn)]);
    const double g0 = ref["actuator_gainprm0"][us].get<double>(), G = ref["actuator_gear"][us].get<double>();
    const Eigen::VectorXd b = vecj(ref["actuator_biasprm"][us]);
    const double g = m.actuator_gear[us], kp = m.actuator_kp[us], kd = m.actuator_kd[us];
    const double tol = 1e-12 * std::max({1.0, std::fabs(g0 * G), G * G * std::fabs(b[1]), G * G * std::fabs(b[2])});
    EXPECT_DOUBLE_EQ(b[0], 0.0);
    switch (m.actuator_type[us]) {
      case sap::kActMotor:
        EXPECT_EQ(b[1], 0.0);
        EXPECT_EQ(b[2], 0.0);
        EXPECT_NEAR(g, G * g0, tol);
        break;
      case sap::kActPosition:
        EXPECT_NEAR(g * g * kp, -G * G * b[1], tol);
        EXPECT_NEAR(g * kp, G * g0, tol);
        EXPECT_NEAR(g * g * kd, -G * G * b[2], tol);
        break;
      case sap::kActVelocity:
        EXPECT_EQ(b[1], 0.0);
        EXPECT_NEAR(g * g * kd, -G * G * b[2], tol);
        EXPECT_NEAR(g * kd, G * g0, tol);
        break;
      default: ADD_FAILURE() << "unexpected actuator type " << m.actuator_type[us];
    }
    EXPECT_EQ(m.actuator_ctrllimited[us], ref["actuator_ctrllimited"][us].get<int>());
    EXPECT_EQ(m.actuator_forcelimited[us], ref["actuator_forcelimited"][us].get<int>());
    if (m.actuator_ctrllimited[us]) {
      EXPECT_NEAR(m.actuator_ctrlrange[2 * us], ref["actuator_ctrlrange"][2 * us].get<double>(), 1e-12);
      EXPECT_NEAR(m.actuator_ctrlrange[2 * us + 1], ref["actuator_ctrlrange"][2 * us + 1].get<double>(), 1e-12);
    }
    if (m.actuator_forcelimited[us]) {
      // The generalized force bounds: ours g [lo, hi], MuJoCo's G [lo, hi] (either may flip).
      const double lo = ref["actuator_forcerange"][2 * us].get<double>(),
                   hi = ref["actuator_forcerange"][2 * us + 1].get<double>();
      const double a = g * m.actuator_forcerange[2 * us], c = g * m.actuator_forcerange[2 * us + 1];
      EXPECT_NEAR(std::min(a, c), std::min(G * lo, G * hi), 1e-12 * std::fabs(G * (hi - lo)));
      EXPECT_NEAR(std::max(a, c), std::max(G * lo, G * hi), 1e-12 * std::fabs(G * (hi - lo)));
    }
  }

  // Keyframes.
  ASSERT_EQ(report.keyframes.size(), ref["keys"].size());
  for (std::size_t k = 0; k < report.keyframes.size(); ++k) {
    EXPECT_EQ(report.keyframes[k].name, ref["keys"][k]["name"].get<std::string>());
    EXPECT_TRUE(near_rel(vecd(report.keyframes[k].qpos, 0, static_cast<std::size_t>(m.nq)),
                         vecj(ref["keys"][k]["qpos"]), 1e-12, 1.0));
    if (m.nu > 0)
      EXPECT_TRUE(near_rel(vecd(report.keyframes[k].ctrl, 0, static_cast<std::size_t>(m.nu)),
                           vecj(ref["keys"][k]["ctrl"]), 1e-15, 1.0));
  }

  // Kinematics and dynamics.
  sap::DynamicsEvaluator ev(m);
  for (std::size_t s = 0; s < ref["samples"].size(); ++s) {
    SCOPED_TRACE("sample " + std::to_string(s));
    const json& smp = ref["samples"][s];
    const Eigen::VectorXd q = vecj(smp["qpos"]), v = vecj(smp["qvel"]);
    const Eigen::VectorXd xpos = vecj(smp["xpos"]), xquat = vecj(smp["xquat"]), xipos = vecj(smp["xipos"]);
    ev.compute(q, v);
    for (int b = 1; b < m.nbody; ++b) {
      EXPECT_TRUE(near_rel(ev.body_pos(b), xpos.segment(3 * b, 3), 1e-12, 1.0)) << "body " << b;
      const Eigen::Quaterniond qm(xquat[4 * b], xquat[4 * b + 1], xquat[4 * b + 2], xquat[4 * b + 3]);
      EXPECT_LT(sap_test::quat_distance(ev.body_quat(b), qm), 1e-12) << "body " << b;
      EXPECT_TRUE(near_rel(ev.body_com(b), xipos.segment(3 * b, 3), 1e-12, 1.0)) << "body " << b;
    }
    Eigen::MatrixXd M(m.nv, m.nv);
    const Eigen::VectorXd lower = vecj(smp["M_lower"]);
    for (int i = 0, k = 0; i < m.nv; ++i)
      for (int j = 0; j <= i; ++j, ++k) M(i, j) = M(j, i) = lower[k];
    const Eigen::VectorXd bias = vecj(smp["qfrc_bias"]);
    EXPECT_TRUE(near_rel(ev.mass_matrix(), M, kTol));
    // Floor: the actuator model has no bias at all (independent joints, no gravity): rounding only.
    EXPECT_TRUE(near_rel(ev.bias(), bias, kTol, 1e-6));
    if (smp.contains("qfrc_actuator")) check_actuator_force(m, smp);
  }
}

TEST(MjcfFixtures, UnitreeG1) { check_fixture("unitree_g1"); }
TEST(MjcfFixtures, FrankaPanda) { check_fixture("franka_panda"); }
TEST(MjcfFixtures, Mujoco3Features) { check_fixture("features_mj3"); }
// General affine actuators (Adroit's gainprm 500 / biasprm 0 -200 0, kv, gears on servos,
// velocity form, saturation, a tendon servo): constants and qfrc_actuator at 8 random
// (q, v, ctrl), controls also beyond ctrlrange.
TEST(MjcfFixtures, AffineActuators) { check_fixture("affine_actuators"); }

// The Panda's finger coupling (mjx_panda.xml:104, <joint joint1 joint2 solref="0.005 1">) is
// imported as a joint equality: finger_joint1 = finger_joint2, MuJoCo's solref kept.
TEST(MjcfFixtures, PandaImportsTheFingerCoupler) {
  const std::string path = std::string(SAP_SOURCE_DIR) + "/models/franka_emika_panda/mjx_single_cube.xml";
  sap::ImportReport report;
  const sap::Model m = sap::load_mjcf(path, &report).model;  // no drop_unsupported
  ASSERT_EQ(m.neq, 1);
  EXPECT_EQ(m.eq_type[0], sap::kEqJoint);
  EXPECT_EQ(m.eq_obj1id[0], m.joint_id("finger_joint1"));
  EXPECT_EQ(m.eq_obj2id[0], m.joint_id("finger_joint2"));
  EXPECT_EQ(m.eq_active[0], 1);
  EXPECT_DOUBLE_EQ(m.eq_solref[0], 0.005);
  EXPECT_DOUBLE_EQ(m.eq_solref[1], 1.0);
  const double poly[5] = {0, 1, 0, 0, 0};  // MuJoCo's default polycoef
  for (int k = 0; k < 5; ++k) EXPECT_DOUBLE_EQ(m.eq_data[static_cast<std::size_t>(k)], poly[k]);
  for (const std::string& w : report.warnings) EXPECT_EQ(w.find("dropped"), std::string::npos) << w;
}

// The humanoid's hamstrings: two limited fixed tendons L = 0.5 hip_y - 0.5 knee, range [-0.3, 2].
TEST(MjcfFixtures, HumanoidImportsTheHamstringTendons) {
  const std::string path = std::string(SAP_SOURCE_DIR) + "/models/mujoco_humanoid/humanoid.xml";
  sap::ImportReport report;
  const sap::Model m = sap::load_mjcf(path, &report).model;  // no drop_unsupported
  ASSERT_EQ(m.ntendon, 2);
  for (const char* side : {"right", "left"}) {
    const int t = m.tendon_id(std::string("hamstring_") + side);
    ASSERT_GE(t, 0);
    const std::size_t ts = static_cast<std::size_t>(t);
    EXPECT_EQ(m.tendon_limited[ts], 1);
    EXPECT_DOUBLE_EQ(m.tendon_range[2 * ts], -0.3);
    EXPECT_DOUBLE_EQ(m.tendon_range[2 * ts + 1], 2.0);
    ASSERT_EQ(m.tendon_num[ts], 2);
    const std::size_t a = static_cast<std::size_t>(m.tendon_adr[ts]);
    EXPECT_EQ(m.wrap_objid[a], m.joint_id(std::string("hip_y_") + side));
    EXPECT_DOUBLE_EQ(m.wrap_prm[a], 0.5);
    EXPECT_EQ(m.wrap_objid[a + 1], m.joint_id(std::string("knee_") + side));
    EXPECT_DOUBLE_EQ(m.wrap_prm[a + 1], -0.5);
  }
  for (const std::string& w : report.warnings) EXPECT_EQ(w.find("dropped"), std::string::npos) << w;
}

}  // namespace
