// Stage 3: the SAP Newton solve of one world (docs/sap-math.md §2 and §6; stopping tests §6.2):
//   minimise l(v) = 1/2 (v - v*)^T A (v - v*) + sum_i l_i(J_i v)
//   gradient  g = A (v - v*) - J^T gamma,   Hessian  H = A + sum_i J_i^T G_i J_i
//   stop when |D g| <= eps_a + eps_r max(|D A v|, |D J^T gamma|), D = diag(A)^-1/2, or on the
//   cost test |dl| < eps_ca + eps_cr (|l| + |l_prev|)/2 with alpha > 1/2.
// Warm start at v_n. One team per world; worlds stop independently (per-world done state).
// The split path (NewtonBeginKernel ... NewtonFinishKernel below) runs the same phases as
// separate launches so that a library factorisation (Eigen, cuSOLVER) can solve in between.
// The constraint rows are one bundle (kernels/constraint_bundle.hpp): every pass over them (J x,
// the row evaluations, J^T gamma, the J^T G J terms of H) visits the four row kinds in the
// solve's fixed order.
#pragma once

#include "kernels/cholesky.hpp"
#include "kernels/cholesky_worlds.hpp"
#include "kernels/constraint_bundle.hpp"
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
// kAngular: the model has contact pairs of condim 4 or 6 (SolveSizes::nacon > 0), and the
// bundle has their angular rows (ConstraintBundle); the launches pick the instantiation.
template <class So, bool kAllGlobal = false, bool kAngular = false>
struct SapSolveKernel {
  // in
  ModelView m;
  ConstStateView state_in;  // qvel: the warm start v_n
  StepParams p;
  ConstDataView d;          // A, v_star of stage 1
  ConstSolveRowsView rows;  // the constraint rows of stage 2
  // out
  NewtonView s;  // v, gamma, G, vc, dvc, stats, cost, cost_trace and the Newton scratch
  int* status;  // in: failure bits of earlier stages; out: |= this stage's WorldStatusBits
  // scratch: the factor of H and its envelope (Data's chol, chol_first), unless on chip
  Slab<double> chol;
  Slab<int> chol_first;
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
  SAP_HD double* factor(int w, Team& t) const { return placed(t, system_on_chip, &NewtonOnChip::chol, chol(w)); }
  template <class Team>
  SAP_HD int* envelope(int w, Team& t) const {
    return placed(t, system_on_chip, &NewtonOnChip::first, chol_first(w));
  }
  template <class Team>
  SAP_HD double* rows_vc(int w, Team& t) const { return placed(t, rows_on_chip, &NewtonOnChip::vc, s.vc(w)); }
  template <class Team>
  SAP_HD double* rows_dvc(int w, Team& t) const { return placed(t, rows_on_chip, &NewtonOnChip::dvc, s.dvc(w)); }
  template <class Team>
  SAP_HD double* rows_G(int w, Team& t) const { return placed(t, rows_on_chip, &NewtonOnChip::G, s.G(w)); }
  SAP_HDI bool linear_f32() const { return p.config.contact_linear_solve_precision == Precision::F32; }

  // vc = J x for every row (x = v or dv), into out (nrow): rows strided over the lanes, kind by kind.
  template <class Team>
  SAP_HD void jacobian_product(int w, Team& team, const double* x, double* out) const {
    ConstraintBundle<So, kAngular>::of(rows, s.gamma(w), p, w).visit([&](const auto& kind) {
      const int n = kind.count();
      for (int r = team.rank(); r < n; r += team.size()) kind.multiply(r, x, out);
    });
    team.sync();
  }

  // vc <- vc + alpha dvc on every row in the solve (each kind's advance: the point its
  // evaluate(alpha) read).
  template <class Team>
  SAP_HD void advance_rows(int w, Team& team, So alpha) const {
    double* vc = rows_vc(w, team);
    const double* dvc = rows_dvc(w, team);
    ConstraintBundle<So, kAngular>::of(rows, s.gamma(w), p, w).visit([&](const auto& kind) {
      const int n = kind.count();
      for (int r = team.rank(); r < n; r += team.size()) kind.advance(r, alpha, vc, dvc);
    });
    team.sync();
  }

  // Evaluates every constraint at vc + alpha dvc. Writes gamma and G when `store`; returns the
  // team-reduced sums of l_i and, when `store` or want_hessian, dvc^T gamma_i (else the
  // Hunt-Crossley contacts' cost alone is formed) and (when want_hessian) dvc^T G_i dvc.
  template <class Team>
  SAP_HD RowSums<So> evaluate_rows(int w, Team& team, So alpha, bool store, bool want_hessian) const {
    const double* vc = rows_vc(w, team);
    const double* dvc = rows_dvc(w, team);
    double* G_rows = rows_G(w, team);
    RowSums<So> sum{So(0), So(0), So(0)};
    ConstraintBundle<So, kAngular>::of(rows, s.gamma(w), p, w).visit([&](const auto& kind) {
      const int n = kind.count();
      for (int r = team.rank(); r < n; r += team.size())
        kind.evaluate(r, alpha, store, want_hessian, vc, dvc, G_rows, sum);
    });
    sum.cost = team.reduce_sum(sum.cost);
    sum.dvc_gamma = team.reduce_sum(sum.dvc_gamma);
    if (want_hessian) sum.dvc_G_dvc = team.reduce_sum(sum.dvc_G_dvc);
    return sum;
  }


  // out = A x (rows in parallel). Where A has the tree's sparsity (m.nA_colind > 0,
  // Model::compute_A_sparsity), each row sums its structural non-zeros only, in the same
  // ascending column order: the terms left out are exact zeros (+-0 x finite), so the sum has
  // the same bits as the dense one for a finite x (37-53 % fewer terms on the humanoid, the G1
  // and the Panda). One loop for both forms (a column list or all columns): two loops cost the
  // Newton kernels 1-2 GPU registers.
  //   One lane (the CPU): each row's terms in four interleaved partial sums (interleaved_sum,
  // kernels/cholesky.hpp): a row is one serial chain of additions otherwise, and
  // the product waited on it (~4 % of a humanoid's fall). Another rounding than a team's
  // single sum per lane, as the teams' reductions already are (tests/test_emulated_scenes.cpp).
  template <class Team>
  SAP_HD void mul_A(int w, Team& team, const double* x, double* out) const {
    const int nv = m.nv, ld = m.nv_pad;
    auto rows_of = [&](const auto* A) {  // A's storage type outside the loops (fp32: DataLayout::A_fp32)
      const int* colind = m.nA_colind > 0 ? m.A_colind : nullptr;  // null: dense rows
      if constexpr (one_lane_team<Team>()) {
        for (int i = 0; i < nv; ++i) {
          const int k0 = colind ? m.A_rowadr[i] : 0, k1 = colind ? m.A_rowadr[i + 1] : nv;
          const auto* Ai = A + i * ld;
          out[i] = double(interleaved_sum<So>(k0, k1, [&](int k) {
            const int j = colind ? colind[k] : k;
            return So(Ai[j]) * So(x[j]);
          }));
        }
        return;
      }
      for (int i = team.rank(); i < nv; i += team.size()) {
        const int k0 = colind ? m.A_rowadr[i] : 0, k1 = colind ? m.A_rowadr[i + 1] : nv;
        const auto* Ai = A + i * ld;
        So acc = So(0);
        for (int k = k0; k < k1; ++k) {
          const int j = colind ? colind[k] : k;
          acc += So(Ai[j]) * So(x[j]);
        }
        out[i] = double(acc);
      }
    };
    if (d.A_f32) rows_of(d.A32(w));
    else rows_of(d.A(w));
    team.sync();
  }

  // J^T gamma. One lane (the CPU) scatters the rows in row order (contacts, limits, PD,
  // holonomic). A team takes one lane per dof (column of J): lane i gathers the rows that touch
  // dof i in the same row order and sums them in a register with the same roundings, so the
  // result is bitwise that of one lane, with no serial read-modify-write chain through memory
  // and no sync but the closing one.
  template <class Team>
  SAP_HD void jacobian_transpose_gamma(int w, Team& team) const {
    double* jtg = s.jtg(w);
    const double* gamma = s.gamma(w);
    const ConstraintBundle<So, kAngular> bundle = ConstraintBundle<So, kAngular>::of(rows, s.gamma(w), p, w);
    if (team.size() == 1) {
      for (int i = 0; i < m.nv; ++i) jtg[i] = 0;
      bundle.visit([&](const auto& kind) {
        const int n = kind.count();
        for (int r = 0; r < n; ++r) kind.scatter_transpose(r, gamma, jtg);
      });
      return;
    }
    for (int i = team.rank(); i < m.nv; i += team.size()) {
      double acc = 0;
      bundle.visit([&](const auto& kind) {
        const int n = kind.count();
        for (int r = 0; r < n; ++r) kind.gather_transpose(i, r, gamma, acc);
      });
      jtg[i] = acc;
    }
    team.sync();
  }

  // H = A + sum_i J_i^T G_i J_i (lower triangle), accumulated per entry in row order (contacts,
  // then the limit and PD diagonal, then holonomic rows). A contact's (holonomic row's) merged
  // Jacobian entries have distinct, decreasing dofs, so entry pair (a, b), b >= a, is the lower
  // entry H[dof_a][dof_b] and each entry gets at most one term per row.
  //   One lane (the CPU): row by row in row order.
  //   A team: lane = row of H (dof i, rows i = rank, rank + size, ...): the lane finds dof i in
  //   each row (entry a) and adds r_a J_b to H[i][dof_b] for b >= a. Each entry gets the same
  //   terms in the same order as one lane (bitwise the same H), a row is written only by its
  //   lane, and there is no sync between rows, only the closing one.
  template <class Team>
  SAP_HD void assemble_hessian(int w, Team& team) const {
    const int nv = m.nv, ld = m.nv_pad;
    double* H = hessian(w, team);
    const double* G_rows = rows_G(w, team);
    const ConstraintBundle<So, kAngular> bundle = ConstraintBundle<So, kAngular>::of(rows, s.gamma(w), p, w);
    // H's lower triangle from A, rows i0, i0 + stride, ...
    auto copy_A = [&](int i0, int stride) {
      d.with_A(w, [&](const auto* A) {
        for (int i = i0; i < ld; i += stride)
          for (int j = 0; j <= i; ++j) H[i * ld + j] = A[i * ld + j];
      });
    };
    if (team.size() == 1) {
      copy_A(0, 1);
      // An fp64 copy of one contact's fp32 Jacobian (one conversion per entry), when on chip.
      auto jac_copy = [&]() -> double* { return system_on_chip ? on_chip(team, on_chip_layout().jac) : nullptr; };
      bundle.visit([&](const auto& kind) {
        const int n = kind.count();
        for (int r = 0; r < n; ++r) kind.add_hessian(r, H, ld, G_rows, jac_copy);
      });
      return;
    }
    copy_A(team.rank(), team.size());
    for (int i = team.rank(); i < nv; i += team.size())
      bundle.visit([&](const auto& kind) {
        const int n = kind.count();
        for (int r = 0; r < n; ++r) kind.add_hessian_row(i, r, H, ld, G_rows);
      });
    team.sync();
  }


  // Loads the Newton system H dv = -g into the factor buffer, in the linear-solve precision Sl
  // and reversed dof order (cholesky_load_reversed: the envelope of a tree has no fill): lower
  // triangle of P H P^T, row-major with leading dimension nv_pad; P (-g) after it.
  template <class Sl, class Team>
  SAP_HD void load_newton_system(int w, Team& team) const {
    const int nv = m.nv, ld = m.nv_pad;
    Sl* L = reinterpret_cast<Sl*>(factor(w, team));
    Sl* x = L + ld * ld;
    cholesky_load_reversed<Sl>(team, hessian(w, team), L, nv, ld);
    for (int i = team.rank(); i < nv; i += team.size()) x[nv - 1 - i] = -Sl(s.grad(w)[i]);
    team.sync();
  }

  // dv = P^T (the solution left in the factor buffer's right-hand side).
  template <class Sl, class Team>
  SAP_HD void store_direction(int w, Team& team) const {
    const Sl* x = reinterpret_cast<const Sl*>(factor(w, team)) + m.nv_pad * m.nv_pad;
    for (int i = team.rank(); i < m.nv; i += team.size()) s.dv(w)[i] = double(x[m.nv - 1 - i]);
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

  // Team sum of term(i) over the dofs. One lane (the CPU): four interleaved partial sums
  // (interleaved_sum) rather than one serial chain of nv additions; a team: a sum per lane,
  // then the team's reduction.
  template <class Team, class Term>
  SAP_HD So sum_nv(Team& team, Term&& term) const {
    if constexpr (one_lane_team<Team>()) {
      return interleaved_sum<So>(0, m.nv, term);
    } else {
      So acc = So(0);
      for (int i = team.rank(); i < m.nv; i += team.size()) acc += term(i);
      return team.reduce_sum(acc);
    }
  }

  // N team sums over the dofs in one pass: terms(i, t) writes dof i's term of each into t[0 ..
  // N - 1] (and may store per-dof values: each lane its own dofs). Each sum is sum_nv's, in its
  // order (one lane: interleaved_sums; a team: a sum per lane, then the team's reduction, which
  // syncs), so the same bits as N passes.
  template <int N, class Team, class Terms>
  SAP_HD void sums_nv(Team& team, So* out, Terms&& terms) const {
    if constexpr (one_lane_team<Team>()) {
      interleaved_sums<So, N>(0, m.nv, terms, out);
    } else {
      So acc[N], t[N];
      for (int n = 0; n < N; ++n) acc[n] = So(0);
      for (int i = team.rank(); i < m.nv; i += team.size()) {
        terms(i, t);
        for (int n = 0; n < N; ++n) acc[n] += t[n];
      }
      for (int n = 0; n < N; ++n) out[n] = team.reduce_sum(acc[n]);
    }
  }

  // D^2 = diag(A)^-1, the D-norms' weights, times t. One lane (the CPU): the weights 1 / A_ii
  // formed once per solve in begin() (A_inv_diag), not divided by at every iteration; a team
  // divides (the array's pointer costs the fused GPU kernels up to 8 registers).
  template <class Team>
  SAP_HDI So times_inv_diag(int w, int i, So t) const {
    if constexpr (one_lane_team<Team>()) return t * So(s.A_inv_diag(w)[i]);
    else return t / So(d.A_values(w)[i * m.nv_pad + i]);
  }

  // Team dot product of two nv vectors, optionally weighted by diag(A)^-1 (for D-norms).
  template <class Team>
  SAP_HD So dot_nv(int w, Team& team, const double* a, const double* b, bool scaled) const {
    return sum_nv(team, [&](int i) {
      const So t = So(a[i]) * So(b[i]);
      return scaled ? times_inv_diag<Team>(w, i, t) : t;
    });
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
  // rows_at_v: the line search left vc (advanced to the new iterate), gamma and G there, and
  // rows_cost its rows' cost (tail(), under monotone_decay), so head() need not evaluate them.
  // Only the fused solve on one lane (the CPU) keeps them: on a GPU team the stores inside the
  // line search's loop cost the fused kernel 8 to 85 registers (spills with angular rows), and
  // the split path reloads its iterate between launches without the flag.
  template <class Team>
  SAP_HDI static constexpr bool keeps_line_search_rows() {
    return one_lane_team<Team>() && !kAllGlobal;
  }
  struct NewtonIterate {
    So cost = So(0), cost_prev = So(0), alpha = So(0), rows_cost = So(0);
    int k = 0, ls_total = 0, flags = 0, exit_reason = kExitOther, phase = kIterating;
    bool rows_at_v = false;
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
    const int nrow_used = ConstraintBundle<So, kAngular>::of(rows, s.gamma(w), p, w).rows_used();
    if (nrow_used == 0) {  // no constraint: the minimiser is v* itself
      for (int i = team.rank(); i < nv; i += team.size()) v[i] = v_star[i];
      if (team.rank() == 0) s.cost(w)[kCostResidualRatio] = s.cost(w)[kCostOptimality] = 0;  // one-lane: stores
      it.flags = kStatusConverged;
      it.phase = kDone;
      team.sync();
      return;
    }
    for (int i = team.rank(); i < nv; i += team.size()) v[i] = state_in.qvel(w)[i];
    if constexpr (one_lane_team<Team>())
      for (int i = 0; i < nv; ++i) s.A_inv_diag(w)[i] = double(So(1) / So(d.A_values(w)[i * m.nv_pad + i]));
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
    // Cost, impulses and Hessians at v: evaluated here, or left by the line search that
    // accepted v (rows_at_v: vc advanced to vc + alpha dvc, the point it evaluated, as A (v - v*)
    // below; the same values an evaluation at that vc gives).
    if (!(keeps_line_search_rows<Team>() && it.rows_at_v)) {
      jacobian_product(w, team, v, rows_vc(w, team));
      it.rows_cost = evaluate_rows(w, team, So(0), true, false).cost;
    }
    it.rows_at_v = false;
    for (int i = team.rank(); i < nv; i += team.size()) u[i] = v[i] - v_star[i];
    team.sync();
    // A (v - v*): a product at the first iterate; after that tail() has advanced it with the
    // step, A (v + alpha dv - v*) = A (v - v*) + alpha (A dv), from the A dv it already formed.
    if (it.k == 0) mul_A(w, team, u, s.Au(w));
    jacobian_transpose_gamma(w, team);
    // The cost's quadratic part u . A u, g = A u - J^T gamma and the optimality test's sums, in
    // sqrt(J) units: r = |D g|, s = max(|D A v|, |D J^T gamma|), D^2 = diag(A)^-1.
    So sums[4];
    sums_nv<4>(team, sums, [&](int i, So* t) {
      const double* Au = s.Au(w);
      const So jtg = So(s.jtg(w)[i]);
      const So g = So(Au[i]) - jtg, av = So(Au[i]) + So(s.Avstar(w)[i]);
      s.grad(w)[i] = double(g);  // exact: So -> double -> So gives g back
      t[0] = So(u[i]) * So(Au[i]);
      t[1] = times_inv_diag<Team>(w, i, g * g);
      t[2] = times_inv_diag<Team>(w, i, av * av);
      t[3] = times_inv_diag<Team>(w, i, jtg * jtg);
    });
    it.cost = S_half() * sums[0] + it.rows_cost;
    const So r = sqrt_(sums[1]), av2 = sums[2], jg2 = sums[3];
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
    // l'(0) = g . dv, a2 = dv^T A dv and b = dv^T A (v - v*) = dv . Au. One lane (the CPU): in
    // one pass after u = A dv; a team: l'(0) before the product (in one pass, the fp32 split
    // tail's kernel took 6 registers more).
    So sums[3];
    if constexpr (one_lane_team<Team>()) {
      mul_A(w, team, s.dv(w), u);  // u <- A dv
      sums_nv<3>(team, sums, [&](int i, So* t) {
        const So dvi = So(s.dv(w)[i]);
        t[0] = So(s.grad(w)[i]) * dvi;
        t[1] = dvi * So(u[i]);
        t[2] = dvi * So(s.Au(w)[i]);
      });
    } else {
      sums[0] = dot_nv(w, team, s.grad(w), s.dv(w), false);
      mul_A(w, team, s.dv(w), u);  // u <- A dv
      sums[1] = dot_nv(w, team, s.dv(w), u, false);
      sums[2] = dot_nv(w, team, s.dv(w), s.Au(w), false);
    }
    const So d0 = sums[0], a2 = sums[1], b = sums[2];
    const So cost_A0 = cost - it.rows_cost;
    if (!(d0 < So(0)) || !(a2 > So(0)) || !isfinite_(a2)) {
      it.flags |= kStatusNotDescent;
      return false;
    }
    // monotone_decay accepts the last point it evaluates: on one lane its first trial (alpha = 1,
    // the one most often accepted) stores gamma and G (the iterate's are no longer needed: H is
    // factored, J^T gamma formed), later trials form their cost alone, and an accepted later
    // trial is evaluated once more with the stores at the same vc + alpha dvc (the same values),
    // so the accepted point's rows are the next head()'s (rows_at_v). Other searches may accept
    // an earlier point.
    const bool keep_rows =
        keeps_line_search_rows<Team>() && p.config.line_search_variant == LineSearchVariant::MonotoneDecay;
    So last_rows_cost = So(0);
    bool last_stored = false;
    auto line = [&](So a, bool derivatives) {
      // A team never stores here; a compile-time false keeps the flag out of its registers.
      if constexpr (keeps_line_search_rows<Team>()) last_stored = keep_rows && a == So(1);
      const RowSums<So> rs = evaluate_rows(w, team, a, keeps_line_search_rows<Team>() && last_stored, derivatives);
      last_rows_cost = rs.cost;
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
      if (keep_rows) evaluate_rows(w, team, So(0), true, false);  // gamma and G back at v (reported)
      return false;
    }
    it.alpha = ls.alpha;
    for (int i = team.rank(); i < nv; i += team.size()) {
      v[i] = double(So(v[i]) + it.alpha * So(s.dv(w)[i]));
      s.Au(w)[i] = double(So(s.Au(w)[i]) + it.alpha * So(u[i]));  // u = A dv (above)
    }
    if (keep_rows) {
      if (!last_stored) evaluate_rows(w, team, it.alpha, true, false);  // gamma and G at the accepted point
      advance_rows(w, team, it.alpha);  // syncs
      it.rows_cost = last_rows_cost;
      it.rows_at_v = true;
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

#if !defined(__CUDACC__)
  // The CPU's fused solve of worlds w0 .. w0 + g - 1 (g <= kWorldLanes; one team of one lane
  // each, every team with its own scratch) in lock-step: each world runs operator()'s loop, and
  // the Newton directions that several need in the same round are factored and solved together,
  // one world per SIMD lane (kernels/cholesky_worlds.hpp), when their envelopes agree; else each
  // alone. The worlds share no data, so running them side by side changes nothing of any one:
  // each world's arithmetic is operator()'s, bitwise. lanes: scratch of (ld * ld + ld) x
  // kWorldLanes scalars of the linear solve's precision (world_lanes_bytes).
  template <class Team>
  void run_worlds(int w0, int g, Team* teams, void* lanes) const {
    NewtonIterate it[kWorldLanes];
    bool running[kWorldLanes];
    for (int l = 0; l < g; ++l) {
      begin(w0 + l, teams[l], it[l]);
      running[l] = true;
    }
    for (;;) {
      int need[kWorldLanes], count = 0;
      for (int l = 0; l < g; ++l) {
        if (running[l] && it[l].phase != kDone && head(w0 + l, teams[l], it[l])) need[count++] = l;
        else running[l] = false;
      }
      if (count == 0) break;
      bool ok[kWorldLanes];
      if (p.config.contact_linear_solve_precision == Precision::F32) newton_directions<float>(w0, teams, need, count, lanes, ok);
      else newton_directions<double>(w0, teams, need, count, lanes, ok);
      for (int k = 0; k < count; ++k)
        if (!tail(w0 + need[k], teams[need[k]], it[need[k]], ok[k])) running[need[k]] = false;
    }
    for (int l = 0; l < g; ++l) finish(w0 + l, teams[l], it[l]);
  }

  std::size_t world_lanes_bytes() const {
    return linear_f32() ? sap::world_lanes_bytes<float>(m.nv_pad) : sap::world_lanes_bytes<double>(m.nv_pad);
  }

  // newton_direction for the worlds w0 + need[k], k < count: ok[k] its result. Two or more
  // with one envelope go through the lanes, their systems loaded from H and g straight into
  // them (load_world_lanes_reversed: what load_newton_system would write, not written) and the
  // directions stored from them (store_direction's values); the others (and all of them, when a
  // lane's pivot fails) one by one.
  template <class Sl, class Team>
  void newton_directions(int w0, Team* teams, const int* need, int count, void* lanes, bool* ok) const {
    const int nv = m.nv, ld = m.nv_pad;
    if (count >= 2) {
      using V = typename WorldLanes<Sl>::V;
      V* a = static_cast<V*>(lanes);
      V* x = a + ld * ld;
      const double* H[kWorldLanes];
      for (int k = 0; k < count; ++k) H[k] = hessian(w0 + need[k], teams[need[k]]);
      int* first = envelope(w0 + need[0], teams[need[0]]);
      if (load_world_lanes_reversed<Sl>(H, count, nv, ld, a, first)) {
        for (int i = 0; i < nv; ++i)
          for (int l = 0; l < kWorldLanes; ++l) x[nv - 1 - i][l] = -Sl(s.grad(w0 + need[l < count ? l : 0])[i]);
        if (cholesky_factor_lanes<Sl>(a, nv, ld, first)) {
          cholesky_solve_lanes<Sl>(a, x, nv, ld, first);
          for (int k = 0; k < count; ++k) {
            double* dv = s.dv(w0 + need[k]);
            for (int i = 0; i < nv; ++i) dv[i] = double(x[nv - 1 - i][k]);
            ok[k] = true;
          }
          return;
        }
      }
    }
    for (int k = 0; k < count; ++k) ok[k] = newton_direction<Sl>(w0 + need[k], teams[need[k]]);
  }
#endif

  SAP_HDI static So S_half() { return So(0.5); }
};

// The split path: one launch per phase over all worlds; the loop state lives in newton_real /
// newton_int between launches. Worlds already done skip every phase.
template <class So, bool kAngular = false>
using SplitSolveKernel = SapSolveKernel<So, true, kAngular>;

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
// the linear-solve precision and leaves newton_int phase = kNeedsDirection. kAngular as in
// SapSolveKernel (begin and finish visit no rows: one instantiation serves every model).
template <class So, bool kAngular = false>
struct NewtonHeadKernel {
  SplitSolveKernel<So, kAngular> k;
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    typename SplitSolveKernel<So, kAngular>::NewtonIterate it = k.load_iterate(w);
    if (it.phase != SplitSolveKernel<So, kAngular>::kIterating) return;
    if (k.head(w, team, it)) k.load_newton_system_in_solve_precision(w, team);
    k.store_iterate(w, team, it);
  }
};

// Tail for the worlds whose system was solved: solve_ok[w] from the library factorisation.
// The line search's evaluations hold the most registers of the split path: on CUDA this kernel
// is compiled in a translation unit of its own under a register cap (cuda/newton_tail_cuda.cu).
template <class So, bool kAngular = false>
struct NewtonTailKernel {
  SplitSolveKernel<So, kAngular> k;
  const int* solve_ok;  // per world
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    if (k.s.newton_int(w)[kIterPhase] != SplitSolveKernel<So, kAngular>::kNeedsDirection) return;
    typename SplitSolveKernel<So, kAngular>::NewtonIterate change = k.tail_iterate(w);
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
