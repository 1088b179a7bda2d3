// Stage 4 (docs/sap-math.md §8): position update q_{n+1} = Phi(q_n, v, h) from a velocity v that is either the solved
// v_{n+1} (sap_euler) or the midpoint (v_n + v_{n+1}) / 2 (midpoint).
// Hinge/slide: q += h v. Free: p += h v_lin (world). Quaternions (w in the body frame):
//   q <- normalize(q * (1, h w / 2)) = normalize(q + h N(q) w),  N(q) w = 1/2 q * (0, w),
// i.e. Drake's update q + h N(q) v followed by renormalisation. Drake builds rotations from q
// with an implicit 1/|q|^2, so the rotation sequence is the same as Drake's; only the norm
// drift (Drake issue #14800) is removed. The increment is the Cayley map of h w: rotation
// angle 2 atan(h|w|/2); with the midpoint map and midpoint Coriolis this conserves the angular
// momentum of a torque-free body up to the fixed-point tolerance (docs/conventions.md).
#pragma once

#include "kernels/dynamics.hpp"
#include "sap/data.hpp"
#include "sap/math/quat.hpp"
#include "sap/model.hpp"
#include "sap/solver_config.hpp"
#include "sap/status.hpp"

namespace sap {

SAP_HD inline void integrate_positions(const ModelView& m, const double* qpos_in, const double* qvel_in,
                                       const double* qvel_new, PositionIntegrationMode mode, double h,
                                       double* qpos_out) {
  for (int j = 0; j < m.njnt; ++j) {
    const int qa = m.jnt_qposadr[j], da = m.jnt_dofadr[j];
    const int t = m.jnt_type[j];
    const int ndof = joint_nv(t);
    double v[6];
    for (int k = 0; k < ndof; ++k)
      v[k] = mode == PositionIntegrationMode::Midpoint ? 0.5 * (qvel_in[da + k] + qvel_new[da + k]) : qvel_new[da + k];
    if (t == kJointHinge || t == kJointSlide) {
      qpos_out[qa] = qpos_in[qa] + h * v[0];
      continue;
    }
    int qq = qa, vw = 0;
    if (t == kJointFree) {
      for (int k = 0; k < 3; ++k) qpos_out[qa + k] = qpos_in[qa + k] + h * v[k];
      qq = qa + 3;
      vw = 3;
    }
    const Quat<double> q = Quat<double>::load(qpos_in + qq);
    const Quat<double> increment{1.0, 0.5 * h * v[vw], 0.5 * h * v[vw + 1], 0.5 * h * v[vw + 2]};
    normalized(q * increment).store(qpos_out + qq);
  }
}

struct IntegrateKernel {
  // in
  ModelView m;
  ConstStateView state_in;      // q_n, v_n
  Slab<const double> qvel_new;  // v_{n+1} of the solve
  Slab<const double> act_next;  // act_{n+1} (stage 1b, kernels/actuation.hpp; models with activations)
  PositionIntegrationMode mode;
  double h;
  const int* status;  // worlds with failure bits keep their state
  // out
  StateView state_out;  // q_{n+1}, v_{n+1} (may alias state_in)

  SAP_HD void operator()(int w, int) const {
    double* qo = state_out.qpos(w);
    double* vo = state_out.qvel(w);
    const double* qi = state_in.qpos(w);
    const double* vi = state_in.qvel(w);
    if (status && (status[w] & kStatusFailureMask)) {  // rejected step: keep the old state
      for (int i = 0; i < m.nq; ++i) qo[i] = qi[i];
      for (int i = 0; i < m.nv; ++i) vo[i] = vi[i];
      for (int i = 0; i < m.na; ++i) state_out.act(w)[i] = state_in.act(w)[i];
      return;
    }
    const double* vn = qvel_new(w);
    integrate_positions(m, qi, vi, vn, mode, h, qo);
    for (int i = 0; i < m.nv; ++i) vo[i] = vn[i];
    // Activations: stage 1b's MuJoCo Euler step of act_dot at the step's start.
    for (int a = 0; a < m.na; ++a) state_out.act(w)[a] = act_next(w)[a];
  }
};

}  // namespace sap
