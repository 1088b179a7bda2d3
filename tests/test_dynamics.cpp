// Joint-space dynamics: CRBA against RNEA, M SPD, bias against a finite-difference Lagrangian,
// analytic single-body cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "kernels/dynamics.hpp"
#include "kernels/kinematics.hpp"
#include "kernels/tree_worlds.hpp"
#include "sap/data.hpp"
#include "sap/dynamics.hpp"
#include "test_models.hpp"

using namespace sap;
using namespace sap::testing;

namespace {

Eigen::Matrix3d skew(const Eigen::Vector3d& a) {
  Eigen::Matrix3d s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}

// Right Jacobian of SO(3): with R = R0 Exp(theta), the body angular velocity is J_r(theta) theta_dot.
Eigen::Matrix3d right_jacobian(const Eigen::Vector3d& t) {
  const double a = t.norm();
  const Eigen::Matrix3d K = skew(t);
  // (1 - cos a) / a^2 = 2 sin^2(a/2) / a^2 and (a - sin a) / a^3 by its series: no cancellation
  // at the tiny angles of the finite differences.
  const double c1 = a < 1e-12 ? 0.5 : 2 * std::pow(std::sin(0.5 * a), 2) / (a * a);
  const double c2 = a < 1e-3 ? 1.0 / 6 - a * a / 120 : (a - std::sin(a)) / (a * a * a);
  return Eigen::Matrix3d::Identity() - c1 * K + c2 * K * K;
}

Eigen::Quaterniond quat_exp(const Eigen::Vector3d& t) {
  const double a = t.norm();
  if (a < 1e-15) return Eigen::Quaterniond::Identity();
  return Eigen::Quaterniond(Eigen::AngleAxisd(a, t / a));
}

// Local chart around q0: hinge/slide q0 + xi, ball q0 * exp(xi), free (p0 + xi_lin, q0 * exp(xi_rot)).
// Its velocity map v = J(xi) xi_dot is the identity except for J_r on rotation blocks.
struct Chart {
  const Model& m;
  Eigen::VectorXd q0;

  Eigen::VectorXd retract(const Eigen::VectorXd& xi) const {
    Eigen::VectorXd q = q0;
    for (int j = 0; j < m.njnt; ++j) {
      const int qa = m.jnt_qposadr[static_cast<std::size_t>(j)], da = m.jnt_dofadr[static_cast<std::size_t>(j)];
      const int t = m.jnt_type[static_cast<std::size_t>(j)];
      if (t == kJointHinge || t == kJointSlide) {
        q[qa] += xi[da];
        continue;
      }
      int qq = qa, dr = da;
      if (t == kJointFree) {
        q.segment<3>(qa) += xi.segment<3>(da);
        qq += 3;
        dr += 3;
      }
      Eigen::Quaterniond r(q0[qq], q0[qq + 1], q0[qq + 2], q0[qq + 3]);
      r = r * quat_exp(xi.segment<3>(dr));
      q[qq] = r.w();
      q[qq + 1] = r.x();
      q[qq + 2] = r.y();
      q[qq + 3] = r.z();
    }
    return q;
  }
  Eigen::MatrixXd velocity_map(const Eigen::VectorXd& xi) const {
    Eigen::MatrixXd J = Eigen::MatrixXd::Identity(m.nv, m.nv);
    for (int j = 0; j < m.njnt; ++j) {
      const int t = m.jnt_type[static_cast<std::size_t>(j)];
      const int dr = m.jnt_dofadr[static_cast<std::size_t>(j)] + (t == kJointFree ? 3 : 0);
      if (t == kJointFree || t == kJointBall) J.block<3, 3>(dr, dr) = right_jacobian(xi.segment<3>(dr));
    }
    return J;
  }
};

class DynamicsRandomTrees : public ::testing::TestWithParam<int> {};

// A random tree of 4 .. 9 bodies, with a free root for even params.
Model level_tree(std::mt19937& rng, int param) {
  RandomTreeOptions o;
  o.nbody = 4 + param % 6;
  o.free_root = param % 2 == 0;
  return random_tree(rng, o);
}

}  // namespace

// A's sparsity (Model::compute_A_sparsity; the Newton solve's A x sums these columns only):
// every entry of M(q) outside a row's listed columns is exactly zero at random states, the rows
// list only their ancestors, the dof and its descendants, and a tendon that adds its J^T J to
// A (armature or damping) turns the sparse form off.
TEST_P(DynamicsRandomTrees, MassMatrixZeroOutsideTheTreeSparsity) {
  std::mt19937 rng(4321 + GetParam());
  RandomTreeOptions o;
  o.nbody = 3 + GetParam() % 6;
  o.free_root = GetParam() % 2 == 0;
  Model m = random_tree(rng, o);
  m.compute_A_sparsity();
  m.validate();
  ASSERT_GT(m.nA_colind, 0);
  {  // validate() refuses a list out of order or without its diagonal
    ASSERT_GE(m.A_rowadr[1], 2);  // row 0, the root dof: itself and its descendants
    Model bad = m;
    std::swap(bad.A_colind[0], bad.A_colind[1]);
    EXPECT_THROW(bad.validate(), std::runtime_error);
    bad = m;
    bad.A_colind[0] = bad.A_colind[1];  // the diagonal gone (and a repeat)
    EXPECT_THROW(bad.validate(), std::runtime_error);
  }
  auto on_path = [&](int a, int j) {  // a is j or one of its ancestors
    for (int k = j; k >= 0; k = m.dof_parentid[static_cast<std::size_t>(k)])
      if (k == a) return true;
    return false;
  };
  DynamicsEvaluator ev(m);
  for (int trial = 0; trial < 3; ++trial) {
    ev.compute(random_qpos(m, rng), random_qvel(m, rng));
    const Eigen::MatrixXd M = ev.mass_matrix();
    for (int i = 0; i < m.nv; ++i) {
      std::vector<bool> listed(static_cast<std::size_t>(m.nv), false);
      for (int k = m.A_rowadr[static_cast<std::size_t>(i)]; k < m.A_rowadr[static_cast<std::size_t>(i) + 1]; ++k) {
        const int j = m.A_colind[static_cast<std::size_t>(k)];
        listed[static_cast<std::size_t>(j)] = true;
        EXPECT_TRUE(on_path(j, i) || on_path(i, j)) << "row " << i << " lists column " << j;
      }
      for (int j = 0; j < m.nv; ++j)
        if (!listed[static_cast<std::size_t>(j)]) EXPECT_EQ(M(i, j), 0.0) << "entry " << i << ", " << j;
    }
  }
  // A tendon: no effect on the pattern until it has armature (its arrays beyond these unread).
  Model t = m;
  t.ntendon = 1;
  t.tendon_armature = {0.0};
  t.tendon_damping = {0.0};
  t.compute_A_sparsity();
  EXPECT_EQ(t.nA_colind, m.nA_colind);
  t.tendon_armature = {0.1};
  t.compute_A_sparsity();
  EXPECT_EQ(t.nA_colind, 0);
  EXPECT_TRUE(t.A_rowadr.empty() && t.A_colind.empty());
}

// Pinocchio-style cross-check: column i of M (CRBA) equals RNEA(q, v, e_i) - RNEA(q, v, 0),
// with armature added on the diagonal.
TEST_P(DynamicsRandomTrees, CrbaMatchesRneaColumns) {
  std::mt19937 rng(1234 + GetParam());
  RandomTreeOptions o;
  o.nbody = 3 + GetParam() % 6;
  o.free_root = GetParam() % 2 == 0;
  const Model m = random_tree(rng, o);
  DynamicsEvaluator ev(m);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd q = random_qpos(m, rng), v = random_qvel(m, rng);
    ev.compute(q, v);
    const Eigen::MatrixXd M = ev.mass_matrix();
    const Eigen::VectorXd tau0 = ev.inverse_dynamics(Eigen::VectorXd::Zero(m.nv));
    EXPECT_NEAR((tau0 - ev.bias()).norm(), 0.0, 1e-12 * (1 + tau0.norm()));
    for (int i = 0; i < m.nv; ++i) {
      Eigen::VectorXd e = Eigen::VectorXd::Zero(m.nv);
      e[i] = 1;
      Eigen::VectorXd col = ev.inverse_dynamics(e) - tau0;
      col[i] += m.dof_armature[static_cast<std::size_t>(i)];
      EXPECT_LT((col - M.col(i)).norm(), 1e-11 * (1 + M.col(i).norm())) << "column " << i;
    }
  }
}

// The depth levels of the level-parallel tree passes (Model::compute_levels): every body once,
// on the level of its depth (counted by walking its parents), each body's children contiguous,
// ascending, and exactly the bodies whose parent it is; validate() rejects a broken list.
TEST_P(DynamicsRandomTrees, DepthLevelsPartitionTheTree) {
  std::mt19937 rng(555 + GetParam());
  RandomTreeOptions o;
  o.nbody = 3 + GetParam() % 6;
  o.free_root = GetParam() % 2 == 0;
  const Model m = random_tree(rng, o);
  auto at = [](const std::vector<int>& a, int i) { return a[static_cast<std::size_t>(i)]; };
  std::vector<int> seen(static_cast<std::size_t>(m.nbody), 0);
  int deepest = 0;
  for (int L = 1; L <= m.nlevel; ++L)
    for (int k = at(m.level_bodyadr, L - 1); k < at(m.level_bodyadr, L); ++k) {
      const int b = at(m.level_body, k);
      int depth = 0;
      for (int a = b; a != 0; a = at(m.body_parentid, a)) ++depth;
      EXPECT_EQ(depth, L) << "body " << b;
      deepest = std::max(deepest, depth);
      ++seen[static_cast<std::size_t>(b)];
    }
  EXPECT_EQ(deepest, m.nlevel);
  for (int b = 1; b < m.nbody; ++b) EXPECT_EQ(seen[static_cast<std::size_t>(b)], 1) << "body " << b;
  for (int p = 0; p < m.nbody; ++p) {
    std::vector<int> expected, listed;
    for (int b = 1; b < m.nbody; ++b)
      if (at(m.body_parentid, b) == p) expected.push_back(b);
    for (int k = 0; k < at(m.body_childnum, p); ++k) listed.push_back(at(m.level_body, at(m.body_childadr, p) + k));
    EXPECT_EQ(listed, expected) << "children of body " << p;
  }
  if (m.nbody > 2) {
    Model broken = m;
    std::swap(broken.level_body.front(), broken.level_body.back());
    bool same_level = at(m.level_bodyadr, 1) == m.nbody - 1;  // one level: the swap keeps it valid
    if (!same_level) EXPECT_THROW(broken.validate(), std::runtime_error);
    broken = m;
    broken.body_childnum[0] += 1;
    EXPECT_THROW(broken.validate(), std::runtime_error);
  }
}

// The leaves-to-root level passes gather each parent's children in descending id order, so the
// composite inertias and the RNEA backward sums are bitwise those of the serial loop
// for b = nbody-1..1: x[parent(b)] += x[b] (the claim of docs/gpu.md), on random trees.
TEST_P(DynamicsRandomTrees, LevelPassesSumInSerialOrder) {
  std::mt19937 rng(777 + GetParam());
  const Model model = level_tree(rng, GetParam());
  const ModelView m = model.view();
  Data data(model, 1, Backend::CPU);
  DataView d = data.view();
  const Eigen::VectorXd q = random_qpos(model, rng), v = random_qvel(model, rng);
  forward_kinematics<double>(m, q.data(), d.xpos(0), d.xquat(0), d.xmat(0), d.xipos(0), d.xanchor(0), d.xaxis(0));
  com_quantities<double>(m, d.xpos(0), d.xmat(0), d.xipos(0), d.xanchor(0), d.xaxis(0), d.cinert(0), d.cdof(0));
  composite_inertias<double>(m, d.cinert(0), d.crb(0));
  std::vector<double> crb(d.cinert(0), d.cinert(0) + 10 * m.nbody);
  for (int b = m.nbody - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    if (p == 0) continue;
    for (int k = 0; k < 10; ++k) crb[static_cast<std::size_t>(10 * p + k)] += crb[static_cast<std::size_t>(10 * b + k)];
  }
  for (int k = 0; k < 10 * m.nbody; ++k) EXPECT_EQ(d.crb(0)[k], crb[static_cast<std::size_t>(k)]) << "entry " << k;
  body_velocities<double>(m, v.data(), d.cdof(0), d.cvel(0), d.cdof_dot(0));
  bias_forces<double>(m, v.data(), d.cdof(0), d.cdof_dot(0), d.cinert(0), d.cvel(0), d.cacc(0), d.cfrc(0),
                      d.qfrc_bias(0));
  // Forward pass only (a one-level model has no backward sums), then the serial backward loop.
  std::vector<double> cfrc(static_cast<std::size_t>(6 * m.nbody));
  for (int b = 1; b < m.nbody; ++b) {
    const SpatialInertia<double> I = SpatialInertia<double>::load(d.cinert(0) + 10 * b);
    const Vec6<double> vb = Vec6<double>::load(d.cvel(0) + 6 * b);
    (I * Vec6<double>::load(d.cacc(0) + 6 * b) + cross_force(vb, I * vb)).store(cfrc.data() + 6 * b);
  }
  for (int b = m.nbody - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    if (p == 0) continue;
    for (int k = 0; k < 6; ++k) cfrc[static_cast<std::size_t>(6 * p + k)] += cfrc[static_cast<std::size_t>(6 * b + k)];
  }
  for (int k = 6; k < 6 * m.nbody; ++k) EXPECT_EQ(d.cfrc(0)[k], cfrc[static_cast<std::size_t>(k)]) << "entry " << k;
}

// The CPU's tree passes of several worlds side by side (kernels/tree_worlds.hpp: S = LaneScalar,
// one world per SIMD lane) give each world bitwise the fp32 bias and mass matrix rows of its
// one-lane passes, for 2 .. kWorldLanes worlds at random states of random trees (free, ball,
// hinge and slide joints: every branch of body_velocity).
TEST_P(DynamicsRandomTrees, TreePassesInLanesAsOneLane) {
  using L = LaneScalar<float>;
  std::mt19937 rng(4242 + GetParam());
  const Model model = level_tree(rng, GetParam());
  const ModelView m = model.view();
  const int nv = m.nv, nb = m.nbody, ld = m.nv_pad;
  Data data(model, kWorldLanes, Backend::CPU);
  DataView d = data.view();
  std::vector<Eigen::VectorXd> v(kWorldLanes);
  std::vector<std::vector<float>> bias(kWorldLanes), M(kWorldLanes);
  for (int w = 0; w < kWorldLanes; ++w) {  // each world's fp32 passes on one lane
    const Eigen::VectorXd q = random_qpos(model, rng);
    v[w] = random_qvel(model, rng);
    forward_kinematics<double>(m, q.data(), d.xpos(w), d.xquat(w), d.xmat(w), d.xipos(w), d.xanchor(w), d.xaxis(w));
    com_quantities<float>(m, d.xpos(w), d.xmat(w), d.xipos(w), d.xanchor(w), d.xaxis(w), d.cinert(w), d.cdof(w));
    std::vector<float> cvel(6 * nb), cdot(6 * nv), cacc(6 * nb), cfrc(6 * nb), crb(10 * nb);
    std::vector<double> b(nv);
    body_velocities<float>(m, v[w].data(), d.cdof(w), cvel.data(), cdot.data());
    bias_forces<float>(m, v[w].data(), d.cdof(w), cdot.data(), d.cinert(w), cvel.data(), cacc.data(), cfrc.data(),
                       b.data());
    bias[w].assign(b.begin(), b.end());
    composite_inertias<float>(m, d.cinert(w), crb.data());
    M[w].assign(static_cast<std::size_t>(ld * ld), -1.0f);
    for (int i = 0; i < nv; ++i) mass_matrix_row<float>(m, d.cdof(w), crb.data(), i, M[w].data());
  }
  for (int count = 2; count <= kWorldLanes; ++count) {
    std::vector<L> qv(nv), cdof(6 * nv), cinert(10 * nb), cvel(6 * nb), cdot(6 * nv), cacc(6 * nb), cfrc(6 * nb),
        crb(10 * nb), b(nv), row(ld);
    const double *vp[kWorldLanes], *cdofp[kWorldLanes], *cinp[kWorldLanes];
    for (int k = 0; k < count; ++k) {
      vp[k] = v[k].data();
      cdofp[k] = d.cdof(k);
      cinp[k] = d.cinert(k);
    }
    gather_lanes(qv.data(), vp, count, nv);
    gather_lanes(cdof.data(), cdofp, count, 6 * nv);
    gather_lanes(cinert.data(), cinp, count, 10 * nb);
    SerialTeam one;
    body_velocities<L>(one, m, qv.data(), cdof.data(), cvel.data(), cdot.data());
    bias_forces<L>(one, m, qv.data(), cdof.data(), cdot.data(), cinert.data(), cvel.data(), cacc.data(), cfrc.data(),
                   b.data());
    composite_inertias<L>(one, m, cinert.data(), crb.data());
    std::vector<std::vector<float>> bl(count, std::vector<float>(nv)), Ml(count, std::vector<float>(ld * ld, -1.0f));
    float* bp[kWorldLanes];
    for (int k = 0; k < count; ++k) bp[k] = bl[k].data();
    scatter_lanes(b.data(), bp, count, nv);
    for (int i = 0; i < nv; ++i) {
      mass_matrix_row_into<L>(m, cdof.data(), crb.data(), i, row.data());
      float* rp[kWorldLanes];
      for (int k = 0; k < count; ++k) rp[k] = Ml[k].data() + i * ld;
      scatter_lanes(row.data(), rp, count, nv);
    }
    for (int k = 0; k < count; ++k) {
      EXPECT_EQ(0, std::memcmp(bl[k].data(), bias[k].data(), sizeof(float) * nv)) << count << " worlds, world " << k;
      EXPECT_EQ(0, std::memcmp(Ml[k].data(), M[k].data(), sizeof(float) * ld * ld)) << count << " worlds, world " << k;
    }
  }
}

TEST_P(DynamicsRandomTrees, MassMatrixSymmetricPositiveDefinite) {
  std::mt19937 rng(99 + GetParam());
  RandomTreeOptions o;
  o.nbody = 3 + GetParam() % 6;
  o.armature = 0;  // M must be SPD from the bodies alone
  const Model m = random_tree(rng, o);
  DynamicsEvaluator ev(m);
  for (int trial = 0; trial < 3; ++trial) {
    ev.compute(random_qpos(m, rng), random_qvel(m, rng));
    const Eigen::MatrixXd M = ev.mass_matrix();
    EXPECT_LT((M - M.transpose()).norm(), 1e-13 * M.norm());
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(M);
    EXPECT_GT(es.eigenvalues().minCoeff(), 0.0);
    // Kinetic energy from M equals the sum over bodies of 1/2 m |v_com|^2 + 1/2 w^T I w.
    const double T = ev.kinetic_energy();
    EXPECT_GT(T, 0.0);
  }
}

// The bias forces satisfy Lagrange's equations in any local chart xi around q (with xi_dot = v at
// xi = 0): bias = d/dt(M_xi) v - dT/dxi + dV/dxi, with M_xi = J^T M(q(xi)) J. Derivatives by
// central differences. Covers hinge, slide, ball (quaternion) and free joints.
TEST_P(DynamicsRandomTrees, BiasMatchesFiniteDifferenceLagrangian) {
  std::mt19937 rng(555 + GetParam());
  RandomTreeOptions o;
  o.nbody = 3 + GetParam() % 5;
  o.free_root = GetParam() % 2 == 0;
  const Model m = random_tree(rng, o);
  DynamicsEvaluator ev(m);
  const Eigen::VectorXd q0 = random_qpos(m, rng), v = random_qvel(m, rng, 2.0);
  const Chart chart{m, q0};
  auto mass_xi = [&](const Eigen::VectorXd& xi) {
    ev.compute(chart.retract(xi), Eigen::VectorXd::Zero(m.nv));
    const Eigen::MatrixXd J = chart.velocity_map(xi);
    return Eigen::MatrixXd(J.transpose() * ev.mass_matrix() * J);
  };
  auto potential_xi = [&](const Eigen::VectorXd& xi) {
    ev.compute(chart.retract(xi), Eigen::VectorXd::Zero(m.nv));
    return ev.potential_energy();
  };
  const double eps = 1e-6;
  Eigen::VectorXd expected = Eigen::VectorXd::Zero(m.nv);
  Eigen::MatrixXd Mdot = Eigen::MatrixXd::Zero(m.nv, m.nv);
  for (int k = 0; k < m.nv; ++k) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(m.nv);
    e[k] = eps;
    const Eigen::MatrixXd dM = (mass_xi(e) - mass_xi(-e)) / (2 * eps);
    Mdot += dM * v[k];
    expected[k] += -0.5 * v.dot(dM * v) + (potential_xi(e) - potential_xi(-e)) / (2 * eps);
  }
  expected += Mdot * v;
  ev.compute(q0, v);
  const Eigen::VectorXd bias = ev.bias();
  EXPECT_LT((bias - expected).norm(), 1e-6 * (1 + bias.norm())) << "bias\n"
                                                                << bias.transpose() << "\nexpected\n"
                                                                << expected.transpose();
}

// Independent Newton-Euler check: along the curve q(t) = q (+) t v with constant v (exact for
// every joint type), bias = sum_b J_b^T [m_b (a_com - g); I_b alpha_b + w_b x I_b w_b], with
// body accelerations from central differences in time and body Jacobians J_b from the linear
// map v -> body velocity.
TEST_P(DynamicsRandomTrees, BiasMatchesNewtonEulerOfBodyMotion) {
  std::mt19937 rng(777 + GetParam());
  RandomTreeOptions o;
  o.nbody = 3 + GetParam() % 5;
  o.free_root = GetParam() % 2 == 0;
  const Model m = random_tree(rng, o);
  DynamicsEvaluator ev(m);
  const Eigen::VectorXd q0 = random_qpos(m, rng), v = random_qvel(m, rng, 2.0);
  const Chart chart{m, q0};
  // Body com velocity (world) and angular velocity (world) at the configuration of time t.
  auto com_vel = [&](double t, const Eigen::VectorXd& vel, int b) {
    ev.compute(chart.retract(t * v), vel);
    Eigen::Matrix<double, 6, 1> bv = ev.body_velocity(b);
    const Eigen::Vector3d r = ev.body_com(b) - ev.body_pos(b);
    Eigen::Matrix<double, 6, 1> out;
    out << bv.head<3>(), bv.tail<3>() + bv.head<3>().cross(r);
    return out;
  };
  const double dt = 1e-5;
  Eigen::VectorXd expected = Eigen::VectorXd::Zero(m.nv);
  const Eigen::Vector3d g(m.gravity[0], m.gravity[1], m.gravity[2]);
  for (int b = 1; b < m.nbody; ++b) {
    // With xi = t v, the chart velocity map J(t v) v equals v at every t for a constant v.
    const Eigen::Matrix<double, 6, 1> acc = (com_vel(dt, v, b) - com_vel(-dt, v, b)) / (2 * dt);
    ev.compute(q0, v);
    const Eigen::Matrix<double, 6, 1> vel = com_vel(0, v, b);
    const Eigen::Matrix3d R = ev.body_rot(b);
    const double* I6 = &m.body_inertia[6 * static_cast<std::size_t>(b)];
    Eigen::Matrix3d Ib;
    Ib << I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2];
    const Eigen::Matrix3d Iw = R * Ib * R.transpose();
    const Eigen::Vector3d w = vel.head<3>();
    const Eigen::Vector3d torque = Iw * acc.head<3>() + w.cross(Iw * w);
    const Eigen::Vector3d force = m.body_mass[static_cast<std::size_t>(b)] * (acc.tail<3>() - g);
    for (int k = 0; k < m.nv; ++k) {
      Eigen::VectorXd e = Eigen::VectorXd::Zero(m.nv);
      e[k] = 1;
      const Eigen::Matrix<double, 6, 1> Jk = com_vel(0, e, b);
      expected[k] += Jk.head<3>().dot(torque) + Jk.tail<3>().dot(force);
    }
  }
  ev.compute(q0, v);
  const Eigen::VectorXd bias = ev.bias();
  EXPECT_LT((bias - expected).norm(), 1e-6 * (1 + bias.norm())) << "bias\n"
                                                                << bias.transpose() << "\nexpected\n"
                                                                << expected.transpose();
}

INSTANTIATE_TEST_SUITE_P(Seeds, DynamicsRandomTrees, ::testing::Range(0, 8));

// Single free body with an off-center com: bias has the analytic Newton-Euler form.
// In MuJoCo's convention v = [v_o (world, body origin), w (body)], with c the com offset (body
// frame) and R the orientation: linear bias = m R (w x (w x c)) - m g, angular bias =
// w x (I_o w) + m c x R^T(-g) ... computed here via momentum derivatives about the origin.
TEST(Dynamics, FreeBodyBiasAnalytic) {
  ModelBuilder b;
  b.set_gravity({0, 0, -9.81});
  BodySpec bs;
  bs.name = "body";
  bs.mass = 2.5;
  bs.com = {0.1, -0.2, 0.05};
  bs.inertia = {0.3, 0.4, 0.5, 0.02, -0.01, 0.03};
  const int id = b.add_body(bs);
  JointSpec j;
  j.type = kJointFree;
  b.add_joint(id, j);
  const Model m = b.finalize();
  DynamicsEvaluator ev(m);
  std::mt19937 rng(7);
  const Eigen::VectorXd q = random_qpos(m, rng), v = random_qvel(m, rng, 3.0);
  ev.compute(q, v);
  const Eigen::Matrix3d R = ev.body_rot(1);
  const Eigen::Vector3d c(0.1, -0.2, 0.05), g(0, 0, -9.81), w = v.tail<3>();
  Eigen::Matrix3d Ic;
  Ic << 0.3, 0.02, -0.01, 0.02, 0.4, 0.03, -0.01, 0.03, 0.5;
  const double mass = 2.5;
  // Equations of motion in body-frame quantities about the origin (Featherstone):
  //   f_body = I_o a + v x* I_o v, with spatial velocity (w, R^T v_o) and spatial inertia I_o.
  // For zero joint acceleration the body-frame spatial acceleration is (0, R^T 0 - w x R^T v_o)
  // because d/dt(R^T v_o) = -w x R^T v_o when v_o is constant in world; gravity as -g.
  const Eigen::Vector3d vb = R.transpose() * v.head<3>();
  const Eigen::Matrix3d Io = Ic + mass * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
  const Eigen::Vector3d a_lin = -w.cross(vb) - R.transpose() * g;
  // Momentum about the origin: h = (I_o w + m c x vb, m vb - m c x w).
  const Eigen::Vector3d h_ang = Io * w + mass * c.cross(vb), h_lin = mass * vb - mass * c.cross(w);
  // Force from acceleration (0, a_lin): (m c x a_lin, m a_lin).
  const Eigen::Vector3d f_ang = mass * c.cross(a_lin) + w.cross(h_ang) + vb.cross(h_lin);
  const Eigen::Vector3d f_lin = mass * a_lin + w.cross(h_lin);
  Eigen::VectorXd expected(6);
  expected << R * f_lin, f_ang;  // linear dofs are world-axis translations
  EXPECT_LT((ev.bias() - expected).norm(), 1e-12 * expected.norm()) << ev.bias().transpose() << "\n"
                                                                    << expected.transpose();
}

// A pendulum's mass matrix is m l^2 + I_com + armature, its gravity torque m g l sin(theta).
TEST(Dynamics, PendulumClosedForm) {
  ModelBuilder b;
  BodySpec bs;
  bs.name = "bob";
  bs.pos = {0, 0, 2};
  bs.mass = 1.7;
  bs.com = {0, 0, -0.8};
  bs.inertia = {0.01, 0.02, 0.03, 0, 0, 0};
  const int id = b.add_body(bs);
  JointSpec j;
  j.type = kJointHinge;
  j.axis = {1, 0, 0};
  j.armature = 0.05;
  b.add_joint(id, j);
  const Model m = b.finalize();
  DynamicsEvaluator ev(m);
  const double theta = 0.7;
  ev.compute(&theta, nullptr);
  EXPECT_NEAR(ev.mass_matrix()(0, 0), 1.7 * 0.64 + 0.01 + 0.05, 1e-14);
  // com at (0, 0.8 sin, 2 - 0.8 cos): torque about +x of gravity (0,0,-g m): tau = -m g 0.8 sin.
  // The bias is minus the generalized gravity force.
  EXPECT_NEAR(ev.bias()[0], 1.7 * 9.81 * 0.8 * std::sin(theta), 1e-12);
  EXPECT_NEAR(ev.body_com(1).y(), 0.8 * std::sin(theta), 1e-15);
}
