// Joint-space dynamics of one world: mass matrix by the composite rigid body algorithm (CRBA)
// and bias forces by recursive Newton-Euler (RNEA), in the com-based spatial convention.
#pragma once

#include "kernels/kinematics.hpp"
#include "kernels/actuator_dynamics.hpp"
#include "kernels/cholesky.hpp"  // for_each_lower_in_tiles (host)
#include "kernels/passive_forces.hpp"
#include "kernels/spatial_tendon.hpp"
#include "sap/data.hpp"
#include "sap/math/spatial.hpp"
#include "sap/model.hpp"

namespace sap {

// The tree passes below keep their per-body and per-dof scratch (crb, cvel, cdof_dot, cacc, cfrc)
// in a storage type T of the caller's choice: fp64 arrays of Data, or S itself (the free motion's
// working set), where fp32 values in fp32 storage load and store without a conversion. They read
// cdof in a storage type C of its own: Data's fp64 array, or the fp32 free motion's fp32 copy on
// one lane (FreeMotionKernel::copies_cdof). The values are those of S either way (an fp32 value
// is exact in fp64). The world's inputs (qvel: Q, cinert: CI) and the bias output (B) take their
// own storage types too: Data's fp64 arrays, or, on the CPU, several worlds' values side by side
// (S = LaneScalar, kernels/tree_worlds.hpp), where S(x) of a model parameter is x in every lane.

// Composite inertias crb[b] = sum of cinert over the subtree of b (all about the tree's P):
// a copy strided over the lanes, then the leaves-to-root gather a level at a time. The caller
// syncs afterwards.
template <class S, class Team, class CI, class T>
SAP_HD void composite_inertias(Team& team, const ModelView& m, const CI* cinert, T* crb_out) {
  for (int k = team.rank(); k < 10 * m.nbody; k += team.size()) crb_out[k] = T(S(cinert[k]));
  for_each_level_up(
      team, m, [&](int p) { return SpatialInertia<S>::load(crb_out + 10 * p); },
      [&](SpatialInertia<S>& c, int child) { c += SpatialInertia<S>::load(crb_out + 10 * child); },
      [&](int p, const SpatialInertia<S>& c) { c.store(crb_out + 10 * p); });
}

template <class S, class T>
SAP_HD void composite_inertias(const ModelView& m, const double* cinert, T* crb_out) {
  SerialTeam one;
  composite_inertias<S>(one, m, cinert, crb_out);
}

// Row i of the mass matrix (entries on the dof's ancestor chain):
//   M[i][j] = cdof_j . (crb[body(i)] cdof_i)  for j on the path from i to the root,
// plus armature on the diagonal. M is symmetric; both triangles are written (ld = nv_pad).
// mass_matrix_row_into writes the row's first nv entries to `row`.
template <class S, class Out, class T, class C>
SAP_HD void mass_matrix_row_into(const ModelView& m, const C* cdof, const T* crb, int i, Out* row) {
  for (int j = 0; j < m.nv; ++j) row[j] = Out(0);
  const Vec6<S> F = SpatialInertia<S>::load(crb + 10 * m.dof_bodyid[i]) * Vec6<S>::load(cdof + 6 * i);
  for (int j = i; j >= 0; j = m.dof_parentid[j]) {
    S v = dot(Vec6<S>::load(cdof + 6 * j), F);
    if (j == i) v += S(m.dof_armature[i]);
    row[j] = Out(v);
  }
}
template <class S, class Out, class T, class C>
SAP_HD void mass_matrix_row(const ModelView& m, const C* cdof, const T* crb, int i, Out* M) {
  mass_matrix_row_into<S>(m, cdof, crb, i, M + i * m.nv_pad);
}

// Upper triangle from the lower (row i's ancestor entries are columns j < i), padding rows
// and columns set to the identity so that padded Cholesky factors stay well defined.
template <class S, class Out>
SAP_HD void mass_matrix_symmetrize_row(const ModelView& m, int i, Out* M) {
  const int ld = m.nv_pad;
  if (i < m.nv) {
    for (int j = i + 1; j < m.nv; ++j) M[i * ld + j] = M[j * ld + i];
    for (int j = m.nv; j < ld; ++j) M[i * ld + j] = Out(0);
  } else {
    for (int j = 0; j < ld; ++j) M[i * ld + j] = (i == j) ? Out(1) : Out(0);
  }
}

// mass_matrix_symmetrize_row for every row, one lane: the upper triangle copied from the lower
// in square tiles (for_each_lower_in_tiles; a row's copy reads its whole column, a cache line per
// entry: a model of many free bodies, nv = 384, spent a tenth of its step there). The same values.
#if !defined(__CUDA_ARCH__)
template <class Out>
__attribute__((noinline)) void mass_matrix_symmetrize_tiled(const ModelView& m, Out* M) {
  const int nv = m.nv, ld = m.nv_pad;
  for_each_lower_in_tiles<true>(nv, [&](int r, int c) { M[c * ld + r] = M[r * ld + c]; });
  for (int i = 0; i < ld; ++i)
    for (int j = i < nv ? nv : 0; j < ld; ++j) M[i * ld + j] = (i == j) ? Out(1) : Out(0);
}
#endif

// Body velocities and cdof time derivatives (MuJoCo mj_comVel): cvel[b] = cvel[parent] +
// sum cdof qvel; cdof_dot = cvel x cdof using the velocity before the joint (for free joints
// the translation part is added first and its own cdof_dot is zero: world axes are fixed).
// One body, its parent's cvel computed.
template <class S, class Q, class T, class C>
SAP_HD void body_velocity(const ModelView& m, const Q* qvel, const C* cdof, int b, T* cvel_out,
                          T* cdof_dot_out) {
  Vec6<S> v = Vec6<S>::load(cvel_out + 6 * m.body_parentid[b]);
  const int d0 = m.body_dofadr[b];
  const int nd = m.body_dofnum[b];
  for (int k = 0; k < nd;) {
    const int d = d0 + k;
    const int t = m.jnt_type[m.dof_jntid[d]];
    if (t == kJointFree || t == kJointBall) {
      int r = d;  // first rotational dof
      if (t == kJointFree) {
        for (int c = 0; c < 3; ++c) {
          Vec6<S>::zero().store(cdof_dot_out + 6 * (d + c));
          v += S(qvel[d + c]) * Vec6<S>::load(cdof + 6 * (d + c));
        }
        r = d + 3;
      }
      for (int c = 0; c < 3; ++c)
        cross_motion(v, Vec6<S>::load(cdof + 6 * (r + c))).store(cdof_dot_out + 6 * (r + c));
      for (int c = 0; c < 3; ++c) v += S(qvel[r + c]) * Vec6<S>::load(cdof + 6 * (r + c));
      k += (t == kJointFree) ? 6 : 3;
    } else {
      const Vec6<S> s = Vec6<S>::load(cdof + 6 * d);
      cross_motion(v, s).store(cdof_dot_out + 6 * d);
      v += S(qvel[d]) * s;
      k += 1;
    }
  }
  v.store(cvel_out + 6 * b);
}

// All bodies, level-parallel over the team. The caller syncs afterwards.
template <class S, class Team, class Q, class T, class C>
SAP_HD void body_velocities(Team& team, const ModelView& m, const Q* qvel, const C* cdof, T* cvel_out,
                            T* cdof_dot_out) {
  if (team.rank() == 0) Vec6<S>::zero().store(cvel_out);  // one-lane: the world's zero velocity
  for_each_level_down(team, m, [&](int b) { body_velocity<S>(m, qvel, cdof, b, cvel_out, cdof_dot_out); });
}

template <class S, class T>
SAP_HD void body_velocities(const ModelView& m, const double* qvel, const double* cdof, T* cvel_out,
                            T* cdof_dot_out) {
  SerialTeam one;
  body_velocities<S>(one, m, qvel, cdof, cvel_out, cdof_dot_out);
}

// Inverse dynamics by RNEA: tau = M(q) qacc + C(q, v) v + g(q) (armature excluded). With
// qacc = null this is MuJoCo's qfrc_bias. Gravity enters as a uniform acceleration [0; -g]
// of the world. Forward pass (cacc, cfrc) root to leaves and backward pass (cfrc summed over
// subtrees) leaves to root, each level-parallel; the projection on the dofs strided over the
// lanes. The caller syncs afterwards.
template <class S, class Team, class Q, class T, class C, class CI, class B>
SAP_HD void bias_forces(Team& team, const ModelView& m, const Q* qvel, const C* cdof, const T* cdof_dot,
                        const CI* cinert, const T* cvel, T* cacc, T* cfrc, B* bias_out, const Q* qacc = nullptr) {
  if (team.rank() == 0)  // one-lane: the world's acceleration (gravity)
    Vec6<S>{Vec3<S>::zero(), Vec3<S>{{S(-m.gravity[0]), S(-m.gravity[1]), S(-m.gravity[2])}}}.store(cacc);
  for_each_level_down(team, m, [&](int b) {
    Vec6<S> a = Vec6<S>::load(cacc + 6 * m.body_parentid[b]);
    const int d0 = m.body_dofadr[b];
    for (int k = 0; k < m.body_dofnum[b]; ++k) {
      a += S(qvel[d0 + k]) * Vec6<S>::load(cdof_dot + 6 * (d0 + k));
      if (qacc) a += S(qacc[d0 + k]) * Vec6<S>::load(cdof + 6 * (d0 + k));
    }
    a.store(cacc + 6 * b);
    const SpatialInertia<S> I = SpatialInertia<S>::load(cinert + 10 * b);
    const Vec6<S> v = Vec6<S>::load(cvel + 6 * b);
    (I * a + cross_force(v, I * v)).store(cfrc + 6 * b);
  });
  for_each_level_up(
      team, m, [&](int p) { return Vec6<S>::load(cfrc + 6 * p); },
      [&](Vec6<S>& f, int child) { f = f + Vec6<S>::load(cfrc + 6 * child); },
      [&](int p, const Vec6<S>& f) { f.store(cfrc + 6 * p); });
  team.sync();
  for (int i = team.rank(); i < m.nv; i += team.size())
    bias_out[i] = B(dot(Vec6<S>::load(cdof + 6 * i), Vec6<S>::load(cfrc + 6 * m.dof_bodyid[i])));
}

template <class S, class T>
SAP_HD void bias_forces(const ModelView& m, const double* qvel, const double* cdof, const T* cdof_dot,
                        const double* cinert, const T* cvel, T* cacc, T* cfrc, double* bias_out,
                        const double* qacc = nullptr) {
  SerialTeam one;
  bias_forces<S>(one, m, qvel, cdof, cdof_dot, cinert, cvel, cacc, cfrc, bias_out, qacc);
}

// Tendon spring force along the tendon, with MuJoCo's dead band [lower, upper] of rest lengths:
// -k (L - upper) above it, -k (L - lower) below it, 0 inside.
template <class S>
SAP_HDI S tendon_spring(const ModelView& m, int t, S L) {
  const S lo = S(m.tendon_lengthspring[2 * t]), hi = S(m.tendon_lengthspring[2 * t + 1]);
  return -S(m.tendon_stiffness[t]) * (L > hi ? L - hi : (L < lo ? L - lo : S(0)));
}

// Joint springs: -stiffness (q - springref) on hinge and slide joints, dofs strided over the
// team; fixed-tendon springs (a scatter onto their joints' dofs) on lane 0 after a barrier.
// Ball/free joint springs and spatial-tendon springs are stage 1b's (kernels/actuation.hpp,
// extra_spring_forces). The caller syncs afterwards.
template <class S, class Team>
SAP_HD void spring_forces(Team& team, const ModelView& m, const double* qpos, double* spring_out) {
  for (int i = team.rank(); i < m.nv; i += team.size()) {
    const int j = m.dof_jntid[i];
    const int t = m.jnt_type[j];
    spring_out[i] = (t == kJointHinge || t == kJointSlide) && m.jnt_stiffness[j] != 0
                        ? double(-S(m.jnt_stiffness[j]) * (S(qpos[m.jnt_qposadr[j]]) - S(m.jnt_springref[j])))
                        : 0.0;
  }
  if (m.ntendon == 0) return;
  team.sync();
  if (team.rank() != 0) return;  // one-lane: fixed-tendon springs (scatter over the tendons' joints)
  // Fixed-tendon springs: J_t^T f, f = tendon_spring(L), L = sum c q.
  for (int t = 0; t < m.ntendon; ++t) {
    if (m.tendon_stiffness[t] == 0 || tendon_is_spatial(m, t)) continue;
    S L = S(0);
    for (int k = m.tendon_adr[t]; k < m.tendon_adr[t] + m.tendon_num[t]; ++k)
      L += S(m.wrap_prm[k]) * S(qpos[m.jnt_qposadr[m.wrap_objid[k]]]);
    const S f = tendon_spring<S>(m, t, L);
    for_each_fixed_tendon_dof(m, t, [&](int dof, double c) { spring_out[dof] = double(S(spring_out[dof]) + S(c) * f); });
  }
}

// The springs spring_forces leaves to stage 1b, added to qfrc: ball and free joints (MuJoCo's
// spring toward qpos0: -k log(q0^-1 q) on the rotation, -k (p - p0) on a free joint's position;
// kernels/passive_forces.hpp) and spatial tendons (J_t^T tendon_spring(L)).
template <class S>
SAP_HD void extra_spring_forces(const ModelView& m, const double* qpos, const double* ten_length,
                                const double* ten_moment, double* qfrc) {
  for (int j = 0; j < m.njnt; ++j) {
    const int type = m.jnt_type[j];
    if ((type != kJointBall && type != kJointFree) || m.jnt_stiffness[j] == 0) continue;
    double f[6];
    ball_free_spring<S>(type, S(m.jnt_stiffness[j]), qpos + m.jnt_qposadr[j], m.qpos0 + m.jnt_qposadr[j], f);
    for (int k = 0; k < joint_nv(type); ++k) qfrc[m.jnt_dofadr[j] + k] += f[k];
  }
  for (int t = 0; t < m.ntendon; ++t) {
    if (m.tendon_stiffness[t] == 0 || !tendon_is_spatial(m, t)) continue;
    const S f = tendon_spring<S>(m, t, S(ten_length[t]));
    for_each_tendon_dof(m, t, ten_moment, [&](int dof, double c) { qfrc[dof] = double(S(qfrc[dof]) + S(c) * f); });
  }
}

template <class S>
SAP_HD void spring_forces(const ModelView& m, const double* qpos, double* spring_out) {
  SerialTeam one;
  spring_forces<S>(one, m, qpos, spring_out);
}

// Actuator u's activation after a step of h from act with the clamped ctrl c of the step's start.
template <class S>
SAP_HDI S next_activation_of(const ModelView& m, int u, S c, S act, double h) {
  const double* dynprm = m.actuator_dynprm + 3 * u;
  const S act_dot = activation_rate<S>(m.actuator_dyntype[u], dynprm, c, act);
  return next_activation<S>(m.actuator_dyntype[u], dynprm, m.actuator_actlimited[u] ? m.actuator_actrange + 2 * u : nullptr,
                            act, act_dot, S(h));
}
template <class S>
SAP_HDI double next_activation_of(const ModelView& m, int u, const double* ctrl, double act, double h) {
  S c = S(ctrl[u]);
  if (m.actuator_ctrllimited[u]) c = clamp_(c, S(m.actuator_ctrlrange[2 * u]), S(m.actuator_ctrlrange[2 * u + 1]));
  return double(next_activation_of<S>(m, u, c, S(act), h));
}

// The input of actuator u's law (motor force, servo target, muscle activation) as the free
// motion and constraint setup read it: ctrl clamped to ctrlrange, or, in a model with
// activation dynamics, stage 1b's act_input (the activation, the one after the step with
// actearly; kernels/actuation.hpp).
template <class S>
SAP_HDI S actuator_law_input(const ModelView& m, int u, const double* ctrl, const double* act_input) {
  if (m.na > 0) return S(act_input[u]);
  S c = S(ctrl[u]);
  if (m.actuator_ctrllimited[u]) c = clamp_(c, S(m.actuator_ctrlrange[2 * u]), S(m.actuator_ctrlrange[2 * u + 1]));
  return c;
}

// A muscle's generalized force (MuJoCo's muscle, kernels/actuator_dynamics.hpp), added to qfrc:
// actuator length l = gear q (joint) or gear L (tendon), l' its rate, force = clamp(gain(l, l')
// act + bias(l), forcerange), qfrc += gear J^T force.
template <class S>
SAP_HD void add_muscle_force(const ModelView& m, int u, const double* qpos, const double* qvel, S input,
                             const double* ten_length, const double* ten_moment, double* qfrc) {
  const S gear = S(m.actuator_gear[u]);
  const int t = m.actuator_tendonid[u];
  S length, velocity = S(0);
  if (t < 0) {
    const int dof = m.actuator_dofadr[u];
    length = gear * S(qpos[m.jnt_qposadr[m.dof_jntid[dof]]]);
    velocity = gear * S(qvel[dof]);
  } else {
    length = gear * tendon_length<S>(m, t, qpos, ten_length);
    for_each_tendon_dof(m, t, ten_moment, [&](int dof, double c) { velocity += gear * S(c) * S(qvel[dof]); });
  }
  const double* prm = m.actuator_muscleprm + 9 * u;
  S f = actuator_gain_bias_force<S>(kGainMuscle, prm, kBiasMuscle, prm, length, velocity, m.actuator_lengthrange + 2 * u,
                                    S(m.actuator_acc0[u]), input);
  if (m.actuator_forcelimited[u]) f = clamp_(f, S(m.actuator_forcerange[2 * u]), S(m.actuator_forcerange[2 * u + 1]));
  if (t < 0) {
    const int dof = m.actuator_dofadr[u];
    qfrc[dof] = double(S(qfrc[dof]) + gear * f);
  } else {
    for_each_tendon_dof(m, t, ten_moment, [&](int dof, double c) { qfrc[dof] = double(S(qfrc[dof]) + gear * S(c) * f); });
  }
}

// Feed-forward generalized force of motor actuators: gear * clamp(input, forcerange).
template <class S>
SAP_HDI S motor_force(const ModelView& m, int u, S input) {
  S c = input;
  if (m.actuator_forcelimited[u]) c = clamp_(c, S(m.actuator_forcerange[2 * u]), S(m.actuator_forcerange[2 * u + 1]));
  return S(m.actuator_gear[u]) * c;
}

}  // namespace sap
