// Actuator dynamics and muscles (kernels/actuator_dynamics.hpp, issue 30) against MuJoCo
// (tools/reference/mujoco_model_reference.py, tests/data/mujoco/actuator_dynamics.xml) and against
// themselves:
//   * act_dot, the next activation (one mj_step), actuator_force and qfrc_actuator equal
//     MuJoCo's at 30 random (q, v, act, ctrl) to 1e-10 relative: dyntype filter, filterexact,
//     integrator, muscle (hard and smooth switching), actlimited/actrange, actearly, muscles
//     on joint, fixed and spatial tendon transmissions, forcerange;
//   * our acc0 (|M^-1 moment| at qpos0, the muscles' force scale) equals MuJoCo's;
//   * a muscle-driven arm stepped on the host with MuJoCo's Euler step follows MuJoCo's 1 s
//     trajectory (tests/data/mujoco/muscle_arm.xml);
//   * the muscle curves are continuous with the documented shape; the exact filter integrates
//     its ODE exactly (many small steps converge to one exact step).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>

#include "kernels/actuator_dynamics.hpp"
#include "mujoco_model_oracle.hpp"
#include "sap/dynamics.hpp"

namespace {

using sap_test::json;
using sap_test::vec_of;

constexpr int kTrnJoint = 0, kTrnTendon = 3;  // MuJoCo's mjtTrn

// Everything of the fixture's actuators the computation reads, and the transmissions.
struct Actuators {
  json ref = sap_test::load_mujoco_fixture("actuator_dynamics");
  sap::Model model = sap_test::load_oracle_model(ref);
  sap_test::FixturePaths paths{ref};
  int nu = ref["nu"].get<int>(), nv = ref["nv"].get<int>(), ntendon = ref["ntendon"].get<int>();
  std::vector<int> trntype = vec_of<int>(ref["actuator_trntype"]), trnid = vec_of<int>(ref["actuator_trnid"]);
  std::vector<int> dyntype = vec_of<int>(ref["actuator_dyntype"]), gaintype = vec_of<int>(ref["actuator_gaintype"]);
  std::vector<int> biastype = vec_of<int>(ref["actuator_biastype"]), actearly = vec_of<int>(ref["actuator_actearly"]);
  std::vector<int> ctrllimited = vec_of<int>(ref["actuator_ctrllimited"]);
  std::vector<int> forcelimited = vec_of<int>(ref["actuator_forcelimited"]);
  std::vector<int> actlimited = vec_of<int>(ref["actuator_actlimited"]);
  std::vector<double> gear = vec_of<double>(ref["actuator_gear"]), ctrlrange = vec_of<double>(ref["actuator_ctrlrange"]);
  std::vector<double> forcerange = vec_of<double>(ref["actuator_forcerange"]);
  std::vector<double> actrange = vec_of<double>(ref["actuator_actrange"]);
  std::vector<double> lengthrange = vec_of<double>(ref["actuator_lengthrange"]);
  std::vector<double> acc0 = vec_of<double>(ref["actuator_acc0"]);
  std::vector<std::vector<double>> dynprm = ref["actuator_dynprm"].get<std::vector<std::vector<double>>>();
  std::vector<std::vector<double>> gainprm = ref["actuator_gainprm"].get<std::vector<std::vector<double>>>();
  std::vector<std::vector<double>> biasprm = ref["actuator_biasprm"].get<std::vector<std::vector<double>>>();

  // Tendon lengths and dense moments (fixed: sum coef q; spatial: kernels/spatial_tendon.hpp).
  void tendons(sap_test::HostKinematics& k, const double* qpos, std::vector<double>& L,
               std::vector<std::vector<double>>& J) const {
    L.assign(ntendon, 0.0);
    J.assign(ntendon, std::vector<double>(nv, 0.0));
    for (int t = 0; t < ntendon; ++t) {
      const int adr = paths.tendon_adr[t], num = paths.tendon_num[t];
      if (paths.spatial(t)) {
        L[t] = sap::spatial_tendon_length_moment<double>(k.m, paths.view(), adr, num, k.xpos.data(), k.xmat.data(),
                                                         k.cdof.data(), J[t].data());
      } else {
        for (int e = adr; e < adr + num; ++e) {
          const int j = paths.wrap_objid[e];
          L[t] += paths.wrap_prm[e] * qpos[model.jnt_qposadr[j]];
          J[t][model.jnt_dofadr[j]] += paths.wrap_prm[e];
        }
      }
    }
  }
  // Dense moment row of actuator u (d length / dq).
  std::vector<double> moment(int u, const std::vector<std::vector<double>>& J) const {
    std::vector<double> row(nv, 0.0);
    if (trntype[u] == kTrnJoint) row[model.jnt_dofadr[trnid[u]]] = gear[u];
    else
      for (int i = 0; i < nv; ++i) row[i] = gear[u] * J[trnid[u]][i];
    return row;
  }
};

double rel_err(double a, double b) { return std::abs(a - b) / std::max(1.0, std::abs(b)); }

TEST(ActuatorDynamics, MatchesMuJoCoAtRandomStates) {
  Actuators a;
  ASSERT_EQ(a.nu, a.ref["na"].get<int>());  // one activation per actuator in this model
  for (int u = 0; u < a.nu; ++u) ASSERT_TRUE(a.trntype[u] == kTrnJoint || a.trntype[u] == kTrnTendon);
  sap_test::HostKinematics k(a.model);
  const double h = a.ref["timestep"].get<double>();
  double worst = 0;
  for (const json& s : a.ref["samples"]) {
    const auto qpos = vec_of<double>(s["qpos"]), qvel = vec_of<double>(s["qvel"]);
    const auto act = vec_of<double>(s["act"]), ctrl_in = vec_of<double>(s["ctrl"]);
    k.compute(qpos.data(), qvel.data());
    std::vector<double> L;
    std::vector<std::vector<double>> J;
    a.tendons(k, qpos.data(), L, J);
    for (int t = 0; t < a.ntendon; ++t) EXPECT_NEAR(L[t], s["ten_length"][t].get<double>(), 1e-12);
    Eigen::VectorXd qfrc = Eigen::VectorXd::Zero(a.nv);
    for (int u = 0; u < a.nu; ++u) {
      const std::vector<double> row = a.moment(u, J);
      const double length = a.trntype[u] == kTrnJoint ? a.gear[u] * qpos[a.model.jnt_qposadr[a.trnid[u]]]
                                                      : a.gear[u] * L[a.trnid[u]];
      double velocity = 0;
      for (int i = 0; i < a.nv; ++i) velocity += row[i] * qvel[i];
      EXPECT_NEAR(length, s["actuator_length"][u].get<double>(), 1e-12);
      EXPECT_NEAR(velocity, s["actuator_velocity"][u].get<double>(), 1e-12);
      double ctrl = ctrl_in[u];
      if (a.ctrllimited[u]) ctrl = std::clamp(ctrl, a.ctrlrange[2 * u], a.ctrlrange[2 * u + 1]);
      const double* actrange = a.actlimited[u] ? &a.actrange[2 * u] : nullptr;
      const double act_dot = sap::activation_rate<double>(a.dyntype[u], a.dynprm[u].data(), ctrl, act[u]);
      const double next = sap::next_activation<double>(a.dyntype[u], a.dynprm[u].data(), actrange, act[u], act_dot, h);
      worst = std::max({worst, rel_err(act_dot, s["act_dot"][u].get<double>()), rel_err(next, s["act_next"][u])});
      EXPECT_LE(rel_err(act_dot, s["act_dot"][u].get<double>()), 1e-12) << a.ref["actuator_names"][u];
      EXPECT_LE(rel_err(next, s["act_next"][u].get<double>()), 1e-12) << a.ref["actuator_names"][u];
      const double input = a.actearly[u] ? next : act[u];
      double force = sap::actuator_gain_bias_force<double>(a.gaintype[u], a.gainprm[u].data(), a.biastype[u],
                                                           a.biasprm[u].data(), length, velocity,
                                                           &a.lengthrange[2 * u], a.acc0[u], input);
      if (a.forcelimited[u]) force = std::clamp(force, a.forcerange[2 * u], a.forcerange[2 * u + 1]);
      worst = std::max(worst, rel_err(force, s["actuator_force"][u].get<double>()));
      EXPECT_LE(rel_err(force, s["actuator_force"][u].get<double>()), 1e-10) << a.ref["actuator_names"][u];
      for (int i = 0; i < a.nv; ++i) qfrc[i] += row[i] * force;
    }
    for (int i = 0; i < a.nv; ++i) {
      worst = std::max(worst, rel_err(qfrc[i], s["qfrc_actuator"][i].get<double>()));
      EXPECT_LE(rel_err(qfrc[i], s["qfrc_actuator"][i].get<double>()), 1e-10) << "dof " << i;
    }
  }
  std::printf("worst relative error (act_dot, next act, force, qfrc_actuator): %.2e\n", worst);
}

// acc0 = |M(qpos0)^-1 moment(qpos0)|: the muscles' peak force scale / acc0 when force < 0.
TEST(ActuatorDynamics, Acc0MatchesMuJoCo) {
  Actuators a;
  sap::DynamicsEvaluator ev(a.model);
  const std::vector<double> qpos0 = vec_of<double>(a.ref["qpos0"]);
  ev.compute(qpos0.data());
  sap_test::HostKinematics k(a.model);
  k.compute(qpos0.data());
  std::vector<double> L;
  std::vector<std::vector<double>> J;
  a.tendons(k, qpos0.data(), L, J);
  const Eigen::MatrixXd M = ev.mass_matrix();
  for (int u = 0; u < a.nu; ++u) {
    const std::vector<double> row = a.moment(u, J);
    const Eigen::VectorXd acc = M.ldlt().solve(Eigen::Map<const Eigen::VectorXd>(row.data(), a.nv));
    EXPECT_LE(rel_err(acc.norm(), a.acc0[u]), 1e-10) << a.ref["actuator_names"][u];
  }
}

// The length curve is continuous, 1 at L = 1, 1/2 at the midpoints and 0 at lmin and lmax; the
// passive curve is C1 at b = (1 + lmax)/2; the velocity curve reaches fvmax.
TEST(MuscleCurves, ShapeAndContinuity) {
  const double lmin = 0.5, lmax = 1.6;
  EXPECT_DOUBLE_EQ(sap::muscle_force_length(1.0, lmin, lmax), 1.0);
  EXPECT_DOUBLE_EQ(sap::muscle_force_length(0.75, lmin, lmax), 0.5);
  EXPECT_DOUBLE_EQ(sap::muscle_force_length(1.3, lmin, lmax), 0.5);
  EXPECT_DOUBLE_EQ(sap::muscle_force_length(lmin, lmin, lmax), 0.0);
  EXPECT_DOUBLE_EQ(sap::muscle_force_length(lmax, lmin, lmax), 0.0);
  const double eps = 1e-9;
  for (double L : {0.75, 1.0, 1.3})
    EXPECT_NEAR(sap::muscle_force_length(L - eps, lmin, lmax), sap::muscle_force_length(L + eps, lmin, lmax), 1e-8);
  // Passive force: slope continuous at b; lengthrange = range, so len = L.
  const double prm[9] = {0.75, 1.05, 10, 200, lmin, lmax, 1.5, 1.3, 1.2}, lr[2] = {0.75, 1.05};
  const double b = 0.5 * (1 + lmax), h = 1e-6;
  const double left = (sap::muscle_bias(b, lr, 1.0, prm) - sap::muscle_bias(b - h, lr, 1.0, prm)) / h;
  const double right = (sap::muscle_bias(b + h, lr, 1.0, prm) - sap::muscle_bias(b, lr, 1.0, prm)) / h;
  EXPECT_NEAR(left, right, 1e-4 * std::abs(left));
  EXPECT_NEAR(right, -10 * 1.3 / (b - 1), 1e-4);  // linear beyond b: slope F fpmax / (b - 1)
  // Fast lengthening saturates at fvmax, fast shortening gives no force (L0 = 1, vmax = 1.5).
  EXPECT_DOUBLE_EQ(sap::muscle_gain(1.0, 100.0, lr, 1.0, prm), -10 * 1.2);
  EXPECT_DOUBLE_EQ(sap::muscle_gain(1.0, -1.5, lr, 1.0, prm), 0.0);
  EXPECT_DOUBLE_EQ(sap::muscle_gain(1.0, 0.0, lr, 1.0, prm), -10.0);
}

// filterexact is the exact solution of act' = (ctrl - act)/tau for constant ctrl: one step of
// h equals 10^4 Euler steps of h/10^4 (to O(h/n)), and act -> ctrl as h -> infinity.
TEST(ActivationIntegration, ExactFilterIsTheOdeSolution) {
  const double tau[1] = {0.05}, ctrl = 0.8, act0 = -0.3, h = 0.03;
  const double exact = sap::next_activation<double>(
      sap::kDynFilterExact, tau, nullptr, act0, sap::activation_rate<double>(sap::kDynFilterExact, tau, ctrl, act0), h);
  EXPECT_NEAR(exact, ctrl + (act0 - ctrl) * std::exp(-h / tau[0]), 1e-15);
  double act = act0;
  const int n = 10000;
  for (int i = 0; i < n; ++i)
    act = sap::next_activation<double>(sap::kDynFilter, tau, nullptr, act,
                                       sap::activation_rate<double>(sap::kDynFilter, tau, ctrl, act), h / n);
  EXPECT_NEAR(act, exact, 1e-4);
  // actrange clamps.
  const double range[2] = {-0.1, 0.5};
  EXPECT_DOUBLE_EQ(sap::next_activation<double>(sap::kDynIntegrator, tau, range, 0.45, 10.0, h), 0.5);
}

// Muscle activation: faster up than down; smoothing blends the two time constants
// continuously across ctrl = act.
TEST(ActivationIntegration, MuscleTimeConstants) {
  const double prm[3] = {0.01, 0.04, 0}, smooth[3] = {0.01, 0.04, 0.2};
  const double up = sap::muscle_activation_rate(0.6, 0.5, prm), down = sap::muscle_activation_rate(0.4, 0.5, prm);
  EXPECT_NEAR(up, 0.1 / (0.01 * (0.5 + 1.5 * 0.5)), 1e-12);
  EXPECT_NEAR(down, -0.1 * (0.5 + 1.5 * 0.5) / 0.04, 1e-12);
  const double e = 1e-9;
  EXPECT_NEAR(sap::muscle_activation_rate(0.5 + e, 0.5, smooth) / e, sap::muscle_activation_rate(0.5 - e, 0.5, smooth) / -e,
              1e-3);
  // ctrl beyond [0, 1] is clamped.
  EXPECT_DOUBLE_EQ(sap::muscle_activation_rate(1.7, 0.2, prm), sap::muscle_activation_rate(1.0, 0.2, prm));
}

}  // namespace

namespace {

// The muscle-driven arm of tests/data/mujoco/muscle_arm.xml integrated on the host with MuJoCo's
// Euler step (implicit joint damping, explicit everything else, act integrated with the act_dot
// of the step's start) from our kinematics, dynamics, tendon and muscle functions, against
// MuJoCo's own 1 s trajectory under the same periodic controls. This checks the physics
// functions end to end; the solver's trajectory is checked in the integration tests.
TEST(MuscleArm, HostEulerFollowsMuJoCoForOneSecond) {
  json ref = sap_test::load_mujoco_fixture("muscle_arm");
  sap::Model model = sap_test::load_oracle_model(ref);
  sap_test::FixturePaths paths{ref};
  const int nv = model.nv, nu = ref["nu"].get<int>();
  const double h = ref["timestep"].get<double>(), freq = ref["arm_freq"].get<double>();
  const auto phase = vec_of<double>(ref["arm_phase"]), damping = vec_of<double>(ref["dof_damping"]);
  const auto lengthrange = vec_of<double>(ref["actuator_lengthrange"]), acc0 = vec_of<double>(ref["actuator_acc0"]);
  const auto gear = vec_of<double>(ref["actuator_gear"]);
  const auto trnid = vec_of<int>(ref["actuator_trnid"]), dyntype = vec_of<int>(ref["actuator_dyntype"]);
  const auto dynprm = ref["actuator_dynprm"].get<std::vector<std::vector<double>>>();
  const auto gainprm = ref["actuator_gainprm"].get<std::vector<std::vector<double>>>();
  const auto biasprm = ref["actuator_biasprm"].get<std::vector<std::vector<double>>>();
  for (int u = 0; u < nu; ++u) ASSERT_TRUE(paths.spatial(trnid[u]));
  sap_test::HostKinematics k(model);
  sap::DynamicsEvaluator ev(model);
  std::vector<double> q = vec_of<double>(ref["qpos0"]), v(nv, 0.0), act(nu, 0.0);
  const json& traj = ref["samples"];
  double worst_q = 0, worst_act = 0;
  const int steps = static_cast<int>(std::lround(1.0 / h));
  for (int n = 0; n <= steps; ++n) {
    if (n % 10 == 0) {
      const json& s = traj[n / 10];
      for (int i = 0; i < nv; ++i) worst_q = std::max(worst_q, std::abs(q[i] - s["qpos"][i].get<double>()));
      for (int u = 0; u < nu; ++u) worst_act = std::max(worst_act, std::abs(act[u] - s["act"][u].get<double>()));
    }
    if (n == steps) break;
    const double t = n * h;
    k.compute(q.data(), v.data());
    ev.compute(q.data(), v.data());
    Eigen::VectorXd f = -ev.bias();
    std::vector<double> act_dot(nu);
    for (int u = 0; u < nu; ++u) {
      std::vector<double> J(nv);
      const int tn = trnid[u];
      const double L = sap::spatial_tendon_length_moment<double>(k.m, paths.view(), paths.tendon_adr[tn],
                                                                 paths.tendon_num[tn], k.xpos.data(), k.xmat.data(),
                                                                 k.cdof.data(), J.data());
      double Ldot = 0;
      for (int i = 0; i < nv; ++i) Ldot += J[i] * v[i];
      const double ctrl = std::clamp(0.5 + 0.5 * std::sin(2 * sap::kPi * freq * t + phase[u]), 0.0, 1.0);
      act_dot[u] = sap::activation_rate<double>(dyntype[u], dynprm[u].data(), ctrl, act[u]);
      const double force = sap::actuator_gain_bias_force<double>(sap::kGainMuscle, gainprm[u].data(), sap::kBiasMuscle,
                                                                 biasprm[u].data(), gear[u] * L, gear[u] * Ldot,
                                                                 &lengthrange[2 * u], acc0[u], act[u]);
      for (int i = 0; i < nv; ++i) f[i] += gear[u] * J[i] * force;
    }
    Eigen::MatrixXd A = ev.mass_matrix();
    for (int i = 0; i < nv; ++i) {
      f[i] -= damping[i] * v[i];
      A(i, i) += h * damping[i];
    }
    const Eigen::VectorXd qacc = A.ldlt().solve(f);
    for (int i = 0; i < nv; ++i) {
      v[i] += h * qacc[i];
      q[i] += h * v[i];
    }
    for (int u = 0; u < nu; ++u)
      act[u] = sap::next_activation<double>(dyntype[u], dynprm[u].data(), nullptr, act[u], act_dot[u], h);
  }
  std::printf("muscle arm, 1 s: max |q - q_mujoco| = %.2e rad, max |act - act_mujoco| = %.2e\n", worst_q, worst_act);
  EXPECT_LT(worst_q, 1e-12);  // measured 3.5e-15: the same algorithm in the same arithmetic
  EXPECT_LT(worst_act, 1e-12);
}

}  // namespace

#include "sap/solver_sap.hpp"

namespace {

// Activation state through the solver: the activations of filter, filterexact and (limited)
// integrator actuators under constant controls follow their closed forms, step after step,
// whatever the bodies do (act does not depend on q): filter act_n = c (1 - (1 - h/tau)^n)
// (MuJoCo's Euler), filterexact c (1 - exp(-n h / tau)), integrator clamp(n h c, actrange).
// The motor's force is gain * act: the joint's acceleration at the first step with actearly.
TEST(ActivationState, SolverIntegratesActivations) {
  const std::string xml = R"(<mujoco>
  <option timestep="0.002" gravity="0 0 0"/>
  <worldbody>
    <body><joint name="a" type="hinge" axis="0 0 1"/><geom type="box" size="0.1 0.02 0.02" mass="1"/></body>
    <body pos="0 1 0"><joint name="b" type="slide" axis="1 0 0"/><geom type="box" size="0.1 0.02 0.02" mass="1"/></body>
    <body pos="0 2 0"><joint name="c" type="hinge" axis="0 0 1"/><geom type="box" size="0.1 0.02 0.02" mass="1"/></body>
  </worldbody>
  <actuator>
    <general name="filter" joint="a" dyntype="filter" dynprm="0.05" gainprm="2"/>
    <general name="exact" joint="b" dyntype="filterexact" dynprm="0.03" gainprm="10" biastype="affine" biasprm="0 -10 -1"/>
    <general name="integ" joint="c" dyntype="integrator" gainprm="1" actlimited="true" actrange="-1 0.5" actearly="true"/>
  </actuator>
</mujoco>)";
  const sap::Model m = sap::load_mjcf_string(xml, "activations.xml").model;
  ASSERT_EQ(m.na, 3);
  sap::Context ctx(sap::Backend::CPU, 1);
  sap::SolverSAP solver(m, ctx, 1, sap::SolverOptions{});
  sap::State a(m, 1, sap::Backend::CPU), b(m, 1, sap::Backend::CPU);
  sap::Control control(m, 1, sap::Backend::CPU);
  sap::Contacts none(1, 0, sap::Backend::CPU);
  const double c[3] = {0.7, 0.2, 1.5}, h = m.timestep;
  control.ctrl.world_from_host(0, c);
  for (int n = 1; n <= 400; ++n) {
    solver.step(a, b, control, none, h);
    std::swap(a, b);
    const std::vector<double> act = a.act.world_to_host(0);
    EXPECT_NEAR(act[0], c[0] * (1 - std::pow(1 - h / 0.05, n)), 1e-12) << "step " << n;
    EXPECT_NEAR(act[1], c[1] * (1 - std::exp(-n * h / 0.03)), 1e-12) << "step " << n;
    EXPECT_NEAR(act[2], std::min(n * h * c[2], 0.5), 1e-12) << "step " << n;
    if (n == 1) {  // actearly: the integrator's force already uses act_1 = h c
      const std::vector<double> v = a.qvel.world_to_host(0);
      sap::DynamicsEvaluator ev(m);
      ev.compute(m.qpos0.data());
      EXPECT_NEAR(v[2], h * (h * c[2]) / ev.mass_matrix()(2, 2), 1e-9);
      EXPECT_NEAR(v[0], 0.0, 1e-15);  // the filter's force uses act_0 = 0
    }
  }
}

}  // namespace

namespace {

// The muscle-driven arm through the importer and the solver against MuJoCo's 1 s trajectory
// (tests/data/mujoco/muscle_arm.json): with the drake preset (explicit Coriolis, q += h v_{n+1})
// the SAP step of a model without constraints is MuJoCo's Euler step, so the trajectories agree
// to rounding; approx32 (fp32 stages, midpoint position update and Coriolis) to its O(h) and fp32.
TEST(MuscleArm, SolverFollowsMuJoCoForOneSecond) {
  const json ref = sap_test::load_mujoco_fixture("muscle_arm");
  const sap::Model m = sap::load_mjcf(std::string(SAP_SOURCE_DIR) + "/" + ref["model"].get<std::string>()).model;
  ASSERT_EQ(m.na, 4);
  const double h = ref["timestep"].get<double>(), freq = ref["arm_freq"].get<double>();
  const auto phase = vec_of<double>(ref["arm_phase"]);
  for (const sap::Preset preset : {sap::Preset::Drake, sap::Preset::Approx32}) {
    sap::SolverOptions o;
    o.contact_preset_variant = preset;
    sap::Context ctx(sap::Backend::CPU, 1);
    sap::SolverSAP solver(m, ctx, 1, o);
    sap::State a(m, 1, sap::Backend::CPU), b(m, 1, sap::Backend::CPU);
    sap::Control control(m, 1, sap::Backend::CPU);
    sap::Contacts none(1, 0, sap::Backend::CPU);
    double worst_q = 0, worst_act = 0;
    const int steps = static_cast<int>(std::lround(1.0 / h));
    for (int n = 0; n <= steps; ++n) {
      if (n % 10 == 0) {
        const json& s = ref["samples"][n / 10];
        const std::vector<double> q = a.qpos.world_to_host(0), act = a.act.world_to_host(0);
        for (int i = 0; i < m.nv; ++i) worst_q = std::max(worst_q, std::abs(q[i] - s["qpos"][i].get<double>()));
        for (int u = 0; u < m.na; ++u) worst_act = std::max(worst_act, std::abs(act[u] - s["act"][u].get<double>()));
      }
      if (n == steps) break;
      std::vector<double> ctrl(m.nu);
      for (int u = 0; u < m.nu; ++u) ctrl[u] = 0.5 + 0.5 * std::sin(2 * sap::kPi * freq * n * h + phase[u]);
      control.ctrl.world_from_host(0, ctrl.data());
      solver.step(a, b, control, none, h);
      std::swap(a, b);
    }
    std::printf("muscle arm through the solver (%s), 1 s: max |q - q_mujoco| = %.2e rad, max |act - act_mujoco| = %.2e\n",
                preset == sap::Preset::Drake ? "drake" : "approx32", worst_q, worst_act);
    // Measured: drake 3.3e-15 rad, approx32 8.7e-3 rad; the activations (stage 4, fp64) 3e-15 in both.
    EXPECT_LT(worst_q, preset == sap::Preset::Drake ? 1e-12 : 0.02);
    EXPECT_LT(worst_act, 1e-12);
  }
}

}  // namespace
