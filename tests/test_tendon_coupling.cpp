// Tendon equalities and tendon armature (kernels/tendon_coupling.hpp, issue 30) against MuJoCo
// (tools/reference/mujoco_model_reference.py, tests/data/mujoco/tendon_coupling.xml) at 12 random states:
//   * tendon lengths and moments (fixed and spatial) equal ten_length / ten_moment;
//   * the coupling residuals equal MuJoCo's equality rows' efc_pos (a quartic coupling of two
//     fixed tendons, a one-tendon equality, a spatial tendon coupled to a fixed one);
//   * the constraint row J1 - p'(x) J2 is the derivative of the residual (central differences);
//   * M plus the tendon armature a J^T J equals MuJoCo's mass matrix.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "kernels/tendon_coupling.hpp"
#include "mujoco_model_oracle.hpp"
#include "sap/dynamics.hpp"

namespace {

using sap_test::json;
using sap_test::vec_of;

constexpr int kEqTendon = 3;  // MuJoCo's mjEQ_TENDON

struct Coupling {
  json ref = sap_test::load_mujoco_fixture("tendon_coupling");
  sap::Model model = sap_test::load_oracle_model(ref);
  sap_test::FixturePaths paths{ref};
  int nv = ref["nv"].get<int>(), ntendon = ref["ntendon"].get<int>();
  std::vector<double> length0 = vec_of<double>(ref["tendon_length0"]), armature = vec_of<double>(ref["tendon_armature"]);
  std::vector<int> eq_type = vec_of<int>(ref["eq_type"]), obj1 = vec_of<int>(ref["eq_obj1id"]), obj2 = vec_of<int>(ref["eq_obj2id"]);
  std::vector<std::vector<double>> eq_data = ref["eq_data"].get<std::vector<std::vector<double>>>();

  void tendons(sap_test::HostKinematics& k, const double* qpos, std::vector<double>& L,
               std::vector<std::vector<double>>& J) const {
    L.assign(ntendon, 0.0);
    J.assign(ntendon, std::vector<double>(nv, 0.0));
    for (int t = 0; t < ntendon; ++t) {
      const int adr = paths.tendon_adr[t], num = paths.tendon_num[t];
      if (paths.spatial(t)) {
        L[t] = sap::spatial_tendon_length_moment<double>(k.m, paths.view(), adr, num, k.xpos.data(), k.xmat.data(),
                                                         k.cdof.data(), J[t].data());
        continue;
      }
      for (int e = adr; e < adr + num; ++e) {
        const int j = paths.wrap_objid[e];
        L[t] += paths.wrap_prm[e] * qpos[model.jnt_qposadr[j]];
        J[t][model.jnt_dofadr[j]] += paths.wrap_prm[e];
      }
    }
  }
  sap::TendonCouplingRow<double> row(int e, const std::vector<double>& L) const {
    const bool two = obj2[e] >= 0;
    return sap::tendon_coupling<double>(L[obj1[e]], length0[obj1[e]], two, two ? L[obj2[e]] : 0.0,
                                        two ? length0[obj2[e]] : 0.0, eq_data[e].data());
  }
};

TEST(TendonCoupling, MatchesMuJoCoAndItsDerivative) {
  Coupling c;
  sap_test::HostKinematics k(c.model);
  sap::DynamicsEvaluator ev(c.model);
  for (int e = 0; e < static_cast<int>(c.eq_type.size()); ++e) ASSERT_EQ(c.eq_type[e], kEqTendon);
  int rows = 0;
  for (const json& s : c.ref["samples"]) {
    const auto qpos = vec_of<double>(s["qpos"]);
    k.compute(qpos.data());
    std::vector<double> L;
    std::vector<std::vector<double>> J;
    c.tendons(k, qpos.data(), L, J);
    for (int t = 0; t < c.ntendon; ++t) {
      EXPECT_NEAR(L[t], s["ten_length"][t].get<double>(), 1e-14);
      for (int i = 0; i < c.nv; ++i) EXPECT_NEAR(J[t][i], s["ten_moment"][t * c.nv + i].get<double>(), 1e-14);
    }
    // Residuals, in MuJoCo's row order (efc_id: the equality).
    for (std::size_t r = 0; r < s["eq_id"].size(); ++r, ++rows) {
      const int e = s["eq_id"][r].get<int>();
      EXPECT_NEAR(c.row(e, L).g, s["eq_pos"][r].get<double>(), 1e-13) << "equality " << e;
    }
    // The row is the residual's derivative.
    for (int e = 0; e < static_cast<int>(c.eq_type.size()); ++e) {
      const auto rw = c.row(e, L);
      for (int i = 0; i < c.nv; ++i) {
        double g[2];
        for (int side = 0; side < 2; ++side) {
          const std::vector<double> q = sap_test::perturbed(k.m, qpos, i, side ? 1e-6 : -1e-6);
          k.compute(q.data());
          std::vector<double> Lq;
          std::vector<std::vector<double>> Jq;
          c.tendons(k, q.data(), Lq, Jq);
          g[side] = c.row(e, Lq).g;
        }
        const double analytic = J[c.obj1[e]][i] - (c.obj2[e] >= 0 ? rw.slope * J[c.obj2[e]][i] : 0.0);
        EXPECT_NEAR(analytic, (g[1] - g[0]) / 2e-6, 1e-8) << "equality " << e << " dof " << i;
      }
    }
    // M + sum_t a_t J_t^T J_t.
    ev.compute(qpos.data());
    Eigen::MatrixXd M = ev.mass_matrix();
    for (int t = 0; t < c.ntendon; ++t) {
      const Eigen::Map<const Eigen::VectorXd> Jt(J[t].data(), c.nv);
      M += c.armature[t] * Jt * Jt.transpose();
    }
    for (int i = 0; i < c.nv; ++i)
      for (int j = 0; j < c.nv; ++j) EXPECT_NEAR(M(i, j), s["M"][i * c.nv + j].get<double>(), 1e-14);
  }
  EXPECT_EQ(rows, 3 * static_cast<int>(c.ref["samples"].size()));
}

}  // namespace

#include "sap/solver_sap.hpp"

namespace {

// The solver holds a tendon coupling (a parallel gripper whose right finger follows the left
// through L_left = 0.5 L_right, L_right = 2 q_right): a motor drives the left finger only, the
// right one moves with it, to the compliance of MuJoCo's default solref (0.02, 1).
TEST(TendonCoupling, SolverCouplesTheFingers) {
  const std::string xml = R"(<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="palm">
      <geom type="box" size="0.05 0.05 0.02" contype="0" conaffinity="0"/>
      <body name="left" pos="0.04 0 0">
        <joint name="left" type="slide" axis="1 0 0" damping="1"/>
        <geom type="box" size="0.005 0.02 0.04" mass="0.1" contype="0" conaffinity="0"/>
      </body>
      <body name="right" pos="-0.04 0 0">
        <joint name="right" type="slide" axis="-1 0 0" damping="1"/>
        <geom type="box" size="0.005 0.02 0.04" mass="0.3" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="lt"><joint joint="left" coef="1"/></fixed>
    <fixed name="rt"><joint joint="right" coef="2"/></fixed>
  </tendon>
  <equality><tendon tendon1="lt" tendon2="rt" polycoef="0 0.5 0 0 0"/></equality>
  <actuator><motor joint="left" gear="1"/></actuator>
</mujoco>)";
  const sap::Model m = sap::load_mjcf_string(xml, "gripper.xml").model;
  ASSERT_EQ(m.neq, 1);
  sap::Context ctx(sap::Backend::CPU, 1);
  sap::SolverSAP solver(m, ctx, 1, sap::SolverOptions{});
  sap::State a(m, 1, sap::Backend::CPU), b(m, 1, sap::Backend::CPU);
  sap::Control control(m, 1, sap::Backend::CPU);
  sap::Contacts none(1, 0, sap::Backend::CPU);
  const double ctrl = 0.5;
  control.ctrl.world_from_host(0, &ctrl);
  double worst = 0;
  for (int k = 0; k < 500; ++k) {
    solver.step(a, b, control, none, m.timestep);
    std::swap(a, b);
    const std::vector<double> q = a.qpos.world_to_host(0);
    worst = std::max(worst, std::abs(q[0] - q[1]));
  }
  const std::vector<double> q = a.qpos.world_to_host(0);
  EXPECT_GT(q[0], 0.05);  // the left finger travelled (0.5 N against 1 N s/m of damping per finger)
  std::printf("left finger %.4f m, right %.4f m, worst mismatch %.2e m\n", q[0], q[1], worst);
  EXPECT_LT(worst, 0.02 * q[0]);
}

}  // namespace
