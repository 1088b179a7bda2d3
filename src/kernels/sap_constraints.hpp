// SAP constraint functions (docs/sap-math.md §3.4-§3.6, §4, §5): for a constraint velocity vc each
// returns the cost l(vc), the impulse gamma = -dl/dvc and the Hessian G = d^2 l / dvc^2 =
// -dgamma/dvc (symmetric positive semi-definite). Written once for host and device.
#pragma once

#include "sap/backend/hd.hpp"

namespace sap {

// Sums returned by one pass over all constraint rows (kernels/constraint_bundle.hpp).
template <class S>
struct RowSums {
  S cost, dvc_gamma, dvc_G_dvc;
};

// vc_row <- vc_row + alpha dvc_row: the point a row kind's evaluate(alpha) reads (the same
// expression, so the same bits), made the new vc after a line search accepts alpha.
template <class S>
SAP_HDI void advance_row(double* vc, const double* dvc, int row, S alpha) {
  vc[row] = double(S(vc[row]) + alpha * S(dvc[row]));
}

// ---------------------------------------------------------------------------------------------
// Regularised friction cone (SapFrictionConeConstraint). vc = [v_t1, v_t2, v_n] in the contact
// frame (v_n > 0 separating). Parameters: R_t = sigma w, R_n (compliance), v_hat_n, mu.
// Symmetric 3x3 matrices are stored as (00, 01, 02, 11, 12, 22).
template <class S>
struct FrictionConeParams {
  S R_t, R_n, v_hat_n, mu;
};

enum ContactMode : int { kModeStiction = 0, kModeSliding = 1, kModeNoContact = 2 };

// Soft-norm regulariser of |y_t| (N s): makes the direction t and G smooth at y_t = 0.
template <class S>
SAP_HDI S soft_norm_epsilon() {
  return S(1e-7);
}

// y = R^-1 (v_hat - vc) projected onto the friction cone in the R-norm. Returns the mode.
// gamma_out (3), cost_out, G_out (6, only when want_hessian).
template <class S>
SAP_HD int friction_cone(const FrictionConeParams<S>& p, const S* vc, S* gamma_out, S* cost_out, S* G_out,
                         bool want_hessian) {
  const S y_t0 = -vc[0] / p.R_t, y_t1 = -vc[1] / p.R_t;
  const S y_n = (p.v_hat_n - vc[2]) / p.R_n;
  const S eps = soft_norm_epsilon<S>();
  const S y_r = sqrt_(y_t0 * y_t0 + y_t1 * y_t1 + eps * eps);
  const S that0 = y_t0 / y_r, that1 = y_t1 / y_r;
  const S mu = p.mu;
  const S mu_hat = mu * p.R_t / p.R_n;  // mu R_t / R_n
  const S mu_tilde2 = mu * mu_hat;      // mu~^2 = mu^2 R_t / R_n
  const S f = S(1) / (S(1) + mu_tilde2);
  int mode;
  // Stiction: y inside the cone (impossible for mu = 0: y_r > 0 always).
  if (mu > S(0) && y_r <= mu * y_n) {
    mode = kModeStiction;
    gamma_out[0] = y_t0;
    gamma_out[1] = y_t1;
    gamma_out[2] = y_n;
  } else if (y_n > -mu_hat * y_r) {  // sliding (upper bound y_n < y_r / mu holds: not stiction)
    mode = kModeSliding;
    const S gn = f * (y_n + mu_hat * y_r);
    gamma_out[0] = mu * gn * that0;
    gamma_out[1] = mu * gn * that1;
    gamma_out[2] = gn;
  } else {
    mode = kModeNoContact;
    gamma_out[0] = gamma_out[1] = gamma_out[2] = S(0);
  }
  *cost_out = S(0.5) * (p.R_t * (gamma_out[0] * gamma_out[0] + gamma_out[1] * gamma_out[1]) +
                        p.R_n * gamma_out[2] * gamma_out[2]);
  if (!want_hessian) return mode;
  if (mode == kModeStiction) {
    G_out[0] = G_out[3] = S(1) / p.R_t;
    G_out[5] = S(1) / p.R_n;
    G_out[1] = G_out[2] = G_out[4] = S(0);
  } else if (mode == kModeSliding) {
    // G_tt = (mu / R_t) ((gamma_n / y_r) (I - t t^T) + mu_hat f t t^T)
    // G_tn = (mu f / R_n) t,  G_nn = f / R_n.
    const S gn = gamma_out[2];
    const S a = gn / y_r, b = mu_hat * f, c = mu / p.R_t;
    G_out[0] = c * (a * (S(1) - that0 * that0) + b * that0 * that0);
    G_out[1] = c * (-a * that0 * that1 + b * that0 * that1);
    G_out[3] = c * (a * (S(1) - that1 * that1) + b * that1 * that1);
    const S d = mu * f / p.R_n;
    G_out[2] = d * that0;
    G_out[4] = d * that1;
    G_out[5] = f / p.R_n;
  } else {
    for (int k = 0; k < 6; ++k) G_out[k] = S(0);
  }
  return mode;
}

// ---------------------------------------------------------------------------------------------
// Hunt-Crossley contact with regularised friction, in the two convex approximations "similar"
// and "lagged" (Castro, Han, Permenter 2023; Drake's SapHuntCrossleyConstraint; docs/sap-math.md
// §3.8). vc = [v_t1, v_t2, v_n] as for the cone (v_n > 0 separating, so the penetration rate is
// -v_n). The normal impulse over a step of length h, with the penetration predicted as
// x0 + h xdot, is
//   n(v_n) = h (fe0 - h k v_n)_+ (1 - d v_n)_+,   fe0 = k x0 = -k phi0 (negative for a gap)
// and N(v) = integral of n, N(v) = h [v (fe0 - h k v / 2) - d v^2 / 2 (fe0 - 2/3 h k v)] for
// v < v_hat = min(fe0 / (h k), 1 / d) and N(v_hat) beyond (n = 0 there, N constant).
// Friction uses the soft norm |v_t|_s = sqrt(|v_t|^2 + eps^2) - eps and the soft direction
// t = v_t / (|v_t|_s + eps) (|t| < 1):
//   similar: z = v_n - mu |v_t|_s,  l = -N(z),                    gamma = [-mu n(z) t, n(z)]
//   lagged:  z = v_n,               l = -N(z) + mu n0 |v_t|_s,    gamma = [-mu n0 t,   n(z)]
// with n0 the normal impulse of the step-start state (fixed during the solve). Both costs are
// convex: -N is convex and non-increasing, and z is concave in vc.
template <class S>
struct HuntCrossleyParams {
  S mu;        // Coulomb friction
  S k;         // stiffness (N/m), after the near-rigid clamp
  S d;         // Hunt-Crossley dissipation (s/m)
  S fe0;       // elastic force at the step start, -k phi0 (N)
  S n0;        // lagged: normal impulse at the step start (N s)
  S eps_soft;  // friction regularisation eps_s (m/s)
};

// n(v) and n'(v) = dn/dv of the discrete Hunt-Crossley impulse.
template <class S>
SAP_HDI S hunt_crossley_impulse(const HuntCrossleyParams<S>& p, S h, S v, S* dn_dv) {
  const S fe = p.fe0 - h * p.k * v;  // elastic force at the predicted penetration
  const S damping = S(1) - p.d * v;  // Hunt-Crossley factor 1 + d xdot
  if (!(fe > S(0)) || !(damping > S(0))) {
    *dn_dv = S(0);
    return S(0);
  }
  *dn_dv = -h * (h * p.k * damping + p.d * fe);
  return h * fe * damping;
}

// N(v), the antiderivative of n with N(v) = N(v_hat) for v >= v_hat.
template <class S>
SAP_HDI S hunt_crossley_antiderivative(const HuntCrossleyParams<S>& p, S h, S v) {
  const S v_x = p.fe0 / (h * p.k);                    // elastic term vanishes (k > 0)
  S v_hat = p.d > S(0) ? min_(v_x, S(1) / p.d) : v_x;  // 1/d: dissipation term vanishes
  const S u = min_(v, v_hat);
  const S hk = h * p.k;
  return h * (u * (p.fe0 - S(0.5) * hk * u) - S(0.5) * p.d * u * u * (p.fe0 - S(2) / S(3) * hk * u));
}

// The soft slip of vc, what hunt_crossley computes first, and the cost from it: all that a
// decay line search's trial reads (hunt_crossley_cost), in the same operations either way.
template <class S>
struct HuntCrossleySlip {
  S vt2, root, vt_soft, z;  // |v_t|^2, |v_t|_s + eps, |v_t|_s, the normal impulse's argument
  SAP_HDI HuntCrossleySlip(const HuntCrossleyParams<S>& p, bool lagged, const S* vc) {
    const S eps = p.eps_soft;
    vt2 = vc[0] * vc[0] + vc[1] * vc[1];
    root = sqrt_(vt2 + eps * eps);
    vt_soft = root - eps;
    z = lagged ? vc[2] : vc[2] - p.mu * vt_soft;
  }
  SAP_HDI S cost(const HuntCrossleyParams<S>& p, S h, bool lagged) const {
    const S N = hunt_crossley_antiderivative(p, h, z);
    return lagged ? -N + p.mu * p.n0 * vt_soft : -N;
  }
};

template <class S>
SAP_HDI S hunt_crossley_cost(const HuntCrossleyParams<S>& p, S h, bool lagged, const S* vc) {
  return HuntCrossleySlip<S>(p, lagged, vc).cost(p, h, lagged);
}

// Cost, impulse gamma (3) and Hessian G (6, symmetric as for the cone) at vc. Returns the mode:
// no contact when the normal impulse is zero (and, lagged, no friction either), stiction when
// |v_t| is inside the regularisation (|v_t| < eps_s), else sliding.
template <class S>
SAP_HD int hunt_crossley(const HuntCrossleyParams<S>& p, S h, bool lagged, const S* vc, S* gamma_out,
                         S* cost_out, S* G_out, bool want_hessian) {
  const S eps = p.eps_soft;
  const HuntCrossleySlip<S> slip(p, lagged, vc);
  const S vt2 = slip.vt2, root = slip.root, z = slip.z;
  const S t0 = vc[0] / root, t1 = vc[1] / root;
  S np;
  const S n = hunt_crossley_impulse(p, h, z, &np);
  const S n_friction = lagged ? p.n0 : n;
  *cost_out = slip.cost(p, h, lagged);
  gamma_out[0] = -p.mu * n_friction * t0;
  gamma_out[1] = -p.mu * n_friction * t1;
  gamma_out[2] = n;
  if (want_hessian) {
    // d t / d v_t = (I - t t^T) / (|v_t|_s + eps); P = t t^T.
    const S c_perp = p.mu * n_friction / root;
    const S c_par = lagged ? S(0) : -p.mu * p.mu * np;  // similar: -mu^2 n'(z) >= 0
    G_out[0] = c_perp * (S(1) - t0 * t0) + c_par * t0 * t0;
    G_out[1] = -c_perp * t0 * t1 + c_par * t0 * t1;
    G_out[3] = c_perp * (S(1) - t1 * t1) + c_par * t1 * t1;
    const S g_tn = lagged ? S(0) : p.mu * np;  // similar: G_tn = mu n'(z) t
    G_out[2] = g_tn * t0;
    G_out[4] = g_tn * t1;
    G_out[5] = -np;
  }
  if (n == S(0) && (!lagged || p.n0 == S(0))) return kModeNoContact;
  return vt2 < eps * eps ? kModeStiction : kModeSliding;
}

// Near-rigid stiffness of a Hunt-Crossley contact: the largest k with h^2 k <= 4 pi^2 / (beta^2 w),
// i.e. the contact's natural period 2 pi / sqrt(w k) is at least beta h, the analogue of the
// cone's floor R_n >= beta^2 / (4 pi^2) w (G_nn ~ h^2 k for small d). beta = 0: no clamp.
template <class S>
SAP_HDI S hunt_crossley_near_rigid_stiffness(S h, S beta, S weight) {
  return S(4 * kPi * kPi) / (beta * beta * weight * h * h);
}

// ---------------------------------------------------------------------------------------------
// One-sided limit row (SapLimitConstraint): gamma = max(0, y), y = (v_hat - vc) / R,
// l = R gamma^2 / 2, G = 1/R while y > 0.
template <class S>
SAP_HDI S limit_row(S R, S v_hat, S vc, S* gamma_out, S* G_out) {
  const S y = (v_hat - vc) / R;
  const S g = y > S(0) ? y : S(0);
  *gamma_out = g;
  if (G_out) *G_out = y > S(0) ? S(1) / R : S(0);
  return S(0.5) * R * g * g;
}

// ---------------------------------------------------------------------------------------------
// Implicit PD controller with effort limits (SapPdControllerConstraint) on one dof, vc = v_j:
//   y(v) = -Kp (q0 + h v - q_d) - Kd (v - v_d) + u_ff,   c = h Kp + Kd
//   gamma = h clamp(y, e_lo, e_hi),  l = (h / c) Phi(y),  G = h c inside the limits else 0
// Phi(y) = y^2/2 inside; e_hi (y - e_hi/2) above; e_lo (y - e_lo/2) below (Phi' = clamp).
template <class S>
struct PdParams {
  S Kp, Kd, q0, q_d, v_d, u_ff, e_lo, e_hi;
};

template <class S>
SAP_HDI S pd_row(const PdParams<S>& p, S h, S vc, S* gamma_out, S* G_out) {
  const S c = h * p.Kp + p.Kd;
  const S y = -p.Kp * (p.q0 + h * vc - p.q_d) - p.Kd * (vc - p.v_d) + p.u_ff;
  S phi;
  if (y > p.e_hi) {
    *gamma_out = h * p.e_hi;
    phi = p.e_hi * (y - S(0.5) * p.e_hi);
    if (G_out) *G_out = S(0);
  } else if (y < p.e_lo) {
    *gamma_out = h * p.e_lo;
    phi = p.e_lo * (y - S(0.5) * p.e_lo);
    if (G_out) *G_out = S(0);
  } else {
    *gamma_out = h * y;
    phi = S(0.5) * y * y;
    if (G_out) *G_out = h * c;
  }
  return h / c * phi;
}

// Near-rigid clamp of PD gains (Drake, PR #23115): if the compliance R = 1 / (h (h Kp + Kd)) is
// below R_nr = beta^2 / (4 pi^2) w with w = 1 / A_jj, rescale the gains keeping Kd / Kp so that
// h (h Kp + Kd) = 1 / R_nr.
template <class S>
SAP_HDI void pd_near_rigid_clamp(S h, S beta, S A_jj, S* Kp, S* Kd) {
  const S R = S(1) / (h * (h * *Kp + *Kd));
  const S R_nr = beta * beta / S(4 * kPi * kPi) / A_jj;
  if (!(R < R_nr)) return;
  if (h * *Kp > *Kd) {
    const S tau = *Kd / *Kp;
    const S kp = S(1) / (h * (h + tau) * R_nr);
    *Kp = kp;
    *Kd = tau * kp;
  } else {
    const S rho = *Kp / *Kd;
    const S kd = S(1) / (h * (S(1) + h * rho) * R_nr);
    *Kd = kd;
    *Kp = rho * kd;
  }
}

// ---------------------------------------------------------------------------------------------
// Holonomic row (SapHolonomicConstraint, one row of it; docs/sap-math.md §12): impulse bounds
// [lo, hi] (lo <= 0 <= hi; lo = 0, hi = +inf is the one-sided limit row above), y = (v_hat - vc) / R,
//   gamma = clamp(y, lo, hi),   l = R (gamma y - gamma^2 / 2),   G = 1/R for lo < y < hi else 0.
// l is the antiderivative of R clamp(y) in y (dl/dvc = -gamma): R y^2/2 inside the bounds,
// continued linearly outside (the same Phi as the PD row's effort limits).
template <class S>
SAP_HDI S holonomic_row(S R, S v_hat, S lo, S hi, S vc, S* gamma_out, S* G_out) {
  const S y = (v_hat - vc) / R;
  const S g = y < lo ? lo : (y > hi ? hi : y);
  *gamma_out = g;
  if (G_out) *G_out = (y > lo && y < hi) ? S(1) / R : S(0);
  return R * (g * y - S(0.5) * g * g);
}

// Dry friction on one dof (joint frictionloss f; MuJoCo's frictionloss, a box-constrained row):
// the 1-D "friction" constraint vc = v_dof, v_hat = 0, impulse bounds |gamma| <= h f, regularised
// like the contacts' friction, R = sigma w with the diagonal Delassus estimate w = 1 / A_jj
// (docs/sap-math.md §13). The row is a holonomic_row (kHolKindBox):
//   stiction |vc| < R h f:  gamma = -vc / R,        l = vc^2 / (2 R),        G = 1/R
//   sliding  vc >= R h f:   gamma = -h f,           l = h f vc - R (h f)^2/2, G = 0   (and mirrored)
// so a dof held by a torque below f creeps at |v| = R |tau| h (the regularisation's creep).
template <class S>
SAP_HDI void friction_loss_params(S h, S f, S sigma, S w, S* R, S* lo, S* hi) {
  *R = sigma * w;
  *lo = -h * f;
  *hi = h * f;
}

// Regularisation of a holonomic row with Delassus weight w (docs/sap-math.md §12.2): the compliant
// value R_c = 1 / (h k (h + tau_d)) (0 for a rigid constraint, k = inf) floored at the
// near-rigid value beta^2 / (4 pi^2) w; a floored row uses the relaxation time tau_d = h in its
// bias v_hat = -g / (h + tau_d) (Drake's SapHolonomicConstraint). Returns R; *tau_out is the
// relaxation time of the bias.
template <class S>
SAP_HDI S holonomic_compliance(S R_c, S tau_d, S h, S beta, S w, S* tau_out) {
  const S R_nr = beta * beta / S(4 * kPi * kPi) * w;
  if (!(R_c >= R_nr) || !(R_c > S(0))) {
    *tau_out = h;
    return R_nr > S(0) ? R_nr : S(1e-12) * w;
  }
  *tau_out = tau_d;
  return R_c;
}

}  // namespace sap
