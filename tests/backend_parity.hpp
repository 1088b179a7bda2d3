// Comparing one solver step on two executors (one-lane CPU oracle vs emulated teams or CUDA)
// with tolerances derived from the solver's own stopping test, not tuned to pass.
//
// Both runs minimise the same strongly convex SAP cost from the same state, each stopping at
// an iterate v with |D g(v)| = r (D = diag(A)^-1/2, reported as StepDiagnostics::optimality).
// Since l(v) - 1/2 |v - v*|_A^2 is convex, (g(v) - g(v_opt)) . (v - v_opt) >= |v - v_opt|_A^2,
// so |v - v_opt|_A <= |g|_{A^-1} <= r / sqrt(lambda_min(D A D)). The minimiser is the
// proximal point of v* in the A-metric, which is non-expansive: a v* perturbed by rounding
// moves v_opt by at most |v*_1 - v*_2|_A. Hence
//   |v_1 - v_2|_A <= r_1 / sqrt(l_1) + r_2 / sqrt(l_2) + |v*_1 - v*_2|_A + slack,
// where the slack covers the other problem data (Jacobians, weights R, v_hat), identical up
// to rounding in the setup precision: slack = kSetupRoundoff * eps_setup * (|v|_A + |v*|_A).
// Where the two A differ (CUDA contracts a*b+c into FMAs; the emulator's A is bitwise the
// oracle's), the second solve minimises the first problem plus a linear term
// -(A_2 - A_1)(v_2 - v*), which moves its minimiser by at most
// |D (A_2 - A_1) D| / lambda_min(D A_1 D) * |v_2 - v*|_A.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "sap/simulator.hpp"

namespace sap::testing {

// Rounding of the setup stages in units of their precision's epsilon (a few dozen operations
// per entry; stated, not fitted).
constexpr double kSetupRoundoff = 64;

// Everything of one step the comparison needs, for all worlds.
struct StepRecord {
  int nv = 0, ld = 0;
  std::vector<double> qpos, qvel, A, v_star;
  StepDiagnostics diag;
};

inline StepRecord record_step(Simulator& sim) {
  StepRecord r;
  r.nv = sim.scene().model.nv;
  r.ld = sim.scene().model.nv_pad;
  r.qpos = sim.state().qpos.buffer().to_host();
  r.qvel = sim.state().qvel.buffer().to_host();
  r.A = sim.solver().data().A_to_host();
  r.v_star = sim.solver().data().v_star.buffer().to_host();
  r.diag = sim.solver().diagnostics();
  return r;
}

// Copies the state (and time) of `from` into `to` (same scene and world count).
inline void copy_state(Simulator& from, Simulator& to) {
  to.state().qpos.buffer().upload(from.state().qpos.buffer().to_host());
  to.state().qvel.buffer().upload(from.state().qvel.buffer().to_host());
  to.set_time(from.time());
}

// Smallest precision of the stages before the Newton solve (free motion, weights).
inline double setup_epsilon(const SolverConfig& c) {
  const bool f32 = c.free_motion_solve_precision == Precision::F32 || c.sap_contact_weight_precision == Precision::F32;
  return f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
}

struct WorldComparison {
  double dv_A = 0;          // |v_1 - v_2|_A
  double bound = 0;         // the bound above
  double rel_v = 0;         // |v_1 - v_2| / max(1, |v_1|) (Euclidean)
  double rel_q = 0;         // |q_1 - q_2| / max(1, |q_1|)
  bool constrained = true;  // the solve had constraint rows (else v = v* exactly)
};

inline Eigen::MatrixXd world_matrix(const StepRecord& r, int w) {
  Eigen::MatrixXd A(r.nv, r.nv);
  const std::size_t base = static_cast<std::size_t>(w) * static_cast<std::size_t>(r.ld * r.ld);
  for (int i = 0; i < r.nv; ++i)
    for (int j = 0; j <= i; ++j) A(i, j) = A(j, i) = r.A[base + static_cast<std::size_t>(i * r.ld + j)];
  return A;
}

inline Eigen::VectorXd world_segment(const std::vector<double>& x, int w, int n) {
  return Eigen::Map<const Eigen::VectorXd>(x.data() + static_cast<std::size_t>(w) * static_cast<std::size_t>(n), n);
}

inline WorldComparison compare_world(const StepRecord& a, const StepRecord& b, int w, int nq, double eps_setup) {
  WorldComparison c;
  const Eigen::MatrixXd A1 = world_matrix(a, w), A2 = world_matrix(b, w);
  auto lambda_min_scaled = [](const Eigen::MatrixXd& A) {
    const Eigen::VectorXd d = A.diagonal().cwiseSqrt().cwiseInverse();
    const Eigen::MatrixXd S = d.asDiagonal() * A * d.asDiagonal();
    return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
  };
  const Eigen::VectorXd v1 = world_segment(a.qvel, w, a.nv), v2 = world_segment(b.qvel, w, b.nv);
  const Eigen::VectorXd s1 = world_segment(a.v_star, w, a.nv), s2 = world_segment(b.v_star, w, b.nv);
  auto norm_A = [&](const Eigen::VectorXd& x) { return std::sqrt(std::max(0.0, x.dot(A1 * x))); };
  const double r1 = a.diag.optimality[static_cast<std::size_t>(w)], r2 = b.diag.optimality[static_cast<std::size_t>(w)];
  c.dv_A = norm_A(v1 - v2);
  const double l1 = lambda_min_scaled(A1), l2 = lambda_min_scaled(A2);
  const Eigen::VectorXd d1 = A1.diagonal().cwiseSqrt().cwiseInverse();
  const double dA = (d1.asDiagonal() * (A2 - A1) * d1.asDiagonal()).norm();  // Frobenius >= spectral
  c.bound = r1 / std::sqrt(l1) + r2 / std::sqrt(l2) + norm_A(s1 - s2) + dA / l1 * norm_A(v2 - s2) +
            kSetupRoundoff * eps_setup * (norm_A(v1) + norm_A(s1));
  c.rel_v = (v1 - v2).norm() / std::max(1.0, v1.norm());
  const Eigen::VectorXd q1 = world_segment(a.qpos, w, nq), q2 = world_segment(b.qpos, w, nq);
  c.rel_q = (q1 - q2).norm() / std::max(1.0, q1.norm());
  c.constrained = a.diag.newton_iterations[static_cast<std::size_t>(w)] > 0 || r1 > 0 ||
                  a.diag.contacts[static_cast<std::size_t>(w)] > 0;
  return c;
}

// Expects step records `test` to agree with the oracle `ref` world by world: same status,
// Newton iterations (within iteration_slack), contact counts, velocities within the derived
// bound, and, for worlds without constraint rows in fp64 setup, 1e-12 relative. `what`
// labels failures. Returns the largest dv_A / bound. With same_contacts false the two steps
// solved different contact sets (near-duplicate heightfield contacts, test_cuda_parity.cpp): the
// caller compares the contacts itself, and counts and velocities are not compared here.
inline double expect_step_agrees(const StepRecord& ref, const StepRecord& test, int nq, double eps_setup,
                                 const std::string& what, int iteration_slack = 0, bool same_contacts = true) {
  double worst = 0;
  const int nworld = static_cast<int>(ref.diag.status.size());
  for (int w = 0; w < nworld; ++w) {
    const std::size_t i = static_cast<std::size_t>(w);
    EXPECT_EQ(ref.diag.status[i], test.diag.status[i]) << what << " world " << w;
    EXPECT_LE(std::abs(ref.diag.newton_iterations[i] - test.diag.newton_iterations[i]), iteration_slack)
        << what << " world " << w << ": Newton iterations " << ref.diag.newton_iterations[i] << " vs "
        << test.diag.newton_iterations[i];
    if (!same_contacts) continue;
    EXPECT_EQ(ref.diag.contacts[i], test.diag.contacts[i]) << what << " world " << w;
    const WorldComparison c = compare_world(ref, test, w, nq, eps_setup);
    EXPECT_LE(c.dv_A, c.bound) << what << " world " << w << ": |dv|_A = " << c.dv_A << ", bound " << c.bound;
    if (!c.constrained && eps_setup < 1e-15) {
      EXPECT_LE(c.rel_v, 1e-12) << what << " world " << w << " (no constraint rows)";
      EXPECT_LE(c.rel_q, 1e-12) << what << " world " << w << " (no constraint rows)";
    }
    if (c.bound > 0) worst = std::max(worst, c.dv_A / c.bound);
  }
  return worst;
}

}  // namespace sap::testing
