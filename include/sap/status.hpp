// Per-world status flags reported by every step. A world whose flags include a failure bit
// keeps its previous state; the other worlds are unaffected.
#pragma once

#include <string>

namespace sap {

enum WorldStatusBits : int {
  kStatusConverged = 1 << 0,            // Newton met its stopping criterion
  kStatusIterationLimit = 1 << 1,       // max_iterations reached without convergence
  kStatusLineSearchFailed = 1 << 2,     // no acceptable step along the Newton direction
  kStatusNonFinite = 1 << 3,            // NaN/Inf in the state, inputs or intermediate data
  kStatusFactorizationFailed = 1 << 4,  // a dense Cholesky met a non-positive pivot
  kStatusNotDescent = 1 << 5,           // the Newton direction did not decrease the cost
  // Not stepped on purpose (retry sub-steps of other worlds, the fp64 retry's unused slots): no
  // stage computes anything for the world, and its diagnostics other than the status are stale.
  kStatusSkipped = 1 << 6,
  // The step's fp32 stages failed (factorisation, line search, or a non-finite value) and the
  // step was repeated in fp64 (solver option fp64_retry); the other bits are those of the fp64 step.
  kStatusFp64Retry = 1 << 7,
  // Not a failure: the midpoint Coriolis passes of the free motion stopped contracting (joint
  // speeds near 1/h) and the step took the explicit Coriolis terms at v_n instead
  // (docs/sap-math.md §1.3). Counted per world-step like the retries.
  kStatusCoriolisFallback = 1 << 8,
};

// Bits of an fp32 step that make SolverSAP repeat it in fp64 (fp64_retry). A non-finite value
// is one: fp32's range (3.4e38, and ~1e19 for a squared quantity) is exceeded by states that
// fp64 steps finitely, e.g. a joint started far outside its limit (docs/solver.md).
constexpr int kStatusFp64RetryOn = kStatusFactorizationFailed | kStatusLineSearchFailed | kStatusNonFinite;

// Bits after which a world's step is rejected (state_out = state_in for that world). Skipped
// worlds keep their state the same way; they are never counted as failures (kStatusFailed).
constexpr int kStatusFailed = kStatusNonFinite | kStatusFactorizationFailed;
constexpr int kStatusFailureMask = kStatusFailed | kStatusSkipped;

inline std::string status_string(int s) {
  if (s == 0) return "ok";
  std::string r;
  auto add = [&](int bit, const char* name) {
    if (s & bit) r += (r.empty() ? "" : "|") + std::string(name);
  };
  add(kStatusConverged, "converged");
  add(kStatusIterationLimit, "iteration_limit");
  add(kStatusLineSearchFailed, "line_search_failed");
  add(kStatusNonFinite, "non_finite");
  add(kStatusFactorizationFailed, "factorization_failed");
  add(kStatusNotDescent, "not_descent");
  add(kStatusSkipped, "skipped");
  add(kStatusFp64Retry, "fp64_retry");
  add(kStatusCoriolisFallback, "coriolis_fallback");
  return r;
}

}  // namespace sap
