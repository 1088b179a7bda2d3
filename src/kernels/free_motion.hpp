// Stage 1: kinematics and free motion (sap_math.md section 1).
//   A  = M(q) + h diag(D)                       (M includes armature)
//   k  = tau_applied + tau_motor + tau_spring - bias(q, v) - D v
//   v* = v + h A^-1 k                             (damping implicit through h D in A)
#pragma once

#include "kernels/cholesky.hpp"
#include "kernels/dynamics.hpp"
#include "kernels/kinematics.hpp"
#include "sap/status.hpp"

namespace sap {

// Body poses, com-based inertias and dof subspaces of every world at state_in.
template <class S>
struct KinematicsKernel {
  ModelView m;
  Slab<const double> qpos_in;
  DataView d;

  SAP_HD void operator()(int w, int) const {
    forward_kinematics<S>(m, qpos_in(w), d.xpos(w), d.xquat(w), d.xmat(w), d.xipos(w), d.xanchor(w), d.xaxis(w));
    com_quantities<S>(m, d.xpos(w), d.xmat(w), d.xipos(w), d.xanchor(w), d.xaxis(w), d.cinert(w), d.cdof(w));
  }
};

// Bytes of team-shared memory the free-motion kernel needs (none: it works in global slabs).
inline std::size_t free_motion_shared_bytes() { return 0; }

template <class S>
struct FreeMotionKernel {
  ModelView m;
  ConstStateView state_in;
  ControlView control;
  DataView d;
  double h;
  int* status;  // per world, OR-ed with failure bits

  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    const int nv = m.nv, ld = m.nv_pad;
    const double* qvel = state_in.qvel(w);
    if (team.rank() == 0) {
      body_velocities<S>(m, qvel, d.cdof(w), d.cvel(w), d.cdof_dot(w));
      bias_forces<S>(m, qvel, d.cdof(w), d.cdof_dot(w), d.cinert(w), d.cvel(w), d.cacc(w), d.cfrc(w), d.qfrc_bias(w));
      spring_forces<S>(m, state_in.qpos(w), d.qfrc_spring(w));
      composite_inertias<S>(m, d.cinert(w), d.crb(w));
      // Right-hand side k (explicit forces at the old state).
      double* k = d.scratch_nv(w);
      const double* applied = control.qfrc_applied(w);
      for (int i = 0; i < nv; ++i)
        k[i] = double(S(applied[i]) + S(d.qfrc_spring(w)[i]) - S(d.qfrc_bias(w)[i]) - S(m.dof_damping[i]) * S(qvel[i]));
      const double* ctrl = control.ctrl(w);
      for (int u = 0; u < m.nu; ++u)
        if (m.actuator_type[u] == kActMotor) {
          const int dof = m.actuator_dofadr[u];
          k[dof] = double(S(k[dof]) + motor_force<S>(m, u, ctrl[u]));
        }
    }
    team.sync();
    double* M = d.M(w);
    for (int i = team.rank(); i < nv; i += team.size()) mass_matrix_row<S>(m, d.cdof(w), d.crb(w), i, M);
    team.sync();
    for (int i = team.rank(); i < ld; i += team.size()) mass_matrix_symmetrize_row<S>(m, i, M);
    team.sync();
    double* A = d.A(w);
    for (int idx = team.rank(); idx < ld * ld; idx += team.size()) {
      const int i = idx / ld, j = idx % ld;
      A[idx] = (i == j && i < nv) ? double(S(M[idx]) + S(h) * S(m.dof_damping[i])) : M[idx];
    }
    team.sync();
    // Solve A a = k in precision S; v* = v + h a.
    S* L = reinterpret_cast<S*>(d.chol(w));
    S* x = L + ld * ld;
    cholesky_load<S>(team, A, L, nv, ld);
    for (int i = team.rank(); i < nv; i += team.size()) x[i] = S(d.scratch_nv(w)[i]);
    team.sync();
    const bool ok = cholesky_factor<S>(team, L, nv, ld);
    if (ok) cholesky_solve<S>(team, L, x, nv, ld);
    bool finite = true;
    for (int i = team.rank(); i < nv; i += team.size()) {
      const S v = S(qvel[i]) + S(h) * x[i];
      d.v_star(w)[i] = double(v);
      if (!isfinite_(v)) finite = false;
    }
    const int nonfinite = team.reduce_sum(finite ? 0 : 1);
    if (team.rank() == 0) {
      if (!ok) status[w] |= kStatusFactorizationFailed;
      if (nonfinite) status[w] |= kStatusNonFinite;
    }
    team.sync();
  }
};

}  // namespace sap
