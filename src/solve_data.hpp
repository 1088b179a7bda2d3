// Per-world buffers of stages 2 and 3 (constraints and the Newton iteration), world-major
// slabs sized once at solver construction. Internal to the solver.
#pragma once

#include "sap/data.hpp"

namespace sap {

struct SolveSizes {
  int nv = 0, nv_pad = 0;
  int ncmax = 0;  // contact capacity per world
  int njac = 0;   // Jacobian entries per contact (2 x deepest dof path)
  int nlim = 0;   // limit rows (2 per limited hinge/slide)
  int npd = 0;    // PD rows (position, velocity and pd actuators)
  int ntrace = 1; // cost trace entries (max_iterations + 1)
  int nrow() const { return 3 * ncmax + nlim + npd; }
  int nG() const { return 6 * ncmax + nlim + npd; }
};

// Row layout of vc, dvc, gamma: contact c at 3c..3c+2 ([t1, t2, n]), limit rows from
// 3 ncmax, PD rows from 3 ncmax + nlim. G: 6 per contact (symmetric), then 1 per scalar row.
#define SAP_SOLVE_ARRAYS(X)                                                               \
  X(con_count, int, 1)                                                                    \
  X(con_frame, double, ncmax * 9)    /* R_WC row-major, columns [t1, t2, n] */            \
  X(con_jac_n, int, ncmax)                                                                \
  X(con_jac_dof, int, ncmax * njac)                                                       \
  X(con_jac_val, double, ncmax * njac * 3) /* d vc / d v_dof, contact frame */           \
  X(con_param, double, ncmax * 4)    /* R_t, R_n, v_hat_n, mu */                          \
  X(con_weight, double, ncmax)                                                            \
  X(lim_count, int, 1)                                                                    \
  X(lim_dof, int, nlim)                                                                   \
  X(lim_param, double, nlim * 3)     /* sign (+1 lower, -1 upper), R, v_hat */            \
  X(pd_dof, int, npd)                                                                     \
  X(pd_param, double, npd * 8)       /* Kp, Kd, q0, q_d, v_d, u_ff, e_lo, e_hi */         \
  X(v, double, nv)                                                                        \
  X(grad, double, nv)                                                                     \
  X(dv, double, nv)                                                                       \
  X(dp, double, nv)                                                                       \
  X(jtg, double, nv)                                                                      \
  X(Au, double, nv)      /* A (v - v*) */                                                 \
  X(Avstar, double, nv)  /* A v* */                                                       \
  X(H, double, nv_pad * nv_pad)                                                           \
  X(vc, double, nrow)                                                                     \
  X(dvc, double, nrow)                                                                    \
  X(gamma, double, nrow)                                                                  \
  X(G, double, nG)                                                                        \
  X(stats, int, 4)       /* newton iterations, line-search iterations, truncated, exit reason */ \
  X(cost, double, 3)     /* final cost, residual ratio r / (eps_a + eps_r s), r = |D g| at exit */ \
  X(cost_trace, double, ntrace) /* cost at the top of each Newton iteration */ \
  /* Newton loop state between the launches of the split (reference linear solve) path */ \
  X(newton_real, double, 4) /* cost, cost_prev, alpha, constraint part of the cost */ \
  X(newton_int, int, 5)     /* iteration k, line-search total, status flags, exit reason, phase */

struct SolveView {
  SolveSizes size;
#define SAP_X(name, type, count) Slab<type> name;
  SAP_SOLVE_ARRAYS(SAP_X)
#undef SAP_X
};

class SolveData {
 public:
  SolveData() = default;
  SolveData(const SolveSizes& s, int nworld, Backend b) : size_(s) {
    const int nv = s.nv, nv_pad = s.nv_pad, ncmax = s.ncmax, njac = s.njac, nlim = s.nlim, npd = s.npd;
    const int nrow = s.nrow(), nG = s.nG(), ntrace = s.ntrace;
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
