// Stage 3's constraint bundle (Drake's SapConstraintBundle): every constraint row of one world,
// as the Newton solve (kernels/newton.hpp) sees it. Five row kinds, each a plain struct over the
// solve's buffers (SolveView, filled by stage 2, kernels/constraint_setup.hpp) with the same
// operations:
//   count()                    rows (contacts: blocks of 3 rows) in the solve
//   multiply(r, x, out)        vc = J x for row (block) r
//   evaluate(r, ...)           cost l_r, impulse gamma_r = -dl/dvc and Hessian G_r at vc + alpha dvc
//                              (docs/sap-math.md §3.4-§3.8, §4, §5, §12; sap_constraints.hpp)
//   advance(r, alpha, vc, dvc) vc <- vc + alpha dvc on row (block) r's rows (advance_row)
//   scatter_transpose(r, ...)  J_r^T gamma_r added into J^T gamma (one lane: rows in order)
//   gather_transpose(i, r, ...) row r's term of (J^T gamma)_i (a lane per dof: rows in order)
//   add_hessian(r, ...)        J_r^T G_r J_r added into H (one lane: rows in order)
//   add_hessian_row(i, r, ...) row r's terms of row i of H (a lane per dof: rows in order)
// ConstraintBundle::visit(v) calls v(kind) for the kinds in the solve's fixed order: contacts,
// joint limits, PD drives, holonomic rows, the angular rows of contacts with torsional or
// rolling friction (kernels/contact_angular_rows.hpp; none unless the model has a pair of
// condim 4 or 6). That is the order of their rows in vc, gamma and G (SolveSizes), and the order
// in which every sum over rows (the cost, J^T gamma, H) adds their terms, so each sum rounds the
// same whatever the executor.
#pragma once

#include "kernels/contact_angular_rows.hpp"
#include "kernels/sap_constraints.hpp"
#include "kernels/step_params.hpp"
#include "model/solve_data.hpp"

namespace sap {

// Contact c: rows 3c .. 3c + 2 ([t1, t2, n] of its frame), Hessian G at 6c (symmetric 3x3, [00,
// 01, 02, 11, 12, 22]), a merged Jacobian of con_jac_n entries with decreasing dofs. A contact
// with angular rows (condim 4, 6) is evaluated by AngularContactRows, which writes its gamma and
// G here; its J x, J^T gamma and J^T G J terms of these rows are formed here as for the others.
// kAngular: the bundle of a model with such contacts (ConstraintBundle).
template <class So, bool kAngular = false>
struct ContactRows {
  const ConstSolveRowsView& s;  // in: stage 2's rows
  double* gamma_out;            // out: world w's impulses, written when `store`
  const StepParams& p;
  int w;
  int n;  // contacts in the solve

  SAP_HDI int count() const { return n; }

  template <class X>
  SAP_HDI void multiply(int c, const X* x, double* out) const {
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    s.with_contact_jac(w, c, [&](const auto* val) {
      So a = So(0), b = So(0), e = So(0);
      for (int k = 0; k < nj; ++k) {
        const So xk = So(x[dof[k]]);
        a += So(val[3 * k]) * xk;
        b += So(val[3 * k + 1]) * xk;
        e += So(val[3 * k + 2]) * xk;
      }
      out[3 * c] = a;
      out[3 * c + 1] = b;
      out[3 * c + 2] = e;
    });
  }
  SAP_HDI void advance(int c, So alpha, double* vc, const double* dvc) const {
    for (int k = 0; k < 3; ++k) advance_row(vc, dvc, 3 * c + k, alpha);
  }

  SAP_HDI HuntCrossleyParams<So> hunt_crossley_params(int c) const {
    const double* prm = s.con_param(w) + s.size.ncp * c;
    return {So(prm[kConMu]),  So(prm[kConHcStiffness]), So(prm[kConHcDissipation]),
            So(prm[kConHcFe0]), So(prm[kConHcN0]),     So(prm[kConHcEpsSoft])};
  }

  // The contact's cost, impulse and Hessian at vc = x, in the model of contact_approximation.
  SAP_HD void evaluate_at(int c, const So* x, So* gamma, So* cost, So* G, bool want_hessian) const {
    const ContactApproximation model = p.config.contact_approximation;
    if (model == ContactApproximation::Sap) {
      const double* prm = s.con_param(w) + s.size.ncp * c;
      const FrictionConeParams<So> cp{So(prm[kConRt]), So(prm[kConRn]), So(prm[kConVhatN]), So(prm[kConMu])};
      friction_cone<So>(cp, x, gamma, cost, G, want_hessian);
    } else {
      hunt_crossley<So>(hunt_crossley_params(c), So(p.h), model == ContactApproximation::Lagged, x, gamma, cost, G,
                        want_hessian);
    }
  }

  SAP_HDI void evaluate(int c, So alpha, bool store, bool want_hessian, const double* vc, const double* dvc,
                        double* G_rows, RowSums<So>& sum) const {
    if constexpr (kAngular) {
      if (s.contact_has_angular_rows(w, c)) return;  // condim 4 or 6: AngularContactRows evaluates it
    }
    So x[3], dx[3], gamma[3], G[6] = {So(0), So(0), So(0), So(0), So(0), So(0)}, cost;
    for (int k = 0; k < 3; ++k) {
      dx[k] = alpha != So(0) || want_hessian ? So(dvc[3 * c + k]) : So(0);
      x[k] = So(vc[3 * c + k]) + alpha * dx[k];
    }
    // Neither stored nor differentiated: a trial of a decay line search, which reads the cost
    // alone (RowSums::cost). Hunt-Crossley's cost needs no impulse (no divisions); the cone's
    // comes with its projection. Host code only: on the GPU the branch costs the split tail's
    // fp32 kernels 2 registers and saves no memory traffic.
#if !defined(__CUDA_ARCH__)
    if (!store && !want_hessian && p.config.contact_approximation != ContactApproximation::Sap) {
      sum.cost += hunt_crossley_cost<So>(hunt_crossley_params(c), So(p.h),
                                         p.config.contact_approximation == ContactApproximation::Lagged, x);
      return;
    }
#endif
    evaluate_at(c, x, gamma, &cost, G, want_hessian || store);
    sum.cost += cost;
    sum.dvc_gamma += dx[0] * gamma[0] + dx[1] * gamma[1] + dx[2] * gamma[2];
    if (want_hessian) {
      const So g0 = G[0] * dx[0] + G[1] * dx[1] + G[2] * dx[2];
      const So g1 = G[1] * dx[0] + G[3] * dx[1] + G[4] * dx[2];
      const So g2 = G[2] * dx[0] + G[4] * dx[1] + G[5] * dx[2];
      sum.dvc_G_dvc += dx[0] * g0 + dx[1] * g1 + dx[2] * g2;
    }
    if (store) {
      for (int k = 0; k < 3; ++k) gamma_out[3 * c + k] = double(gamma[k]);
      for (int k = 0; k < 6; ++k) G_rows[6 * c + k] = double(G[k]);
    }
  }

  SAP_HDI void scatter_transpose(int c, const double* gamma, double* jtg) const {
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    s.with_contact_jac(w, c, [&](const auto* val) {
      for (int k = 0; k < nj; ++k)
        jtg[dof[k]] = double(So(jtg[dof[k]]) + So(val[3 * k]) * So(gamma[3 * c]) +
                             So(val[3 * k + 1]) * So(gamma[3 * c + 1]) + So(val[3 * k + 2]) * So(gamma[3 * c + 2]));
    });
  }

  SAP_HDI void gather_transpose(int i, int c, const double* gamma, double& acc) const {
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    const JacValues val = s.contact_jac(w, c);
    const int k = jacobian_entry_of_dof(dof, nj, i);
    if (k >= 0)
      acc = double(So(acc) + So(val[3 * k]) * So(gamma[3 * c]) + So(val[3 * k + 1]) * So(gamma[3 * c + 1]) +
                   So(val[3 * k + 2]) * So(gamma[3 * c + 2]));
  }

  // r = G J_a (G symmetric 3x3 as [00, 01, 02, 11, 12, 22]).
  SAP_HDI static void g_times(const double* G, So j0, So j1, So j2, So& r0, So& r1, So& r2) {
    r0 = j0 * So(G[0]) + j1 * So(G[1]) + j2 * So(G[2]);
    r1 = j0 * So(G[1]) + j1 * So(G[3]) + j2 * So(G[4]);
    r2 = j0 * So(G[2]) + j1 * So(G[4]) + j2 * So(G[5]);
  }

  // J_a^T G J_b for the entries a <= b of contact c (r = G J_a, then r . J_b), into row dof[a]
  // of H's lower triangle.
  template <class V>
  SAP_HDI static void add_entry_row(double* H, int ld, const double* G, const JacDof* dof, const V* val, int a,
                                    int nj) {
    const So ja0 = So(val[3 * a]), ja1 = So(val[3 * a + 1]), ja2 = So(val[3 * a + 2]);
    So r0, r1, r2;
    g_times(G, ja0, ja1, ja2, r0, r1, r2);
    double* row = H + dof[a] * ld;
    for (int b = a; b < nj; ++b)
      row[dof[b]] = double(So(row[dof[b]]) + r0 * So(val[3 * b]) + r1 * So(val[3 * b + 1]) + r2 * So(val[3 * b + 2]));
  }

#if !defined(__CUDACC__)
  // add_entry_row for entries a and a + 1 together (host only): rows dof[a] and dof[a + 1] of H
  // as the two lanes of one SIMD register, sharing each column's Jacobian loads. Each entry gets
  // the same term, rounded as add_entry_row rounds it (IEEE operations lane by lane, no
  // contraction on the x86-64 baseline): the same bits with 1.45x fewer cycles (the pair loop
  // issues a third of the instructions per entry that dominated the one-row loop).
  template <class V>
  static void add_entry_row_pair(double* H, int ld, const double* G, const JacDof* dof, const V* val, int a,
                                 int nj) {
    typedef So P __attribute__((vector_size(2 * sizeof(So))));
    const So ja0 = So(val[3 * a]), ja1 = So(val[3 * a + 1]), ja2 = So(val[3 * a + 2]);
    So ra0, ra1, ra2, rb0, rb1, rb2;
    g_times(G, ja0, ja1, ja2, ra0, ra1, ra2);
    g_times(G, So(val[3 * a + 3]), So(val[3 * a + 4]), So(val[3 * a + 5]), rb0, rb1, rb2);
    const P r0 = {ra0, rb0}, r1 = {ra1, rb1}, r2 = {ra2, rb2};
    double* row_a = H + dof[a] * ld;
    double* row_b = H + dof[a + 1] * ld;
    row_a[dof[a]] = double(So(row_a[dof[a]]) + r0[0] * ja0 + r1[0] * ja1 + r2[0] * ja2);
    for (int b = a + 1; b < nj; ++b) {
      const int d = dof[b];
      const So v0 = So(val[3 * b]), v1 = So(val[3 * b + 1]), v2 = So(val[3 * b + 2]);
      P h = {So(row_a[d]), So(row_b[d])};
      h = h + r0 * P{v0, v0};
      h = h + r1 * P{v1, v1};
      h = h + r2 * P{v2, v2};
      row_a[d] = double(h[0]);
      row_b[d] = double(h[1]);
    }
  }
#endif

  // Entries 0 .. nj - 1's rows of H (one lane).
  template <class V>
  SAP_HDI static void add_entry_rows(double* H, int ld, const double* G, const JacDof* dof, const V* val, int nj) {
#if !defined(__CUDACC__)
    int a = 0;
    for (; a + 1 < nj; a += 2) add_entry_row_pair(H, ld, G, dof, val, a, nj);
    if (a < nj) add_entry_row(H, ld, G, dof, val, a, nj);
#else
    for (int a = 0; a < nj; ++a) add_entry_row(H, ld, G, dof, val, a, nj);
#endif
  }

  // All of contact c's terms. fp32 Jacobian values are converted once per entry into jac_copy()
  // (3 nj doubles) when it gives a buffer, not once per entry pair.
  template <class JacCopy>
  SAP_HDI void add_hessian(int c, double* H, int ld, const double* G_rows, JacCopy&& jac_copy) const {
    const double* G = G_rows + 6 * c;
    if (G[0] == 0 && G[3] == 0 && G[5] == 0) return;  // no-contact region: no curvature
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    s.with_contact_jac(w, c, [&](const auto* val) {
      double* jac = sizeof(*val) == sizeof(double) ? nullptr : jac_copy();
      if (!jac) {
        add_entry_rows(H, ld, G, dof, val, nj);
        return;
      }
      for (int k = 0; k < 3 * nj; ++k) jac[k] = double(val[k]);
      add_entry_rows(H, ld, G, dof, static_cast<const double*>(jac), nj);
    });
  }

  SAP_HDI void add_hessian_row(int i, int c, double* H, int ld, const double* G_rows) const {
    const double* G = G_rows + 6 * c;
    if (G[0] == 0 && G[3] == 0 && G[5] == 0) return;
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    const int a = jacobian_entry_of_dof(dof, nj, i);
    if (a >= 0) s.with_contact_jac(w, c, [&](const auto* val) { add_entry_row(H, ld, G, dof, val, a, nj); });
  }
};

// A row on one dof with an fp64 coefficient: vc = coef v_dof. The limit and PD rows.
// evaluate_scalar_row: the part of evaluate common to every one-row kind; row_cost(x, &gamma,
// &G) returns the row's cost at vc = x.
template <class So, class RowCost>
SAP_HDI void evaluate_scalar_row(double* gamma_out, int row, int g, So alpha, bool store, bool want_hessian,
                                 const double* vc, const double* dvc, double* G_rows, RowSums<So>& sum,
                                 RowCost&& row_cost) {
  const So dx = alpha != So(0) || want_hessian ? So(dvc[row]) : So(0);  // as contact rows: dvc may be stale
  const So x = So(vc[row]) + alpha * dx;
  So gamma, G;
  sum.cost += row_cost(x, &gamma, &G);
  sum.dvc_gamma += dx * gamma;
  sum.dvc_G_dvc += dx * G * dx;
  if (store) {
    gamma_out[row] = double(gamma);
    G_rows[g] = double(G);
  }
}

// Joint-limit row r: vc = sign v_dof (sign +1 lower, -1 upper), G at limit_G(r).
template <class So>
struct LimitRows {
  const ConstSolveRowsView& s;  // in: stage 2's rows
  double* gamma_out;            // out: world w's impulses, written when `store`
  int w;
  int n;

  SAP_HDI int count() const { return n; }
  SAP_HDI double sign(int r) const { return s.lim_param(w)[kNumLimitParams * r + kLimSign]; }
  SAP_HDI int dof(int r) const { return s.lim_dof(w)[r]; }

  template <class X>
  SAP_HDI void multiply(int r, const X* x, double* out) const {
    out[s.size.limit_row(r)] = sign(r) * x[dof(r)];
  }
  SAP_HDI void advance(int r, So alpha, double* vc, const double* dvc) const {
    advance_row(vc, dvc, s.size.limit_row(r), alpha);
  }
  SAP_HDI void evaluate(int r, So alpha, bool store, bool want_hessian, const double* vc, const double* dvc,
                        double* G_rows, RowSums<So>& sum) const {
    const double* lp = s.lim_param(w) + kNumLimitParams * r;
    evaluate_scalar_row(gamma_out, s.size.limit_row(r), s.size.limit_G(r), alpha, store, want_hessian, vc, dvc, G_rows, sum,
                        [&](So x, So* gamma, So* G) { return limit_row<So>(So(lp[kLimR]), So(lp[kLimVhat]), x, gamma, G); });
  }
  SAP_HDI void scatter_transpose(int r, const double* gamma, double* jtg) const {
    const int d = dof(r);
    jtg[d] = double(So(jtg[d]) + So(sign(r)) * So(gamma[s.size.limit_row(r)]));
  }
  SAP_HDI void gather_transpose(int i, int r, const double* gamma, double& acc) const {
    if (dof(r) == i) acc = double(So(acc) + So(sign(r)) * So(gamma[s.size.limit_row(r)]));
  }
  // A diagonal term of H (sign^2 = 1).
  template <class JacCopy>
  SAP_HDI void add_hessian(int r, double* H, int ld, const double* G_rows, JacCopy&&) const {
    H[dof(r) * ld + dof(r)] += G_rows[s.size.limit_G(r)];
  }
  SAP_HDI void add_hessian_row(int i, int r, double* H, int ld, const double* G_rows) const {
    if (dof(r) == i) H[i * ld + i] += G_rows[s.size.limit_G(r)];
  }
};

// PD row r (position, velocity and pd actuators on a dof): vc = v_dof, G at pd_G(r).
template <class So>
struct PdRows {
  const ConstSolveRowsView& s;  // in: stage 2's rows
  double* gamma_out;            // out: world w's impulses, written when `store`
  const StepParams& p;
  int w;
  int n;

  SAP_HDI int count() const { return n; }
  SAP_HDI int dof(int r) const { return s.pd_dof(w)[r]; }

  template <class X>
  SAP_HDI void multiply(int r, const X* x, double* out) const {
    out[s.size.pd_row(r)] = x[dof(r)];
  }
  SAP_HDI void advance(int r, So alpha, double* vc, const double* dvc) const {
    advance_row(vc, dvc, s.size.pd_row(r), alpha);
  }
  SAP_HDI void evaluate(int r, So alpha, bool store, bool want_hessian, const double* vc, const double* dvc,
                        double* G_rows, RowSums<So>& sum) const {
    const double* pp = s.pd_param(w) + kNumPdParams * r;
    const PdParams<So> pd{So(pp[kPdKp]),      So(pp[kPdKd]),          So(pp[kPdQ0]),       So(pp[kPdQTarget]),
                          So(pp[kPdVTarget]), So(pp[kPdFeedForward]), So(pp[kPdEffortLo]), So(pp[kPdEffortHi])};
    evaluate_scalar_row(gamma_out, s.size.pd_row(r), s.size.pd_G(r), alpha, store, want_hessian, vc, dvc, G_rows, sum,
                        [&](So x, So* gamma, So* G) { return pd_row<So>(pd, So(p.h), x, gamma, G); });
  }
  SAP_HDI void scatter_transpose(int r, const double* gamma, double* jtg) const {
    const int d = dof(r);
    jtg[d] = double(So(jtg[d]) + So(gamma[s.size.pd_row(r)]));
  }
  SAP_HDI void gather_transpose(int i, int r, const double* gamma, double& acc) const {
    if (dof(r) == i) acc = double(So(acc) + So(gamma[s.size.pd_row(r)]));
  }
  template <class JacCopy>
  SAP_HDI void add_hessian(int r, double* H, int ld, const double* G_rows, JacCopy&&) const {
    H[dof(r) * ld + dof(r)] += G_rows[s.size.pd_G(r)];
  }
  SAP_HDI void add_hessian_row(int i, int r, double* H, int ld, const double* G_rows) const {
    if (dof(r) == i) H[i * ld + i] += G_rows[s.size.pd_G(r)];
  }
};

// Holonomic row r (tendon limits, equalities, dry friction, servos on tendons): a sparse
// Jacobian row of hol_jac_n entries with decreasing dofs, G at hol_G(r); kind kHolKindBox (a
// box-bounded row) or kHolKindPd (the PD row on vc = J_t v).
template <class So>
struct HolonomicRows {
  const ConstSolveRowsView& s;  // in: stage 2's rows
  double* gamma_out;            // out: world w's impulses, written when `store`
  const StepParams& p;
  int w;
  int n;

  SAP_HDI int count() const { return n; }
  SAP_HDI int entries(int r) const { return s.hol_jac_n(w)[r]; }
  SAP_HDI const int* dofs(int r) const { return s.hol_jac_dof(w) + s.size.nhjac * r; }
  SAP_HDI const double* values(int r) const { return s.hol_jac_val(w) + s.size.nhjac * r; }

  template <class X>
  SAP_HDI void multiply(int r, const X* x, double* out) const {
    const int nj = entries(r);
    const int* dof = dofs(r);
    const double* val = values(r);
    So a = So(0);
    for (int k = 0; k < nj; ++k) a += So(val[k]) * So(x[dof[k]]);
    out[s.size.hol_row(r)] = double(a);
  }
  SAP_HDI void advance(int r, So alpha, double* vc, const double* dvc) const {
    advance_row(vc, dvc, s.size.hol_row(r), alpha);
  }
  SAP_HDI void evaluate(int r, So alpha, bool store, bool want_hessian, const double* vc, const double* dvc,
                        double* G_rows, RowSums<So>& sum) const {
    const double* hp = s.hol_param(w) + kNumHolonomicParams * r;
    evaluate_scalar_row(gamma_out, s.size.hol_row(r), s.size.hol_G(r), alpha, store, want_hessian, vc, dvc, G_rows, sum,
                        [&](So x, So* gamma, So* G) {
                          if (hp[kHolKind] == kHolKindPd) {  // servo on a tendon: the PD row on vc = J_t v
                            const double* pp = hp + kHolPd;
                            const PdParams<So> pd{So(pp[kPdKp]),          So(pp[kPdKd]),
                                                  So(pp[kPdQ0]),          So(pp[kPdQTarget]),
                                                  So(pp[kPdVTarget]),     So(pp[kPdFeedForward]),
                                                  So(pp[kPdEffortLo]),    So(pp[kPdEffortHi])};
                            return pd_row<So>(pd, So(p.h), x, gamma, G);
                          }
                          return holonomic_row<So>(So(hp[kHolR]), So(hp[kHolVhat]), So(hp[kHolLo]), So(hp[kHolHi]), x,
                                                   gamma, G);
                        });
  }
  SAP_HDI void scatter_transpose(int r, const double* gamma, double* jtg) const {
    const int nj = entries(r);
    const int* dof = dofs(r);
    const double* val = values(r);
    for (int k = 0; k < nj; ++k) jtg[dof[k]] = double(So(jtg[dof[k]]) + So(val[k]) * So(gamma[s.size.hol_row(r)]));
  }
  SAP_HDI void gather_transpose(int i, int r, const double* gamma, double& acc) const {
    const int nj = entries(r);
    const int* dof = dofs(r);
    const double* val = values(r);
    const int k = jacobian_entry_of_dof(dof, nj, i);
    if (k >= 0) acc = double(So(acc) + So(val[k]) * So(gamma[s.size.hol_row(r)]));
  }
  // G J_a^T J_b for the entries a <= b, into row dof[a] of H's lower triangle.
  SAP_HDI static void add_entry_row(double* H, int ld, So G, const int* dof, const double* val, int a, int nj) {
    const So ga = G * So(val[a]);
    double* row = H + dof[a] * ld;
    for (int b = a; b < nj; ++b) row[dof[b]] = double(So(row[dof[b]]) + ga * So(val[b]));
  }
  template <class JacCopy>
  SAP_HDI void add_hessian(int r, double* H, int ld, const double* G_rows, JacCopy&&) const {
    const So G = So(G_rows[s.size.hol_G(r)]);
    if (G == So(0)) return;
    const int nj = entries(r);
    for (int a = 0; a < nj; ++a) add_entry_row(H, ld, G, dofs(r), values(r), a, nj);
  }
  SAP_HDI void add_hessian_row(int i, int r, double* H, int ld, const double* G_rows) const {
    const So G = So(G_rows[s.size.hol_G(r)]);
    if (G == So(0)) return;
    const int nj = entries(r);
    const int* dof = dofs(r);
    const int a = jacobian_entry_of_dof(dof, nj, i);
    if (a >= 0) add_entry_row(H, ld, G, dof, values(r), a, nj);
  }
};

// The rows of world w in the solve: the four kinds, their counts read once; with kAngular (the
// model has contact pairs of condim 4 or 6, SolveSizes::nacon > 0) also the angular contact
// rows. The kernels that visit the bundle take kAngular as a template parameter and the
// launches pick the instantiation by the model (launch/launches_impl.hpp): every other model
// runs code without the angular kind, which on CUDA costs registers even when untaken.
template <class So, bool kAngular = false>
struct ConstraintBundle {
  const ConstSolveRowsView& s;  // in: stage 2's rows
  double* gamma_out;            // out: world w's impulses, written when `store`
  const StepParams& p;
  int w;
  int ncon, nlim, npd, nhol;

  SAP_HDI static ConstraintBundle of(const ConstSolveRowsView& s, double* gamma_out, const StepParams& p, int w) {
    return {s, gamma_out, p, w, s.con_count(w)[0], s.lim_count(w)[0], s.size.npd, s.hol_count(w)[0]};
  }
  SAP_HDI int rows_used() const { return ncon + nlim + npd + nhol; }

  // v(kind) for every kind, in the solve's order.
  template <class Visitor>
  SAP_HDI void visit(Visitor&& v) const {
    v(ContactRows<So, kAngular>{s, gamma_out, p, w, ncon});
    v(LimitRows<So>{s, gamma_out, w, nlim});
    v(PdRows<So>{s, gamma_out, p, w, npd});
    v(HolonomicRows<So>{s, gamma_out, p, w, nhol});
    if constexpr (kAngular) v(AngularContactRows<So>{s, gamma_out, p, w, s.size.nacon > 0 ? ncon : 0});
  }
};

}  // namespace sap
