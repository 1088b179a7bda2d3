// Forward kinematics and the com-based dof subspaces / body inertias (MuJoCo's mj_kinematics
// and mj_comPos), for one world. Computed in scalar S, stored in fp64 buffers.
#pragma once

#include "sap/data.hpp"
#include "sap/math/quat.hpp"
#include "sap/math/spatial.hpp"
#include "sap/model.hpp"

namespace sap {

// A team of one lane (rank 0, size 1, no-op barrier): the serial form of the team tree passes
// for host callers (DynamicsEvaluator, collision, rollout). Same code as the launched teams.
struct SerialTeam {
  SAP_HDI int rank() const { return 0; }
  SAP_HDI int size() const { return 1; }
  SAP_HDI void sync() const {}
};

// Level-parallel tree pass, root to leaves: f(b) for every body b >= 1, a level at a time
// (level L holds the bodies of depth L, Model::compute_levels), the level's bodies strided over
// the team's lanes, a barrier before each level (the previous level, and whatever the caller
// wrote before the call, is then visible). Bodies of one level depend only on their parents.
// The caller syncs after the call before reading the results on another lane.
template <class Team, class F>
SAP_HD void for_each_level_down(Team& team, const ModelView& m, const F& f) {
  for (int L = 1; L <= m.nlevel; ++L) {
    team.sync();
    for (int k = m.level_bodyadr[L - 1] + team.rank(); k < m.level_bodyadr[L]; k += team.size()) f(m.level_body[k]);
  }
}

// Leaves-to-root accumulation: x[p] += sum over the children c of p of x[c] (after the
// children's own sums), for bodies p >= 1 (the world is left out), a level at a time from the
// deepest but one, parents strided over the lanes; each parent gathers its children in
// descending id order (the order of the serial loop b = nbody-1 .. 1, x[parent(b)] += x[b], so
// the sums are bitwise those of that loop). No two lanes write one body: no atomics.
// acc(p, c): x[p] += x[c] for one child (p's running sum may be kept by the caller).
// A barrier precedes every level; the caller syncs after the call.
template <class Team, class Begin, class Acc, class End>
SAP_HD void for_each_level_up(Team& team, const ModelView& m, const Begin& begin, const Acc& acc, const End& end) {
  for (int L = m.nlevel - 1; L >= 1; --L) {
    team.sync();
    for (int k = m.level_bodyadr[L - 1] + team.rank(); k < m.level_bodyadr[L]; k += team.size()) {
      const int p = m.level_body[k];
      const int c0 = m.body_childadr[p], nc = m.body_childnum[p];
      if (nc == 0) continue;
      auto x = begin(p);
      for (int c = c0 + nc - 1; c >= c0; --c) acc(x, m.level_body[c]);
      end(p, x);
    }
  }
}

// Pose of body b >= 1 from its parent's (already computed) pose: body position, quaternion,
// rotation matrix, com position, and its joints' anchors and axes, in world frame.
//   body frame  X_b = X_parent * (body_pos, body_quat) * J_1(q) * ... * J_k(q)
// where a hinge rotates about its anchor, a slide translates along its axis, a ball rotates
// by its quaternion about its anchor, and a free joint sets the world pose directly.
template <class S>
SAP_HD void forward_kinematics_body(const ModelView& m, const double* qpos, int b, double* xpos_out,
                                    double* xquat_out, double* xmat_out, double* xipos_out, double* xanchor_out,
                                    double* xaxis_out) {
  const int p = m.body_parentid[b];
  Vec3<S> pos;
  Quat<S> quat;
  const int j0 = m.body_jntadr[b];
  const int nj = m.body_jntnum[b];
  if (nj > 0 && m.jnt_type[j0] == kJointFree) {
    const double* q = qpos + m.jnt_qposadr[j0];
    pos = Vec3<S>::load(q);
    quat = normalized(Quat<S>::load(q + 3));
    pos.store(xanchor_out + 3 * j0);
    Vec3<S>::unit(2).store(xaxis_out + 3 * j0);
  } else {
    const Quat<S> qp = Quat<S>::load(xquat_out + 4 * p);
    pos = Vec3<S>::load(xpos_out + 3 * p) + rotate(qp, Vec3<S>::load(m.body_pos + 3 * b));
    quat = qp * Quat<S>::load(m.body_quat + 4 * b);
    for (int j = j0; j < j0 + nj; ++j) {
      const Vec3<S> axis_local = Vec3<S>::load(m.jnt_axis + 3 * j);
      const Vec3<S> pos_local = Vec3<S>::load(m.jnt_pos + 3 * j);
      const Vec3<S> axis = rotate(quat, axis_local);
      const Vec3<S> anchor = pos + rotate(quat, pos_local);
      anchor.store(xanchor_out + 3 * j);
      axis.store(xaxis_out + 3 * j);
      const double* q = qpos + m.jnt_qposadr[j];
      const int t = m.jnt_type[j];
      if (t == kJointSlide) {
        pos += S(q[0] - m.jnt_qpos0[j]) * axis;
      } else {
        const Quat<S> qloc = t == kJointBall ? normalized(Quat<S>::load(q))
                                             : from_axis_angle(axis_local, S(q[0] - m.jnt_qpos0[j]));
        quat = quat * qloc;
        // Rotation about the anchor: the anchor stays where it was.
        pos = anchor - rotate(quat, pos_local);
      }
    }
    quat = normalized(quat);
  }
  pos.store(xpos_out + 3 * b);
  quat.store(xquat_out + 4 * b);
  const Mat3<S> R = to_matrix(quat);
  R.store(xmat_out + 9 * b);
  (pos + R * Vec3<S>::load(m.body_ipos + 3 * b)).store(xipos_out + 3 * b);
}

// Body poses, joint anchors and axes in world frame from qpos, level-parallel over the team
// (lane 0 sets the world body; a barrier precedes each level). The caller syncs afterwards.
template <class S, class Team>
SAP_HD void forward_kinematics(Team& team, const ModelView& m, const double* qpos, double* xpos_out,
                               double* xquat_out, double* xmat_out, double* xipos_out, double* xanchor_out,
                               double* xaxis_out) {
  if (team.rank() == 0) {  // one-lane: the world body's constant pose (a few stores)
    xpos_out[0] = xpos_out[1] = xpos_out[2] = 0;
    Quat<double>::identity().store(xquat_out);
    Mat3<double>::identity().store(xmat_out);
    xipos_out[0] = xipos_out[1] = xipos_out[2] = 0;
  }
  for_each_level_down(team, m, [&](int b) {
    forward_kinematics_body<S>(m, qpos, b, xpos_out, xquat_out, xmat_out, xipos_out, xanchor_out, xaxis_out);
  });
}

// Serial form (one lane) for host callers.
template <class S>
SAP_HD void forward_kinematics(const ModelView& m, const double* qpos, double* xpos_out, double* xquat_out,
                               double* xmat_out, double* xipos_out, double* xanchor_out, double* xaxis_out) {
  SerialTeam one;
  forward_kinematics<S>(one, m, qpos, xpos_out, xquat_out, xmat_out, xipos_out, xanchor_out, xaxis_out);
}

// Reference point P of a body's tree: the world position of the tree's root body.
template <class S>
SAP_HDI Vec3<S> tree_reference(const ModelView& m, const double* xpos, int body) {
  return Vec3<S>::load(xpos + 3 * m.body_rootid[body]);
}

// Rounds the poses in place to precision S (x <- fl_S(x), kept in the fp64 arrays): the fp32
// boundary pose (use_f64_boundary_pose = false) is the fp64 forward kinematics rounded once,
// which the collision stage has already computed (KinematicsKernel). Bodies and joints strided
// over the team; a no-op for S = double.
template <class S, class Team>
SAP_HD void round_poses(Team& team, const ModelView& m, double* xpos, double* xquat, double* xmat, double* xipos,
                        double* xanchor, double* xaxis) {
  auto round = [](double* x, int n) {
    for (int k = 0; k < n; ++k) x[k] = double(S(x[k]));
  };
  for (int b = 1 + team.rank(); b < m.nbody; b += team.size()) {
    round(xpos + 3 * b, 3);
    round(xquat + 4 * b, 4);
    round(xmat + 9 * b, 9);
    round(xipos + 3 * b, 3);
  }
  for (int j = team.rank(); j < m.njnt; j += team.size()) {
    round(xanchor + 3 * j, 3);
    round(xaxis + 3 * j, 3);
  }
}

// Com-based body inertias (about P, world axes) and dof motion subspaces cdof = [axis; axis x (P - anchor)],
// bodies and joints strided over the team (each is independent; the poses must be visible).
template <class S, class Team>
SAP_HD void com_quantities(Team& team, const ModelView& m, const double* xpos, const double* xmat,
                           const double* xipos, const double* xanchor, const double* xaxis, double* cinert_out,
                           double* cdof_out) {
  for (int b = team.rank(); b < m.nbody; b += team.size()) {
    if (b == 0) {
      SpatialInertia<S>::zero().store(cinert_out);
      continue;
    }
    const Mat3<S> R = Mat3<S>::load(xmat + 9 * b);
    const double* I = m.body_inertia + 6 * b;
    const Mat3<S> Ibody = Mat3<S>::symmetric(S(I[0]), S(I[1]), S(I[2]), S(I[3]), S(I[4]), S(I[5]));
    const Mat3<S> Iworld = R * Ibody * transpose(R);
    const Vec3<S> c = Vec3<S>::load(xipos + 3 * b) - tree_reference<S>(m, xpos, b);
    SpatialInertia<S>::from_body(S(m.body_mass[b]), Iworld, c).store(cinert_out + 10 * b);
  }
  for (int j = team.rank(); j < m.njnt; j += team.size()) {
    const int b = m.jnt_bodyid[j];
    const Vec3<S> offset = tree_reference<S>(m, xpos, b) - Vec3<S>::load(xanchor + 3 * j);
    double* cd = cdof_out + 6 * m.jnt_dofadr[j];
    const int t = m.jnt_type[j];
    if (t == kJointSlide) {
      Vec6<S>{Vec3<S>::zero(), Vec3<S>::load(xaxis + 3 * j)}.store(cd);
    } else if (t == kJointHinge) {
      const Vec3<S> a = Vec3<S>::load(xaxis + 3 * j);
      Vec6<S>{a, cross(a, offset)}.store(cd);
    } else {
      if (t == kJointFree) {  // translations along world axes
        for (int k = 0; k < 3; ++k) Vec6<S>{Vec3<S>::zero(), Vec3<S>::unit(k)}.store(cd + 6 * k);
        cd += 18;
      }
      // Rotations about the body's own axes (angular velocity in the body frame). The frame
      // is the body frame, exact when the ball/free joint is the body's last joint.
      const Mat3<S> R = Mat3<S>::load(xmat + 9 * b);
      for (int k = 0; k < 3; ++k) {
        const Vec3<S> a = R.col(k);
        Vec6<S>{a, cross(a, offset)}.store(cd + 6 * k);
      }
    }
  }
}

template <class S>
SAP_HD void com_quantities(const ModelView& m, const double* xpos, const double* xmat, const double* xipos,
                           const double* xanchor, const double* xaxis, double* cinert_out, double* cdof_out) {
  SerialTeam one;
  com_quantities<S>(one, m, xpos, xmat, xipos, xanchor, xaxis, cinert_out, cdof_out);
}

}  // namespace sap
