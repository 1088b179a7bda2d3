// The angular contact rows of the constraint bundle (kernels/constraint_bundle.hpp): contacts
// of condim 4 (torsional friction) and 6 (torsional and rolling friction) as one elliptic
// constraint each (docs/sap-math.md §3.9), for models with such pairs (SolveSizes::nacon > 0;
// count() is 0 otherwise, and no other model reaches this code).
//
// Such a contact keeps its 3 translational rows [t1, t2, n] in the contact block (ContactRows
// forms their J x, J^T gamma and J^T G J, and skips their evaluation) and has up to 3 angular
// rows [spin, roll1, roll2] here (condim 4: spin). This kind evaluates the whole constraint,
// in the cone's order [t1, t2, spin, (roll1, roll2), n]:
//   contact approximation sap:      elliptic_cone (R_i mu_i^2 = R_t mu_1^2, MuJoCo's rule)
//   similar, lagged (Hunt-Crossley): hunt_crossley_elliptic
// and writes the translational part of gamma and G where ContactRows reads them (gamma at 3c,
// G at 6c) and the rest in its own slots (rows at ang_row(c), G at ang_G(c): the 3 x 3 block
// [t1, t2, n] x [spin, roll1, roll2], then the symmetric angular block). Its J^T gamma and
// J^T G J terms are those of the angular rows: the coupling blocks and the angular block.
// Only the kernels' kAngular instantiations visit this kind (ConstraintBundle<So, true>), the
// ones the launches pick for models with such pairs, on every backend: on CUDA its code, even
// untaken, raised the fused solve's registers from 128 to 236 (docs/gpu.md, kernel report).
#pragma once

#include "kernels/sap_elliptic_cone.hpp"
#include "kernels/step_params.hpp"
#include "model/solve_data.hpp"

namespace sap {

template <class So>
struct AngularContactRows {
  const ConstSolveRowsView& s;  // in: stage 2's rows
  double* gamma_out;            // out: world w's impulses, written when `store`
  const StepParams& p;
  int w;
  int n;  // contacts in the solve when the model has angular rows, else 0

  // The rows of contact c in storage order [t1, t2, n, spin, roll1, roll2]: the translational
  // ones in the contact block, the angular ones in the angular block.
  SAP_HDI int row(int c, int k) const { return k < 3 ? 3 * c + k : s.size.ang_row(c) + (k - 3); }
  SAP_HDI int dim(int c) const { return s.con_dim(w)[c]; }
  SAP_HDI int angular_rows(int c) const { return dim(c) == 6 ? 3 : dim(c) == 4 ? 1 : 0; }

  SAP_HDI int count() const { return n; }

  template <class X>
  SAP_HD void multiply(int c, const X* x, double* out) const {
    const int na = angular_rows(c);
    if (na == 0) return;
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    const double* jac = s.contact_jac_ang(w, c);
    for (int r = 0; r < 3; ++r) {
      So a = So(0);
      if (r < na)
        for (int k = 0; k < nj; ++k) a += So(jac[3 * k + r]) * So(x[dof[k]]);
      out[s.size.ang_row(c) + r] = double(a);
    }
  }
  // The angular rows only (ContactRows advances the translational ones).
  SAP_HDI void advance(int c, So alpha, double* vc, const double* dvc) const {
    const int na = angular_rows(c);
    for (int r = 0; r < na; ++r) advance_row(vc, dvc, s.size.ang_row(c) + r, alpha);
  }

  // The cone or Hunt-Crossley evaluation of M friction directions at x (storage order) into
  // gamma (storage order) and G (6 x 6 packed, storage order).
  template <int M>
  SAP_HD void evaluate_dim(int c, const So* x, So* gamma, So* cost, So* G, bool want_hessian) const {
    constexpr int nc = M + 1;
    // storage index of cone index k: [t1, t2, spin, roll1, roll2, n] -> [0, 1, 3, 4, 5, 2]
    auto storage = [](int k) { return k == M ? 2 : k < 2 ? k : k + 1; };
    const double* prm = s.con_param(w) + s.size.ncp * c;
    const double* ap = s.con_ang_param(w) + kNumAngularParams * c;
    So mu[M];
    const double mu_all[5] = {prm[kConMu], ap[kAngMuT2], ap[kAngMuSpin], ap[kAngMuRoll1], ap[kAngMuRoll2]};
    for (int k = 0; k < M; ++k) mu[k] = max_(So(mu_all[k]), elliptic_cone_min_mu<So>());
    So xc[nc], gc[nc], Gc[nc * (nc + 1) / 2];
    for (int k = 0; k < nc; ++k) xc[k] = x[storage(k)];
    if (p.config.contact_approximation == ContactApproximation::Sap) {
      EllipticConeParams<So, M> ep;
      for (int k = 0; k < M; ++k) ep.mu[k] = mu[k];
      ep.rho = So(prm[kConRt]) * mu[0] * mu[0];
      ep.R_n = So(prm[kConRn]);
      ep.v_hat_n = So(prm[kConVhatN]);
      elliptic_cone<So, M>(ep, xc, gc, cost, Gc, want_hessian);
    } else {
      const HuntCrossleyParams<So> hp{mu[0],             So(prm[kConHcStiffness]), So(prm[kConHcDissipation]),
                                      So(prm[kConHcFe0]), So(prm[kConHcN0]),        So(prm[kConHcEpsSoft])};
      hunt_crossley_elliptic<So, M>(hp, mu, So(p.h), p.config.contact_approximation == ContactApproximation::Lagged,
                                    xc, gc, cost, Gc, want_hessian);
    }
    for (int k = 0; k < 21; ++k) G[k] = So(0);
    for (int k = 0; k < 6; ++k) gamma[k] = So(0);
    for (int i = 0; i < nc; ++i) {
      gamma[storage(i)] = gc[i];
      if (want_hessian)
        for (int j = i; j < nc; ++j) G[sym_packed_index(6, storage(i), storage(j))] = Gc[sym_packed_index(nc, i, j)];
    }
  }

  SAP_HD void evaluate(int c, So alpha, bool store, bool want_hessian, const double* vc,
                                           const double* dvc, double* G_rows, RowSums<So>& sum) const {
    const int na = angular_rows(c);
    if (na == 0) return;
    const int nr = 3 + na;
    So x[6], dx[6], gamma[6], G[21], cost;
    for (int k = 0; k < 6; ++k) {
      dx[k] = k < nr && (alpha != So(0) || want_hessian) ? So(dvc[row(c, k)]) : So(0);
      x[k] = k < nr ? So(vc[row(c, k)]) + alpha * dx[k] : So(0);
    }
    const bool hessian = want_hessian || store;
    if (na == 3) evaluate_dim<5>(c, x, gamma, &cost, G, hessian);
    else evaluate_dim<3>(c, x, gamma, &cost, G, hessian);
    sum.cost += cost;
    for (int k = 0; k < nr; ++k) sum.dvc_gamma += dx[k] * gamma[k];
    if (want_hessian)
      for (int i = 0; i < nr; ++i) {
        So g = So(0);
        for (int j = 0; j < nr; ++j) g += G[sym_packed_index(6, i, j)] * dx[j];
        sum.dvc_G_dvc += dx[i] * g;
      }
    if (store) {
      for (int k = 0; k < 3; ++k) gamma_out[row(c, k)] = double(gamma[k]);
      for (int k = 0; k < 3; ++k) gamma_out[s.size.ang_row(c) + k] = double(gamma[3 + k]);
      // The translational block where ContactRows reads it, [00, 01, 02, 11, 12, 22] of [t1, t2, n].
      double* Gm = G_rows + 6 * c;
      for (int i = 0, k = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j, ++k) Gm[k] = double(G[sym_packed_index(6, i, j)]);
      double* Ga = G_rows + s.size.ang_G(c);
      for (int i = 0; i < 3; ++i)
        for (int a = 0; a < 3; ++a) Ga[3 * i + a] = double(G[sym_packed_index(6, i, 3 + a)]);
      for (int i = 0, k = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j, ++k) Ga[9 + k] = double(G[sym_packed_index(6, 3 + i, 3 + j)]);
    }
  }

  // J_ang^T gamma_ang (the translational rows are ContactRows').
  SAP_HD void scatter_transpose(int c, const double* gamma, double* jtg) const {
    const int na = angular_rows(c);
    if (na == 0) return;
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    const double* jac = s.contact_jac_ang(w, c);
    const double* g = gamma + s.size.ang_row(c);
    for (int k = 0; k < nj; ++k) {
      So acc = So(jtg[dof[k]]);
      for (int r = 0; r < na; ++r) acc += So(jac[3 * k + r]) * So(g[r]);
      jtg[dof[k]] = double(acc);
    }
  }
  SAP_HD void gather_transpose(int i, int c, const double* gamma, double& acc) const {
    const int na = angular_rows(c);
    if (na == 0) return;
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    const double* jac = s.contact_jac_ang(w, c);
    const double* g = gamma + s.size.ang_row(c);
    const int k = jacobian_entry_of_dof(dof, nj, i);
    if (k >= 0) {
      So a = So(acc);
      for (int r = 0; r < na; ++r) a += So(jac[3 * k + r]) * So(g[r]);
      acc = double(a);
    }
  }

  // Row dof[a] of H's lower triangle: the terms of J_a^T G J_b (b >= a) that involve an angular
  // row, r_q = sum_p J_p(a) G_pq over the rows p, q of [t1, t2, n, spin, roll1, roll2] that are
  // not both translational, then r . J(b).
  template <class V>
  SAP_HD void add_entry_row(int c, double* H, int ld, const double* G_rows, const JacDof* dof, const V* val, int a,
                            int nj) const {
    const int na = angular_rows(c);
    const double* Gm = G_rows + 6 * c;
    const double* Ga = G_rows + s.size.ang_G(c);
    (void)Gm;
    const double* jac = s.contact_jac_ang(w, c);
    So ja[6];
    for (int k = 0; k < 3; ++k) ja[k] = So(val[3 * a + k]);
    for (int k = 0; k < 3; ++k) ja[3 + k] = k < na ? So(jac[3 * a + k]) : So(0);
    // G_ta (3 x 3, translational x angular) at Ga[3 i + k], G_aa symmetric at Ga[9 + ...].
    auto G_aa = [&](int k, int l) {
      const int i = k < l ? k : l, j = k < l ? l : k;
      return So(Ga[9 + i * (5 - i) / 2 + j]);  // packed 3 x 3: 00 01 02 11 12 22
    };
    So r[6];
    for (int q = 0; q < 3; ++q) {  // translational q: angular p only
      So acc = So(0);
      for (int k = 0; k < na; ++k) acc += ja[3 + k] * So(Ga[3 * q + k]);
      r[q] = acc;
    }
    for (int l = 0; l < 3; ++l) {  // angular q: every p
      So acc = So(0);
      if (l < na) {
        for (int t = 0; t < 3; ++t) acc += ja[t] * So(Ga[3 * t + l]);
        for (int k = 0; k < na; ++k) acc += ja[3 + k] * G_aa(k, l);
      }
      r[3 + l] = acc;
    }
    double* hrow = H + dof[a] * ld;
    for (int b = a; b < nj; ++b) {
      So acc = So(hrow[dof[b]]);
      for (int k = 0; k < 3; ++k) acc += r[k] * So(val[3 * b + k]);
      for (int k = 0; k < na; ++k) acc += r[3 + k] * So(jac[3 * b + k]);
      hrow[dof[b]] = double(acc);
    }
  }

  template <class JacCopy>
  SAP_HD void add_hessian(int c, double* H, int ld, const double* G_rows, JacCopy&&) const {
    if (angular_rows(c) == 0) return;
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    s.with_contact_jac(w, c, [&](const auto* val) {
      for (int a = 0; a < nj; ++a) add_entry_row(c, H, ld, G_rows, dof, val, a, nj);
    });
  }
  SAP_HD void add_hessian_row(int i, int c, double* H, int ld, const double* G_rows) const {
    if (angular_rows(c) == 0) return;
    const int nj = s.con_jac_n(w)[c];
    const JacDof* dof = s.contact_dofs(w, c);
    const int a = jacobian_entry_of_dof(dof, nj, i);
    if (a >= 0) s.with_contact_jac(w, c, [&](const auto* val) { add_entry_row(c, H, ld, G_rows, dof, val, a, nj); });
  }
};

}  // namespace sap
