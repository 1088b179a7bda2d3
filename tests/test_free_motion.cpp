// Contact-free stepping (stages 1 and 4): analytic periods, conservation laws, batch invariance,
// isolation of failing worlds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "sap/dynamics.hpp"
#include "sap/solver_sap.hpp"
#include "test_models.hpp"

using namespace sap;
using namespace sap::testing;

namespace {

// Steps nworld worlds from per-world initial states; returns qpos of every step of world `watch`.
struct Runner {
  Model m;
  Context ctx;
  SolverSAP solver;
  State a, b;
  Control control;
  Contacts none;
  Runner(const Model& model, int nworld, const SolverOptions& opt, int threads = 2)
      : m(model),
        ctx(Backend::CPU, threads),
        solver(m, ctx, nworld, opt),
        a(m, nworld, Backend::CPU),
        b(m, nworld, Backend::CPU),
        control(m, nworld, Backend::CPU),
        none(nworld, 0, Backend::CPU) {}
  void set(int w, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
    a.qpos.world_from_host(w, q.data());
    a.qvel.world_from_host(w, v.data());
  }
  void step(double h) {
    solver.step(a, b, control, none, h);
    std::swap(a, b);
  }
  Eigen::VectorXd qpos(int w) const {
    const auto h = a.qpos.world_to_host(w);
    return Eigen::Map<const Eigen::VectorXd>(h.data(), m.nq);
  }
  Eigen::VectorXd qvel(int w) const {
    const auto h = a.qvel.world_to_host(w);
    return Eigen::Map<const Eigen::VectorXd>(h.data(), m.nv);
  }
};

SolverOptions preset(const char* name) {
  SolverOptions o;
  o.contact_preset_variant = parse_preset(name);
  return o;
}

Model pendulum(double l, double mass) {
  ModelBuilder b;
  BodySpec bs;
  bs.name = "bob";
  bs.mass = mass;
  bs.com = {0, 0, -l};
  bs.inertia = {0, 0, 0, 0, 0, 0};  // point mass
  const int id = b.add_body(bs);
  JointSpec j;
  j.name = "hinge";
  j.type = kJointHinge;
  j.axis = {1, 0, 0};
  b.add_joint(id, j);
  return b.finalize();
}

// Period from upward zero crossings of x(t), linearly interpolated.
double measured_period(const std::vector<double>& x, double h) {
  std::vector<double> crossings;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (x[i - 1] < 0 && x[i] >= 0) crossings.push_back(h * (static_cast<double>(i - 1) + x[i - 1] / (x[i - 1] - x[i])));
  if (crossings.size() < 2) return NAN;
  return (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
}

}  // namespace

class PendulumPeriod : public ::testing::TestWithParam<const char*> {};

// Small-angle period of a simple pendulum: 2 pi sqrt(l / g) within 0.5 %.
TEST_P(PendulumPeriod, MatchesSmallAngleFormula) {
  const double l = 0.75, g = 9.81, h = 1e-3;
  Runner r(pendulum(l, 1.3), 1, preset(GetParam()));
  Eigen::VectorXd q(1), v(1);
  q << 0.01;
  v << 0.0;
  r.set(0, q, v);
  std::vector<double> theta;
  for (int k = 0; k < 8000; ++k) {
    r.step(h);
    theta.push_back(r.qpos(0)[0]);
  }
  const double T = measured_period(theta, h), T0 = 2 * kPi * std::sqrt(l / g);
  EXPECT_NEAR(T / T0, 1.0, 0.005) << "T = " << T << ", 2 pi sqrt(l/g) = " << T0;
}
INSTANTIATE_TEST_SUITE_P(Presets, PendulumPeriod, ::testing::Values("approx32", "approx64", "drake"));

namespace {
// Free body with its frame at the com and a full (non-diagonal) inertia tensor.
Model tumbling_body() {
  ModelBuilder b;
  b.set_gravity({0, 0, 0});
  BodySpec bs;
  bs.name = "body";
  bs.mass = 3.0;
  bs.com = {0, 0, 0};
  bs.inertia = random_inertia(*std::make_unique<std::mt19937>(3), 0.4);
  const int id = b.add_body(bs);
  JointSpec j;
  j.type = kJointFree;
  b.add_joint(id, j);
  return b.finalize();
}

// Relative drift of the world angular momentum (about the origin) over `steps` steps.
double momentum_drift(const SolverOptions& opt, double h, int steps, double* max_quat_error) {
  const Model m = tumbling_body();
  Runner r(m, 1, opt);
  Eigen::VectorXd q(7), v(6);
  q << 0.1, 0.2, 0.3, 1, 0, 0, 0;
  v << 0.3, -0.1, 0.2, 1.5, 4.0, 0.3;  // spin close to the intermediate axis
  r.set(0, q, v);
  DynamicsEvaluator ev(m);
  ev.compute(q, v);
  const Eigen::Matrix<double, 6, 1> h0 = ev.momentum();
  double drift = 0;
  *max_quat_error = 0;
  for (int k = 0; k < steps; ++k) {
    r.step(h);
    const Eigen::VectorXd qk = r.qpos(0), vk = r.qvel(0);
    ev.compute(qk, vk);
    drift = std::max(drift, (ev.momentum() - h0).norm() / h0.norm());
    *max_quat_error = std::max(*max_quat_error, std::abs(qk.segment<4>(3).norm() - 1));
  }
  return drift;
}
}  // namespace

// Torque-free body: world angular momentum conserved within 1e-6 over 1000 steps at h = 1 ms
// with the approximate presets (midpoint Coriolis + midpoint positions); quaternions stay unit.
TEST(TorqueFreeBody, MomentumConservedMidpoint) {
  double qerr = 0;
  const double drift = momentum_drift(preset("approx64"), 1e-3, 1000, &qerr);
  std::printf("[torque-free] approx64 (midpoint Coriolis): relative momentum drift %.2e over 1000 steps\n", drift);
  EXPECT_LT(drift, 1e-6);
  EXPECT_LT(qerr, 1e-14);
}

// The number of midpoint passes sets the order of the drift: each pass multiplies the distance
// to the midpoint fixed point by ~h |A^-1 dC/dv| / 2 = O(h), so one pass leaves an O(h^2) drift
// over a fixed time (quarters when h halves), two O(h^3). approx32 takes one pass by default:
// its fp32 free motion rounds at 6e-8 per step, and its drift with one pass or two is the same
// rounding-level 5e-7 over 1000 steps (the second pass would buy nothing); approx64 takes two.
TEST(TorqueFreeBody, MidpointPassesSetTheDriftOrder) {
  double qerr = 0;
  SolverOptions one = preset("approx64");
  one.coriolis_iterations = 1;
  const double d1 = momentum_drift(one, 1e-3, 1000, &qerr), d2 = momentum_drift(one, 5e-4, 2000, &qerr);
  const double two = momentum_drift(preset("approx64"), 1e-3, 1000, &qerr);
  const double f32 = momentum_drift(preset("approx32"), 1e-3, 1000, &qerr);
  SolverOptions f32_two = preset("approx32");
  f32_two.coriolis_iterations = 2;
  const double f32_2 = momentum_drift(f32_two, 1e-3, 1000, &qerr);
  std::printf("[torque-free] approx64 one pass: drift %.2e (h = 1 ms), %.2e (h = 0.5 ms); two passes %.2e; "
              "approx32 one pass %.2e, two passes %.2e\n", d1, d2, two, f32, f32_2);
  EXPECT_NEAR(d1 / d2, 4.0, 1.0);  // second order
  EXPECT_LT(d1, 1e-6);
  EXPECT_LT(two, 1e-3 * d1);       // the second pass: three orders of magnitude here
  EXPECT_LT(f32, 1e-6);            // approx32: fp32 rounding dominates either way
  EXPECT_LT(f32, 2.0 * f32_2);
  EXPECT_GT(f32_2, 2.0 * d1);      // fp32 rounding drifts more than one fp64 pass leaves
}

// Drake's explicit gyroscopic terms drift at first order in h: the drift halves (within 25 %)
// when h halves at fixed simulated time (documented in docs/conventions.md).
TEST(TorqueFreeBody, ExplicitCoriolisDriftIsFirstOrder) {
  double qerr = 0;
  const double d1 = momentum_drift(preset("drake"), 1e-3, 1000, &qerr);
  const double d2 = momentum_drift(preset("drake"), 5e-4, 2000, &qerr);
  std::printf("[torque-free] drake (explicit Coriolis): drift %.2e (h = 1 ms), %.2e (h = 0.5 ms)\n", d1, d2);
  EXPECT_LT(d1, 5e-3);
  EXPECT_NEAR(d1 / d2, 2.0, 0.5);
  EXPECT_LT(qerr, 1e-14);
}

namespace {
Model double_pendulum() {
  ModelBuilder b;
  BodySpec l1;
  l1.name = "link1";
  l1.pos = {0, 0, 2};
  l1.mass = 1.2;
  l1.com = {0, 0, -0.5};
  l1.inertia = {0.1, 0.1, 0.01, 0, 0, 0};
  const int b1 = b.add_body(l1);
  JointSpec j;
  j.type = kJointHinge;
  j.axis = {1, 0, 0};
  b.add_joint(b1, j);
  BodySpec l2 = l1;
  l2.name = "link2";
  l2.parent = b1;
  l2.pos = {0, 0, -1};
  l2.mass = 0.8;
  l2.com = {0, 0, -0.4};
  const int b2 = b.add_body(l2);
  b.add_joint(b2, j);
  return b.finalize();
}

// Mean energy over the first and the last second of a 10 s run, and the largest excursion.
struct EnergyRun {
  double e0, first, last, worst;
};
EnergyRun run_double_pendulum(const SolverOptions& opt, double h) {
  const Model m = double_pendulum();
  Runner r(m, 1, opt);
  Eigen::VectorXd q(2), v(2);
  q << 1.2, -0.6;
  v << 0.0, 0.5;
  r.set(0, q, v);
  DynamicsEvaluator ev(m);
  auto energy = [&](const Eigen::VectorXd& qq, const Eigen::VectorXd& vv) {
    ev.compute(qq, vv);
    return ev.kinetic_energy() + ev.potential_energy();
  };
  EnergyRun out{energy(q, v), 0, 0, 0};
  const int steps = static_cast<int>(std::lround(10.0 / h)), window = static_cast<int>(std::lround(1.0 / h));
  for (int k = 0; k < steps; ++k) {
    r.step(h);
    const double e = energy(r.qpos(0), r.qvel(0));
    if (k < window) out.first += e / window;
    if (k >= steps - window) out.last += e / window;
    out.worst = std::max(out.worst, std::abs(e - out.e0));
  }
  return out;
}
}  // namespace

// Conservative double pendulum with the sap_euler map (symplectic Euler): the energy oscillates
// within bounds and does not grow (a slight numerical loss, < 0.5 % over 10 s, is allowed).
TEST(DoublePendulum, EnergyDoesNotGrowSapEuler) {
  for (const char* p : {"drake", "approx64"}) {
    SolverOptions o = preset(p);
    o.position_integration = PositionIntegrationMode::SapEuler;
    const EnergyRun r = run_double_pendulum(o, 1e-3);
    const double scale = 2.0 * 9.81;  // potential energy scale of the links (m g l)
    EXPECT_LT(r.last - r.first, 1e-4 * scale) << p << ": mean energy grows " << r.first << " -> " << r.last;
    EXPECT_GT(r.last - r.first, -5e-3 * std::abs(r.e0)) << p << ": mean energy " << r.first << " -> " << r.last;
    EXPECT_LT(r.worst, 2e-2 * scale) << p;
  }
}

// The midpoint map of the approximate presets, q_{n+1} = q_n + h (v_n + v_{n+1}) / 2 with forces
// at q_n, is not symplectic (for x'' = -w^2 x its step matrix has determinant 1 + h^2 w^2 / 2):
// the energy grows at a rate proportional to h. Checked as a first-order rate, so that a change
// to the scheme shows up here.
TEST(DoublePendulum, MidpointEnergyGrowthIsFirstOrderInH) {
  const EnergyRun a = run_double_pendulum(preset("approx64"), 1e-3);
  const EnergyRun b = run_double_pendulum(preset("approx64"), 5e-4);
  const double ga = a.last - a.first, gb = b.last - b.first;
  EXPECT_GT(ga, 0.0);
  EXPECT_NEAR(ga / gb, 2.0, 0.4) << "growth " << ga << " at h = 1e-3, " << gb << " at h = 5e-4";
}

// World w's trajectory is bitwise identical whatever nworld and the thread count.
TEST(BatchInvariance, TrajectoryIndependentOfBatch) {
  std::mt19937 rng(42);
  RandomTreeOptions o;
  o.nbody = 5;
  o.damping = 0.1;
  o.springs = true;
  const Model m = random_tree(rng, o);
  const int nworld = 37;
  std::vector<Eigen::VectorXd> q0, v0;
  for (int w = 0; w < nworld; ++w) {
    q0.push_back(random_qpos(m, rng));
    v0.push_back(random_qvel(m, rng));
  }
  for (const char* p : {"approx32", "drake"}) {
    Runner big(m, nworld, preset(p), 2), small(m, 1, preset(p), 1);
    for (int w = 0; w < nworld; ++w) big.set(w, q0[static_cast<std::size_t>(w)], v0[static_cast<std::size_t>(w)]);
    const int watch = 29;
    small.set(0, q0[watch], v0[watch]);
    for (int k = 0; k < 50; ++k) {
      big.step(2e-3);
      small.step(2e-3);
    }
    const Eigen::VectorXd a = big.qpos(watch), b = small.qpos(0);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(m.nq)), 0) << p;
    const Eigen::VectorXd va = big.qvel(watch), vb = small.qvel(0);
    EXPECT_EQ(std::memcmp(va.data(), vb.data(), sizeof(double) * static_cast<std::size_t>(m.nv)), 0) << p;
  }
}

// A world with NaN input is flagged and keeps its state; the others are bit-identical to a
// run without the bad world.
TEST(FailureIsolation, NonFiniteWorldIsFlaggedOthersUnaffected) {
  std::mt19937 rng(5);
  const Model m = random_tree(rng);
  const int nworld = 4, bad = 2;
  Runner clean(m, nworld, preset("approx64")), dirty(m, nworld, preset("approx64"));
  for (int w = 0; w < nworld; ++w) {
    const Eigen::VectorXd q = random_qpos(m, rng), v = random_qvel(m, rng);
    clean.set(w, q, v);
    Eigen::VectorXd vd = v;
    if (w == bad) vd[1] = std::nan("");
    dirty.set(w, q, vd);
  }
  const Eigen::VectorXd bad_q = dirty.qpos(bad);
  for (int k = 0; k < 5; ++k) {
    clean.step(1e-3);
    dirty.step(1e-3);
    const std::vector<int> st = dirty.solver.world_status();
    EXPECT_TRUE(st[bad] & kStatusNonFinite) << status_string(st[bad]);
    EXPECT_EQ(dirty.solver.failed_world_count(), 1);
  }
  for (int w = 0; w < nworld; ++w) {
    if (w == bad) continue;
    const Eigen::VectorXd a = clean.qpos(w), b = dirty.qpos(w);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(m.nq)), 0) << w;
  }
  EXPECT_EQ((dirty.qpos(bad) - bad_q).norm(), 0.0);
}

// Motor actuators and applied forces enter v* explicitly: a slider pushed by a constant force
// F under no gravity accelerates at F / (m + armature); the motor clamps to its force range.
TEST(FreeMotion, MotorAndAppliedForce) {
  ModelBuilder b;
  b.set_gravity({0, 0, 0});
  BodySpec bs;
  bs.name = "cart";
  bs.mass = 2.0;
  bs.inertia = {0.1, 0.1, 0.1, 0, 0, 0};
  const int id = b.add_body(bs);
  JointSpec j;
  j.name = "slide";
  j.type = kJointSlide;
  j.axis = {1, 0, 0};
  j.armature = 0.5;
  const int jid = b.add_joint(id, j);
  ActuatorSpec a;
  a.name = "motor";
  a.type = kActMotor;
  a.joint = jid;
  a.gear = 2.0;
  a.forcelimited = true;
  a.forcerange = {-1.5, 1.5};
  b.add_actuator(a);
  const Model m = b.finalize();
  Runner r(m, 1, preset("approx64"));
  const double ctrl = 10.0, applied = 0.7;  // motor saturates at 1.5 * gear 2 = 3 N
  r.control.ctrl.world_from_host(0, &ctrl);
  r.control.qfrc_applied.world_from_host(0, &applied);
  const double h = 1e-2;
  for (int k = 0; k < 10; ++k) r.step(h);
  EXPECT_NEAR(r.qvel(0)[0], 10 * h * (3.0 + 0.7) / 2.5, 1e-12);
}
