// Per-world buffers of stages 2 and 3 (constraints and the Newton iteration), world-major
// slabs sized once at solver construction. Internal to the solver.
#pragma once

#include "sap/data.hpp"

namespace sap {

// Named slots of the packed per-world records below (X(name, type, count) rows).
// stats: counters of the last step.
enum SolveStat : int {
  kStatNewtonIterations = 0,  // Newton iterations (0: converged at the warm start)
  kStatLineSearchIterations,  // line-search evaluations, summed over iterations
  kStatTruncatedContacts,     // contacts dropped by the collision capacity
  kStatExitReason,            // NewtonExit (kernels/newton.hpp)
  kNumSolveStats
};
// cost: the last step's final values.
enum SolveCost : int {
  kCostFinal = 0,      // l(v) at exit
  kCostResidualRatio,  // r / (eps_a + eps_r s) at exit (<= 1: converged on optimality)
  kCostOptimality,     // r = |D g| at exit, D = diag(A)^-1/2
  kNumSolveCosts
};
// con_param: one contact's parameters (docs/sap-math.md §3): the cone's regularisation R_t, R_n
// and bias v_hat_n, the friction mu, then those of the Hunt-Crossley approximations (§3.8,
// HuntCrossleyParams): stiffness, dissipation d, step-start elastic force and impulse, eps_s.
enum ContactParam : int {
  kConRt = 0,
  kConRn,
  kConVhatN,
  kConMu,
  kConHcStiffness,
  kConHcDissipation,
  kConHcFe0,
  kConHcN0,
  kConHcEpsSoft,
  kNumContactParams
};
// con_ang_param: a contact's coefficients beyond the first (sliding) one, for models with
// torsional or rolling friction (docs/sap-math.md §3.9): MuJoCo's t2, spin, roll1, roll2.
enum AngularContactParam : int { kAngMuT2 = 0, kAngMuSpin, kAngMuRoll1, kAngMuRoll2, kNumAngularParams };
// lim_param: one limit row: sign (+1 lower, -1 upper), regularisation R, bias v_hat.
enum LimitParam : int { kLimSign = 0, kLimR, kLimVhat, kNumLimitParams };
// pd_param: one implicit PD row: gains, position at the step start, targets, feed-forward,
// effort limits (on PD plus feed-forward).
enum PdParam : int {
  kPdKp = 0,
  kPdKd,
  kPdQ0,
  kPdQTarget,
  kPdVTarget,
  kPdFeedForward,
  kPdEffortLo,
  kPdEffortHi,
  kNumPdParams
};
// hol_param: one holonomic row (docs/sap-math.md §12), of kind kHolKind:
//   kHolKindBox: regularisation R, bias v_hat, impulse bounds [lo, hi] (lo = 0, hi = +inf for
//                one-sided limits; -inf, +inf for equalities);
//   kHolKindPd:  an implicit PD servo on the row's coordinate (a tendon length): the PdParam
//                values in slots kHolPd + PdParam (docs/sap-math.md §5 with vc = J v).
enum HolonomicParam : int { kHolKind = 0, kHolR, kHolVhat, kHolLo, kHolHi, kHolPd = 1, kNumHolonomicParams = 1 + 8 };
enum HolonomicKind : int { kHolKindBox = 0, kHolKindPd = 1 };
// newton_real / newton_int: the Newton loop's state between the launches of the split path.
enum NewtonRealSlot : int { kIterCost = 0, kIterCostPrev, kIterAlpha, kIterRowsCost, kNumNewtonReal };
enum NewtonIntSlot : int { kIterK = 0, kIterLineSearchTotal, kIterFlags, kIterExitReason, kIterPhase, kNumNewtonInt };

// Dof index of a contact's Jacobian entry: 16 bits (the solver rejects nv > 32767).
using JacDof = short;
constexpr int kMaxJacDof = 32767;

// The entry of dof i among a row's nj Jacobian entries (distinct dofs), or -1. Every lane of a
// team runs all nj steps, with no exit that depends on the data: on CUDA, lanes that leave a
// search loop at different steps are not brought back together before the work that follows,
// and the H assembly's entry loops after such a search ran one lane at a time (Nsight Compute on
// an H100, 2026-11-27: 1.0 thread per instruction, a fifth of the fused solve's time).
template <class D>
SAP_HDI int jacobian_entry_of_dof(const D* dof, int nj, int i) {
  int e = -1;
  for (int k = 0; k < nj; ++k) e = dof[k] == i ? k : e;
  return e;
}

// One contact's Jacobian values d vc / d v_dof (entry e, row r at 3 e + r), read as fp64 from
// fp64 or fp32 storage (SolveSizes::jac_f32: the stage-2 precision is fp32, and the values are
// stored as cast64(fl32(J)), as that precision's other outputs).
using JacValues = RealValues;
struct JacValuesOut {
  double* f64 = nullptr;
  float* f32 = nullptr;
  SAP_HDI void set(int k, double x) const {
    if (f32) f32[k] = float(x);
    else f64[k] = x;
  }
  SAP_HDI operator JacValues() const { return {f64, f32}; }
};

struct SolveSizes {
  int nv = 0, nv_pad = 0;
  int ncmax = 0;   // contact capacity per world
  int njac = 0;    // Jacobian entries per contact (2 x deepest dof path)
  int nlim = 0;    // limit rows (2 per limited hinge/slide)
  int npd = 0;     // PD rows (position, velocity and pd actuators)
  int ntrace = 1;  // cost trace entries (max_iterations + 1)
  int nhol = 0;    // holonomic rows (tendon limits, equality constraints), appended after the PD rows
  int nhjac = 0;   // Jacobian entries per holonomic row
  int nH = 0;      // entries of the global Newton Hessian: nv_pad^2, or 0 when it is on chip (NewtonOnChip)
  int jac_f32 = 0;  // 1: contact Jacobian values in fp32 (con_jac_val32), else fp64 (con_jac_val)
  int rows_global = 1;  // 0: vc, dvc and G live on chip (NewtonOnChip) and get no global storage
  int ncp = kNumContactParams;  // con_param slots per contact: kConHcStiffness without Hunt-Crossley
  // Contacts with angular rows: ncmax for a model with torsional or rolling friction (a pair
  // of condim 4 or 6), else 0, so that other models keep the arrays, rows and kernels they had.
  int nacon = 0;
  // Constraint rows (vc, dvc, gamma): contact c at 3c..3c+2 ([t1, t2, n]), then the limit rows,
  // the PD rows, the holonomic rows, and the angular rows of contact c at 3c.. of their block
  // ([spin, roll1, roll2]; condim 4 uses spin only).
  SAP_HDI int nrow() const { return 3 * ncmax + nlim + npd + nhol + 3 * nacon; }
  SAP_HDI int limit_row(int r) const { return 3 * ncmax + r; }
  SAP_HDI int pd_row(int r) const { return 3 * ncmax + nlim + r; }
  SAP_HDI int hol_row(int r) const { return 3 * ncmax + nlim + npd + r; }
  SAP_HDI int ang_row(int c) const { return 3 * ncmax + nlim + npd + nhol + 3 * c; }
  // Constraint Hessians G: 6 per contact (symmetric 3x3, [00, 01, 02, 11, 12, 22]), then one
  // per limit row, PD row and holonomic row, then kAngularG per angular contact: the block of
  // its [t1, t2, n] x [spin, roll1, roll2] (row-major), then the angular block (symmetric 3x3).
  static constexpr int kAngularG = 15;
  SAP_HDI int nG() const { return 6 * ncmax + nlim + npd + nhol + kAngularG * nacon; }
  SAP_HDI int limit_G(int r) const { return 6 * ncmax + r; }
  SAP_HDI int pd_G(int r) const { return 6 * ncmax + nlim + r; }
  SAP_HDI int hol_G(int r) const { return 6 * ncmax + nlim + npd + r; }
  SAP_HDI int ang_G(int c) const { return 6 * ncmax + nlim + npd + nhol + kAngularG * c; }
};

// One row per buffer: X(name, type, count per world) and what it holds, in two lists by who
// writes them. The rows of stage 2 (constraint setup writes them; the Newton solve reads them
// only: ConstSolveRowsView) ...
// clang-format off
#define SAP_SOLVE_ROW_ARRAYS(X)                                                                     \
  X(con_count, int, 1)                      /* contacts in the solve */                             \
  X(con_frame, double, ncmax * 9)           /* R_WC row-major, columns [t1, t2, n] */               \
  X(con_jac_n, int, ncmax)                  /* Jacobian entries (dofs) of each contact */           \
  X(con_jac_dof, JacDof, ncmax * njac)      /* their dofs, decreasing */                            \
  X(con_jac_val, double, ncmax * njac * 3 * (1 - jac_f32)) /* d vc / d v_dof, contact frame */      \
  X(con_jac_val32, float, ncmax * njac * 3 * jac_f32)      /* the same in fp32 (jac_f32) */         \
  X(con_param, double, ncmax * ncp)         /* ContactParam (the first ncp) */                      \
  X(con_weight, double, ncmax)              /* contact weight w_i */                                \
  X(lim_count, int, 1)                      /* limit rows in the solve */                           \
  X(lim_dof, int, nlim)                     /* dof of each limit row */                             \
  X(lim_param, double, nlim * kNumLimitParams) /* LimitParam */                                     \
  X(pd_dof, int, npd)                       /* dof of each PD row */                                \
  X(pd_param, double, npd * kNumPdParams)   /* PdParam */                                           \
  X(hol_count, int, 1)                      /* holonomic rows in the solve */                       \
  X(hol_jac_n, int, nhol)                   /* Jacobian entries of each row */                      \
  X(hol_jac_dof, int, nhol * nhjac)         /* their dofs, decreasing */                            \
  X(hol_jac_val, double, nhol * nhjac)      /* d vc / d v_dof */                                    \
  X(hol_param, double, nhol * kNumHolonomicParams) /* HolonomicParam */                           \
  X(con_dim, int, nacon)                    /* condim of each contact (angular models) */           \
  X(con_jac_ang, double, nacon * njac * 3)  /* d [spin, roll1, roll2] / d v_dof, entries of con_jac_dof */ \
  X(con_ang_param, double, nacon * kNumAngularParams) /* AngularContactParam */

// ... and the Newton solve's iterate, outputs and scratch (stage 3 writes them: NewtonView).
#define SAP_SOLVE_NEWTON_ARRAYS(X)                                                                      \
  X(v, double, nv)                          /* Newton iterate, the solved v_{n+1} at exit */            \
  X(grad, double, nv)                       /* g = A (v - v*) - J^T gamma */                            \
  X(dv, double, nv)                         /* Newton direction */                                      \
  X(dp, double, nv)                         /* v - v*, then A dv */                                     \
  X(jtg, double, nv)                        /* J^T gamma */                                             \
  X(Au, double, nv)                         /* A (v - v*) */                                            \
  X(Avstar, double, nv)                     /* A v* */                                                  \
  X(A_inv_diag, double, nv)                 /* 1 / A_ii: the D-norms' weights D^2 (the solve's begin) */ \
  X(H, double, nH)                          /* Newton Hessian, lower triangle (nH: SolveSizes) */       \
  X(vc, double, nrow * rows_global)         /* constraint velocities J v (rows: SolveSizes) */          \
  X(dvc, double, nrow * rows_global)        /* J dv */                                                  \
  X(gamma, double, nrow)                    /* impulses */                                              \
  X(G, double, nG * rows_global)            /* constraint Hessians (layout: SolveSizes) */              \
  X(stats, int, kNumSolveStats)             /* SolveStat */                                             \
  X(cost, double, kNumSolveCosts)           /* SolveCost */                                             \
  X(cost_trace, double, ntrace)             /* cost at the top of each iteration (record_cost_trace) */ \
  X(newton_real, double, kNumNewtonReal)    /* NewtonRealSlot (split path) */                           \
  X(newton_int, int, kNumNewtonInt)         /* NewtonIntSlot (split path) */

#define SAP_SOLVE_ARRAYS(X) SAP_SOLVE_ROW_ARRAYS(X) SAP_SOLVE_NEWTON_ARRAYS(X)
// clang-format on

// The rows of stage 2: SolveRowsView is constraint setup's output (writable), ConstSolveRowsView
// the Newton solve's input (every slab points to const). A SolveRowsView converts to a
// ConstSolveRowsView.
template <bool kConst>
struct SolveRowsViewOf {
  template <class T>
  using SlabOf = Slab<std::conditional_t<kConst, const T, T>>;
  using JacDofT = std::conditional_t<kConst, const JacDof, JacDof>;
  SolveSizes size;
#define SAP_X(name, type, count) SlabOf<type> name;
  SAP_SOLVE_ROW_ARRAYS(SAP_X)
#undef SAP_X

  SolveRowsViewOf() = default;
  template <bool kOther, class = std::enable_if_t<kConst && !kOther>>
  SAP_HDI SolveRowsViewOf(const SolveRowsViewOf<kOther>& o) : size(o.size) {
#define SAP_X(name, type, count) this->name = {o.name.ptr, o.name.stride};
    SAP_SOLVE_ROW_ARRAYS(SAP_X)
#undef SAP_X
  }

  // Contact c's Jacobian values (fp64 or fp32 storage) and dofs.
  SAP_HDI auto contact_jac(int w, int c) const {
    const long long off = 3LL * size.njac * c;
    using Out = std::conditional_t<kConst, JacValues, JacValuesOut>;
    if (size.jac_f32) return Out{nullptr, con_jac_val32(w) + off};
    return Out{con_jac_val(w) + off, nullptr};
  }
  // f(val) with contact c's Jacobian values as a typed pointer (const float* or const double*):
  // the storage type is resolved once per contact, not per entry (the entry loops stay plain).
  template <class F>
  SAP_HDI void with_contact_jac(int w, int c, F&& f) const {
    const long long off = 3LL * size.njac * c;
    if (size.jac_f32) f(static_cast<const float*>(con_jac_val32(w) + off));
    else f(static_cast<const double*>(con_jac_val(w) + off));
  }
  SAP_HDI JacDofT* contact_dofs(int w, int c) const { return con_jac_dof(w) + static_cast<long long>(size.njac) * c; }
  // Contact c's angular Jacobian rows (entry e, row r at 3 e + r; angular models).
  SAP_HDI auto* contact_jac_ang(int w, int c) const { return con_jac_ang(w) + 3LL * size.njac * c; }
  // Whether contact c has angular rows (condim 4 or 6): evaluated by AngularContactRows.
  SAP_HDI bool contact_has_angular_rows(int w, int c) const { return size.nacon > 0 && con_dim(w)[c] > 3; }
};
using SolveRowsView = SolveRowsViewOf<false>;
using ConstSolveRowsView = SolveRowsViewOf<true>;

// The Newton solve's iterate, outputs and scratch (stage 3 writes them).
struct NewtonView {
  SolveSizes size;
#define SAP_X(name, type, count) Slab<type> name;
  SAP_SOLVE_NEWTON_ARRAYS(SAP_X)
#undef SAP_X
};

// Every solve buffer (the host's handle; launches hand each stage its part: rows(), newton()).
struct SolveView {
  SolveSizes size;
#define SAP_X(name, type, count) Slab<type> name;
  SAP_SOLVE_ARRAYS(SAP_X)
#undef SAP_X
  SolveRowsView rows() const {
    SolveRowsView r;
    r.size = size;
#define SAP_X(name, type, count) r.name = name;
    SAP_SOLVE_ROW_ARRAYS(SAP_X)
#undef SAP_X
    return r;
  }
  NewtonView newton() const {
    NewtonView n;
    n.size = size;
#define SAP_X(name, type, count) n.name = name;
    SAP_SOLVE_NEWTON_ARRAYS(SAP_X)
#undef SAP_X
    return n;
  }
};

class SolveData {
 public:
  SolveData() = default;
  SolveData(const SolveSizes& s, int nworld, Backend b) : size_(s) {
    const int nv = s.nv, nv_pad = s.nv_pad, ncmax = s.ncmax, njac = s.njac, nlim = s.nlim, npd = s.npd;
    const int nrow = s.nrow(), nG = s.nG(), ntrace = s.ntrace, nhol = s.nhol, nhjac = s.nhjac, nH = s.nH;
    const int jac_f32 = s.jac_f32, rows_global = s.rows_global, ncp = s.ncp, nacon = s.nacon;
    (void)ncp;
    (void)nacon;
    (void)jac_f32;
    (void)rows_global;
    (void)nH;
    (void)nhol;
    (void)nhjac;
    (void)ntrace;
    (void)nv;
    (void)nv_pad;
    (void)nrow;
    (void)nG;
    (void)njac;
    (void)nlim;
    (void)npd;
#define SAP_X(name, type, count) name.allocate(b, nworld, static_cast<std::size_t>(count));
    SAP_SOLVE_ARRAYS(SAP_X)
#undef SAP_X
  }
  SolveView view() {
    SolveView out;
    out.size = size_;
#define SAP_X(name, type, count) out.name = this->name.slab();
    SAP_SOLVE_ARRAYS(SAP_X)
#undef SAP_X
    return out;
  }
  const SolveSizes& size() const { return size_; }
#define SAP_X(name, type, count) BatchedArray<type> name;
  SAP_SOLVE_ARRAYS(SAP_X)
#undef SAP_X

 private:
  SolveSizes size_;
};

}  // namespace sap
