// Stage 2's holonomic rows (ConstraintSetupKernel, kernels/constraint_setup.hpp; docs/sap-math.md
// §12, §13): tendon limits, equality constraints (joint, connect, weld), dry joint friction and
// servos on tendons, each row a sparse Jacobian (dofs decreasing), R, v_hat and impulse bounds
// [lo, hi]. Rank 0 of the team sets them up (serial over tendons and equalities).
#pragma once

#include "kernels/constraint_setup.hpp"

namespace sap {

// Stores row n's parameters. Returns n + 1.
template <class Sw, bool kAngular>
inline SAP_HD int ConstraintSetupKernel<Sw, kAngular>::put_holonomic_params(int w, int n, double R, double v_hat, double lo, double hi) const {
  double* hp = s.hol_param(w) + kNumHolonomicParams * n;
  hp[kHolKind] = kHolKindBox;
  hp[kHolR] = R;
  hp[kHolVhat] = v_hat;
  hp[kHolLo] = lo;
  hp[kHolHi] = hi;
  return n + 1;
}

// Entry (a, b) of W = J diag(A)^-1 J^T for rows n0 + a, n0 + b sharing one dof list, with the
// angular velocity of free and ball joints measured in the joint's parent frame as for the
// contacts' diag_delassus weights (Drake's estimate). Entry by entry (no local arrays: the
// setup kernel's registers and stack stay small).
template <class Sw, bool kAngular>
inline SAP_HD double ConstraintSetupKernel<Sw, kAngular>::holonomic_delassus_entry(int w, int n0, int a, int b) const {
  const int nj = s.hol_jac_n(w)[n0];
  const int* jdof = s.hol_jac_dof(w) + s.size.nhjac * n0;
  const double* J = s.hol_jac_val(w) + s.size.nhjac * n0;  // row r at J + nhjac * r
  const int stride = s.size.nhjac;
  const RealValues A = d.A_values(w);
  const int ld = m.nv_pad;
  double Wab = 0;
  for (int e = 0; e < nj;) {
    const int dof = jdof[e];
    const int j = m.dof_jntid[dof];
    const int t = m.jnt_type[j];
    const int r0 = m.jnt_dofadr[j] + (t == kJointFree ? 3 : 0);
    if ((t == kJointFree || t == kJointBall) && dof == r0 + 2 && e + 2 < nj && jdof[e + 2] == r0) {
      const Mat3<double> Q = t == kJointFree
                                 ? Mat3<double>::load(d.xmat(w) + 9 * m.jnt_bodyid[j])
                                 : to_matrix(normalized(Quat<double>::load(state_in.qpos(w) + m.jnt_qposadr[j])));
      for (int k = 0; k < 3; ++k) {  // column k of J Q^T and the diagonal of Q A_block Q^T
        double ca = 0, cb = 0, aq = 0;
        for (int c = 0; c < 3; ++c) {
          ca += J[stride * a + e + 2 - c] * Q(k, c);
          cb += J[stride * b + e + 2 - c] * Q(k, c);
          for (int c2 = 0; c2 < 3; ++c2) aq += Q(k, c) * A[(r0 + c) * ld + (r0 + c2)] * Q(k, c2);
        }
        Wab += ca * cb / aq;
      }
      e += 3;
      continue;
    }
    Wab += J[stride * a + e] * J[stride * b + e] / A[dof * ld + dof];
    ++e;
  }
  return Wab;
}

// Delassus weight of rows n0 .. n0 + nk - 1 (nk <= 6) sharing one dof list:
// w = |J diag(A)^-1 J^T|_F / nk (Drake's, for the rigid equalities and the tendon rows).
template <class Sw, bool kAngular>
inline SAP_HD double ConstraintSetupKernel<Sw, kAngular>::holonomic_weight(int w, int n0, int nk) const {
  double fro2 = 0;
  for (int a = 0; a < nk; ++a)
    for (int b = a; b < nk; ++b) {
      const double Wab = holonomic_delassus_entry(w, n0, a, b);
      fro2 += (a == b ? 1.0 : 2.0) * Wab * Wab;
    }
  return max_(sqrt_(fro2) / nk, 1e-12);
}

// Mean diagonal of W over rows n0 + first .. n0 + first + count - 1: the inverse effective mass
// of one block of rows (a weld's rotation rows or its translation rows), MuJoCo's mass
// normalisation of a soft row (its efc_diagApprox, the mean of a body's 3x3 inverse inertia).
template <class Sw, bool kAngular>
inline SAP_HD double ConstraintSetupKernel<Sw, kAngular>::holonomic_block_weight(int w, int n0, int first, int count) const {
  double tr = 0;
  for (int a = first; a < first + count; ++a) tr += holonomic_delassus_entry(w, n0, a, a);
  return max_(tr / count, 1e-12);
}

// Jacobian rows of body b2's motion relative to body b1 at points x1 (on b1) and x2 (on b2),
// world frame, over the merged dof paths: rows 0-2 angular w_2 - w_1, rows 3-5 linear
// v_2(x2) - v_1(x1). Written to rows n .. n+5 (n+5 only when nrows == 6; nrows == 3 keeps the
// linear rows, at n .. n+2). Returns the number of entries.
template <class Sw, bool kAngular>
inline SAP_HD int ConstraintSetupKernel<Sw, kAngular>::body_pair_jacobian(int w, int n, int nrows, int b1, int b2, const Vec3<double>& x1,
                              const Vec3<double>& x2) const {
  const Vec3<double> r1 = x1 - Vec3<double>::load(d.xpos(w) + 3 * m.body_rootid[b1]);
  const Vec3<double> r2 = x2 - Vec3<double>::load(d.xpos(w) + 3 * m.body_rootid[b2]);
  const double* cdof = d.cdof(w);
  int d1 = body_last_dof(m, b1), d2 = body_last_dof(m, b2);
  int nj = 0;
  while (d1 >= 0 || d2 >= 0) {
    const int dof = d1 > d2 ? d1 : d2;
    Vec3<double> ang = Vec3<double>::zero(), lin = Vec3<double>::zero();
    if (dof == d2) {
      const Vec6<double> sd = Vec6<double>::load(cdof + 6 * dof);
      ang += sd.ang;
      lin += point_velocity(sd, r2);
      d2 = m.dof_parentid[d2];
    }
    if (dof == d1) {
      const Vec6<double> sd = Vec6<double>::load(cdof + 6 * dof);
      ang -= sd.ang;
      lin -= point_velocity(sd, r1);
      d1 = m.dof_parentid[d1];
    }
    for (int row = 0; row < nrows; ++row) {
      const double val = nrows == 6 ? (row < 3 ? ang[row] : lin[row - 3]) : lin[row];
      s.hol_jac_dof(w)[s.size.nhjac * (n + row) + nj] = dof;
      s.hol_jac_val(w)[s.size.nhjac * (n + row) + nj] = val;
    }
    ++nj;
  }
  for (int row = 0; row < nrows; ++row) s.hol_jac_n(w)[n + row] = nj;
  return nj;
}

template <class Sw, bool kAngular>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::setup_holonomic(int w) const {
  const double h = p.h;
  const double inf = 1e300;  // impulse bound (+inf in fp32)
  const double* qpos = state_in.qpos(w);
  const double* qvel = state_in.qvel(w);
  const RealValues A = d.A_values(w);
  const int ld = m.nv_pad, cap = s.size.nhol;
  int n = 0;
  // Tendon limits: Drake's joint-limit rows on the tendon length (k = limit_stiffness,
  // tau_d = h, beta = limit_near_rigid_threshold, window 2 h max(|dL/dt|, |J v*|)).
  for (int t = 0; t < m.ntendon; ++t) {
    if (!m.tendon_limited[t]) continue;
    const double L = tendon_length<double>(m, t, qpos, d.ten_length(w));
    double Ld = 0, Ls = 0, wgt = 0;
    for_each_tendon_dof(m, t, d.ten_moment(w), [&](int dof, double c) {
      Ld += c * qvel[dof];
      Ls += c * d.v_star(w)[dof];
      wgt += c * c / A[dof * ld + dof];
    });
    const double window = 2.0 * h * max_(abs_(Ld), abs_(Ls));
    const double beta = p.config.limit_near_rigid_threshold;
    const double R = max_(beta * beta / (4 * kPi * kPi) * wgt, 1.0 / (h * p.config.limit_stiffness * (2 * h)));
    const double lo = m.tendon_range[2 * t], hi = m.tendon_range[2 * t + 1];
    for (int side = 0; side < 2; ++side) {
      const double gap = side == 0 ? L - lo : hi - L;
      if (!(gap <= window) || n >= cap) continue;
      s.hol_jac_n(w)[n] = 0;
      add_tendon_entries(w, n, t, side == 0 ? 1.0 : -1.0);
      n = put_holonomic_params(w, n, R, -gap / (2 * h), 0.0, inf);
    }
  }
  // Equality constraints.
  const double beta = p.config.equality_near_rigid_threshold;
  for (int e = 0; e < m.neq; ++e) {
    if (!m.eq_active[e]) continue;
    const int type = m.eq_type[e], nk = equality_rows(type);
    if (n + nk > cap) break;
    const double* ed = m.eq_data + kEqDataSize * e;
    double g[6];
    if (type == kEqJoint) {
      const int j1 = m.eq_obj1id[e], j2 = m.eq_obj2id[e];
      const double x1 = qpos[m.jnt_qposadr[j1]] - m.jnt_qpos0[j1];
      const double x2 = j2 >= 0 ? qpos[m.jnt_qposadr[j2]] - m.jnt_qpos0[j2] : 0.0;
      const double poly = ed[0] + x2 * (ed[1] + x2 * (ed[2] + x2 * (ed[3] + x2 * ed[4])));
      const double dpoly = ed[1] + x2 * (2 * ed[2] + x2 * (3 * ed[3] + x2 * 4 * ed[4]));
      g[0] = x1 - poly;
      s.hol_jac_n(w)[n] = 0;
      insert_holonomic_entry(w, n, m.jnt_dofadr[j1], 1.0);
      if (j2 >= 0 && dpoly != 0) insert_holonomic_entry(w, n, m.jnt_dofadr[j2], -dpoly);
    } else if (type == kEqTendon) {  // kernels/tendon_coupling.hpp: row J1 - p'(x) J2
      const int t1 = m.eq_obj1id[e], t2 = m.eq_obj2id[e];
      const double* tl = d.ten_length(w);
      const TendonCouplingRow<double> r = tendon_coupling<double>(
          tendon_length<double>(m, t1, qpos, tl), ed[5], t2 >= 0, t2 >= 0 ? tendon_length<double>(m, t2, qpos, tl) : 0.0,
          ed[6], ed);
      g[0] = r.g;
      s.hol_jac_n(w)[n] = 0;
      add_tendon_entries(w, n, t1, 1.0);
      if (t2 >= 0 && r.slope != 0) add_tendon_entries(w, n, t2, -r.slope);
    } else {
      const int b1 = m.eq_obj1id[e], b2 = m.eq_obj2id[e];
      const Vec3<double> p1 = Vec3<double>::load(d.xpos(w) + 3 * b1), p2 = Vec3<double>::load(d.xpos(w) + 3 * b2);
      const Quat<double> q1 = Quat<double>::load(d.xquat(w) + 4 * b1), q2 = Quat<double>::load(d.xquat(w) + 4 * b2);
      const Vec3<double> xP = p1 + rotate(q1, Vec3<double>::load(ed + 0));
      if (type == kEqConnect) {
        const Vec3<double> xQ = p2 + rotate(q2, Vec3<double>::load(ed + 3));
        for (int k = 0; k < 3; ++k) g[k] = xQ[k] - xP[k];
        body_pair_jacobian(w, n, 3, b1, b2, xP, xQ);
      } else {
        const Vec3<double> xQ = p2 + rotate(q2, Vec3<double>::load(ed + 7));
        const Quat<double> qP = q1 * Quat<double>::load(ed + 3), qQ = q2 * Quat<double>::load(ed + 10);
        const Vec3<double> a = rotate(qP, quat_log(normalized(conjugate(qP) * qQ)));  // a_PQ in world
        const Vec3<double> xm = 0.5 * (xP + xQ);
        for (int k = 0; k < 3; ++k) {
          g[k] = a[k];
          g[3 + k] = xQ[k] - xP[k];
        }
        body_pair_jacobian(w, n, 6, b1, b2, xm, xm);
      }
    }
    if (s.hol_jac_n(w)[n] == 0) continue;  // both sides welded to the world: nothing to solve
    // MuJoCo solref -> mass-normalised stiffness K and damping B (accelerations per unit
    // violation and velocity; docs/sap-math.md §12.2): (timeconst, dampratio) gives
    // K = 1/(tc dr)^2, B = 2/tc with tc >= 2h (MuJoCo's refsafe); (-K, -B) gives them directly;
    // (0, 0) is rigid. Physical k = K/w, c = B/w: R_c = w / (h (h K + B)), tau_d = B/K.
    const double s0 = m.eq_solref[2 * e], s1 = m.eq_solref[2 * e + 1];
    double K = 0, B = 0, tau_d = 0;
    const bool compliant = s0 > 0 || s0 < 0 || s1 < 0;
    if (s0 > 0) {
      const double tc = max_(s0, 2 * h);
      K = 1.0 / (tc * tc * s1 * s1);
      B = 2.0 / tc;
      tau_d = B / K;
    } else if (compliant) {
      K = -s0;
      B = -s1;
      tau_d = K > 0 ? B / K : inf;
    }
    // Rigid rows: Drake's one weight |W|_F / n for all rows. Compliant rows: w of each block
    // of rows (a weld's 3 rotation rows and its 3 translation rows, a connect's 3 rows) is
    // the block's mean diagonal of W, its inverse effective mass as MuJoCo normalises solref
    // (one |W|_F / 6 for a weld mixes the rotation rows' 1/I into the translation rows and
    // multiplied a hanging body's sag by |W|_F / (6/m), 22x on a 2 kg box).
    const int nblock = compliant && type == kEqWeld ? 2 : 1, rows_per_block = nk / nblock;
    const double wgt_rigid = compliant ? 0.0 : holonomic_weight(w, n, nk);
    for (int blk = 0; blk < nblock; ++blk) {
      const int first = blk * rows_per_block;
      const double wgt = compliant ? holonomic_block_weight(w, n, first, rows_per_block) : wgt_rigid;
      const double R_c = compliant ? wgt / (h * (h * K + B)) : 0.0;
      double tau;
      const double R = holonomic_compliance<double>(R_c, tau_d, h, beta, wgt, &tau);
      for (int k = first; k < first + rows_per_block; ++k)
        put_holonomic_params(w, n + k, R, -g[k] / (h + tau), -inf, inf);
    }
    n += nk;
  }
  // Dry joint friction (dof_frictionloss f > 0): a box row on vc = v_dof with |gamma| <= h f,
  // R = sigma / A_jj (friction_loss_params; docs/sap-math.md §13).
  for (int dof = 0; dof < m.nv && n < cap; ++dof) {
    const double f = m.dof_frictionloss[dof];
    if (!(f > 0)) continue;
    s.hol_jac_n(w)[n] = 0;
    insert_holonomic_entry(w, n, dof, 1.0);
    double R, lo, hi;
    friction_loss_params<double>(h, f, p.config.sigma, 1.0 / A[dof * ld + dof], &R, &lo, &hi);
    n = put_holonomic_params(w, n, R, 0.0, lo, hi);
  }
  // Dry tendon friction (tendon_frictionloss f > 0, MuJoCo's tendon frictionloss): the same box
  // row on vc = J_t v (dL/dt), R = sigma w with the tendon's inverse effective mass
  // w = sum c^2 / A_jj.
  for (int t = 0; t < m.ntendon && n < cap; ++t) {
    const double f = m.tendon_frictionloss[t];
    if (!(f > 0)) continue;
    double wgt = 0;
    s.hol_jac_n(w)[n] = 0;
    for_each_tendon_dof(m, t, d.ten_moment(w), [&](int dof, double c) {
      wgt += c * c / A[dof * ld + dof];
      insert_holonomic_entry(w, n, dof, c);
    });
    double R, lo, hi;
    friction_loss_params<double>(h, f, p.config.sigma, wgt, &R, &lo, &hi);
    n = put_holonomic_params(w, n, R, 0.0, lo, hi);
  }
  // Servos on tendons: the PD row of setup_pd on the tendon length L = J_t q, vc = J_t v;
  // the gain clamp uses the tendon's effective mass 1/w, w = sum c^2 / A_jj.
  for (int u = 0; u < m.nu && n < cap; ++u) {
    const int t = m.actuator_tendonid[u], type = m.actuator_type[u];
    if (t < 0 || !actuator_is_servo(type)) continue;
    const double L = tendon_length<double>(m, t, qpos, d.ten_length(w));
    double wgt = 0;
    s.hol_jac_n(w)[n] = 0;
    for_each_tendon_dof(m, t, d.ten_moment(w), [&](int dof, double c) {
      wgt += c * c / A[dof * ld + dof];
      insert_holonomic_entry(w, n, dof, c);
    });
    double* hp = s.hol_param(w) + kNumHolonomicParams * n;
    hp[kHolKind] = kHolKindPd;
    pd_row_params(w, u, 1.0 / wgt, L, hp + kHolPd);
    ++n;
  }
  s.hol_count(w)[0] = n;
}

// Adds scale J_t (tendon t, kernels/spatial_tendon.hpp) to row n, summing entries of a dof
// already in the row.
template <class Sw, bool kAngular>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::add_tendon_entries(int w, int n, int t, double scale) const {
  for_each_tendon_dof(m, t, d.ten_moment(w), [&](int dof, double c) { add_holonomic_entry(w, n, dof, scale * c); });
}

// Adds val to row n's entry of dof (inserted when absent, keeping the dofs decreasing).
template <class Sw, bool kAngular>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::add_holonomic_entry(int w, int n, int dof, double val) const {
  int* jd = s.hol_jac_dof(w) + s.size.nhjac * n;
  double* jv = s.hol_jac_val(w) + s.size.nhjac * n;
  for (int i = 0; i < s.hol_jac_n(w)[n]; ++i)
    if (jd[i] == dof) {
      jv[i] += val;
      return;
    }
  insert_holonomic_entry(w, n, dof, val);
}

// Adds (dof, val) to row n keeping the dofs decreasing.
template <class Sw, bool kAngular>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::insert_holonomic_entry(int w, int n, int dof, double val) const {
  int* jd = s.hol_jac_dof(w) + s.size.nhjac * n;
  double* jv = s.hol_jac_val(w) + s.size.nhjac * n;
  int i = s.hol_jac_n(w)[n];
  while (i > 0 && jd[i - 1] < dof) {
    jd[i] = jd[i - 1];
    jv[i] = jv[i - 1];
    --i;
  }
  jd[i] = dof;
  jv[i] = val;
  s.hol_jac_n(w)[n] += 1;
}

}  // namespace sap
