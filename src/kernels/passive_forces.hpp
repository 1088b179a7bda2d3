// MuJoCo's passive forces and actuator force limits beyond joint springs and dampers (issue 30),
// written once for host and device, templated on the scalar S; and the compile-time constants
// they need (host).
//
//   ball/free joint springs: torque -k log(q_spring^-1 q) (body frame, q normalised first), free
//     joints also the force -k (p - p_spring) (world): MuJoCo's mju_subQuat;
//   tendon spring with a deadband [lower, upper] (MuJoCo's springlength pair): f = -k x,
//     x = L - upper above it, L - lower below it, 0 inside;
//   gravity compensation: the world force -gc m g at a body's com (gc = body gravcomp), added to
//     the passive force, or to the actuator force of joints with actuatorgravcomp;
//   actuator force limits, in MuJoCo's order: actuators on a tendon with actuatorfrcrange are
//     scaled together so that their sum lies in the range; each actuator force is clamped to
//     its forcerange; qfrc_actuator = sum of moment^T force (+ gravity compensation of
//     actuatorgravcomp joints); a joint's actuatorfrcrange clamps its dof's qfrc_actuator;
//   springdamper = (timeconst tc, dampratio z) on a joint: stiffness m/(tc z)^2 and damping 2 m/tc
//     with m = n / sum of dof_invweight0 over the joint's n dofs (MuJoCo's compiler);
//   dof_invweight0: the diagonal of M(qpos0)^-1, averaged over a ball joint's 3 dofs and over a
//     free joint's translations and rotations separately.
#pragma once

#include "kernels/scalar_math.hpp"
#include "sap/math/quat.hpp"
#include "sap/math/spatial.hpp"
#include "sap/model.hpp"

namespace sap {

// Generalized force of a world wrench (force f at point x, torque t) on body b:
// qfrc[d] += cdof_d.ang . (t + r x f) + cdof_d.lin . f over b's dof path, r = x - p_ref (the
// tree's reference point: its root body's position).
template <class S>
SAP_HD void body_wrench_to_dofs(const ModelView& m, const double* xpos, const double* cdof, int b, const Vec3<S>& x,
                                const Vec3<S>& f, const Vec3<S>& t, double* qfrc) {
  while (b > 0 && m.body_dofnum[b] == 0) b = m.body_parentid[b];
  if (b <= 0) return;
  const Vec3<S> r = x - Vec3<S>::load(xpos + 3 * m.body_rootid[b]);
  const Vec3<S> moment = t + cross(r, f);
  for (int d = m.body_dofadr[b] + m.body_dofnum[b] - 1; d >= 0; d = m.dof_parentid[d]) {
    const Vec6<S> s = Vec6<S>::load(cdof + 6 * d);
    qfrc[d] = double(S(qfrc[d]) + dot(s.ang, moment) + dot(s.lin, f));
  }
}

// Rotation vector from q_ref to q (body frame of q_ref): log(q_ref^-1 q), angle in [0, pi].
template <class S>
SAP_HDI Vec3<S> quat_difference(const Quat<S>& q, const Quat<S>& q_ref) {
  return quat_log(conjugate(q_ref) * normalized(q));
}

// Spring of a ball joint (qpos, qpos_spring: 4 values) or a free joint (7 values), written to
// its dofs' forces (3 or 6 values, overwritten).
template <class S>
SAP_HDI void ball_free_spring(int jnt_type, S k, const double* qpos, const double* qpos_spring, double* qfrc) {
  int q = 0, d = 0;
  if (jnt_type == kJointFree) {
    for (int i = 0; i < 3; ++i) qfrc[i] = double(-k * (S(qpos[i]) - S(qpos_spring[i])));
    q = 3;
    d = 3;
  }
  const Vec3<S> dif = quat_difference(Quat<S>::load(qpos + q), Quat<S>::load(qpos_spring + q));
  for (int i = 0; i < 3; ++i) qfrc[d + i] = double(-k * dif[i]);
}

// Tendon spring force along the tendon with the deadband [lower, upper].
template <class S>
SAP_HDI S tendon_spring_force(S length, S lower, S upper, S k) {
  const S x = length > upper ? length - upper : (length < lower ? length - lower : S(0));
  return -k * x;
}

// Factor that brings the sum of a tendon's actuator forces into its actuatorfrcrange (1 inside).
template <class S>
SAP_HDI S tendon_actuator_force_scale(S total, const double* range) {
  if (total == S(0)) return S(1);
  if (total < S(range[0])) return S(range[0]) / total;
  if (total > S(range[1])) return S(range[1]) / total;
  return S(1);
}

// Gravity compensation of body b (world gravity g): the force -gc m g at its com xipos.
template <class S>
SAP_HD void gravcomp_to_dofs(const ModelView& m, const double* xpos, const double* xipos, const double* cdof, int b,
                             S mass, S gravcomp, const Vec3<S>& gravity, double* qfrc) {
  body_wrench_to_dofs<S>(m, xpos, cdof, b, Vec3<S>::load(xipos + 3 * b), (-mass * gravcomp) * gravity,
                         Vec3<S>::zero(), qfrc);
}

// MuJoCo's dof_invweight0 from the inverse mass matrix at qpos0 (dense nv x nv, row-major).
inline void dof_invweight0(const Model& m, const double* Minv, double* out) {
  const int nv = m.nv;
  for (int j = 0; j < m.njnt; ++j) {
    const int a = m.jnt_dofadr[j];
    auto diag = [&](int i) { return Minv[static_cast<long long>(a + i) * nv + a + i]; };
    if (m.jnt_type[j] == kJointFree) {
      const double t = (diag(0) + diag(1) + diag(2)) / 3, r = (diag(3) + diag(4) + diag(5)) / 3;
      for (int i = 0; i < 3; ++i) {
        out[a + i] = t;
        out[a + 3 + i] = r;
      }
    } else if (m.jnt_type[j] == kJointBall) {
      const double r = (diag(0) + diag(1) + diag(2)) / 3;
      for (int i = 0; i < 3; ++i) out[a + i] = r;
    } else {
      out[a] = diag(0);
    }
  }
}

// Stiffness and damping of a joint's springdamper = (timeconst, dampratio), from the
// dof_invweight0 of its ndof dofs (MuJoCo's compiler).
inline void springdamper_gains(double timeconst, double dampratio, const double* invweight0, int ndof,
                               double* stiffness, double* damping) {
  double sum = 0;
  for (int i = 0; i < ndof; ++i) sum += invweight0[i];
  const double inertia = ndof / (sum > kMjMinVal ? sum : kMjMinVal);
  const double tz = timeconst * timeconst * dampratio * dampratio;
  *stiffness = inertia / (tz > kMjMinVal ? tz : kMjMinVal);
  *damping = 2 * inertia / (timeconst > kMjMinVal ? timeconst : kMjMinVal);
}

}  // namespace sap
