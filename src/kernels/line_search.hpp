// Line searches along v(alpha) = v + alpha dv (docs/sap-math.md §7, spec "line_search_variant").
// `line(alpha, need_derivatives)` is called by every team member together and returns the same
// LineEval on all of them (values are team reductions), so control flow stays uniform.
#pragma once

#include "sap/backend/hd.hpp"
#include "sap/solver_config.hpp"

namespace sap {

template <class S>
struct LineEval {
  S cost, d1, d2;  // l(alpha), l'(alpha), l''(alpha) (derivatives only when requested)
};

template <class S>
struct LineSearchResult {
  S alpha;
  S cost;  // l at the last evaluated point (the Newton loop re-evaluates l at the new iterate)
  int iterations;
  bool ok;
};

// monotone_decay: alpha = 2^-j, first candidate with l(alpha) <= l(0) + 1e-14 + 1e-12 |l(0)|;
// failure when alpha falls below 1e-8 (or the iteration cap).
template <class S, class Line>
SAP_HD LineSearchResult<S> line_search_monotone(const Line& line, S cost0, const SolverConfig& p) {
  const S bound = cost0 + S(1e-14) + S(1e-12) * abs_(cost0);
  S alpha = S(1);
  for (int it = 1; it <= p.line_search_max_iterations && alpha >= S(1e-8); ++it) {
    const LineEval<S> e = line(alpha, false);
    if (e.cost <= bound) return {alpha, e.cost, it, true};
    alpha *= S(0.5);
  }
  return {S(0), cost0, p.line_search_max_iterations, false};
}

// armijo_decay: Drake's backtracking. First probe alpha_max = 1/rho (so the second is 1);
// accepted while still descending there; otherwise walk the grid alpha_max rho^k down to the
// grid minimum that satisfies Armijo's sufficient decrease l(a) < l(0) + c a l'(0).
template <class S, class Line>
SAP_HD LineSearchResult<S> line_search_armijo(const Line& line, S cost0, S d0, const SolverConfig& p) {
  const S rho = S(p.rho), c = S(p.armijo_c);
  S alpha = S(1) / rho;
  LineEval<S> e = line(alpha, true);
  int it = 1;
  if (e.d1 < S(0)) return {alpha, e.cost, it, true};
  const S slop = S(p.line_search_relative_slop) / S(10) * max_(S(1), S(0.5) * (abs_(e.cost) + abs_(cost0)));
  if (e.d1 < slop) return {alpha, e.cost, it, true};
  auto armijo = [&](S a, S ca) { return ca < cost0 + c * a * d0; };
  S alpha_prev = alpha, cost_prev = e.cost;
  for (; it < p.line_search_max_iterations;) {
    alpha *= rho;
    e = line(alpha, false);
    ++it;
    if (abs_((e.cost - cost_prev) / (alpha - alpha_prev)) < slop) return {alpha, e.cost, it, true};
    if (e.cost > cost_prev && armijo(alpha, e.cost)) {
      if (armijo(alpha_prev, cost_prev)) return {alpha_prev, cost_prev, it, true};
      return {alpha, e.cost, it, true};
    }
    alpha_prev = alpha;
    cost_prev = e.cost;
  }
  if (armijo(alpha, e.cost)) return {alpha, e.cost, it, true};
  return {S(0), cost0, it, false};
}

// exact_root: root of l'(alpha) in [0, alpha_max = 1.5] by Newton with bisection safeguards
// (Drake's DoNewtonWithBisectionFallback) on f(alpha) = l'(alpha) / (-l'(0)), f(0) = -1.
// The guess -l'(0) / l''(alpha_max) is clamped into the bracket (Drake issue #21435).
template <class S, class Line>
SAP_HD LineSearchResult<S> line_search_exact(const Line& line, S cost0, S d0, const SolverConfig& p) {
  const S alpha_max = S(1.5);
  LineEval<S> e = line(alpha_max, true);
  int it = 1;
  if (e.d1 <= S(0)) return {alpha_max, e.cost, it, true};
  // Directional decrease already at round-off: a unit step (Drake).
  if (-d0 < S(p.cost_abs_tol) + S(p.cost_rel_tol) * e.cost) return {S(1), e.cost, it, true};
  const S scale = S(1) / (-d0);
  S guess = -d0 / e.d2;
  if (!isfinite_(guess) || guess <= S(0) || guess >= alpha_max) guess = S(0.5) * alpha_max;
  const S f_tol = S(1e-8), x_tol = S(1e-8) * guess;
  S x_lo = S(0), x_hi = alpha_max;
  S x = guess, dx = x_lo - x_hi, dx_old = dx;
  S cost_x = cost0;
  for (; it <= p.line_search_max_iterations;) {
    e = line(x, true);
    ++it;
    cost_x = e.cost;
    const S fx = e.d1 * scale, dfx = e.d2 * scale;
    if (fx < S(0)) x_lo = x;
    else x_hi = x;
    if (abs_(fx) < f_tol) return {x, cost_x, it, true};
    const bool slow = S(2) * abs_(fx) > abs_(dx_old * dfx);
    dx_old = dx;
    bool bisect = slow || !(dfx > S(0));
    if (!bisect) {
      dx = fx / dfx;
      const S xn = x - dx;
      if (!(xn > x_lo && xn < x_hi)) bisect = true;
      else x = xn;
    }
    if (bisect) {
      dx = S(0.5) * (x_hi - x_lo);
      x = x_lo + dx;
    }
    if (abs_(dx) < x_tol) return {x, cost_x, it, true};
  }
  return {x, cost_x, it, false};
}

}  // namespace sap
