// Stage 3: the SAP Newton solve of one world (docs/sap-math.md §2 and §6; stopping tests §6.2):
//   minimise l(v) = 1/2 (v - v*)^T A (v - v*) + sum_i l_i(J_i v)
//   gradient  g = A (v - v*) - J^T gamma,   Hessian  H = A + sum_i J_i^T G_i J_i
//   stop when |D g| <= eps_a + eps_r max(|D A v|, |D J^T gamma|), D = diag(A)^-1/2, or on the
//   cost test |dl| < eps_ca + eps_cr (|l| + |l_prev|)/2 with alpha > 1/2.
// Warm start at v_n. One team per world; worlds stop independently (per-world done state).
// The split path (NewtonBeginKernel ... NewtonFinishKernel below) runs the same phases as
// separate launches so that a library factorisation (Eigen, cuSOLVER) can solve in between.
#pragma once

#include "kernels/cholesky.hpp"
#include "kernels/line_search.hpp"
#include "kernels/sap_constraints.hpp"
#include "kernels/step_params.hpp"
#include "sap/status.hpp"
#include "model/solve_data.hpp"

namespace sap {

// Which stopping test ended the iteration (StepDiagnostics::exit_reason).
enum NewtonExit : int { kExitOther = 0, kExitOptimality = 1, kExitCostStall = 2 };
// Where a world's Newton loop stands between the launches of the split path (newton_int[kIterPhase]).
enum NewtonPhase : int { kNewtonIterating = 0, kNewtonNeedsDirection = 1, kNewtonDone = 2 };

// Sums returned by one pass over all constraint rows.
template <class S>
struct RowSums {
  S cost, dvc_gamma, dvc_G_dvc;
};

// The Newton system in the team's shared memory (SapSolveKernel::system_on_chip): H (ld x ld,
// fp64), the factor with its right-hand side (ld (ld + 1) entries of the linear-solve
// precision) and the factor's envelope (ld ints). Offsets in doubles. On CUDA the whole Newton
// iteration's matrix work (assembly, factorisation, solves) then touches no DRAM; values and
// arithmetic are those of the global buffers (docs/gpu.md, "working set on chip").
// Also on chip with the system: one contact's Jacobian in fp64 (3 njac: the one-lane H assembly
// converts fp32 storage once per contact, not once per entry pair).
struct NewtonOnChip {
  long long H = 0, chol = 0, first = 0, jac = 0, vc = 0, dvc = 0, G = 0, doubles = 0;
  // rows: also the per-iteration row buffers vc, dvc (nrow) and G (nG), after the system.
  SAP_HDI static NewtonOnChip layout(int ld, bool f32, bool rows, int nrow, int nG, int njac) {
    NewtonOnChip o;
    const long long nchol = static_cast<long long>(ld) * (ld + 1);
    o.H = 0;
    o.chol = static_cast<long long>(ld) * ld;
    o.first = o.chol + (f32 ? (nchol + 1) / 2 : nchol);
    o.jac = o.first + (ld + 1) / 2;
    o.doubles = o.jac + 3LL * njac;
    if (rows) {
      o.vc = o.doubles;
      o.dvc = o.vc + nrow;
      o.G = o.dvc + nrow;
      o.doubles = o.G + nG;
    }
    return o;
  }
  long long bytes() const { return 8 * doubles; }
};

// kAllGlobal: every buffer is the global array, known at compile time (the split path, whose
// loop state and system live between launches); the fused kernel chooses at run time
// (system_on_chip, rows_on_chip). Same loads and arithmetic either way.
template <class So, bool kAllGlobal = false>
struct SapSolveKernel {
  // in
  ModelView m;
  ConstStateView state_in;  // qvel: the warm start v_n
  StepParams p;
  // in/out
  DataView d;   // in: A, v_star; scratch: chol, chol_first (the factor of H)
  SolveView s;  // in: the constraint rows of stage 2; out: v, gamma, G, stats, cost, cost_trace
  int* status;  // in: failure bits of earlier stages; out: |= this stage's WorldStatusBits
  // H, the factor and its envelope (system_on_chip) and the row buffers vc, dvc, G
  // (rows_on_chip, only with the system) in the team's shared memory (NewtonOnChip, the fused
  // kernel launched with its bytes) instead of s.H, d.chol, d.chol_first, s.vc, s.dvc, s.G.
  bool system_on_chip = false;
  bool rows_on_chip = false;

  // Where the Newton system and row buffers of world w live (global arrays, or the team's
  // shared memory).
  SAP_HDI NewtonOnChip on_chip_layout() const {
    return NewtonOnChip::layout(m.nv_pad, linear_f32(), rows_on_chip, s.size.nrow(), s.size.nG(), s.size.njac);
  }

  template <class Team>
  SAP_HD double* on_chip(Team& team, long long offset) const {
    return reinterpret_cast<double*>(team.shared_mem()) + offset;
  }
  // The on-chip address of a NewtonOnChip slot when `on`, else the global array.
  template <class Team, class T>
  SAP_HD T* placed(Team& team, bool on, long long NewtonOnChip::*slot, T* global) const {
    if (kAllGlobal) return global;
    return on ? reinterpret_cast<T*>(on_chip(team, on_chip_layout().*slot)) : global;
  }
  template <class Team>
  SAP_HD double* hessian(int w, Team& t) const { return placed(t, system_on_chip, &NewtonOnChip::H, s.H(w)); }
  template <class Team>
  SAP_HD double* factor(int w, Team& t) const { return placed(t, system_on_chip, &NewtonOnChip::chol, d.chol(w)); }
  template <class Team>
  SAP_HD int* envelope(int w, Team& t) const {
    return placed(t, system_on_chip, &NewtonOnChip::first, d.chol_first(w));
  }
  template <class Team>
  SAP_HD double* rows_vc(int w, Team& t) const { return placed(t, rows_on_chip, &NewtonOnChip::vc, s.vc(w)); }
  template <class Team>
  SAP_HD double* rows_dvc(int w, Team& t) const { return placed(t, rows_on_chip, &NewtonOnChip::dvc, s.dvc(w)); }
  template <class Team>
  SAP_HD double* rows_G(int w, Team& t) const { return placed(t, rows_on_chip, &NewtonOnChip::G, s.G(w)); }
  SAP_HDI bool linear_f32() const { return p.config.contact_linear_solve_precision == Precision::F32; }

  // vc = J x for every row (x = v or dv), into out (nrow).
  template <class Team>
  SAP_HD void jacobian_product(int w, Team& team, const double* x, double* out) const {
    const int nc = s.con_count(w)[0], nl = s.lim_count(w)[0], npd = s.size.npd;
    const int lim0 = s.size.limit_row(0), pd0 = s.size.pd_row(0);
    for (int c = team.rank(); c < nc; c += team.size()) {
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
    for (int r = team.rank(); r < nl; r += team.size())
      out[lim0 + r] = s.lim_param(w)[kNumLimitParams * r + kLimSign] * x[s.lim_dof(w)[r]];
    for (int r = team.rank(); r < npd; r += team.size()) out[pd0 + r] = x[s.pd_dof(w)[r]];
    // Holonomic rows (tendon limits, equalities): sparse Jacobian rows.
    const int nh = s.hol_count(w)[0], hol0 = s.size.hol_row(0);
    for (int r = team.rank(); r < nh; r += team.size()) {
      const int nj = s.hol_jac_n(w)[r];
      const int* dof = s.hol_jac_dof(w) + s.size.nhjac * r;
      const double* val = s.hol_jac_val(w) + s.size.nhjac * r;
      So a = So(0);
      for (int k = 0; k < nj; ++k) a += So(val[k]) * So(x[dof[k]]);
      out[hol0 + r] = double(a);
    }
    team.sync();
  }

  // Evaluates every constraint at vc + alpha dvc. Writes gamma and G when `store`; returns the
  // team-reduced sums of l_i, dvc^T gamma_i and (when want_hessian) dvc^T G_i dvc.
  template <class Team>
  SAP_HD RowSums<So> evaluate_rows(int w, Team& team, So alpha, bool store, bool want_hessian) const {
    const int nc = s.con_count(w)[0], nl = s.lim_count(w)[0], npd = s.size.npd;
    const int lim0 = s.size.limit_row(0), pd0 = s.size.pd_row(0);
    const double* vc = rows_vc(w, team);
    const double* dvc = rows_dvc(w, team);
    double* G_rows = rows_G(w, team);
    RowSums<So> sum{So(0), So(0), So(0)};
    for (int c = team.rank(); c < nc; c += team.size()) {
      So x[3], dx[3], gamma[3], G[6] = {So(0), So(0), So(0), So(0), So(0), So(0)}, cost;
      for (int k = 0; k < 3; ++k) {
        dx[k] = alpha != So(0) || want_hessian ? So(dvc[3 * c + k]) : So(0);
        x[k] = So(vc[3 * c + k]) + alpha * dx[k];
      }
      evaluate_contact(w, c, x, gamma, &cost, G, want_hessian || store);
      sum.cost += cost;
      sum.dvc_gamma += dx[0] * gamma[0] + dx[1] * gamma[1] + dx[2] * gamma[2];
      if (want_hessian) {
        const So g0 = G[0] * dx[0] + G[1] * dx[1] + G[2] * dx[2];
        const So g1 = G[1] * dx[0] + G[3] * dx[1] + G[4] * dx[2];
        const So g2 = G[2] * dx[0] + G[4] * dx[1] + G[5] * dx[2];
        sum.dvc_G_dvc += dx[0] * g0 + dx[1] * g1 + dx[2] * g2;
      }
      if (store) {
        for (int k = 0; k < 3; ++k) s.gamma(w)[3 * c + k] = double(gamma[k]);
        for (int k = 0; k < 6; ++k) G_rows[6 * c + k] = double(G[k]);
      }
    }
    for (int r = team.rank(); r < nl; r += team.size()) {
      const double* lp = s.lim_param(w) + kNumLimitParams * r;
      const So dx = alpha != So(0) || want_hessian ? So(dvc[lim0 + r]) : So(0);  // as contact rows: dvc may be stale
      const So x = So(vc[lim0 + r]) + alpha * dx;
      So gamma, G;
      sum.cost += limit_row<So>(So(lp[kLimR]), So(lp[kLimVhat]), x, &gamma, &G);
      sum.dvc_gamma += dx * gamma;
      sum.dvc_G_dvc += dx * G * dx;
      if (store) {
        s.gamma(w)[lim0 + r] = double(gamma);
        G_rows[s.size.limit_G(r)] = double(G);
      }
    }
    for (int r = team.rank(); r < npd; r += team.size()) {
      const double* pp = s.pd_param(w) + kNumPdParams * r;
      const PdParams<So> pd{So(pp[kPdKp]),      So(pp[kPdKd]),          So(pp[kPdQ0]),       So(pp[kPdQTarget]),
                            So(pp[kPdVTarget]), So(pp[kPdFeedForward]), So(pp[kPdEffortLo]), So(pp[kPdEffortHi])};
      const So dx = alpha != So(0) || want_hessian ? So(dvc[pd0 + r]) : So(0);
      const So x = So(vc[pd0 + r]) + alpha * dx;
      So gamma, G;
      sum.cost += pd_row<So>(pd, So(p.h), x, &gamma, &G);
      sum.dvc_gamma += dx * gamma;
      sum.dvc_G_dvc += dx * G * dx;
      if (store) {
        s.gamma(w)[pd0 + r] = double(gamma);
        G_rows[s.size.pd_G(r)] = double(G);
      }
    }
    const int nh = s.hol_count(w)[0], hol0 = s.size.hol_row(0);
    for (int r = team.rank(); r < nh; r += team.size()) {
      const double* hp = s.hol_param(w) + kNumHolonomicParams * r;
      const So dx = alpha != So(0) || want_hessian ? So(dvc[hol0 + r]) : So(0);
      const So x = So(vc[hol0 + r]) + alpha * dx;
      So gamma, G;
      if (hp[kHolKind] == kHolKindPd) {  // servo on a tendon: the PD row on vc = J_t v
        const double* pp = hp + kHolPd;
        const PdParams<So> pd{So(pp[kPdKp]),      So(pp[kPdKd]),          So(pp[kPdQ0]),       So(pp[kPdQTarget]),
                              So(pp[kPdVTarget]), So(pp[kPdFeedForward]), So(pp[kPdEffortLo]), So(pp[kPdEffortHi])};
        sum.cost += pd_row<So>(pd, So(p.h), x, &gamma, &G);
      } else {
        sum.cost += holonomic_row<So>(So(hp[kHolR]), So(hp[kHolVhat]), So(hp[kHolLo]), So(hp[kHolHi]), x, &gamma, &G);
      }
      sum.dvc_gamma += dx * gamma;
      sum.dvc_G_dvc += dx * G * dx;
      if (store) {
        s.gamma(w)[hol0 + r] = double(gamma);
        G_rows[s.size.hol_G(r)] = double(G);
      }
    }
    sum.cost = team.reduce_sum(sum.cost);
    sum.dvc_gamma = team.reduce_sum(sum.dvc_gamma);
    if (want_hessian) sum.dvc_G_dvc = team.reduce_sum(sum.dvc_G_dvc);
    return sum;
  }

  // One contact's cost, impulse and Hessian at vc = x, in the model of contact_approximation.
  SAP_HD void evaluate_contact(int w, int c, const So* x, So* gamma, So* cost, So* G, bool want_hessian) const {
    const double* prm = s.con_param(w) + s.size.ncp * c;
    const ContactApproximation model = p.config.contact_approximation;
    if (model == ContactApproximation::Sap) {
      const FrictionConeParams<So> cp{So(prm[kConRt]), So(prm[kConRn]), So(prm[kConVhatN]), So(prm[kConMu])};
      friction_cone<So>(cp, x, gamma, cost, G, want_hessian);
    } else {
      const HuntCrossleyParams<So> hp{So(prm[kConMu]),  So(prm[kConHcStiffness]), So(prm[kConHcDissipation]),
                                      So(prm[kConHcFe0]), So(prm[kConHcN0]),     So(prm[kConHcEpsSoft])};
      hunt_crossley<So>(hp, So(p.h), model == ContactApproximation::Lagged, x, gamma, cost, G, want_hessian);
    }
  }

  // out = A x (rows in parallel).
  template <class Team>
  SAP_HD void mul_A(int w, Team& team, const double* x, double* out) const {
    const int nv = m.nv, ld = m.nv_pad;
    auto rows = [&](const auto* A) {  // A's storage type outside the loops (fp32: DataLayout::A_fp32)
      for (int i = team.rank(); i < nv; i += team.size()) {
        So acc = So(0);
        for (int j = 0; j < nv; ++j) acc += So(A[i * ld + j]) * So(x[j]);
        out[i] = double(acc);
      }
    };
    if (d.A_f32) rows(d.A32(w));
    else rows(d.A(w));
    team.sync();
  }

  // J^T gamma. One lane (the CPU) scatters the rows in row order (contacts, limits, PD,
  // holonomic). A team takes one lane per dof (column of J): lane i gathers the rows that touch
  // dof i in the same row order and sums them in a register with the same roundings, so the
  // result is bitwise that of one lane, with no serial read-modify-write chain through memory
  // and no sync but the closing one. A contact's (holonomic row's) entries have decreasing dofs
  // (kernels/contact_rows.hpp, kernels/holonomic_rows.hpp), so the search for dof i stops at the first smaller one.
  template <class Team>
  SAP_HD void jacobian_transpose_gamma(int w, Team& team) const {
    double* jtg = s.jtg(w);
    const int nc = s.con_count(w)[0], nl = s.lim_count(w)[0], npd = s.size.npd, nh = s.hol_count(w)[0];
    const int lim0 = s.size.limit_row(0), pd0 = s.size.pd_row(0), hol0 = s.size.hol_row(0);
    const double* gamma = s.gamma(w);
    if (team.size() == 1) {
      for (int i = 0; i < m.nv; ++i) jtg[i] = 0;
      for (int c = 0; c < nc; ++c) {
        const int nj = s.con_jac_n(w)[c];
        const JacDof* dof = s.contact_dofs(w, c);
        s.with_contact_jac(w, c, [&](const auto* val) {
          for (int k = 0; k < nj; ++k)
            jtg[dof[k]] = double(So(jtg[dof[k]]) + So(val[3 * k]) * So(gamma[3 * c]) +
                                 So(val[3 * k + 1]) * So(gamma[3 * c + 1]) + So(val[3 * k + 2]) * So(gamma[3 * c + 2]));
        });
      }
      for (int r = 0; r < nl; ++r) {
        const int dof = s.lim_dof(w)[r];
        jtg[dof] = double(So(jtg[dof]) + So(s.lim_param(w)[kNumLimitParams * r + kLimSign]) * So(gamma[lim0 + r]));
      }
      for (int r = 0; r < npd; ++r) {
        const int dof = s.pd_dof(w)[r];
        jtg[dof] = double(So(jtg[dof]) + So(gamma[pd0 + r]));
      }
      for (int r = 0; r < nh; ++r) {
        const int nj = s.hol_jac_n(w)[r];
        const int* dof = s.hol_jac_dof(w) + s.size.nhjac * r;
        const double* val = s.hol_jac_val(w) + s.size.nhjac * r;
        for (int k = 0; k < nj; ++k) jtg[dof[k]] = double(So(jtg[dof[k]]) + So(val[k]) * So(gamma[hol0 + r]));
      }
      return;
    }
    for (int i = team.rank(); i < m.nv; i += team.size()) {
      double acc = 0;
      for (int c = 0; c < nc; ++c) {
        const int nj = s.con_jac_n(w)[c];
        const JacDof* dof = s.contact_dofs(w, c);
        const JacValues val = s.contact_jac(w, c);
        for (int k = 0; k < nj && dof[k] >= i; ++k)
          if (dof[k] == i)
            acc = double(So(acc) + So(val[3 * k]) * So(gamma[3 * c]) + So(val[3 * k + 1]) * So(gamma[3 * c + 1]) +
                         So(val[3 * k + 2]) * So(gamma[3 * c + 2]));
      }
      for (int r = 0; r < nl; ++r)
        if (s.lim_dof(w)[r] == i)
          acc = double(So(acc) + So(s.lim_param(w)[kNumLimitParams * r + kLimSign]) * So(gamma[lim0 + r]));
      for (int r = 0; r < npd; ++r)
        if (s.pd_dof(w)[r] == i) acc = double(So(acc) + So(gamma[pd0 + r]));
      for (int r = 0; r < nh; ++r) {
        const int nj = s.hol_jac_n(w)[r];
        const int* dof = s.hol_jac_dof(w) + s.size.nhjac * r;
        const double* val = s.hol_jac_val(w) + s.size.nhjac * r;
        for (int k = 0; k < nj && dof[k] >= i; ++k)
          if (dof[k] == i) acc = double(So(acc) + So(val[k]) * So(gamma[hol0 + r]));
      }
      jtg[i] = acc;
    }
    team.sync();
  }

  // H = A + sum_i J_i^T G_i J_i (lower triangle), accumulated per entry in row order (contacts,
  // then the limit and PD diagonal, then holonomic rows). A contact's (holonomic row's) merged
  // Jacobian entries have distinct, decreasing dofs, so entry pair (a, b), b >= a, is the lower
  // entry H[dof_a][dof_b] and each entry gets at most one term per row.
  //   One lane (the CPU): contact by contact, pair by pair.
  //   A team: lane = row of H (dof i, rows i = rank, rank + size, ...): the lane finds dof i in
  //   each contact (entry a) and adds r_a J_b to H[i][dof_b] for b >= a. Each entry gets the same
  //   terms in the same order as one lane (bitwise the same H), a row is written only by its
  //   lane, and there is no sync between contacts, only the closing one.
  template <class Team>
  SAP_HD void assemble_hessian(int w, Team& team) const {
    const int nv = m.nv, ld = m.nv_pad;
    const int nc = s.con_count(w)[0], nl = s.lim_count(w)[0], npd = s.size.npd, nh = s.hol_count(w)[0];
    double* H = hessian(w, team);
    const double* G_rows = rows_G(w, team);
    // J_a^T G J_b for the entries a <= b of one contact (r = G J_a, then r . J_b).
    auto add_contact_row = [&](const double* G, const JacDof* dof, const auto* val, int a, int nj) {
      const So ja0 = So(val[3 * a]), ja1 = So(val[3 * a + 1]), ja2 = So(val[3 * a + 2]);
      const So r0 = ja0 * So(G[0]) + ja1 * So(G[1]) + ja2 * So(G[2]);
      const So r1 = ja0 * So(G[1]) + ja1 * So(G[3]) + ja2 * So(G[4]);
      const So r2 = ja0 * So(G[2]) + ja1 * So(G[4]) + ja2 * So(G[5]);
      double* row = H + dof[a] * ld;
      for (int b = a; b < nj; ++b)
        row[dof[b]] = double(So(row[dof[b]]) + r0 * So(val[3 * b]) + r1 * So(val[3 * b + 1]) + r2 * So(val[3 * b + 2]));
    };
    auto add_holonomic_row = [&](So G, const int* dof, const double* val, int a, int nj) {
      const So ga = G * So(val[a]);
      double* row = H + dof[a] * ld;
      for (int b = a; b < nj; ++b) row[dof[b]] = double(So(row[dof[b]]) + ga * So(val[b]));
    };
    auto add_diagonal = [&](int i) {
      for (int r = 0; r < nl; ++r)
        if (s.lim_dof(w)[r] == i) H[i * ld + i] += G_rows[s.size.limit_G(r)];
      for (int r = 0; r < npd; ++r)
        if (s.pd_dof(w)[r] == i) H[i * ld + i] += G_rows[s.size.pd_G(r)];
    };
    // H's lower triangle from A, rows i0, i0 + stride, ...
    auto copy_A = [&](int i0, int stride) {
      d.with_A(w, [&](const auto* A) {
        for (int i = i0; i < ld; i += stride)
          for (int j = 0; j <= i; ++j) H[i * ld + j] = A[i * ld + j];
      });
    };
    if (team.size() == 1) {
      copy_A(0, 1);
      for (int c = 0; c < nc; ++c) {
        const double* G = G_rows + 6 * c;
        if (G[0] == 0 && G[3] == 0 && G[5] == 0) continue;  // no-contact region: no curvature
        const int nj = s.con_jac_n(w)[c];
        const JacDof* dof = s.contact_dofs(w, c);
        s.with_contact_jac(w, c, [&](const auto* val) {
          if (sizeof(*val) == sizeof(double) || !system_on_chip) {
            for (int a = 0; a < nj; ++a) add_contact_row(G, dof, val, a, nj);
            return;
          }
          double* jac = on_chip(team, on_chip_layout().jac);  // fp64 copy: one conversion per entry
          for (int k = 0; k < 3 * nj; ++k) jac[k] = double(val[k]);
          for (int a = 0; a < nj; ++a) add_contact_row(G, dof, static_cast<const double*>(jac), a, nj);
        });
      }
      for (int i = 0; i < nv; ++i) add_diagonal(i);
      for (int r = 0; r < nh; ++r) {
        const So G = So(G_rows[s.size.hol_G(r)]);
        if (G == So(0)) continue;
        const int nj = s.hol_jac_n(w)[r];
        for (int a = 0; a < nj; ++a)
          add_holonomic_row(G, s.hol_jac_dof(w) + s.size.nhjac * r, s.hol_jac_val(w) + s.size.nhjac * r, a, nj);
      }
      return;
    }
    copy_A(team.rank(), team.size());
    for (int i = team.rank(); i < nv; i += team.size()) {
      for (int c = 0; c < nc; ++c) {
        const double* G = G_rows + 6 * c;
        if (G[0] == 0 && G[3] == 0 && G[5] == 0) continue;
        const int nj = s.con_jac_n(w)[c];
        const JacDof* dof = s.contact_dofs(w, c);
        int a = 0;
        while (a < nj && dof[a] > i) ++a;
        if (a < nj && dof[a] == i) s.with_contact_jac(w, c, [&](const auto* val) { add_contact_row(G, dof, val, a, nj); });
      }
      add_diagonal(i);
      for (int r = 0; r < nh; ++r) {
        const So G = So(G_rows[s.size.hol_G(r)]);
        if (G == So(0)) continue;
        const int nj = s.hol_jac_n(w)[r];
        const int* dof = s.hol_jac_dof(w) + s.size.nhjac * r;
        for (int a = 0; a < nj && dof[a] >= i; ++a)
          if (dof[a] == i) add_holonomic_row(G, dof, s.hol_jac_val(w) + s.size.nhjac * r, a, nj);
      }
    }
    team.sync();
  }

  // Loads the Newton system H dv = -g into the factor buffer, in the linear-solve precision Sl
  // (lower triangle of H, row-major with leading dimension nv_pad; the right-hand side after it).
  template <class Sl, class Team>
  SAP_HD void load_newton_system(int w, Team& team) const {
    const int nv = m.nv, ld = m.nv_pad;
    Sl* L = reinterpret_cast<Sl*>(factor(w, team));
    Sl* x = L + ld * ld;
    cholesky_load<Sl>(team, hessian(w, team), L, nv, ld);
    for (int i = team.rank(); i < nv; i += team.size()) x[i] = -Sl(s.grad(w)[i]);
    team.sync();
  }

  // dv = the solution left in the factor buffer's right-hand side.
  template <class Sl, class Team>
  SAP_HD void store_direction(int w, Team& team) const {
    const Sl* x = reinterpret_cast<const Sl*>(factor(w, team)) + m.nv_pad * m.nv_pad;
    for (int i = team.rank(); i < m.nv; i += team.size()) s.dv(w)[i] = double(x[i]);
    team.sync();
  }

  // The same two steps in the linear-solve precision of the parameters (split path).
  template <class Team>
  SAP_HD void load_newton_system_in_solve_precision(int w, Team& team) const {
    if (p.config.contact_linear_solve_precision == Precision::F32) load_newton_system<float>(w, team);
    else load_newton_system<double>(w, team);
  }
  template <class Team>
  SAP_HD void store_direction_in_solve_precision(int w, Team& team) const {
    if (p.config.contact_linear_solve_precision == Precision::F32) store_direction<float>(w, team);
    else store_direction<double>(w, team);
  }

  // dv = -H^-1 g in the linear-solve precision Sl by our envelope Cholesky. Returns false if
  // the factorisation fails.
  template <class Sl, class Team>
  SAP_HD bool newton_direction(int w, Team& team) const {
    const int nv = m.nv, ld = m.nv_pad;
    Sl* L = reinterpret_cast<Sl*>(factor(w, team));
    int* first = envelope(w, team);
    load_newton_system<Sl>(w, team);
    if (!cholesky_factor<Sl>(team, L, nv, ld, first)) return false;
    cholesky_solve<Sl>(team, L, L + ld * ld, nv, ld, first);
    store_direction<Sl>(w, team);
    return true;
  }

  // Team dot product of two nv vectors, optionally weighted by diag(A)^-1 (for D-norms).
  template <class Team>
  SAP_HD So dot_nv(int w, Team& team, const double* a, const double* b, bool scaled) const {
    So acc = So(0);
    for (int i = team.rank(); i < m.nv; i += team.size()) {
      const So t = So(a[i]) * So(b[i]);
      acc += scaled ? t / So(d.A_values(w)[i * m.nv_pad + i]) : t;
    }
    return team.reduce_sum(acc);
  }

  // The Newton loop, in phases that the fused kernel (operator()) runs back to back and the
  // split path (linear_solver = reference) runs as separate launches around a library solve:
  //   begin      warm start, or the trivial cases (rejected upstream, no constraint rows)
  //   head       cost, gradient and stopping tests at v; if it continues, H and the system
  //   [solve]    dv = -H^-1 g
  //   tail       line search along dv, v += alpha dv
  //   finish     statistics and status
  // NewtonIterate is the loop's state between phases (registers in the fused kernel, the
  // newton_real/newton_int slabs between launches).
  static constexpr int kIterating = kNewtonIterating, kNeedsDirection = kNewtonNeedsDirection, kDone = kNewtonDone;
  struct NewtonIterate {
    So cost = So(0), cost_prev = So(0), alpha = So(0), rows_cost = So(0);
    int k = 0, ls_total = 0, flags = 0, exit_reason = kExitOther, phase = kIterating;
  };

  template <class Team>
  SAP_HD void begin(int w, Team& team, NewtonIterate& it) const {
    const int nv = m.nv;
    double* v = s.v(w);
    const double* v_star = d.v_star(w);
    // Every lane reads the incoming status before any lane may write it (the barrier orders the
    // read against rank 0's write in finish(): found by the emulated executor under TSan).
    const int status_in = status[w];
    team.sync();
    it = NewtonIterate{};
    if (status_in & kStatusFailureMask) {  // rejected upstream: keep the previous velocity
      for (int i = team.rank(); i < nv; i += team.size()) v[i] = state_in.qvel(w)[i];
      it.phase = kDone;
      team.sync();
      return;
    }
    const int nrow_used = s.con_count(w)[0] + s.lim_count(w)[0] + s.size.npd + s.hol_count(w)[0];
    if (nrow_used == 0) {  // no constraint: the minimiser is v* itself
      for (int i = team.rank(); i < nv; i += team.size()) v[i] = v_star[i];
      if (team.rank() == 0) s.cost(w)[kCostResidualRatio] = s.cost(w)[kCostOptimality] = 0;  // one-lane: stores
      it.flags = kStatusConverged;
      it.phase = kDone;
      team.sync();
      return;
    }
    for (int i = team.rank(); i < nv; i += team.size()) v[i] = state_in.qvel(w)[i];
    team.sync();
    mul_A(w, team, v_star, s.Avstar(w));
  }

  // Top of iteration it.k. Returns true when a direction is needed (H assembled and, when
  // load_system, the system loaded for the fused solve's precision); else the loop is done.
  template <class Team>
  SAP_HD bool head(int w, Team& team, NewtonIterate& it) const {
    const int nv = m.nv;
    double* v = s.v(w);
    const double* v_star = d.v_star(w);
    double* u = s.dp(w);  // v - v*, reused as A dv after the direction is known
    // Cost, impulses and Hessians at v.
    jacobian_product(w, team, v, rows_vc(w, team));
    const RowSums<So> rows = evaluate_rows(w, team, So(0), true, false);
    for (int i = team.rank(); i < nv; i += team.size()) u[i] = v[i] - v_star[i];
    team.sync();
    // A (v - v*): a product at the first iterate; after that tail() has advanced it with the
    // step, A (v + alpha dv - v*) = A (v - v*) + alpha (A dv), from the A dv it already formed.
    if (it.k == 0) mul_A(w, team, u, s.Au(w));
    it.cost = S_half() * dot_nv(w, team, u, s.Au(w), false) + rows.cost;
    it.rows_cost = rows.cost;
    jacobian_transpose_gamma(w, team);
    for (int i = team.rank(); i < nv; i += team.size()) s.grad(w)[i] = double(So(s.Au(w)[i]) - So(s.jtg(w)[i]));
    team.sync();
    // Optimality in sqrt(J) units: r = |D g|, s = max(|D A v|, |D J^T gamma|).
    const So r = sqrt_(dot_nv(w, team, s.grad(w), s.grad(w), true));
    So av2 = So(0);
    for (int i = team.rank(); i < nv; i += team.size()) {
      const So av = So(s.Au(w)[i]) + So(s.Avstar(w)[i]);
      av2 += av * av / So(d.A_values(w)[i * m.nv_pad + i]);
    }
    av2 = team.reduce_sum(av2);
    const So jg2 = dot_nv(w, team, s.jtg(w), s.jtg(w), true);
    const So scale = sqrt_(max_(av2, jg2));
    const So threshold = So(p.config.abs_tol) + So(p.config.rel_tol) * scale;
    const So cost = it.cost, cost_prev = it.cost_prev;
    const bool cost_ok = it.k > 0 &&
                         abs_(cost_prev - cost) < So(p.config.cost_abs_tol) + So(p.config.cost_rel_tol) * S_half() *
                                                                                  (abs_(cost) + abs_(cost_prev)) &&
                         it.alpha > S_half();
    it.phase = kDone;
    if (!isfinite_(cost) || !isfinite_(r)) {
      it.flags |= kStatusNonFinite;
      return false;
    }
    if (team.rank() == 0) {  // one-lane: diagnostics stores
      s.cost(w)[kCostResidualRatio] = double(r / max_(threshold, So(1e-30)));
      s.cost(w)[kCostOptimality] = double(r);
      if (it.k < s.size.ntrace) s.cost_trace(w)[it.k] = double(cost);
    }
    if (r <= threshold || cost_ok) {
      it.flags |= kStatusConverged;
      it.exit_reason = r <= threshold ? kExitOptimality : kExitCostStall;
      return false;
    }
    if (it.k == p.config.max_iterations) {
      it.flags |= kStatusIterationLimit;
      return false;
    }
    assemble_hessian(w, team);
    it.phase = kNeedsDirection;
    return true;
  }

  // After the direction dv (direction_ok: the factorisation succeeded): line search and update.
  // Returns false when the loop is done.
  template <class Team>
  SAP_HD bool tail(int w, Team& team, NewtonIterate& it, bool direction_ok) const {
    const int nv = m.nv;
    double* v = s.v(w);
    double* u = s.dp(w);
    it.phase = kDone;
    if (!direction_ok) {
      it.flags |= kStatusFactorizationFailed;
      return false;
    }
    const So cost = it.cost;
    jacobian_product(w, team, s.dv(w), rows_dvc(w, team));
    const So d0 = dot_nv(w, team, s.grad(w), s.dv(w), false);  // l'(0)
    mul_A(w, team, s.dv(w), u);                                // u <- A dv
    const So a2 = dot_nv(w, team, s.dv(w), u, false);
    // b = dv^T A (v - v*) = dv . Au
    const So b = dot_nv(w, team, s.dv(w), s.Au(w), false);
    const So cost_A0 = cost - it.rows_cost;
    if (!(d0 < So(0)) || !(a2 > So(0)) || !isfinite_(a2)) {
      it.flags |= kStatusNotDescent;
      return false;
    }
    auto line = [&](So a, bool derivatives) {
      const RowSums<So> rs = evaluate_rows(w, team, a, false, derivatives);
      LineEval<So> e;
      e.cost = cost_A0 + a * b + S_half() * a * a * a2 + rs.cost;
      e.d1 = b + a * a2 - rs.dvc_gamma;
      e.d2 = a2 + rs.dvc_G_dvc;
      return e;
    };
    LineSearchResult<So> ls;
    if (p.config.line_search_variant == LineSearchVariant::ExactRoot)
      ls = line_search_exact<So>(line, cost, d0, p.config);
    else if (p.config.line_search_variant == LineSearchVariant::ArmijoDecay)
      ls = line_search_armijo<So>(line, cost, d0, p.config);
    else ls = line_search_monotone<So>(line, cost, p.config);
    it.ls_total += ls.iterations;
    if (!ls.ok) {
      it.flags |= kStatusLineSearchFailed;
      return false;
    }
    it.alpha = ls.alpha;
    for (int i = team.rank(); i < nv; i += team.size()) {
      v[i] = double(So(v[i]) + it.alpha * So(s.dv(w)[i]));
      s.Au(w)[i] = double(So(s.Au(w)[i]) + it.alpha * So(u[i]));  // u = A dv (above)
    }
    team.sync();
    it.cost_prev = cost;
    ++it.k;
    it.phase = kIterating;
    return true;
  }

  template <class Team>
  SAP_HD void finish(int w, Team& team, const NewtonIterate& it) const {
    if (team.rank() == 0) {  // one-lane: statistics stores
      s.stats(w)[kStatNewtonIterations] = it.k;
      s.stats(w)[kStatLineSearchIterations] = it.ls_total;
      s.stats(w)[kStatExitReason] = it.exit_reason;
      s.cost(w)[kCostFinal] = double(it.cost);
      status[w] |= it.flags;
    }
    team.sync();
  }

  // Loop state to and from global memory (split path). Each lane holds the same values.
  SAP_HD NewtonIterate load_iterate(int w) const {
    NewtonIterate it;
    const double* r = s.newton_real(w);
    const int* n = s.newton_int(w);
    it.cost = So(r[kIterCost]);
    it.cost_prev = So(r[kIterCostPrev]);
    it.alpha = So(r[kIterAlpha]);
    it.rows_cost = So(r[kIterRowsCost]);
    it.k = n[kIterK];
    it.ls_total = n[kIterLineSearchTotal];
    it.flags = n[kIterFlags];
    it.exit_reason = n[kIterExitReason];
    it.phase = n[kIterPhase];
    return it;
  }
  template <class Team>
  SAP_HD void store_iterate(int w, Team& team, const NewtonIterate& it) const {
    team.sync();  // every lane has read the previous state (load_iterate) before it changes
    if (team.rank() == 0) {  // one-lane: iterate stores (split path)
      double* r = s.newton_real(w);
      int* n = s.newton_int(w);
      r[kIterCost] = double(it.cost);
      r[kIterCostPrev] = double(it.cost_prev);
      r[kIterAlpha] = double(it.alpha);
      r[kIterRowsCost] = double(it.rows_cost);
      n[kIterK] = it.k;
      n[kIterLineSearchTotal] = it.ls_total;
      n[kIterFlags] = it.flags;
      n[kIterExitReason] = it.exit_reason;
      n[kIterPhase] = it.phase;
    }
    team.sync();
  }

  // The split tail's loop state. tail() reads only it.cost and it.rows_cost, and changes k and
  // ls_total (by increments), flags (by OR), phase, and alpha and cost_prev when the loop goes
  // on; so the tail launch starts from a fresh iterate holding the two stored costs and adds its
  // changes to the stored state afterwards. The rest of the state is then not held in registers across the
  // line search (NewtonTailKernel<double> fits 128 registers without spills: docs/gpu.md).
  SAP_HD NewtonIterate tail_iterate(int w) const {
    NewtonIterate change;
    change.cost = So(s.newton_real(w)[kIterCost]);
    change.rows_cost = So(s.newton_real(w)[kIterRowsCost]);
    return change;
  }
  template <class Team>
  SAP_HD void store_tail_changes(int w, Team& team, const NewtonIterate& change) const {
    team.sync();  // every lane has read the stored state before it changes
    if (team.rank() == 0) {  // one-lane: iterate stores (split path)
      double* r = s.newton_real(w);
      int* n = s.newton_int(w);
      if (change.phase == kIterating) {
        r[kIterCostPrev] = double(change.cost_prev);
        r[kIterAlpha] = double(change.alpha);
      }
      n[kIterK] += change.k;
      n[kIterLineSearchTotal] += change.ls_total;
      n[kIterFlags] |= change.flags;
      n[kIterPhase] = change.phase;
    }
    team.sync();
  }

  // The fused Newton solve of one world: every phase in one launch, our Cholesky in between.
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    NewtonIterate it;
    begin(w, team, it);
    while (it.phase != kDone && head(w, team, it)) {
      const bool ok = p.config.contact_linear_solve_precision == Precision::F32 ? newton_direction<float>(w, team)
                                                                                : newton_direction<double>(w, team);
      if (!tail(w, team, it, ok)) break;
    }
    finish(w, team, it);
  }

  SAP_HDI static So S_half() { return So(0.5); }
};

// The split path: one launch per phase over all worlds; the loop state lives in newton_real /
// newton_int between launches. Worlds already done skip every phase.
template <class So>
using SplitSolveKernel = SapSolveKernel<So, true>;

template <class So>
struct NewtonBeginKernel {
  SplitSolveKernel<So> k;
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    typename SplitSolveKernel<So>::NewtonIterate it;
    k.begin(w, team, it);
    k.store_iterate(w, team, it);
  }
};

// Head of the current iteration; for the worlds that need a direction, loads the system in
// the linear-solve precision and leaves newton_int phase = kNeedsDirection.
template <class So>
struct NewtonHeadKernel {
  SplitSolveKernel<So> k;
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    typename SplitSolveKernel<So>::NewtonIterate it = k.load_iterate(w);
    if (it.phase != SplitSolveKernel<So>::kIterating) return;
    if (k.head(w, team, it)) k.load_newton_system_in_solve_precision(w, team);
    k.store_iterate(w, team, it);
  }
};

// Tail for the worlds whose system was solved: solve_ok[w] from the library factorisation.
// The line search's evaluations hold the most registers of the split path: on CUDA this kernel
// is compiled in a translation unit of its own under a register cap (cuda/newton_tail_cuda.cu).
template <class So>
struct NewtonTailKernel {
  SplitSolveKernel<So> k;
  const int* solve_ok;  // per world
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    if (k.s.newton_int(w)[kIterPhase] != SplitSolveKernel<So>::kNeedsDirection) return;
    typename SplitSolveKernel<So>::NewtonIterate change = k.tail_iterate(w);
    const bool ok = solve_ok[w] != 0;
    if (ok) k.store_direction_in_solve_precision(w, team);
    k.tail(w, team, change, ok);
    k.store_tail_changes(w, team, change);
  }
};

template <class So>
struct NewtonFinishKernel {
  SplitSolveKernel<So> k;
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    k.finish(w, team, k.load_iterate(w));
  }
};

}  // namespace sap
