// SAP constraint functions: gamma = -dl/dvc and G = dgamma/dvc... (G = -d gamma / d vc) against
// central finite differences in every region, the friction-cone projection against a brute-force
// minimisation, and the PD near-rigid clamp.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cstring>
#include <random>

#include "kernels/sap_constraints.hpp"

using namespace sap;

namespace {

struct ConeEval {
  Eigen::Vector3d gamma;
  Eigen::Matrix3d G;
  double cost;
  int mode;
};

ConeEval eval_cone(const FrictionConeParams<double>& p, const Eigen::Vector3d& vc) {
  ConeEval e;
  double g[3], G[6];
  e.mode = friction_cone<double>(p, vc.data(), g, &e.cost, G, true);
  e.gamma << g[0], g[1], g[2];
  e.G << G[0], G[1], G[2], G[1], G[3], G[4], G[2], G[4], G[5];
  return e;
}

// A contact velocity in the requested mode for parameters p (found by sampling).
Eigen::Vector3d sample_in_mode(const FrictionConeParams<double>& p, int mode, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  for (int tries = 0; tries < 100000; ++tries) {
    const double s = std::pow(10.0, 3 * u(rng));
    const Eigen::Vector3d vc(s * u(rng), s * u(rng), p.v_hat_n + s * u(rng));
    if (eval_cone(p, vc).mode == mode) return vc;
  }
  ADD_FAILURE() << "no sample found in mode " << mode;
  return Eigen::Vector3d::Zero();
}

FrictionConeParams<double> random_params(std::mt19937& rng, double mu) {
  std::uniform_real_distribution<double> u(0.1, 2.0);
  return {1e-3 * u(rng), 1e-4 * u(rng), -0.01 * u(rng), mu};
}

}  // namespace

class FrictionCone : public ::testing::TestWithParam<std::tuple<int, double>> {};

TEST_P(FrictionCone, GradientAndHessianMatchFiniteDifferences) {
  const int mode = std::get<0>(GetParam());
  const double mu = std::get<1>(GetParam());
  if (mu == 0 && mode == kModeStiction) GTEST_SKIP() << "stiction is impossible with mu = 0";
  std::mt19937 rng(11 + mode);
  for (int trial = 0; trial < 20; ++trial) {
    const FrictionConeParams<double> p = random_params(rng, mu);
    const Eigen::Vector3d vc = sample_in_mode(p, mode, rng);
    const ConeEval e = eval_cone(p, vc);
    ASSERT_EQ(e.mode, mode);
    const double h = 1e-7 * (1 + vc.norm());
    Eigen::Vector3d grad_fd;
    Eigen::Matrix3d hess_fd;
    for (int k = 0; k < 3; ++k) {
      Eigen::Vector3d a = vc, b = vc;
      a[k] += h;
      b[k] -= h;
      const ConeEval ea = eval_cone(p, a), eb = eval_cone(p, b);
      if (ea.mode != mode || eb.mode != mode) continue;  // too close to a region boundary
      grad_fd[k] = (ea.cost - eb.cost) / (2 * h);
      hess_fd.col(k) = -(ea.gamma - eb.gamma) / (2 * h);
      EXPECT_NEAR(-grad_fd[k], e.gamma[k], 1e-6 * (1 + e.gamma.norm())) << "mode " << mode << " k " << k;
      EXPECT_LT((hess_fd.col(k) - e.G.col(k)).norm(), 1e-5 * (1 + e.G.norm())) << "mode " << mode << " k " << k;
    }
    // G is symmetric positive semi-definite.
    EXPECT_LT((e.G - e.G.transpose()).norm(), 1e-12 * (1 + e.G.norm()));
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(e.G);
    EXPECT_GT(es.eigenvalues().minCoeff(), -1e-9 * (1 + e.G.norm()));
  }
}

INSTANTIATE_TEST_SUITE_P(Regions, FrictionCone,
                         ::testing::Combine(::testing::Values(int(kModeStiction), int(kModeSliding),
                                                              int(kModeNoContact)),
                                            ::testing::Values(0.0, 0.3, 1.2)));

// gamma = argmin over the cone {|g_t| <= mu g_n} of (g - y)^T R (g - y), y = R^-1 (v_hat - vc).
// Brute force: for fixed g_n the best tangential part is y_t clipped to mu g_n (R_t is
// isotropic); the remaining 1-D convex problem in g_n >= 0 is solved by golden section.
TEST(FrictionCone, ProjectionMatchesBruteForceMinimisation) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  int counts[3] = {0, 0, 0};
  for (int trial = 0; trial < 300; ++trial) {
    const double mu = trial % 5 == 0 ? 0.0 : 0.2 + std::abs(u(rng));
    const FrictionConeParams<double> p = random_params(rng, mu);
    const Eigen::Vector3d vc(0.05 * u(rng), 0.05 * u(rng), p.v_hat_n + 0.02 * u(rng));
    const ConeEval e = eval_cone(p, vc);
    ++counts[e.mode];
    const Eigen::Vector2d yt = -vc.head<2>() / p.R_t;
    const double yn = (p.v_hat_n - vc[2]) / p.R_n;
    auto best_for = [&](double gn, Eigen::Vector3d* g) {
      const double cap = mu * gn;
      Eigen::Vector2d gt = yt.norm() > cap ? Eigen::Vector2d(yt * (cap / yt.norm())) : yt;
      *g << gt, gn;
      return p.R_t * (gt - yt).squaredNorm() + p.R_n * (gn - yn) * (gn - yn);
    };
    double lo = 0, hi = std::max(1.0, 10 * (std::abs(yn) + yt.norm()));
    const double phi = 0.5 * (std::sqrt(5.0) - 1);
    Eigen::Vector3d g;
    for (int it = 0; it < 300; ++it) {
      const double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
      if (best_for(a, &g) < best_for(b, &g)) hi = b;
      else lo = a;
    }
    best_for(0.5 * (lo + hi), &g);
    // The soft norm (eps = 1e-7 N s) perturbs the exact projection by O(eps).
    EXPECT_LT((e.gamma - g).norm(), 1e-6 * (1 + g.norm())) << "mode " << e.mode << " mu " << mu;
  }
  EXPECT_GT(counts[kModeStiction], 10);
  EXPECT_GT(counts[kModeSliding], 10);
  EXPECT_GT(counts[kModeNoContact], 10);
}

// Continuity across the region boundaries (the cost is C1).
TEST(FrictionCone, ContinuousAcrossRegions) {
  const FrictionConeParams<double> p{2e-3, 5e-4, -0.01, 0.5};
  // Walk vc_t from 0 (stiction) to large (sliding) at fixed v_n; gamma must not jump.
  Eigen::Vector3d prev = eval_cone(p, Eigen::Vector3d(0, 0, 0)).gamma;
  int last_mode = kModeStiction, switches = 0;
  for (int i = 1; i <= 20000; ++i) {
    const ConeEval e = eval_cone(p, Eigen::Vector3d(i * 1e-6, 0, 0));
    EXPECT_LT((e.gamma - prev).norm(), 1e-2 * (1 + prev.norm()));
    switches += e.mode != last_mode;
    last_mode = e.mode;
    prev = e.gamma;
  }
  EXPECT_EQ(switches, 1);
}

TEST(LimitRow, GradientAndHessian) {
  for (double vc : {-0.3, -0.01, 0.02, 0.4}) {
    const double R = 2e-4, vhat = 0.05, h = 1e-7;
    double g, G, ga, gb;
    const double cost = limit_row<double>(R, vhat, vc, &g, &G);
    const double ca = limit_row<double>(R, vhat, vc + h, &ga, nullptr);
    const double cb = limit_row<double>(R, vhat, vc - h, &gb, nullptr);
    EXPECT_NEAR(-(ca - cb) / (2 * h), g, 1e-6 * (1 + std::abs(g)));
    EXPECT_NEAR(-(ga - gb) / (2 * h), G, 1e-5 * (1 + G));
    EXPECT_GE(cost, 0.0);
    EXPECT_EQ(G > 0, vc < vhat);  // active exactly while the row would violate the limit
  }
}

TEST(PdRow, GradientAndHessianInsideAndOutsideEffortLimit) {
  const PdParams<double> p{150.0, 8.0, 0.3, 0.5, 0.1, 2.0, -20.0, 25.0};
  const double h = 2e-3, fd = 1e-7;
  int inside = 0, outside = 0;
  for (double vc = -40; vc <= 40; vc += 0.37) {
    double g, G, ga, gb;
    pd_row<double>(p, h, vc, &g, &G);
    const double ca = pd_row<double>(p, h, vc + fd, &ga, nullptr);
    const double cb = pd_row<double>(p, h, vc - fd, &gb, nullptr);
    EXPECT_NEAR(-(ca - cb) / (2 * fd), g, 1e-6 * (1 + std::abs(g)));
    EXPECT_NEAR(-(ga - gb) / (2 * fd), G, 1e-4 * (1 + G));
    // The actuator force gamma / h stays within the effort limits.
    EXPECT_LE(g / h, 25.0 + 1e-9);
    EXPECT_GE(g / h, -20.0 - 1e-9);
    (G > 0 ? inside : outside)++;
  }
  EXPECT_GT(inside, 3);
  EXPECT_GT(outside, 3);
}

TEST(PdRow, NearRigidClampKeepsGainRatio) {
  const double h = 1e-2, beta = 0.1, A_jj = 0.05;
  for (auto [kp, kd] : {std::pair{1e8, 1e5}, std::pair{10.0, 1e5}, std::pair{0.0, 1e7}, std::pair{1e8, 0.0}}) {
    double Kp = kp, Kd = kd;
    pd_near_rigid_clamp<double>(h, beta, A_jj, &Kp, &Kd);
    const double R_nr = beta * beta / (4 * kPi * kPi) / A_jj;
    EXPECT_NEAR(h * (h * Kp + Kd), 1.0 / R_nr, 1e-9 / R_nr);
    if (kp > 0 && kd > 0) EXPECT_NEAR(Kd / Kp, kd / kp, 1e-12 * kd / kp);
    if (kp == 0) EXPECT_EQ(Kp, 0.0);
    if (kd == 0) EXPECT_EQ(Kd, 0.0);
  }
  // Soft gains are left alone.
  double Kp = 10, Kd = 1;
  pd_near_rigid_clamp<double>(h, beta, A_jj, &Kp, &Kd);
  EXPECT_EQ(Kp, 10.0);
  EXPECT_EQ(Kd, 1.0);
}

// ---------------------------------------------------------------------------------------------
// Hunt-Crossley contact of the similar / lagged approximations (hunt_crossley).
namespace {

struct HcEval {
  Eigen::Vector3d gamma;
  Eigen::Matrix3d G;
  double cost;
  int mode;
};

HcEval eval_hc(const HuntCrossleyParams<double>& p, double h, bool lagged, const Eigen::Vector3d& vc) {
  HcEval e;
  double g[3], G[6];
  e.mode = hunt_crossley<double>(p, h, lagged, vc.data(), g, &e.cost, G, true);
  e.gamma << g[0], g[1], g[2];
  e.G << G[0], G[1], G[2], G[1], G[3], G[4], G[2], G[4], G[5];
  return e;
}

// Which smooth piece of the impulse n(z) a velocity is on: 0 compressing (both factors > 0),
// 1 elastic factor <= 0 (z >= fe0 / (h k)), 2 dissipation factor <= 0 (z >= 1/d) only.
int hc_piece(const HuntCrossleyParams<double>& p, double h, bool lagged, const Eigen::Vector3d& vc) {
  const double vt = std::hypot(vc[0], vc[1]);
  const double vt_soft = std::sqrt(vt * vt + p.eps_soft * p.eps_soft) - p.eps_soft;
  const double z = lagged ? vc[2] : vc[2] - p.mu * vt_soft;
  if (z >= p.fe0 / (h * p.k)) return 1;
  if (p.d > 0 && z >= 1 / p.d) return 2;
  return 0;
}

}  // namespace

// Parameters: (lagged, piece of n, tangential scale relative to eps_s (0.1: inside the
// regularisation, 100: sliding), sign of fe0 (+1 penetrating, -1 a gap)).
class HuntCrossley : public ::testing::TestWithParam<std::tuple<bool, int, double, int>> {};

TEST_P(HuntCrossley, GradientAndHessianMatchFiniteDifferences) {
  const bool lagged = std::get<0>(GetParam());
  const int piece = std::get<1>(GetParam());
  const double vt_scale = std::get<2>(GetParam());
  const int fe_sign = std::get<3>(GetParam());
  if (piece == 2 && fe_sign < 0) GTEST_SKIP() << "across a gap the elastic factor vanishes first";
  std::mt19937 rng(101 + piece + 7 * lagged + (fe_sign > 0 ? 0 : 50) + int(vt_scale));
  std::uniform_real_distribution<double> u(0.2, 2.0), s(-1, 1);
  const double h = 1e-3;
  int tested = 0;
  for (int trial = 0; trial < 400 && tested < 20; ++trial) {
    HuntCrossleyParams<double> p;
    p.mu = 0.3 * u(rng);
    p.k = 1e5 * u(rng);
    // piece 2 needs 1/d < fe0 / (h k), i.e. a large penetration and dissipation.
    p.d = piece == 2 ? 50 * u(rng) : 5 * u(rng);
    const double x0 = fe_sign > 0 ? (piece == 2 ? 0.5 : 1e-3) * u(rng) : -1e-3 * u(rng);
    p.fe0 = p.k * x0;
    p.n0 = h * std::max(0.0, p.fe0) * u(rng);
    p.eps_soft = 1e-4 * u(rng);
    const double vx = p.fe0 / (h * p.k);
    double vn;
    if (piece == 0) vn = std::min(vx, p.d > 0 ? 1 / p.d : vx) - 0.5 * u(rng) * std::abs(vx) - 0.1 * u(rng);
    else if (piece == 1) vn = vx + 0.3 * u(rng);
    else vn = 1 / p.d + 0.5 * (vx - 1 / p.d) * u(rng) / 2.0;
    const double ang = 3.2 * s(rng);
    const double vt = vt_scale * p.eps_soft * u(rng);
    const Eigen::Vector3d vc(vt * std::cos(ang), vt * std::sin(ang), vn);
    if (hc_piece(p, h, lagged, vc) != piece) continue;
    const HcEval e = eval_hc(p, h, lagged, vc);
    // Steps well inside each direction's curvature scale (eps_s tangentially).
    const double dv_t = 1e-4 * (p.eps_soft + vt), dv_n = 1e-7 * (p.eps_soft + std::abs(vn));
    bool near_kink = false;
    Eigen::Vector3d grad_fd;
    Eigen::Matrix3d hess_fd;
    for (int k = 0; k < 3 && !near_kink; ++k) {
      const double dv = k < 2 ? dv_t : dv_n;
      Eigen::Vector3d a = vc, b = vc;
      a[k] += dv;
      b[k] -= dv;
      if (hc_piece(p, h, lagged, a) != piece || hc_piece(p, h, lagged, b) != piece) near_kink = true;
      const HcEval ea = eval_hc(p, h, lagged, a), eb = eval_hc(p, h, lagged, b);
      grad_fd[k] = (ea.cost - eb.cost) / (2 * dv);
      hess_fd.col(k) = -(ea.gamma - eb.gamma) / (2 * dv);
    }
    if (near_kink) continue;
    ++tested;
    const double gscale = 1e-7 + e.gamma.norm();
    EXPECT_LT((-grad_fd - e.gamma).norm(), 1e-6 * gscale)
        << "gamma " << e.gamma.transpose() << " fd " << -grad_fd.transpose() << " vc " << vc.transpose();
    EXPECT_LT((hess_fd - e.G).norm(), 1e-4 * (1e-6 + e.G.norm())) << "G\n" << e.G << "\nfd\n" << hess_fd;
    // G is symmetric positive semi-definite (the cost is convex).
    EXPECT_LT((e.G - e.G.transpose()).norm(), 1e-12 * (1 + e.G.norm()));
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(e.G);
    EXPECT_GT(es.eigenvalues().minCoeff(), -1e-9 * (1 + e.G.norm()));
    // Coulomb's law and maximum dissipation: |gamma_t| <= mu n_friction, gamma_t . v_t <= 0.
    const double n_friction = lagged ? p.n0 : e.gamma[2];
    EXPECT_LE(e.gamma.head<2>().norm(), p.mu * n_friction * (1 + 1e-12));
    EXPECT_LE(e.gamma.head<2>().dot(vc.head<2>()), 0.0);
    // The normal impulse is Hunt-Crossley's h k x (1 + d xdot) at the predicted penetration.
    if (piece == 0) {
      const double z = lagged ? vn : vn - p.mu * (std::sqrt(vt * vt + p.eps_soft * p.eps_soft) - p.eps_soft);
      EXPECT_NEAR(e.gamma[2], h * (p.fe0 - h * p.k * z) * (1 - p.d * z), 1e-12 * (1 + e.gamma[2]));
      EXPECT_GT(e.gamma[2], 0);
    } else {
      EXPECT_EQ(e.gamma[2], 0);
    }
  }
  EXPECT_GE(tested, 10) << "too few samples away from the region boundaries";
}

INSTANTIATE_TEST_SUITE_P(Regions, HuntCrossley,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(0, 1, 2),
                                            ::testing::Values(0.1, 100.0), ::testing::Values(1, -1)));

// The cost is continuous (N is constant beyond v_hat) and convex along random lines that cross
// every region boundary.
TEST(HuntCrossley, CostIsContinuousAndConvexAlongLines) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> s(-1, 1);
  const double h = 2e-3;
  for (bool lagged : {false, true}) {
    for (int trial = 0; trial < 50; ++trial) {
      const HuntCrossleyParams<double> p{0.5, 2e4, 8.0, 2e4 * 2e-3, 1e-2 * (1 + s(rng)), 1e-4};
      const Eigen::Vector3d a(0.2 * s(rng), 0.2 * s(rng), 0.3 * s(rng));
      const Eigen::Vector3d dir = Eigen::Vector3d(s(rng), s(rng), s(rng)).normalized();
      const int n = 4000;
      const double step = 1.0 / n;
      std::vector<double> f(n + 1);
      for (int i = 0; i <= n; ++i) f[i] = eval_hc(p, h, lagged, a + (i * step - 0.5) * dir).cost;
      double max_jump = 0, min_second = 0, scale = 0;
      for (int i = 0; i <= n; ++i) scale = std::max(scale, std::abs(f[i]));
      for (int i = 1; i <= n; ++i) max_jump = std::max(max_jump, std::abs(f[i] - f[i - 1]));
      for (int i = 1; i < n; ++i) min_second = std::min(min_second, f[i + 1] - 2 * f[i] + f[i - 1]);
      EXPECT_LT(max_jump, 1e-2 * (scale + 1e-9)) << "lagged " << lagged;
      EXPECT_GT(min_second, -1e-12 * (scale + 1e-9)) << "lagged " << lagged;
    }
  }
}

// A decay line search's trials form the cost alone (hunt_crossley_cost): the full evaluation's
// cost bit for bit, in fp32 and fp64, in every region (no contact, stiction, sliding; both
// approximations).
template <class S>
void expect_cost_alone_is_the_cost(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.2, 2.0), s(-1, 1);
  const S h = S(2e-3);
  for (bool lagged : {false, true})
    for (int trial = 0; trial < 300; ++trial) {
      const double k = 1e5 * u(rng), x0 = 2e-3 * s(rng);
      const HuntCrossleyParams<S> p{S(0.5 * u(rng)), S(k),        S(5 * u(rng)),
                                    S(k * x0),       S(1e-3 * u(rng)), S(1e-4 * u(rng))};
      const double vt = std::pow(10.0, -6 + 5 * u(rng) / 2);  // 1e-6 .. 1e-1 m/s: stiction to sliding
      const double ang = 3.2 * s(rng);
      const S vc[3] = {S(vt * std::cos(ang)), S(vt * std::sin(ang)), S(0.3 * s(rng))};
      S g[3], G[6], cost;
      hunt_crossley<S>(p, h, lagged, vc, g, &cost, G, true);
      const S alone = hunt_crossley_cost<S>(p, h, lagged, vc);
      EXPECT_EQ(std::memcmp(&alone, &cost, sizeof(S)), 0) << "lagged " << lagged << ": " << alone << " vs " << cost;
    }
}

TEST(HuntCrossley, CostAloneIsTheEvaluationsCostBitwise) {
  std::mt19937 rng(23);
  expect_cost_alone_is_the_cost<double>(rng);
  expect_cost_alone_is_the_cost<float>(rng);
}

// Near-rigid stiffness: the contact's period 2 pi / sqrt(w k) equals beta h.
TEST(HuntCrossley, NearRigidStiffnessGivesPeriodBetaH) {
  const double h = 1e-3, beta = 0.7, w = 3.0;
  const double k = hunt_crossley_near_rigid_stiffness(h, beta, w);
  EXPECT_NEAR(2 * kPi / std::sqrt(w * k), beta * h, 1e-15);
}
