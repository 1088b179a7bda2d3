// Joint dry friction (dof_frictionloss f; MJCF frictionloss, URDF <dynamics friction>) as a SAP
// box row (docs/sap-math.md §13): vc = v_dof, v_hat = 0, |gamma| <= h f, R = sigma / A_jj.
// Row level: the impulse is minus the cost's derivative and G its second derivative (central
// finite differences in stiction and in sliding of both signs), G >= 0, |gamma| <= h f.
// Physics: a free hinge (no gravity torque) under an applied torque tau below f creeps at the
// regularisation's speed R h tau and no faster; above f it accelerates at (tau - f) / I exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/sap_constraints.hpp"
#include "sap/contacts.hpp"
#include "sap/mjcf.hpp"
#include "sap/model_builder.hpp"
#include "sap/solver_sap.hpp"
#include "model/solve_data.hpp"

namespace {

using namespace sap;

struct Row {
  double R, lo, hi;
  double cost(double vc, double* gamma = nullptr, double* G = nullptr) const {
    double g, gg;
    const double l = holonomic_row<double>(R, 0.0, lo, hi, vc, &g, &gg);
    if (gamma) *gamma = g;
    if (G) *G = gg;
    return l;
  }
};

Row make_row(double h, double f, double sigma, double w) {
  Row r;
  friction_loss_params<double>(h, f, sigma, w, &r.R, &r.lo, &r.hi);
  return r;
}

TEST(FrictionLossRow, GradientAndHessianMatchFiniteDifferencesInEveryRegion) {
  const double h = 2e-3, f = 3.0, sigma = 1e-3, w = 1.0 / 0.7;
  const Row r = make_row(h, f, sigma, w);
  EXPECT_DOUBLE_EQ(r.R, sigma * w);
  EXPECT_DOUBLE_EQ(r.hi, h * f);
  EXPECT_DOUBLE_EQ(r.lo, -h * f);
  const double v_slip = r.R * h * f;  // stiction/sliding boundary
  struct Case {
    double vc;
    const char* region;
  };
  for (const Case& c : {Case{0.0, "stiction"}, Case{0.3 * v_slip, "stiction"}, Case{-0.8 * v_slip, "stiction"},
                        Case{2.0 * v_slip, "sliding +"}, Case{-5.0 * v_slip, "sliding -"}, Case{0.4, "sliding +"},
                        Case{-1.3, "sliding -"}}) {
    SCOPED_TRACE(std::string(c.region) + " vc = " + std::to_string(c.vc));
    double gamma, G;
    r.cost(c.vc, &gamma, &G);
    const double eps = 1e-4 * v_slip;
    double gp, gm;
    const double dl = (r.cost(c.vc + eps) - r.cost(c.vc - eps)) / (2 * eps);
    r.cost(c.vc + eps, &gp);
    r.cost(c.vc - eps, &gm);
    const double dgamma = (gp - gm) / (2 * eps);
    EXPECT_NEAR(-gamma, dl, 1e-6 * std::abs(r.hi) + 1e-9 * std::abs(dl));  // gamma = -dl/dvc
    EXPECT_NEAR(G, -dgamma, 1e-6 / r.R);                                   // G = d2l/dvc2 = -dgamma/dvc
    EXPECT_GE(G, 0.0);                                                      // convex
    EXPECT_LE(std::abs(gamma), h * f * (1 + 1e-15));                        // impulse bound
    if (c.region[0] == 's' && c.region[1] == 't') {
      EXPECT_DOUBLE_EQ(G, 1.0 / r.R);
      EXPECT_DOUBLE_EQ(gamma, -c.vc / r.R);
    } else {
      EXPECT_EQ(G, 0.0);
      EXPECT_DOUBLE_EQ(gamma, c.vc > 0 ? -h * f : h * f);  // opposes the motion
    }
  }
  // The cost is C1 across the region boundary (value and slope continue).
  for (double s : {1.0, -1.0}) {
    const double b = s * v_slip, e = 1e-9 * v_slip;
    double g1, g2;
    const double l1 = r.cost(b - s * e, &g1), l2 = r.cost(b + s * e, &g2);
    EXPECT_NEAR(l1, l2, 2 * e * h * f * 1.01);  // |dl/dvc| <= h f over the 2e gap
    EXPECT_NEAR(g1, g2, 1e-6 * h * f);
  }
}

// A body on a hinge about z (gravity along -z exerts no torque), inertia I about the axis.
Model hinge(double I, double f) {
  ModelBuilder b;
  BodySpec body;
  body.name = "wheel";
  body.mass = 1.0;
  body.inertia = {0.5, 0.5, I, 0, 0, 0};
  const int id = b.add_body(body);
  JointSpec j;
  j.name = "axle";
  j.type = kJointHinge;
  j.axis = {0, 0, 1};
  j.frictionloss = f;
  b.add_joint(id, j);
  return b.finalize();
}

SolverOptions preset_options(const char* preset, const char* line_search = nullptr) {
  SolverOptions o;
  set_solver_option(o, "contact_preset_variant", preset);
  if (line_search) set_solver_option(o, "line_search_variant", line_search);
  return o;
}

struct Hinge {
  Model m;
  Context ctx{Backend::CPU, 1};
  SolverSAP solver;
  State a, b;
  Control control;
  Contacts none{1, 0, Backend::CPU};
  Hinge(const Model& model, const SolverOptions& o)
      : m(model), solver(m, ctx, 1, o), a(m, 1, Backend::CPU), b(m, 1, Backend::CPU), control(m, 1, Backend::CPU) {
    a.reset(m);
  }
  void torque(double tau) { control.qfrc_applied.world_from_host(0, &tau); }
  int step(double h) {
    solver.step(a, b, control, none, h);
    std::swap(a, b);
    return solver.world_status()[0];
  }
  double q() const { return a.qpos.world_to_host(0)[0]; }
  double v() const { return a.qvel.world_to_host(0)[0]; }
};

TEST(FrictionLossPhysics, BelowTheThresholdTheHingeOnlyCreeps) {
  const double I = 0.2, f = 1.5, tau = 0.6 * f, h = 1e-3;
  for (const char* preset : {"approx64", "drake", "approx32"}) {
    SCOPED_TRACE(preset);
    Hinge r(hinge(I, f), preset_options(preset));
    ASSERT_EQ(r.solver.solve_data().size().nhol, 1);
    r.torque(tau);
    for (int i = 0; i < 1000; ++i) {
      const int st = r.step(h);
      ASSERT_FALSE(st & kStatusFailed) << status_string(st);
    }
    // Stiction: A (v - v_prev - h tau / A) = gamma = -v / R has the fixed point v = R h tau,
    // R = sigma / A_jj (A_jj = I here: no armature, no damping).
    const double R = 1e-3 / I, creep = R * h * tau;
    EXPECT_NEAR(r.v(), creep, 1e-6 * creep + (std::string(preset) == "approx32" ? 1e-9 : 1e-14));
    EXPECT_LT(std::abs(r.q()), 1000 * h * creep * 1.01);  // at most the creep's travel in 1 s
    // Without the friction row the same torque turns it by tau t^2 / (2 I) = 2.25 rad.
  }
}

TEST(FrictionLossPhysics, AboveTheThresholdItAcceleratesAtTauMinusFOverI) {
  const double I = 0.2, f = 1.5, h = 1e-3;
  for (double tau : {2.5 * f, -1.2 * f}) {
    // exact_root: Drake's line search and stopping tests (cost_rel_tol 1e-15). Under the default
    // monotone_decay (cost_rel_tol 5e-3) the first step from rest stops at the stiction
    // quadratic's minimiser: the Newton step from v = 0 lowers the cost by only ~1e-3 relative,
    // so the cost-stall test ends the solve there (exit reason 2, |D g| 1.5e6 x its threshold) and
    // breakaway comes one step late. Measured, documented in docs/solver.md; not fixed here.
    Hinge r(hinge(I, f), preset_options("drake", "exact_root"));
    r.torque(tau);
    const int n = 500;
    for (int i = 0; i < n; ++i) {
      const int st = r.step(h);
      ASSERT_FALSE(st & kStatusFailed);
    }
    const double a = (tau - (tau > 0 ? f : -f)) / I;  // friction opposes the motion
    EXPECT_NEAR(r.v(), n * h * a, 1e-9 * std::abs(n * h * a)) << "tau = " << tau;
    const double gamma = r.solver.solve_data().gamma.world_to_host(0)[r.solver.solve_data().size().hol_row(0)];
    EXPECT_NEAR(gamma, tau > 0 ? -h * f : h * f, 1e-12);  // the row sits on its bound
  }
}

// MJCF joint frictionloss (and through a default class) reaches dof_frictionloss.
TEST(FrictionLossImport, MjcfFrictionlossAndDefaults) {
  const Model m = load_mjcf_string(R"(<mujoco>
  <default><default class="sticky"><joint frictionloss="0.25"/></default></default>
  <worldbody><body><joint name="a" type="hinge" frictionloss="0.5"/><geom size="0.1" mass="1"/>
    <body><joint name="b" type="slide" class="sticky"/><geom size="0.1" mass="1"/></body></body></worldbody>
</mujoco>)",
                                   "model.xml").model;
  ASSERT_EQ(m.nv, 2);
  EXPECT_DOUBLE_EQ(m.dof_frictionloss[0], 0.5);
  EXPECT_DOUBLE_EQ(m.dof_frictionloss[1], 0.25);
}

// MuJoCo oracle (tools/reference/frictionloss_reference.py -> tests/data/mujoco/frictionloss_hinge.json): the
// same MJCF stepped by MuJoCo under tau = 0.9, 3.75, -1.8 N m with f = 1.5. Above the threshold
// MuJoCo's frictionloss row saturates at f as ours does: the velocities agree at every step (ours
// with exact_root, which breaks away on the first step). Below it both only creep; MuJoCo's soft
// row (solreffriction) creeps faster than ours (R = sigma / A_jj): 4.75e-3 rad/s against 4.5e-6.
TEST(FrictionLossOracle, MatchesMujocoOnAHinge) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/frictionloss_hinge.json");
  ASSERT_TRUE(in.good()) << "missing fixture (run tools/reference/frictionloss_reference.py)";
  const nlohmann::json ref = nlohmann::json::parse(in);
  const Model m = load_mjcf_string(ref["xml"].get<std::string>(), "frictionloss_hinge.xml").model;
  ASSERT_EQ(m.nv, 1);
  EXPECT_DOUBLE_EQ(m.dof_frictionloss[0], ref["frictionloss"].get<double>());
  const double h = ref["timestep"].get<double>(), f = ref["frictionloss"].get<double>();
  const double I = ref["inertia"].get<double>();
  for (const auto& run : ref["runs"]) {
    const double tau = run["tau"].get<double>();
    const std::vector<double> mj = run["qvel"].get<std::vector<double>>();
    SCOPED_TRACE("tau = " + std::to_string(tau));
    Hinge r(m, preset_options("drake", "exact_root"));
    r.torque(tau);
    double max_err = 0;
    for (std::size_t i = 0; i < mj.size(); ++i) {
      ASSERT_FALSE(r.step(h) & kStatusFailed);
      max_err = std::max(max_err, std::abs(r.v() - mj[i]));
    }
    if (std::abs(tau) > f) {
      EXPECT_LT(max_err, 1e-9 * std::abs(mj.back())) << "MuJoCo " << mj.back() << ", ours " << r.v();
    } else {
      const double free_v = mj.size() * h * tau / I;  // without friction
      EXPECT_LT(std::abs(mj.back()), 0.01 * std::abs(free_v));
      EXPECT_LT(std::abs(r.v()), std::abs(mj.back()));
      EXPECT_GT(r.v() * tau, 0.0);  // creeps the way it is pushed
    }
  }
}

}  // namespace
