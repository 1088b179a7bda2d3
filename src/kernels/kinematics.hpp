// Forward kinematics and the com-based dof subspaces / body inertias (MuJoCo's mj_kinematics
// and mj_comPos), for one world. Computed in scalar S, stored in fp64 buffers.
#pragma once

#include "sap/data.hpp"
#include "sap/math/quat.hpp"
#include "sap/math/spatial.hpp"
#include "sap/model.hpp"

namespace sap {

// Body poses, joint anchors and axes in world frame from qpos.
//   body frame  X_b = X_parent * (body_pos, body_quat) * J_1(q) * ... * J_k(q)
// where a hinge rotates about its anchor, a slide translates along its axis, a ball rotates
// by its quaternion about its anchor, and a free joint sets the world pose directly.
template <class S>
SAP_HD void forward_kinematics(const ModelView& m, const double* qpos, double* xpos_out, double* xquat_out,
                               double* xmat_out, double* xipos_out, double* xanchor_out, double* xaxis_out) {
  xpos_out[0] = xpos_out[1] = xpos_out[2] = 0;
  Quat<double>::identity().store(xquat_out);
  Mat3<double>::identity().store(xmat_out);
  xipos_out[0] = xipos_out[1] = xipos_out[2] = 0;
  for (int b = 1; b < m.nbody; ++b) {
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
}

// Reference point P of a body's tree: the world position of the tree's root body.
template <class S>
SAP_HDI Vec3<S> tree_reference(const ModelView& m, const double* xpos, int body) {
  return Vec3<S>::load(xpos + 3 * m.body_rootid[body]);
}

// Com-based body inertias (about P, world axes) and dof motion subspaces cdof = [axis; axis x (P - anchor)].
template <class S>
SAP_HD void com_quantities(const ModelView& m, const double* xpos, const double* xmat, const double* xipos,
                           const double* xanchor, const double* xaxis, double* cinert_out, double* cdof_out) {
  SpatialInertia<S>::zero().store(cinert_out);
  for (int b = 1; b < m.nbody; ++b) {
    const Mat3<S> R = Mat3<S>::load(xmat + 9 * b);
    const double* I = m.body_inertia + 6 * b;
    const Mat3<S> Ibody = Mat3<S>::symmetric(S(I[0]), S(I[1]), S(I[2]), S(I[3]), S(I[4]), S(I[5]));
    const Mat3<S> Iworld = R * Ibody * transpose(R);
    const Vec3<S> c = Vec3<S>::load(xipos + 3 * b) - tree_reference<S>(m, xpos, b);
    SpatialInertia<S>::from_body(S(m.body_mass[b]), Iworld, c).store(cinert_out + 10 * b);
  }
  for (int j = 0; j < m.njnt; ++j) {
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

}  // namespace sap
