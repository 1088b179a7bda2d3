// The elliptic friction cone of condim 1, 3, 4 and 6 (kernels/sap_elliptic_cone.hpp,
// docs/sap-math.md §3.9): gamma = -dl/dvc and G = -dgamma/dvc against central finite differences
// in every region and dimension, G symmetric positive semi-definite, the projection against an
// independent minimisation over the cone, maximum dissipation in sliding, C1 continuity across
// the regions, and condim 3 with equal coefficients against friction_cone.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "kernels/sap_elliptic_cone.hpp"

using namespace sap;

namespace {

template <int M>
struct Eval {
  static constexpr int n = M + 1;
  Eigen::Matrix<double, n, 1> gamma;
  Eigen::Matrix<double, n, n> G;
  double cost;
  int mode;
};

template <int M>
Eval<M> eval(const EllipticConeParams<double, M>& p, const Eigen::Matrix<double, M + 1, 1>& vc) {
  constexpr int n = M + 1;
  Eval<M> e;
  double g[n], G[n * (n + 1) / 2];
  e.mode = elliptic_cone<double, M>(p, vc.data(), g, &e.cost, G, true);
  for (int i = 0; i < n; ++i) {
    e.gamma[i] = g[i];
    for (int j = 0; j < n; ++j) e.G(i, j) = G[sym_packed_index(n, i, j)];
  }
  return e;
}

// Coefficients as MuJoCo's condim 6 defaults scale them: sliding ~1, torsion ~5e-3 m, rolling
// ~1e-4 m, each drawn over a decade; rho from the sliding direction's R_t = sigma w.
template <int M>
EllipticConeParams<double, M> random_params(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.3, 3.0);
  EllipticConeParams<double, M> p{};
  const double scale[5] = {1.0, 1.0, 5e-3, 1e-4, 1e-4};
  for (int i = 0; i < M; ++i) p.mu[i] = scale[i] * u(rng);
  const double R_t = 1e-3 * u(rng);
  p.rho = M > 0 ? R_t * p.mu[0] * p.mu[0] : 0.0;
  p.R_n = 1e-4 * u(rng);
  p.v_hat_n = -0.01 * u(rng);
  return p;
}

// A contact velocity in the requested mode, built in the scaled variables: u = (y_i / mu_i) the
// unprojected friction impulse in cone units (|u| = r), y_n the unprojected normal impulse, placed
// well inside the region (stiction |u| < y_n, sliding -mu_hat |u| < y_n < |u|, no contact below),
// then mapped back to vc_i = -R_i mu_i u_i, vc_n = v_hat_n - R_n y_n. *scale gets max(r, |y_n|).
template <int M>
Eigen::Matrix<double, M + 1, 1> sample_in_mode(const EllipticConeParams<double, M>& p, int mode, std::mt19937& rng,
                                               double* scale = nullptr) {
  std::uniform_real_distribution<double> u(-1, 1), w(0.1, 0.9);
  Eigen::Matrix<double, M + 1, 1> dir = Eigen::Matrix<double, M + 1, 1>::Zero(), vc;
  for (int i = 0; i < M; ++i) dir[i] = u(rng);
  if (M > 0) dir /= dir.norm();
  const double r = M > 0 ? std::pow(10.0, 2 * u(rng)) : 0.0;
  const double mu_hat = M > 0 ? p.rho / p.R_n : 0.0;
  double y_n;
  if (M == 0) y_n = (mode == kModeNoContact ? -1 : 1) * std::pow(10.0, 2 * u(rng));
  else if (mode == kModeStiction) y_n = r / w(rng);
  else if (mode == kModeSliding) y_n = r * (-mu_hat + (1 + mu_hat) * w(rng));
  else y_n = -mu_hat * r * (1.1 + 2 * w(rng));
  for (int i = 0; i < M; ++i) vc[i] = -elliptic_cone_friction_compliance(p, i) * p.mu[i] * r * dir[i];
  vc[M] = p.v_hat_n - p.R_n * y_n;
  if (scale) *scale = std::max(r, std::abs(y_n));
  return vc;
}

template <int M>
void check_derivatives(int mode, int seed) {
  constexpr int n = M + 1;
  std::mt19937 rng(seed);
  int checked = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const auto p = random_params<M>(rng);
    double scale;
    const auto vc = sample_in_mode<M>(p, mode, rng, &scale);
    const Eval<M> e = eval<M>(p, vc);
    ASSERT_EQ(e.mode, mode);
    for (int k = 0; k < n; ++k) {
      // A step that moves y by 1e-6 of its size along direction k.
      const double Rk = k == M ? p.R_n : elliptic_cone_friction_compliance(p, k) * p.mu[k];
      const double h = 1e-6 * Rk * scale;
      auto a = vc, b = vc;
      a[k] += h;
      b[k] -= h;
      const Eval<M> ea = eval<M>(p, a), eb = eval<M>(p, b);
      if (ea.mode != mode || eb.mode != mode) continue;  // too close to a region boundary
      ++checked;
      const double grad_fd = (ea.cost - eb.cost) / (2 * h);
      const Eigen::Matrix<double, n, 1> hess_col = -(ea.gamma - eb.gamma) / (2 * h);
      const double gscale = e.gamma.norm() + 1e-12;
      EXPECT_NEAR(-grad_fd, e.gamma[k], 1e-5 * gscale) << "M " << M << " mode " << mode << " k " << k;
      const double Gscale = e.G.col(k).norm() + e.G.norm() * 1e-9 + 1e-12;
      EXPECT_LT((hess_col - e.G.col(k)).norm(), 1e-4 * Gscale) << "M " << M << " mode " << mode << " k " << k;
    }
    EXPECT_LT((e.G - e.G.transpose()).norm(), 1e-14 * (1 + e.G.norm()));
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, n, n>> es(e.G);
    EXPECT_GT(es.eigenvalues().minCoeff(), -1e-9 * (1 + e.G.norm()));
  }
  EXPECT_EQ(checked, 20 * n) << "samples too close to a region boundary";
}

}  // namespace

class EllipticCone : public ::testing::TestWithParam<int> {};

TEST_P(EllipticCone, GradientAndHessianMatchFiniteDifferencesInEveryDimension) {
  const int mode = GetParam();
  check_derivatives<2>(mode, 100 + mode);
  check_derivatives<3>(mode, 200 + mode);
  check_derivatives<5>(mode, 300 + mode);
  if (mode != kModeStiction) check_derivatives<0>(mode, 400 + mode);  // condim 1: no stiction region
}

INSTANTIATE_TEST_SUITE_P(Regions, EllipticCone,
                         ::testing::Values(int(kModeStiction), int(kModeSliding), int(kModeNoContact)));

// gamma is the projection of y = R^-1 (v_hat - vc) onto the cone in the R-norm: it lies in the
// cone and no other point of the cone is nearer (random feasible points, and the optimum of a
// golden-section search over gamma_n with the exact inner minimum over the friction part).
template <int M>
void check_projection(int seed) {
  constexpr int n = M + 1;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  int counts[3] = {0, 0, 0};
  for (int trial = 0; trial < 200; ++trial) {
    const auto p = random_params<M>(rng);
    const int want = M == 0 ? 1 + trial % 2 : trial % 3;
    const Eigen::Matrix<double, n, 1> vc = sample_in_mode<M>(p, want, rng);
    Eigen::Matrix<double, n, 1> Rdiag, y;
    for (int i = 0; i < M; ++i) Rdiag[i] = elliptic_cone_friction_compliance(p, i);
    Rdiag[M] = p.R_n;
    const Eval<M> e = eval<M>(p, vc);
    ++counts[e.mode];
    for (int i = 0; i < M; ++i) y[i] = -vc[i] / Rdiag[i];
    y[M] = (p.v_hat_n - vc[M]) / p.R_n;
    auto dist2 = [&](const Eigen::Matrix<double, n, 1>& g) { return (g - y).dot(Rdiag.cwiseProduct(g - y)); };
    auto scaled_norm = [&](const Eigen::Matrix<double, n, 1>& g) {
      double s = 0;
      for (int i = 0; i < M; ++i) s += (g[i] / p.mu[i]) * (g[i] / p.mu[i]);
      return std::sqrt(s);
    };
    // In the cone (the soft norm lets gamma_f exceed it by O(eps) only).
    EXPECT_GE(e.gamma[M], 0.0);
    EXPECT_LE(scaled_norm(e.gamma), e.gamma[M] * (1 + 1e-12) + 1e-6);
    const double d_opt = dist2(e.gamma);
    for (int k = 0; k < 50; ++k) {
      Eigen::Matrix<double, n, 1> g;
      g[M] = std::abs(e.gamma[M] + (std::abs(y[M]) + 1e-3) * u(rng));
      Eigen::Matrix<double, M + 1, 1> dir;
      for (int i = 0; i < M; ++i) dir[i] = u(rng);
      const double r = std::abs(u(rng)) * g[M] / std::max(dir.head(M).norm(), 1e-300);
      for (int i = 0; i < M; ++i) g[i] = p.mu[i] * dir[i] * r;
      EXPECT_GE(dist2(g), d_opt - 1e-9 * (1 + d_opt));
    }
    // Golden section on gamma_n; for fixed gamma_n the nearest friction part in the R-norm is the
    // scaled y clipped to the ball of radius gamma_n (rho is isotropic in z = gamma_f / mu).
    auto best_for = [&](double gn, Eigen::Matrix<double, n, 1>* g) {
      Eigen::Matrix<double, n, 1> zy = Eigen::Matrix<double, n, 1>::Zero();
      for (int i = 0; i < M; ++i) zy[i] = y[i] / p.mu[i];
      const double zn = zy.head(M).norm();
      const double s = zn > gn ? gn / zn : 1.0;
      for (int i = 0; i < M; ++i) (*g)[i] = p.mu[i] * zy[i] * s;
      (*g)[M] = gn;
      return dist2(*g);
    };
    double zy_norm = 0;
    for (int i = 0; i < M; ++i) zy_norm += (y[i] / p.mu[i]) * (y[i] / p.mu[i]);
    double lo = 0, hi = std::max(1.0, 10 * (std::abs(y[M]) + std::sqrt(zy_norm)));
    const double phi = 0.5 * (std::sqrt(5.0) - 1);
    Eigen::Matrix<double, n, 1> g;
    for (int it = 0; it < 300; ++it) {
      const double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
      if (best_for(a, &g) < best_for(b, &g)) hi = b;
      else lo = a;
    }
    best_for(0.5 * (lo + hi), &g);
    // Golden section locates a minimiser to about sqrt(machine eps) of its bracket.
    const double hi0 = std::max(1.0, 10 * (std::abs(y[M]) + std::sqrt(zy_norm)));
    EXPECT_LT((e.gamma - g).norm(), 1e-6 * (1 + g.norm()) + 1e-7 * hi0) << "M " << M << " mode " << e.mode;
  }
  EXPECT_GT(counts[kModeSliding], 10) << "M " << M;
  EXPECT_GT(counts[kModeNoContact], 10) << "M " << M;
  if (M > 0) {
    EXPECT_GT(counts[kModeStiction], 10) << "M " << M;
  }
}

TEST(EllipticCone, ProjectionIsTheNearestPointOfTheCone) {
  check_projection<0>(7);
  check_projection<2>(8);
  check_projection<3>(9);
  check_projection<5>(10);
}

// Sliding: the friction impulse is the maximum-dissipation point of the elliptic cone,
// gamma_i = -c mu_i^2 v_i with one c >= 0, on the cone's surface.
TEST(EllipticCone, SlidingFrictionOpposesMotionWithMaximumDissipation) {
  std::mt19937 rng(21);
  const auto p = random_params<5>(rng);
  int sliding = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const auto vc = sample_in_mode<5>(p, kModeSliding, rng);
    const Eval<5> e = eval<5>(p, vc);
    ++sliding;
    double c = -1, s = 0;
    for (int i = 0; i < 5; ++i) {
      const double ci = -e.gamma[i] / (p.mu[i] * p.mu[i] * vc[i]);
      if (c < 0) c = ci;
      EXPECT_NEAR(ci, c, 1e-9 * c);
      s += (e.gamma[i] / p.mu[i]) * (e.gamma[i] / p.mu[i]);
    }
    EXPECT_GT(c, 0.0);
    EXPECT_NEAR(std::sqrt(s), e.gamma[5], 1e-6 + 1e-6 * e.gamma[5]);
    EXPECT_LE(e.gamma.head(5).dot(vc.head(5)), 0.0);  // dissipative
  }
  EXPECT_EQ(sliding, 100);
}

// condim 3 with equal coefficients and rho = R_t mu^2 is SAP's cone (friction_cone).
TEST(EllipticCone, Condim3WithEqualCoefficientsIsTheCoulombCone) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  int counts[3] = {0, 0, 0};
  for (int trial = 0; trial < 500; ++trial) {
    const double mu = 0.1 + std::abs(u(rng));
    const FrictionConeParams<double> pc{1e-3 * (1.5 + u(rng)), 1e-4 * (1.5 + u(rng)), -0.01 * (1.5 + u(rng)), mu};
    EllipticConeParams<double, 2> pe{{mu, mu}, pc.R_t * mu * mu, pc.R_n, pc.v_hat_n};
    const double vc[3] = {0.05 * u(rng), 0.05 * u(rng), pc.v_hat_n + 0.02 * u(rng)};
    double gc[3], Gc[6], cc, ge[3], Ge[6], ce;
    const int mc = friction_cone<double>(pc, vc, gc, &cc, Gc, true);
    const int me = elliptic_cone<double, 2>(pe, vc, ge, &ce, Ge, true);
    ASSERT_EQ(mc, me);
    ++counts[mc];
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(ge[k], gc[k], 1e-10 * (1 + std::abs(gc[k])));
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(Ge[k], Gc[k], 1e-10 * (1 + std::abs(Gc[k])));
    EXPECT_NEAR(ce, cc, 1e-10 * (1 + cc));
  }
  for (int m = 0; m < 3; ++m) EXPECT_GT(counts[m], 20);
}

// The cost is C1: walking the spin velocity from 0 (stiction) into sliding at fixed normal
// velocity, gamma changes continuously and the region switches once.
TEST(EllipticCone, ContinuousAcrossRegions) {
  const EllipticConeParams<double, 3> p{{0.5, 0.5, 0.01}, 2e-3 * 0.25, 5e-4, -0.01};
  const double v_n = -0.02;  // y_n = 20 N s: stiction until |u| = 20 (spin 1 rad/s)
  Eigen::Vector4d prev = eval<3>(p, Eigen::Vector4d(0, 0, 0, v_n)).gamma;
  int last_mode = kModeStiction, switches = 0;
  for (int i = 1; i <= 20000; ++i) {
    const Eval<3> e = eval<3>(p, Eigen::Vector4d(0, 0, i * 1e-4, v_n));
    EXPECT_LT((e.gamma - prev).norm(), 1e-2 * (1 + prev.norm()));
    switches += e.mode != last_mode;
    last_mode = e.mode;
    prev = e.gamma;
  }
  EXPECT_EQ(switches, 1);
  // Sliding in spin alone: the torsional impulse reaches mu_spin gamma_n.
  const Eval<3> far = eval<3>(p, Eigen::Vector4d(0, 0, 1e3, v_n));
  EXPECT_EQ(far.mode, kModeSliding);
  EXPECT_NEAR(-far.gamma[2], 0.01 * far.gamma[3], 1e-6 * far.gamma[3]);
}

// ---------------------------------------------------------------------------------------------
// Hunt-Crossley with elliptic friction (hunt_crossley_elliptic, the similar and lagged
// approximations with condim 4 and 6): gradient and Hessian against central differences,
// G symmetric positive semi-definite, condim 3 equal to hunt_crossley, the impulse on MuJoCo's
// cone in the direction of maximum dissipation.
namespace {

template <int M>
struct HcEval {
  static constexpr int n = M + 1;
  Eigen::Matrix<double, n, 1> gamma;
  Eigen::Matrix<double, n, n> G;
  double cost;
  int mode;
};

template <int M>
HcEval<M> hc_eval(const HuntCrossleyParams<double>& p, const double* mu, double h, bool lagged,
                  const Eigen::Matrix<double, M + 1, 1>& vc) {
  constexpr int n = M + 1;
  HcEval<M> e;
  double g[n], G[n * (n + 1) / 2];
  e.mode = hunt_crossley_elliptic<double, M>(p, mu, h, lagged, vc.data(), g, &e.cost, G, true);
  for (int i = 0; i < n; ++i) {
    e.gamma[i] = g[i];
    for (int j = 0; j < n; ++j) e.G(i, j) = G[sym_packed_index(n, i, j)];
  }
  return e;
}

template <int M>
void check_hc_derivatives(bool lagged, int seed) {
  constexpr int n = M + 1;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.3, 3.0), s(-1, 1);
  const double scale[5] = {1.0, 1.0, 5e-3, 1e-4, 1e-4};
  int checked = 0, contact = 0;
  for (int trial = 0; trial < 40; ++trial) {
    double mu[M];
    for (int i = 0; i < M; ++i) mu[i] = scale[i] * u(rng);
    const double h = 1e-3;
    HuntCrossleyParams<double> p{mu[0], 1e5 * u(rng), 10 * u(rng), 50 * u(rng), h * 50 * u(rng), 1e-4 * u(rng)};
    Eigen::Matrix<double, n, 1> vc;
    // Friction velocities over four decades (inside and far outside eps), normal in contact or not.
    for (int i = 0; i < M; ++i) vc[i] = std::pow(10.0, -5 + 4 * std::abs(s(rng))) * (s(rng) > 0 ? 1 : -1) / (mu[i] / mu[0]);
    vc[M] = 0.05 * s(rng);
    const HcEval<M> e = hc_eval<M>(p, mu, h, lagged, vc);
    contact += e.gamma[M] > 0;
    // Derivatives in the scaled velocities u (v_i = S_i u_i, S = diag(mu_1 / mu_i), 1 for the
    // normal), where every direction has the same scale: gamma_u = S gamma, G_u = S G S.
    Eigen::Matrix<double, n, 1> S = Eigen::Matrix<double, n, 1>::Ones();
    for (int i = 0; i < M; ++i) S[i] = mu[0] / mu[i];
    const Eigen::Matrix<double, n, 1> gamma_u = S.cwiseProduct(e.gamma);
    const Eigen::Matrix<double, n, n> G_u = S.asDiagonal() * e.G * S.asDiagonal();
    for (int k = 0; k < n; ++k) {
      const double step_u = 1e-7 * (std::abs(vc[k] / S[k]) + 1e-4);
      auto a = vc, b = vc;
      a[k] += step_u * S[k];
      b[k] -= step_u * S[k];
      const HcEval<M> ea = hc_eval<M>(p, mu, h, lagged, a), eb = hc_eval<M>(p, mu, h, lagged, b);
      // Skip samples straddling a kink of n(z) (the end of the elastic or dissipative range).
      if ((ea.gamma[M] > 0) != (eb.gamma[M] > 0) || (ea.gamma[M] > 0) != (e.gamma[M] > 0)) continue;
      ++checked;
      const double grad_fd = (ea.cost - eb.cost) / (2 * step_u);
      const Eigen::Matrix<double, n, 1> col_fd = -S.cwiseProduct(ea.gamma - eb.gamma) / (2 * step_u);
      EXPECT_NEAR(-grad_fd, gamma_u[k], 1e-5 * (gamma_u.norm() + 1e-9)) << "M " << M << " lagged " << lagged << " k " << k;
      EXPECT_LT((col_fd - G_u.col(k)).norm(), 1e-4 * (G_u.col(k).norm() + 1e-6 * G_u.norm() + 1e-12))
          << "M " << M << " lagged " << lagged << " k " << k;
    }
    EXPECT_LT((e.G - e.G.transpose()).norm(), 1e-14 * (1 + e.G.norm()));
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, n, n>> es(e.G);
    EXPECT_GT(es.eigenvalues().minCoeff(), -1e-9 * (1 + e.G.norm()));
    // The friction impulse lies on MuJoCo's cone at the friction's normal impulse n_f and opposes
    // the scaled velocity: |(gamma_i / mu_i)| = n_f |u| / (|u|_s + eps) <= n_f.
    double z2 = 0;
    for (int i = 0; i < M; ++i) z2 += (e.gamma[i] / mu[i]) * (e.gamma[i] / mu[i]);
    const double n_f = lagged ? p.n0 : e.gamma[M];
    EXPECT_LE(std::sqrt(z2), n_f * (1 + 1e-12));
    double power = 0;
    for (int i = 0; i < M; ++i) power += e.gamma[i] * vc[i];
    EXPECT_LE(power, 1e-15);
  }
  EXPECT_GT(checked, 30 * n);
  EXPECT_GT(contact, 5);
}

}  // namespace

TEST(EllipticHuntCrossley, GradientAndHessianMatchFiniteDifferences) {
  for (bool lagged : {true, false}) {
    check_hc_derivatives<2>(lagged, 10 + lagged);
    check_hc_derivatives<3>(lagged, 20 + lagged);
    check_hc_derivatives<5>(lagged, 30 + lagged);
  }
}

TEST(EllipticHuntCrossley, Condim3EqualsHuntCrossley) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (bool lagged : {true, false})
    for (int trial = 0; trial < 200; ++trial) {
      const double mu = 0.1 + std::abs(u(rng)), h = 2e-3;
      const HuntCrossleyParams<double> p{mu, 1e5 * (1.5 + u(rng)), 5 * (1.5 + u(rng)), 20 * u(rng), h * 20 * (1 + u(rng)),
                                         1e-4 * (1.5 + u(rng))};
      const double m2[2] = {mu, mu};
      const double vc[3] = {0.01 * u(rng), 0.01 * u(rng), 0.02 * u(rng)};
      double g0[3], G0[6], c0, g1[3], G1[6], c1;
      const int a = hunt_crossley<double>(p, h, lagged, vc, g0, &c0, G0, true);
      const int b = hunt_crossley_elliptic<double, 2>(p, m2, h, lagged, vc, g1, &c1, G1, true);
      EXPECT_EQ(a, b);
      EXPECT_NEAR(c1, c0, 1e-12 * (1 + std::abs(c0)));
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(g1[k], g0[k], 1e-12 * (1 + std::abs(g0[k])));
      for (int k = 0; k < 6; ++k) EXPECT_NEAR(G1[k], G0[k], 1e-10 * (1 + std::abs(G0[k])));
    }
}
