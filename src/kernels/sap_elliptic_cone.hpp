// Regularised elliptic friction cone of MuJoCo's contact dimensions (condim 1, 3, 4, 6) as a
// SAP constraint (docs/sap-math.md §3.9). Written once for host and device.
//
// A contact of dimension condim = M + 1 has M friction directions, stored before the normal:
//   vc = [v_1, ..., v_M, v_n]
//   condim 3: (t1, t2)                      sliding, v_i in m/s
//   condim 4: (t1, t2, spin)                 + torsion, relative angular velocity about n (rad/s)
//   condim 6: (t1, t2, spin, roll1, roll2)   + rolling, relative angular velocity about t1, t2
// with v_n > 0 separating, as for friction_cone (sap_constraints.hpp). The cone is MuJoCo's
// elliptic cone with one coefficient per direction (mu_i > 0; m or dimensionless):
//   F = { gamma : || (gamma_1 / mu_1, ..., gamma_M / mu_M) || <= gamma_n }.
// The regularisation is R = diag(R_1, ..., R_M, R_n) with
//   R_i mu_i^2 = rho   for every friction direction i   (MuJoCo's elliptic-cone rule),
// which makes the cone isotropic in the scaled variables z_i = gamma_i / mu_i: with
// T = diag(mu_1, ..., mu_M, 1), vc' = T vc and gamma = T gamma', the constraint is SAP's
// isotropic cone of slope 1 and tangential compliance rho in the primed variables,
//   l(vc) = l'(T vc),   gamma = T gamma'(T vc),   G = T G'(T vc) T,
// so the analytic projection of §3.5 carries over unchanged (M dimensions instead of 2).
// M = 0 (condim 1) is the frictionless normal row gamma_n = max(0, (v_hat_n - v_n) / R_n).
#pragma once

#include "kernels/sap_constraints.hpp"

namespace sap {

// MuJoCo's smallest friction coefficient (mjMINMU): a zero coefficient of a condim 4 / 6
// contact is raised to it, so that R_i = rho / mu_i^2 stays finite.
template <class S>
SAP_HDI S elliptic_cone_min_mu() {
  return S(1e-5);
}

// Index of entry (i, j) of an n x n symmetric matrix stored as its upper triangle row by row
// (for n = 3: 00, 01, 02, 11, 12, 22, the packing of friction_cone).
SAP_HDI int sym_packed_index(int n, int i, int j) {
  if (i > j) {
    const int t = i;
    i = j;
    j = t;
  }
  return i * (2 * n - i + 1) / 2 + (j - i);
}

template <class S, int M>
struct EllipticConeParams {
  S mu[M > 0 ? M : 1];  // friction coefficient of each direction (> 0; unused for M = 0)
  S rho;                // common scaled compliance R_i mu_i^2 of the friction directions
  S R_n;                // normal compliance
  S v_hat_n;            // normal bias velocity
};

// Compliance R_i = rho / mu_i^2 of friction direction i.
template <class S, int M>
SAP_HDI S elliptic_cone_friction_compliance(const EllipticConeParams<S, M>& p, int i) {
  return p.rho / (p.mu[i] * p.mu[i]);
}

// gamma_out (M + 1), cost_out, G_out ((M + 1)(M + 2) / 2 packed entries, only when
// want_hessian) at vc (M + 1). Returns the mode (kModeStiction, kModeSliding, kModeNoContact).
template <class S, int M>
SAP_HD int elliptic_cone(const EllipticConeParams<S, M>& p, const S* vc, S* gamma_out, S* cost_out, S* G_out,
                         bool want_hessian) {
  constexpr int n = M + 1;
  const S y_n = (p.v_hat_n - vc[M]) / p.R_n;
  if constexpr (M == 0) {
    // Frictionless: the one-sided row of the normal alone (limit_row's law).
    const S g = y_n > S(0) ? y_n : S(0);
    gamma_out[0] = g;
    *cost_out = S(0.5) * p.R_n * g * g;
    if (want_hessian) G_out[0] = y_n > S(0) ? S(1) / p.R_n : S(0);
    return y_n > S(0) ? kModeSliding : kModeNoContact;
  } else {
    // Scaled unprojected friction impulse u = y_f' = -vc' / rho with vc'_i = mu_i vc_i.
    S u[M];
    S u2 = S(0);
    for (int i = 0; i < M; ++i) {
      u[i] = -p.mu[i] * vc[i] / p.rho;
      u2 += u[i] * u[i];
    }
    // Soft norm: eps is friction_cone's (N s) measured along the first (sliding) direction,
    // so that condim 3 with mu_1 = mu_2 reproduces friction_cone.
    const S eps = soft_norm_epsilon<S>() / p.mu[0];
    const S y_r = sqrt_(u2 + eps * eps);
    const S mu_hat = p.rho / p.R_n;  // slope-1 cone: mu_hat' = R_t' / R_n
    const S f = S(1) / (S(1) + mu_hat);
    S z[M];  // gamma'_f = gamma_f / mu
    S g_n;
    int mode;
    if (y_r <= y_n) {
      mode = kModeStiction;
      for (int i = 0; i < M; ++i) z[i] = u[i];
      g_n = y_n;
    } else if (y_n > -mu_hat * y_r) {
      mode = kModeSliding;
      g_n = f * (y_n + mu_hat * y_r);
      for (int i = 0; i < M; ++i) z[i] = g_n * u[i] / y_r;
    } else {
      mode = kModeNoContact;
      for (int i = 0; i < M; ++i) z[i] = S(0);
      g_n = S(0);
    }
    S z2 = S(0);
    for (int i = 0; i < M; ++i) {
      gamma_out[i] = p.mu[i] * z[i];
      z2 += z[i] * z[i];
    }
    gamma_out[M] = g_n;
    *cost_out = S(0.5) * (p.rho * z2 + p.R_n * g_n * g_n);
    if (!want_hessian) return mode;
    // G' of the slope-1 cone (§3.6 with mu = 1, R_t = rho), then G = T G' T.
    for (int i = 0; i < n; ++i) {
      for (int j = i; j < n; ++j) {
        S gp;
        if (mode == kModeNoContact) {
          gp = S(0);
        } else if (mode == kModeStiction) {
          gp = i != j ? S(0) : (i == M ? S(1) / p.R_n : S(1) / p.rho);
        } else if (j == M) {
          gp = i == M ? f / p.R_n : f / p.R_n * (u[i] / y_r);
        } else {
          const S ti = u[i] / y_r, tj = u[j] / y_r;
          const S a = g_n / y_r;
          gp = ((i == j ? a : S(0)) + (mu_hat * f - a) * ti * tj) / p.rho;
        }
        const S ti_scale = i == M ? S(1) : p.mu[i];
        const S tj_scale = j == M ? S(1) : p.mu[j];
        G_out[sym_packed_index(n, i, j)] = ti_scale * gp * tj_scale;
      }
    }
    return mode;
  }
}

// Hunt-Crossley contact (the similar and lagged approximations, §3.8) with MuJoCo's elliptic
// friction of M directions (condim M + 1; docs/sap-math.md §3.9). vc = [v_1, ..., v_M, v_n]
// as for elliptic_cone. The friction velocities are scaled to the first (sliding) direction,
// u_i = (mu_i / mu_1) v_i (u = v_t for isotropic sliding), with the soft norm
// |u|_s = sqrt(|u|^2 + eps^2) - eps and t = u / (|u|_s + eps):
//   similar: z = v_n - mu_1 |u|_s,  l = -N(z),                  gamma_i = -mu_i n(z) t_i
//   lagged:  z = v_n,               l = -N(z) + mu_1 n0 |u|_s,  gamma_i = -mu_i n0 t_i
// and gamma_n = n(z) (N, n of hunt_crossley). The friction cost q = mu_1 |u|_s is the support
// function of MuJoCo's cone { |(gamma_1 / mu_1, ..., gamma_M / mu_M)| <= gamma_n } at unit
// normal impulse (regularised), so the impulse is the maximum-dissipation one on that cone; q
// is convex, so both costs are (z stays concave). With dq/dv_i = a_i = mu_i t_i and
// d^2q/dv_i dv_j = (mu_i mu_j / mu_1) (delta_ij - t_i t_j) / (|u|_s + eps), n_f the friction's
// normal impulse (n0 lagged, n(z) similar):
//   G_ij = n_f d^2q/dv_i dv_j - [similar] n'(z) a_i a_j,   G_in = [similar] n'(z) a_i,   G_nn = -n'(z).
// For M = 2 with mu_1 = mu_2 = mu this is hunt_crossley exactly. p.mu is mu_1; mu[M] every
// coefficient (> 0). G_out: (M + 1)(M + 2) / 2 packed entries (sym_packed_index).
template <class S, int M>
SAP_HD int hunt_crossley_elliptic(const HuntCrossleyParams<S>& p, const S* mu, S h, bool lagged, const S* vc,
                                  S* gamma_out, S* cost_out, S* G_out, bool want_hessian) {
  constexpr int n = M + 1;
  const S eps = p.eps_soft;
  S u[M];
  S u2 = S(0);
  for (int i = 0; i < M; ++i) {
    u[i] = mu[i] / mu[0] * vc[i];
    u2 += u[i] * u[i];
  }
  const S root = sqrt_(u2 + eps * eps);  // |u|_s + eps
  const S q = mu[0] * (root - eps);
  const S z = lagged ? vc[M] : vc[M] - q;
  S np;
  const S nz = hunt_crossley_impulse(p, h, z, &np);
  const S N = hunt_crossley_antiderivative(p, h, z);
  const S n_f = lagged ? p.n0 : nz;
  *cost_out = lagged ? -N + p.n0 * q : -N;
  for (int i = 0; i < M; ++i) gamma_out[i] = -mu[i] * n_f * (u[i] / root);
  gamma_out[M] = nz;
  if (want_hessian) {
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        S g;
        if (j == M) {
          g = i == M ? -np : (lagged ? S(0) : np * mu[i] * (u[i] / root));
        } else {
          const S ti = u[i] / root, tj = u[j] / root;
          g = n_f * mu[i] * mu[j] / mu[0] * ((i == j ? S(1) : S(0)) - ti * tj) / root;
          if (!lagged) g -= np * mu[i] * ti * mu[j] * tj;
        }
        G_out[sym_packed_index(n, i, j)] = g;
      }
  }
  if (nz == S(0) && (!lagged || p.n0 == S(0))) return kModeNoContact;
  return u2 < eps * eps ? kModeStiction : kModeSliding;
}

}  // namespace sap
