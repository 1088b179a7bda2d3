// Passive forces and actuator force limits (kernels/passive_forces.hpp, issue 30) against MuJoCo
// (tools/reference/mujoco_model_reference.py, tests/data/mujoco/passive_forces.xml) at 12 random (q, v, ctrl):
//   * springdamper: our dof_invweight0 (from our M(qpos0)) and the stiffness/damping it gives
//     equal MuJoCo's compiled values;
//   * qfrc_spring (hinge/slide with springref, ball and free joints, a tendon with a deadband),
//     qfrc_damper (dofs and tendon), qfrc_gravcomp, qfrc_passive equal MuJoCo's to 1e-12;
//   * qfrc_actuator with tendon actuatorfrcrange, actuator forcerange, actuatorgravcomp and
//     joint actuatorfrcrange equals MuJoCo's;
//   * gravity compensation cancels gravity: with gc = 1 on every body, bias - gravcomp is the
//     bias without gravity.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "kernels/passive_forces.hpp"
#include "mujoco_model_oracle.hpp"
#include "model/solve_data.hpp"
#include "sap/contacts.hpp"
#include "sap/dynamics.hpp"
#include "sap/solver_options.hpp"
#include "sap/solver_sap.hpp"

namespace {

using sap_test::json;
using sap_test::vec_of;

struct Passive {
  json ref = sap_test::load_mujoco_fixture("passive_forces");
  sap::Model model = sap_test::load_oracle_model(ref);
  sap_test::FixturePaths paths{ref};
  int nv = ref["nv"].get<int>(), njnt = ref["njnt"].get<int>(), nbody = ref["nbody"].get<int>();
  int nu = ref["nu"].get<int>(), ntendon = ref["ntendon"].get<int>();
  std::vector<double> stiffness = vec_of<double>(ref["jnt_stiffness"]), damping = vec_of<double>(ref["dof_damping"]);
  std::vector<double> qpos_spring = vec_of<double>(ref["qpos_spring"]);
  std::vector<double> gravcomp = vec_of<double>(ref["body_gravcomp"]), mass = vec_of<double>(ref["body_mass"]);
  std::vector<int> actgravcomp = vec_of<int>(ref["jnt_actgravcomp"]), actfrclimited = vec_of<int>(ref["jnt_actfrclimited"]);
  std::vector<double> actfrcrange = vec_of<double>(ref["jnt_actfrcrange"]);
  std::vector<double> ten_spring = vec_of<double>(ref["tendon_lengthspring"]);
  std::vector<double> ten_k = vec_of<double>(ref["tendon_stiffness"]), ten_b = vec_of<double>(ref["tendon_damping"]);
  std::vector<int> ten_actlimited = vec_of<int>(ref["tendon_actfrclimited"]);
  std::vector<double> ten_actrange = vec_of<double>(ref["tendon_actfrcrange"]);
  std::vector<int> trntype = vec_of<int>(ref["actuator_trntype"]), trnid = vec_of<int>(ref["actuator_trnid"]);
  std::vector<int> forcelimited = vec_of<int>(ref["actuator_forcelimited"]), biastype = vec_of<int>(ref["actuator_biastype"]);
  std::vector<double> gear = vec_of<double>(ref["actuator_gear"]), forcerange = vec_of<double>(ref["actuator_forcerange"]);
  std::vector<std::vector<double>> gainprm = ref["actuator_gainprm"].get<std::vector<std::vector<double>>>();
  std::vector<std::vector<double>> biasprm = ref["actuator_biasprm"].get<std::vector<std::vector<double>>>();

  // Fixed tendon t: length and dense moment.
  double tendon(int t, const double* qpos, std::vector<double>& J) const {
    J.assign(nv, 0.0);
    double L = 0;
    for (int e = paths.tendon_adr[t]; e < paths.tendon_adr[t] + paths.tendon_num[t]; ++e) {
      const int j = paths.wrap_objid[e];
      L += paths.wrap_prm[e] * qpos[model.jnt_qposadr[j]];
      J[model.jnt_dofadr[j]] += paths.wrap_prm[e];
    }
    return L;
  }
};

void expect_vec_near(const std::vector<double>& got, const json& expect, double tol, const char* what) {
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expect[i].get<double>(), tol * std::max(1.0, std::abs(expect[i].get<double>())))
        << what << " dof " << i;
}

TEST(PassiveForces, SpringDamperGainsMatchTheCompiler) {
  Passive p;
  sap::DynamicsEvaluator ev(p.model);
  const std::vector<double> qpos0 = vec_of<double>(p.ref["qpos0"]);
  ev.compute(qpos0.data());
  const Eigen::MatrixXd Minv = ev.mass_matrix().inverse();
  const Eigen::Matrix<double, -1, -1, Eigen::RowMajor> Mr = Minv;
  std::vector<double> w(p.nv);
  sap::dof_invweight0(p.model, Mr.data(), w.data());
  expect_vec_near(w, p.ref["dof_invweight0"], 1e-12, "dof_invweight0");
  // sd_hinge: springdamper 0.2 0.7; sd_slide: 0.5 0.3 (tests/data/mujoco/passive_forces.xml).
  const struct {
    const char* joint;
    double tc, z;
  } sd[] = {{"sd_hinge", 0.2, 0.7}, {"sd_slide", 0.5, 0.3}};
  for (const auto& s : sd) {
    const int j = p.model.joint_id(s.joint), a = p.model.jnt_dofadr[j];
    double k, b;
    sap::springdamper_gains(s.tc, s.z, &w[a], 1, &k, &b);
    EXPECT_NEAR(k, p.stiffness[j], 1e-12 * k) << s.joint;
    EXPECT_NEAR(b, p.damping[a], 1e-12 * b) << s.joint;
  }
}

TEST(PassiveForces, MatchMuJoCoAtRandomStates) {
  Passive p;
  sap_test::HostKinematics k(p.model);
  const sap::Vec3<double> g = sap::Vec3<double>::load(vec_of<double>(p.ref["gravity"]).data());
  for (const json& s : p.ref["samples"]) {
    const auto qpos = vec_of<double>(s["qpos"]), qvel = vec_of<double>(s["qvel"]), ctrl = vec_of<double>(s["ctrl"]);
    k.compute(qpos.data(), qvel.data());
    std::vector<double> spring(p.nv, 0.0), damper(p.nv, 0.0), gc(p.nv, 0.0);
    for (int j = 0; j < p.njnt; ++j) {
      const int qa = p.model.jnt_qposadr[j], da = p.model.jnt_dofadr[j], type = p.model.jnt_type[j];
      if (type == sap::kJointHinge || type == sap::kJointSlide) spring[da] = -p.stiffness[j] * (qpos[qa] - p.qpos_spring[qa]);
      else sap::ball_free_spring<double>(type, p.stiffness[j], &qpos[qa], &p.qpos_spring[qa], &spring[da]);
    }
    for (int i = 0; i < p.nv; ++i) damper[i] = -p.damping[i] * qvel[i];
    for (int t = 0; t < p.ntendon; ++t) {
      std::vector<double> J;
      const double L = p.tendon(t, qpos.data(), J);
      double Ldot = 0;
      for (int i = 0; i < p.nv; ++i) Ldot += J[i] * qvel[i];
      EXPECT_NEAR(L, s["ten_length"][t].get<double>(), 1e-14);
      const double f = sap::tendon_spring_force(L, p.ten_spring[2 * t], p.ten_spring[2 * t + 1], p.ten_k[t]);
      for (int i = 0; i < p.nv; ++i) {
        spring[i] += J[i] * f;
        damper[i] -= J[i] * p.ten_b[t] * Ldot;
      }
    }
    for (int b = 1; b < p.nbody; ++b)
      if (p.gravcomp[b] > 0)
        sap::gravcomp_to_dofs<double>(k.m, k.xpos.data(), k.xipos.data(), k.cdof.data(), b, p.mass[b], p.gravcomp[b], g,
                                      gc.data());
    expect_vec_near(spring, s["qfrc_spring"], 1e-12, "qfrc_spring");
    expect_vec_near(damper, s["qfrc_damper"], 1e-12, "qfrc_damper");
    expect_vec_near(gc, s["qfrc_gravcomp"], 1e-12, "qfrc_gravcomp");
    std::vector<double> passive(p.nv);
    for (int i = 0; i < p.nv; ++i) passive[i] = spring[i] + damper[i] + (p.actgravcomp[p.model.dof_jntid[i]] ? 0 : gc[i]);
    expect_vec_near(passive, s["qfrc_passive"], 1e-12, "qfrc_passive");

    // Actuators: scalar forces, tendon range scaling, forcerange, moments, gravcomp, joint range.
    std::vector<double> force(p.nu), total(p.ntendon, 0.0);
    std::vector<std::vector<double>> row(p.nu);
    for (int u = 0; u < p.nu; ++u) {
      std::vector<double> J;
      double length, velocity = 0;
      if (p.trntype[u] == 0) {
        row[u].assign(p.nv, 0.0);
        row[u][p.model.jnt_dofadr[p.trnid[u]]] = p.gear[u];
        length = p.gear[u] * qpos[p.model.jnt_qposadr[p.trnid[u]]];
      } else {
        length = p.gear[u] * p.tendon(p.trnid[u], qpos.data(), J);
        row[u].resize(p.nv);
        for (int i = 0; i < p.nv; ++i) row[u][i] = p.gear[u] * J[i];
      }
      for (int i = 0; i < p.nv; ++i) velocity += row[u][i] * qvel[i];
      const double* bp = p.biasprm[u].data();
      force[u] = p.gainprm[u][0] * ctrl[u] + (p.biastype[u] == 1 ? bp[0] + bp[1] * length + bp[2] * velocity : 0);
      if (p.trntype[u] == 3 && p.ten_actlimited[p.trnid[u]]) total[p.trnid[u]] += force[u];
    }
    for (int u = 0; u < p.nu; ++u) {
      if (p.trntype[u] == 3 && p.ten_actlimited[p.trnid[u]])
        force[u] *= sap::tendon_actuator_force_scale<double>(total[p.trnid[u]], &p.ten_actrange[2 * p.trnid[u]]);
      if (p.forcelimited[u]) force[u] = std::clamp(force[u], p.forcerange[2 * u], p.forcerange[2 * u + 1]);
    }
    expect_vec_near(force, s["actuator_force"], 1e-12, "actuator_force");
    std::vector<double> qfrc(p.nv, 0.0);
    for (int u = 0; u < p.nu; ++u)
      for (int i = 0; i < p.nv; ++i) qfrc[i] += row[u][i] * force[u];
    for (int i = 0; i < p.nv; ++i)
      if (p.actgravcomp[p.model.dof_jntid[i]]) qfrc[i] += gc[i];
    for (int j = 0; j < p.njnt; ++j)
      if (p.actfrclimited[j]) {
        const int a = p.model.jnt_dofadr[j];
        qfrc[a] = std::clamp(qfrc[a], p.actfrcrange[2 * j], p.actfrcrange[2 * j + 1]);
      }
    expect_vec_near(qfrc, s["qfrc_actuator"], 1e-12, "qfrc_actuator");
  }
}

// Compensating every body fully cancels gravity in the equations of motion: qfrc_gravcomp = g(q),
// the gravity part of our bias forces (bias at zero velocity).
TEST(PassiveForces, FullGravcompCancelsGravity) {
  Passive p;
  sap::DynamicsEvaluator ev(p.model);
  sap_test::HostKinematics k(p.model);
  const sap::Vec3<double> g = sap::Vec3<double>::load(vec_of<double>(p.ref["gravity"]).data());
  for (const json& s : p.ref["samples"]) {
    const auto qpos = vec_of<double>(s["qpos"]);
    ev.compute(qpos.data());  // zero velocity: bias = g(q)
    k.compute(qpos.data());
    std::vector<double> gc(p.nv, 0.0);
    for (int b = 1; b < p.nbody; ++b)
      sap::gravcomp_to_dofs<double>(k.m, k.xpos.data(), k.xipos.data(), k.cdof.data(), b, p.model.body_mass[b], 1.0, g,
                                    gc.data());
    const Eigen::VectorXd bias = ev.bias();
    for (int i = 0; i < p.nv; ++i) EXPECT_NEAR(gc[i], bias[i], 1e-12 * std::max(1.0, std::abs(bias[i])));
  }
}

}  // namespace

namespace {

// The importer applies springdamper as MuJoCo's compiler does (ModelBuilder::finalize).
TEST(PassiveForces, ImporterAppliesSpringDamper) {
  Passive p;  // the model as our importer reads it (tendons and actuators cut, gravcomp dropped)
  for (const char* name : {"sd_hinge", "sd_slide"}) {
    const int j = p.model.joint_id(name), a = p.model.jnt_dofadr[j];
    EXPECT_NEAR(p.model.jnt_stiffness[j], p.stiffness[j], 1e-12 * p.stiffness[j]) << name;
    EXPECT_NEAR(p.model.dof_damping[a], p.damping[a], 1e-12 * p.damping[a]) << name;
  }
}

}  // namespace

// Through the importer and the solver: tests/data/mujoco/passive_step.xml loads strictly (gravcomp,
// ball and free joint springs, springdamper, fixed and spatial tendons with spring dead bands,
// damping and (fixed) armature, joint actuatorfrcrange, tendon actuatorfrcrange, forcerange) and one step
// from MuJoCo's random states equals MuJoCo's implicitfast step: with no contacts, limits or dry
// friction the step is the free motion v' = v + h (M + h D)^-1 (f - bias), M with the tendons'
// armature J^T a J, D the dofs' and tendons' damping J^T b J, f the explicit forces of the start.
namespace {

TEST(PassiveStep, OneStepThroughTheImporterEqualsMuJoCo) {
  const json ref = sap_test::load_mujoco_fixture("passive_step");
  sap::ImportReport report;
  const sap::Model m = sap::load_mjcf(std::string(SAP_SOURCE_DIR) + "/" + ref["model"].get<std::string>(), &report).model;
  ASSERT_EQ(m.nv, ref["nv"].get<int>());
  ASSERT_EQ(m.nu, ref["nu"].get<int>());
  EXPECT_GT(m.ngravcomp, 0);
  EXPECT_GT(m.nten_A, 0);  // the spatial tendon's damping, implicit
  const double h = ref["timestep"].get<double>();
  // The drake preset: fp64 and the bias forces at v_n, as MuJoCo (approx32's midpoint Coriolis
  // differs from MuJoCo's on the spinning ball and free bodies by design).
  {
    sap::SolverOptions o;
    o.contact_preset_variant = sap::Preset::Drake;
    sap::Context ctx(sap::Backend::CPU, 1);
    sap::SolverSAP solver(m, ctx, 1, o);
    ASSERT_EQ(solver.solve_data().size().nhol, 0);  // no rows: the step is the free motion
    double worst_v = 0, scale = 0;
    for (const json& s : ref["samples"]) {
      sap::State a(m, 1, sap::Backend::CPU), b(m, 1, sap::Backend::CPU);
      sap::Control control(m, 1, sap::Backend::CPU);
      sap::Contacts none(1, 0, sap::Backend::CPU);
      const auto q = vec_of<double>(s["qpos"]), v = vec_of<double>(s["qvel"]), c = vec_of<double>(s["ctrl"]);
      a.qpos.world_from_host(0, q.data());
      a.qvel.world_from_host(0, v.data());
      control.ctrl.world_from_host(0, c.data());
      solver.step(a, b, control, none, h);
      ASSERT_EQ(solver.world_status()[0] & sap::kStatusFailed, 0);
      const std::vector<double> v1 = b.qvel.world_to_host(0);
      for (int i = 0; i < m.nv; ++i) {
        const double expect = s["qvel_next"][i].get<double>();
        worst_v = std::max(worst_v, std::abs(v1[i] - expect));
        scale = std::max(scale, std::abs(expect - v[i]));
      }
    }
    std::printf("passive step (drake): max |v' - v'_mujoco| = %.2e (largest velocity change %.2e)\n", worst_v, scale);
    // The forces move v by up to `scale` in the step: any missing or wrong term shows at that
    // size (measured 3.5e-13 against 62).
    EXPECT_LT(worst_v, 1e-11);
  }
}

// Tendon dry friction (tendon frictionloss f): a box row on the tendon's rate J_t v, so a fixed
// tendon L = c q on one hinge is the joint's dry friction |c| f: the same creep below the
// threshold, the same (tau - |c| f) / I above it, step for step.
TEST(TendonFrictionLoss, OnAFixedTendonEqualsTheJointsDryFriction) {
  const char* tendon_xml = R"(<mujoco><option gravity="0 0 0"/><worldbody><body>
      <joint name="j" type="hinge" axis="0 0 1"/><geom type="sphere" size="0.1" mass="2"/></body></worldbody>
      <tendon><fixed frictionloss="0.75"><joint joint="j" coef="-2"/></fixed></tendon></mujoco>)";
  const char* joint_xml = R"(<mujoco><option gravity="0 0 0"/><worldbody><body>
      <joint name="j" type="hinge" axis="0 0 1" frictionloss="1.5"/><geom type="sphere" size="0.1" mass="2"/></body>
      </worldbody></mujoco>)";
  const sap::Model mt = sap::load_mjcf_string(tendon_xml, "tendon.xml").model;
  const sap::Model mj = sap::load_mjcf_string(joint_xml, "joint.xml").model;
  const double h = 1e-3, f = 1.5, I = 0.4 * 2 * 0.01;  // solid sphere about its centre
  for (double tau : {0.6 * f, 2.5 * f, -1.2 * f}) {
    sap::SolverOptions o;
    sap::set_solver_option(o, "contact_preset_variant", "drake");
    sap::set_solver_option(o, "line_search_variant", "exact_root");  // as tests/test_frictionloss.cpp
    sap::Context ctx(sap::Backend::CPU, 1);
    sap::SolverSAP st(mt, ctx, 1, o), sj(mj, ctx, 1, o);
    ASSERT_EQ(st.solve_data().size().nhol, 1);
    sap::State at(mt, 1, sap::Backend::CPU), bt(mt, 1, sap::Backend::CPU), aj(mj, 1, sap::Backend::CPU),
        bj(mj, 1, sap::Backend::CPU);
    sap::Control ct(mt, 1, sap::Backend::CPU), cj(mj, 1, sap::Backend::CPU);
    ct.qfrc_applied.world_from_host(0, &tau);
    cj.qfrc_applied.world_from_host(0, &tau);
    sap::Contacts none(1, 0, sap::Backend::CPU);
    const int n = 300;
    for (int i = 0; i < n; ++i) {
      st.step(at, bt, ct, none, h);
      sj.step(aj, bj, cj, none, h);
      std::swap(at, bt);
      std::swap(aj, bj);
    }
    const double vt = at.qvel.world_to_host(0)[0], vj = aj.qvel.world_to_host(0)[0];
    EXPECT_NEAR(vt, vj, 1e-10 * std::max(1e-6, std::abs(vj))) << "tau = " << tau;
    if (std::abs(tau) > f) {
      const double a = (tau - (tau > 0 ? f : -f)) / I;
      EXPECT_NEAR(vt, n * h * a, 1e-9 * std::abs(n * h * a)) << "tau = " << tau;
    } else {
      EXPECT_LT(std::abs(vt), 1e-3 * n * h * std::abs(tau) / I) << "stiction";  // frictionless: n h tau / I
    }
  }
}

}  // namespace

namespace {

// A spatial tendon's armature is applied as the inertia a J^T J only; MuJoCo's velocity-product
// bias a J^T (dJ/dt v) of the moving path is not: the import says so (nothing silent).
TEST(TendonArmature, OnASpatialTendonIsReportedAsApproximated) {
  const char* xml = R"(<mujoco><worldbody><site name="a" pos="0 0 1"/><body pos="0 0 0.5">
      <joint name="j" type="hinge" axis="0 1 0"/><geom size="0.1"/><site name="b" pos="0.1 0 0"/></body></worldbody>
      <tendon><spatial name="s" armature="0.1"><site site="a"/><site site="b"/></spatial>
      <fixed name="f" armature="0.1"><joint joint="j" coef="1"/></fixed></tendon></mujoco>)";
  sap::ImportReport report;
  const sap::Model m = sap::load_mjcf_string(xml, "arm.xml", &report).model;
  EXPECT_DOUBLE_EQ(m.tendon_armature[0], 0.1);
  EXPECT_DOUBLE_EQ(m.tendon_armature[1], 0.1);
  int n = 0;
  for (const std::string& w : report.warnings) n += w.find("armature approximated") != std::string::npos;
  EXPECT_EQ(n, 1);  // the spatial tendon's, not the fixed one's (exact: J is constant)
}

}  // namespace
