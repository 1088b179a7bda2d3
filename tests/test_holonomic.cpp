// Holonomic SAP rows (docs/sap-math.md §12): fixed-tendon limits and the equality constraints
// joint (coupler), connect (ball) and weld. Checked by
// * finite differences of the row function (cost, impulse, Hessian) in every region,
// * finite differences of each constraint's function g(q) against its Jacobian (J v = dg/dt),
// * finite differences of the assembled objective (gradient and Hessian) with each constraint,
// * analytic physics: a coupled pair keeps its ratio at the predicted equilibrium, a tendon limit
//   stops a two-joint chain at its limit length, a connect closes a four-bar that then moves with
//   one degree of freedom, a weld holds a body at the sag its compliance predicts.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>

#include "kernels/newton.hpp"
#include "kernels/sap_constraints.hpp"
#include "sap/backend/launch_cpu.hpp"
#include "sap/model_builder.hpp"
#include "sap/solver_sap.hpp"
#include "model/solve_data.hpp"

using namespace sap;

namespace {

constexpr double kG = 9.81;

// ------------------------------------------------------------------------------------------
// The row function.
TEST(HolonomicRow, GradientAndHessianInEveryRegion) {
  const double R = 3e-4, vhat = 0.02, fd = 1e-8;
  struct Bounds {
    double lo, hi;
  };
  // Equality (unbounded), one-sided limit, and a box with finite bounds on both sides.
  for (const Bounds b : {Bounds{-1e300, 1e300}, Bounds{0.0, 1e300}, Bounds{-15.0, 40.0}}) {
    int below = 0, inside = 0, above = 0;
    for (double vc = -0.1; vc <= 0.1; vc += 0.0017) {
      double g, G, ga, gb;
      const double cost = holonomic_row<double>(R, vhat, b.lo, b.hi, vc, &g, &G);
      const double ca = holonomic_row<double>(R, vhat, b.lo, b.hi, vc + fd, &ga, nullptr);
      const double cb = holonomic_row<double>(R, vhat, b.lo, b.hi, vc - fd, &gb, nullptr);
      EXPECT_NEAR(-(ca - cb) / (2 * fd), g, 1e-6 * (1 + std::abs(g)));  // gamma = -dl/dvc
      EXPECT_NEAR(-(ga - gb) / (2 * fd), G, 1e-5 * (1 + G));            // G = -dgamma/dvc
      EXPECT_GE(g, b.lo);
      EXPECT_LE(g, b.hi);
      const double y = (vhat - vc) / R;
      if (y < b.lo) ++below;
      else if (y > b.hi) ++above;
      else ++inside;
      // Convex and lower bounded by the linearisation at vc = vhat (l = 0, gamma = 0 there).
      EXPECT_GE(cost, -1e-15);
    }
    EXPECT_GT(inside, 3);
    if (b.lo > -1e300) EXPECT_GT(below, 3);
    if (b.hi < 1e300) EXPECT_GT(above, 3);
  }
  // The one-sided row is the existing limit row.
  for (double vc : {-0.05, 0.0, 0.01, 0.03}) {
    double g1, G1, g2, G2;
    EXPECT_DOUBLE_EQ(holonomic_row<double>(R, vhat, 0.0, 1e300, vc, &g1, &G1),
                     limit_row<double>(R, vhat, vc, &g2, &G2));
    EXPECT_DOUBLE_EQ(g1, g2);
    EXPECT_DOUBLE_EQ(G1, G2);
  }
}

TEST(HolonomicRow, NearRigidFloorAndRelaxationTime) {
  const double h = 1e-3, beta = 0.1, w = 2.0;
  const double R_nr = beta * beta / (4 * kPi * kPi) * w;
  double tau;
  // Rigid (R_c = 0): floor, tau = h (Drake).
  EXPECT_DOUBLE_EQ(holonomic_compliance<double>(0.0, 0.0, h, beta, w, &tau), R_nr);
  EXPECT_DOUBLE_EQ(tau, h);
  // Compliant above the floor: kept, with its own tau.
  EXPECT_DOUBLE_EQ(holonomic_compliance<double>(10 * R_nr, 0.05, h, beta, w, &tau), 10 * R_nr);
  EXPECT_DOUBLE_EQ(tau, 0.05);
  // Stiffer than the floor: floored.
  EXPECT_DOUBLE_EQ(holonomic_compliance<double>(0.1 * R_nr, 0.05, h, beta, w, &tau), R_nr);
  EXPECT_DOUBLE_EQ(tau, h);
}

// ------------------------------------------------------------------------------------------
// Models. Links are point-like masses with small inertia; hinges about x unless stated.
int add_link(ModelBuilder& b, int parent, const Vec3d& pos, const Vec3d& com, const Vec3d& axis, double mass,
             double damping = 0, double stiffness = 0) {
  BodySpec bs;
  bs.name = "link" + std::to_string(b.nbody());
  bs.parent = parent;
  bs.pos = pos;
  bs.mass = mass;
  bs.com = com;
  bs.inertia = {0.01, 0.01, 0.01, 0, 0, 0};
  const int id = b.add_body(bs);
  JointSpec j;
  j.name = "j" + std::to_string(id);
  j.type = kJointHinge;
  j.axis = axis;
  j.damping = damping;
  j.stiffness = stiffness;
  b.add_joint(id, j);
  return id;
}

struct Runner {
  Model m;
  Context ctx;
  SolverSAP solver;
  State a, b;
  Control control;
  Contacts none;
  Runner(const Model& model, const SolverOptions& o)
      : m(model),
        ctx(Backend::CPU, 1),
        solver(m, ctx, 1, o),
        a(m, 1, Backend::CPU),
        b(m, 1, Backend::CPU),
        control(m, 1, Backend::CPU),
        none(1, 0, Backend::CPU) {}
  void set(const std::vector<double>& q, const std::vector<double>& v) {
    a.qpos.world_from_host(0, q.data());
    a.qvel.world_from_host(0, v.data());
  }
  void step(double h) {
    solver.step(a, b, control, none, h);
    std::swap(a, b);
  }
  std::vector<double> q() const { return a.qpos.world_to_host(0); }
  std::vector<double> v() const { return a.qvel.world_to_host(0); }
  // Holonomic rows of the last step.
  int nhol() { return solver.solve_data().hol_count.world_to_host(0)[0]; }
  double param(int r, int k) { return solver.solve_data().hol_param.world_to_host(0)[kNumHolonomicParams * r + k]; }
  double gamma(int r) { return solver.solve_data().gamma.world_to_host(0)[solver.solve_data().size().hol_row(r)]; }
  // J_r x from the stored sparse row.
  double jrow(int r, const std::vector<double>& x) {
    const SolveData& s = solver.solve_data();
    const int nj = s.hol_jac_n.world_to_host(0)[r];
    const std::vector<int> dof = s.hol_jac_dof.world_to_host(0);
    const std::vector<double> val = s.hol_jac_val.world_to_host(0);
    double acc = 0;
    for (int k = 0; k < nj; ++k)
      acc += val[s.size().nhjac * r + k] * x[static_cast<std::size_t>(dof[s.size().nhjac * r + k])];
    return acc;
  }
};

SolverOptions opts(const char* preset = "approx64") {
  SolverOptions o;
  o.contact_preset_variant = parse_preset(preset);
  return o;
}

// Two-link chain hanging from the world (hinges about x, links along +y), tendon L = q1 + q2
// with the given range.
Model tendon_chain(double lo, double hi, double damping) {
  ModelBuilder b;
  b.set_gravity({0, 0, -kG});
  const int l1 = add_link(b, 0, {0, 0, 0}, {0, 0.3, 0}, {1, 0, 0}, 1.0, damping);
  add_link(b, l1, {0, 0.3, 0}, {0, 0.3, 0}, {1, 0, 0}, 1.0, damping);
  TendonSpec t;
  t.name = "t";
  t.joints = {{0, 1.0}, {1, 1.0}};
  t.limited = true;
  t.range = {lo, hi};
  b.add_tendon(t);
  return b.finalize();
}

// Two arms from the world: arm 1 (gravity load, length l1) and arm 2 (torsion spring k2, no
// gravity torque: com on the axis), coupled q1 = ratio * q2.
Model coupled_pair(double ratio, double k2, std::array<double, 2> solref = {0, 0}) {
  ModelBuilder b;
  b.set_gravity({0, 0, -kG});
  add_link(b, 0, {0, 0, 0}, {0, 0.4, 0}, {1, 0, 0}, 1.5, 2.0);
  add_link(b, 0, {1, 0, 0}, {0, 0, 0}, {1, 0, 0}, 0.5, 2.0, k2);
  EqualitySpec e;
  e.name = "couple";
  e.type = kEqJoint;
  e.obj1 = 0;
  e.obj2 = 1;
  e.polycoef = {0, ratio, 0, 0, 0};
  e.solref = solref;
  b.add_equality(e);
  return b.finalize();
}

// Parallelogram four-bar hanging in the x-y plane (hinges about z), gravity along -y: crank at
// the origin (length L along -y), coupler from the crank tip (length d along +x), rocker at
// (d, 0, 0) (length L along -y); a connect joins the coupler's tip to the rocker's tip.
Model four_bar(double L, double d) {
  ModelBuilder b;
  b.set_gravity({0, -kG, 0});
  const int crank = add_link(b, 0, {0, 0, 0}, {0, -L / 2, 0}, {0, 0, 1}, 1.0, 0.01);
  const int coupler = add_link(b, crank, {0, -L, 0}, {d / 2, 0, 0}, {0, 0, 1}, 1.0, 0.01);
  const int rocker = add_link(b, 0, {d, 0, 0}, {0, -L / 2, 0}, {0, 0, 1}, 1.0, 0.01);
  EqualitySpec e;
  e.name = "close";
  e.type = kEqConnect;
  e.obj1 = coupler;
  e.obj2 = rocker;
  e.pos1 = {d, 0, 0};  // the coupler's tip; the rocker's point follows from the reference pose
  b.add_equality(e);
  return b.finalize();
}

// A free body (com at its origin) welded to the world at its initial pose.
Model welded_free_body(double mass, std::array<double, 2> solref) {
  ModelBuilder b;
  b.set_gravity({0, 0, -kG});
  BodySpec bs;
  bs.name = "box";
  bs.pos = {0.2, -0.1, 1.0};
  bs.mass = mass;
  bs.inertia = {0.02, 0.03, 0.04, 0, 0, 0};
  const int id = b.add_body(bs);
  JointSpec j;
  j.name = "free";
  j.type = kJointFree;
  b.add_joint(id, j);
  EqualitySpec e;
  e.name = "weld";
  e.type = kEqWeld;
  e.obj1 = 0;  // world first: the body is body 2 (frame Q at its origin)
  e.obj2 = id;
  e.solref = solref;
  b.add_equality(e);
  return b.finalize();
}

// Two hinge chains (3 and 2 hinges, mixed axes) whose tips are welded (weld) or connected.
Model two_chains(int type) {
  ModelBuilder b;
  b.set_gravity({0, 0, -kG});
  int a = add_link(b, 0, {0, 0, 0}, {0, 0.2, 0}, {1, 0, 0}, 1.0);
  a = add_link(b, a, {0, 0.3, 0}, {0.1, 0.1, 0}, {0, 0, 1}, 0.8);
  a = add_link(b, a, {0.1, 0.3, 0}, {0, 0.1, 0.1}, {0, 1, 0}, 0.6);
  int c = add_link(b, 0, {0.5, 0, 0}, {0, 0.2, 0}, {0, 1, 0}, 1.0);
  c = add_link(b, c, {0, 0.4, 0.1}, {0, 0.1, 0}, {1, 0, 0}, 0.7);
  EqualitySpec e;
  e.name = "join";
  e.type = type;
  e.obj1 = a;
  e.obj2 = c;
  e.pos1 = {0.05, 0.2, 0.0};
  e.pos2 = {0.0, 0.1, 0.05};  // weld: frame Q on body 2; frame P follows from the reference pose
  b.add_equality(e);
  return b.finalize();
}

// ------------------------------------------------------------------------------------------
// J v = dg/dt for every row of the constraint, g read back from the rows' bias v_hat = -g/(2h)
// (rigid rows: tau = h). Hinge-only models: q(t) = q + t v.
void check_jacobian(const Model& m, const std::vector<double>& q0, int nrows, unsigned seed) {
  const double h = 1e-3, eps = 1e-6;
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 1);
  std::vector<double> v(static_cast<std::size_t>(m.nv));
  for (double& x : v) x = 0.3 * n(rng);
  auto g_at = [&](double t, std::vector<double>* jv) {
    Runner run(m, opts());
    std::vector<double> q = q0;
    for (int i = 0; i < m.nv; ++i) q[static_cast<std::size_t>(i)] += t * v[static_cast<std::size_t>(i)];
    run.set(q, v);  // v opens the tendon-limit window; g and J depend on q only
    run.step(h);
    EXPECT_EQ(run.nhol(), nrows);
    std::vector<double> g(static_cast<std::size_t>(nrows));
    for (int r = 0; r < nrows; ++r) {
      g[static_cast<std::size_t>(r)] = -2 * h * run.param(r, kHolVhat);
      if (jv) jv->push_back(run.jrow(r, v));
    }
    return g;
  };
  std::vector<double> jv;
  g_at(0, &jv);
  const std::vector<double> gp = g_at(eps, nullptr), gm = g_at(-eps, nullptr);
  for (int r = 0; r < nrows; ++r) {
    const double fd = (gp[static_cast<std::size_t>(r)] - gm[static_cast<std::size_t>(r)]) / (2 * eps);
    EXPECT_NEAR(jv[static_cast<std::size_t>(r)], fd, 1e-7 * (1 + std::abs(fd))) << "row " << r;
    if (std::getenv("SAP_VERBOSE"))
      std::printf("row %d: J v = %.10f, dg/dt = %.10f\n", r, jv[static_cast<std::size_t>(r)], fd);
  }
}

TEST(HolonomicJacobian, TendonLimit) {
  const Model m = tendon_chain(-0.4, 0.4, 0);
  check_jacobian(m, {0.25, -0.65}, 1, 1);  // L = -0.4: at the lower limit (one row)
}

TEST(HolonomicJacobian, Coupler) {
  const Model m = coupled_pair(2.0, 0.0);
  check_jacobian(m, {0.3, 0.1}, 1, 2);
}

TEST(HolonomicJacobian, ConnectFourBar) {
  const Model m = four_bar(0.5, 0.8);
  check_jacobian(m, {0.2, -0.1, 0.3}, 3, 3);
}

TEST(HolonomicJacobian, ConnectThreeDimensional) {
  const Model m = two_chains(kEqConnect);
  check_jacobian(m, {0.2, -0.3, 0.4, 0.1, -0.2}, 3, 4);
}

TEST(HolonomicJacobian, WeldAtTheReferencePose) {
  // d a_PQ/dt = w_B - w_A holds exactly where the rotation error is zero.
  const Model m = two_chains(kEqWeld);
  check_jacobian(m, std::vector<double>(5, 0.0), 6, 5);
}

// ------------------------------------------------------------------------------------------
// The assembled objective with each constraint: g = A (v - v*) - J^T gamma and H = A + sum J^T G J
// against finite differences of the cost (as tests/test_newton.cpp for contacts).
double objective(Runner& run, const Eigen::VectorXd& v, Eigen::VectorXd* grad, Eigen::MatrixXd* H) {
  SapSolveKernel<double> k;
  ModelStorage storage(run.m, Backend::CPU);
  k.m = storage.view();
  k.state_in = static_cast<const State&>(run.a).view();
  k.d = run.solver.data().view();
  const SolveView sv = run.solver.solve_data().view();
  k.rows = sv.rows();
  k.s = sv.newton();
  k.p.h = 1e-3;
  k.status = nullptr;
  // The Newton system and row buffers in the team's memory, as the fused solve keeps them.
  k.system_on_chip = k.rows_on_chip = true;
  std::vector<char> shmem(static_cast<std::size_t>(k.on_chip_layout().bytes()), 0);
  CpuTeam team(shmem.data());
  const int nv = run.m.nv, w = 0;
  double* vb = k.s.v(w);
  for (int i = 0; i < nv; ++i) vb[i] = v[i];
  k.jacobian_product(w, team, vb, k.rows_vc(w, team));
  const RowSums<double> rows = k.evaluate_rows(w, team, 0.0, true, false);
  Eigen::VectorXd u(nv);
  for (int i = 0; i < nv; ++i) u[i] = v[i] - k.d.v_star(w)[i];
  k.mul_A(w, team, u.data(), k.s.Au(w));
  const Eigen::Map<const Eigen::VectorXd> Au(k.s.Au(w), nv);
  k.jacobian_transpose_gamma(w, team);
  if (grad) *grad = Au - Eigen::Map<const Eigen::VectorXd>(k.s.jtg(w), nv);
  if (H) {
    k.assemble_hessian(w, team);
    const int ld = run.m.nv_pad;
    H->resize(nv, nv);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j <= i; ++j) (*H)(i, j) = (*H)(j, i) = k.hessian(w, team)[i * ld + j];
  }
  return 0.5 * u.dot(Au) + rows.cost;
}

Model tendon_servo(double kp, double kv);

void check_objective(const Model& m, const std::vector<double>& q0, const char* preset, unsigned seed) {
  Runner run(m, opts(preset));
  run.set(q0, std::vector<double>(static_cast<std::size_t>(m.nv), 0.0));
  run.step(1e-3);
  ASSERT_GT(run.nhol(), 0);
  const int nv = m.nv;
  const std::vector<double> vs = run.solver.solved_velocity(0);
  Eigen::VectorXd v = Eigen::Map<const Eigen::VectorXd>(vs.data(), nv);
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 1);
  for (int i = 0; i < nv; ++i) v[i] += 0.05 * n(rng);
  // state_in of the probe is the stepped state; only the Newton buffers of the step are used.
  Eigen::VectorXd g;
  Eigen::MatrixXd H;
  objective(run, v, &g, &H);
  const double eps = 1e-6;
  Eigen::VectorXd g_fd(nv);
  Eigen::MatrixXd H_fd(nv, nv);
  for (int i = 0; i < nv; ++i) {
    Eigen::VectorXd a = v, b = v, ga, gb;
    a[i] += eps;
    b[i] -= eps;
    g_fd[i] = (objective(run, a, &ga, nullptr) - objective(run, b, &gb, nullptr)) / (2 * eps);
    H_fd.col(i) = (ga - gb) / (2 * eps);
  }
  EXPECT_LT((g - g_fd).norm(), 1e-6 * (1 + g.norm())) << preset;
  EXPECT_LT((H - H_fd).norm(), 1e-5 * H.norm()) << preset;
}

TEST(HolonomicObjective, EachConstraintMatchesFiniteDifferences) {
  for (const char* preset : {"approx64", "drake"}) {
    check_objective(tendon_chain(-0.4, 0.4, 0), {0.25, -0.65}, preset, 1);
    check_objective(coupled_pair(2.0, 5.0), {0.3, 0.1}, preset, 2);
    check_objective(coupled_pair(-0.5, 5.0, {0.02, 1.0}), {0.3, 0.1}, preset, 3);  // MuJoCo solref
    check_objective(four_bar(0.5, 0.8), {0.2, -0.1, 0.3}, preset, 4);
    check_objective(two_chains(kEqConnect), {0.2, -0.3, 0.4, 0.1, -0.2}, preset, 5);
    check_objective(two_chains(kEqWeld), {0.1, -0.1, 0.2, 0.05, -0.1}, preset, 6);
    check_objective(welded_free_body(2.0, {0, 0}), {0.2, -0.1, 1.01, 1, 0, 0, 0}, preset, 7);
    check_objective(tendon_servo(50, 5), {0.3, -0.4}, preset, 8);  // PD kind of row
  }
}

// ------------------------------------------------------------------------------------------
// Physics.

// A coupled pair keeps its ratio under load: arm 1's gravity torque -m g l cos(q1) is carried by
// arm 2's spring through q1 = r q2. Virtual work along (r, 1): r tau1(r q2) - k2 q2 = 0.
TEST(HolonomicPhysics, CoupledPairKeepsRatioAtTheLoadedEquilibrium) {
  const double ratio = 2.0, k2 = 40.0, m1 = 1.5, l1 = 0.4, h = 1e-3;
  for (const char* preset : {"approx64", "drake"}) {
    Runner run(coupled_pair(ratio, k2), opts(preset));
    double worst = 0;
    for (int i = 0; i < 6000; ++i) {
      run.step(h);
      const std::vector<double> q = run.q();
      worst = std::max(worst, std::abs(q[0] - ratio * q[1]));
    }
    // Equilibrium by bisection on f(q2) = -r m g l cos(r q2) - k2 q2 (decreasing near the root).
    auto f = [&](double q2) { return -ratio * m1 * kG * l1 * std::cos(ratio * q2) - k2 * q2; };
    double a = -0.7, b = 0.0;
    for (int k = 0; k < 200; ++k) ((f(0.5 * (a + b)) > 0) ? a : b) = 0.5 * (a + b);
    const std::vector<double> q = run.q();
    EXPECT_NEAR(q[1], 0.5 * (a + b), 1e-4) << preset;
    // At rest the row's impulse balances the load with the violation g = -2 h R gamma.
    const double predicted = -2 * h * run.param(0, kHolR) * run.gamma(0);
    EXPECT_NEAR(q[0] - ratio * q[1], predicted, 1e-3 * std::abs(predicted) + 1e-12) << preset;
    EXPECT_LT(worst, 1e-3) << preset;  // while it moves too
  }
}

// A tendon limit stops a falling two-link chain at the limit length L = q1 + q2 = lo; unlimited,
// the same chain swings to L ~ -pi.
TEST(HolonomicPhysics, TendonLimitStopsChainAtLimitLength) {
  const double lo = -0.5, h = 1e-3;
  Runner run(tendon_chain(lo, 2.0, 1.0), opts("approx64"));
  double lowest = 0;
  for (int i = 0; i < 8000; ++i) {
    run.step(h);
    const std::vector<double> q = run.q();
    lowest = std::min(lowest, q[0] + q[1]);
  }
  const std::vector<double> q = run.q(), v = run.v();
  const double L = q[0] + q[1];
  ASSERT_EQ(run.nhol(), 1);
  if (std::getenv("SAP_VERBOSE"))
    std::printf("q = %.6f %.6f, L - lo = %.3e, gamma = %.4e, R = %.3e, lowest = %.6f\n", q[0], q[1], L - lo,
                run.gamma(0), run.param(0, kHolR), lowest);
  // At rest: gap L - lo = -2 h R gamma (gamma >= 0 pushes L up), a tiny overshoot.
  const double predicted = -2 * h * run.param(0, kHolR) * run.gamma(0);
  EXPECT_GT(run.gamma(0), 0);
  EXPECT_NEAR(L - lo, predicted, 1e-3 * std::abs(predicted) + 1e-10);
  EXPECT_GT(lowest, lo - 1e-3);
  EXPECT_LT(std::abs(v[0]) + std::abs(v[1]), 1e-6);
  // The joints themselves are not at a limit: the chain rests on the tendon alone.
  EXPECT_GT(std::abs(q[0]), 0.05);
  EXPECT_GT(std::abs(q[1]), 0.05);
}

// A connect closes a parallelogram four-bar: it swings under gravity with one degree of freedom,
// rocker angle = crank angle and coupler angle = -crank angle, the loop closed.
TEST(HolonomicPhysics, ConnectClosesFourBarWithOneDegreeOfFreedom) {
  const double L = 0.5, d = 0.8, h = 1e-3;
  for (const char* preset : {"approx64", "drake"}) {
    Runner run(four_bar(L, d), opts(preset));
    run.set({0.6, -0.6, 0.6}, {0, 0, 0});  // a closed pose, released
    double lowest = 1, worst_kin = 0, worst_gap = 0;
    for (int i = 0; i < 1500; ++i) {
      run.step(h);
      const std::vector<double> q = run.q();
      lowest = std::min(lowest, q[0]);
      worst_kin = std::max({worst_kin, std::abs(q[2] - q[0]), std::abs(q[1] + q[0])});
      // Closure: coupler tip vs rocker tip.
      const double cx = L * std::sin(q[0]) + d * std::cos(q[0] + q[1]);
      const double cy = -L * std::cos(q[0]) + d * std::sin(q[0] + q[1]);
      const double rx = d + L * std::sin(q[2]), ry = -L * std::cos(q[2]);
      worst_gap = std::max(worst_gap, std::hypot(cx - rx, cy - ry));
    }
    EXPECT_LT(lowest, -0.4) << preset;  // it swings through to the other side
    EXPECT_LT(worst_kin, 2e-3) << preset;
    EXPECT_LT(worst_gap, 1e-3) << preset;
  }
}

// A weld holds a free body against gravity at the sag its compliance predicts.
// Compliant (solref tc, dr): force (K/w) delta with K = 1/(tc dr)^2 and the translation rows'
// weight w = 1/m, so delta = m g w (tc dr)^2 = g (tc dr)^2.
// Rigid: gamma = -g / (2 h R) with R = beta^2 w / (4 pi^2), w = |W|_F / 6 (Drake's), so
// delta = 2 h^2 R m g.
TEST(HolonomicPhysics, WeldHoldsBodyWithinPredictedCompliance) {
  const double mass = 2.0, h = 1e-3;
  // Delassus weight of the weld at the body origin: W = diag(1/I_world, 1/m) (block per row).
  const double Ix = 0.02, Iy = 0.03, Iz = 0.04;
  const double w_fro = std::sqrt(1 / (Ix * Ix) + 1 / (Iy * Iy) + 1 / (Iz * Iz) + 3 / (mass * mass)) / 6;
  for (const bool rigid : {false, true}) {
    const double w = rigid ? w_fro : 1 / mass;
    const double tc = 0.01, dr = 1.0;
    Runner run(welded_free_body(mass, rigid ? std::array<double, 2>{0, 0} : std::array<double, 2>{tc, dr}),
               opts("approx64"));
    for (int i = 0; i < (rigid ? 500 : 4000); ++i) run.step(h);
    const std::vector<double> q = run.q(), v = run.v();
    const double sag = 1.0 - q[2];
    const double beta = 0.1, R = run.param(5, kHolR);  // the z translation row
    // The weight the rows used (from R; the midpoint's offset by sag/2 shifts it slightly).
    const double K = 1 / (tc * tc * dr * dr), B = 2 / tc;
    const double w_used = rigid ? R * 4 * kPi * kPi / (beta * beta) : R * h * (h * K + B);
    EXPECT_NEAR(w_used, w, 1e-2 * w);
    const double predicted = rigid ? 2 * h * h * R * mass * kG : mass * kG * w_used / K;
    EXPECT_NEAR(sag, predicted, 1e-4 * predicted) << (rigid ? "rigid" : "compliant");
    EXPECT_NEAR(q[0], 0.2, 1e-12);
    EXPECT_NEAR(q[1], -0.1, 1e-12);
    EXPECT_LT(std::abs(v[2]), 1e-6);
  }
}

// A position servo on a tendon (implicit PD on L = q1 + 0.5 q2, no gravity, no load) brings the
// tendon length to its target and leaves the null-space coordinate q1 - 2 q2 where it was.
Model tendon_servo(double kp, double kv) {
  ModelBuilder b;
  b.set_gravity({0, 0, 0});
  add_link(b, 0, {0, 0, 0}, {0, 0.3, 0}, {1, 0, 0}, 1.0);
  add_link(b, 0, {1, 0, 0}, {0, 0.2, 0}, {1, 0, 0}, 2.0);
  TendonSpec t;
  t.name = "t";
  t.joints = {{0, 1.0}, {1, 0.5}};
  b.add_tendon(t);
  ActuatorSpec a;
  a.name = "servo";
  a.type = kActPosition;
  a.tendon = 0;
  a.kp = kp;
  a.kd = kv;
  b.add_actuator(a);
  return b.finalize();
}

TEST(HolonomicPhysics, PositionServoOnTendonReachesTarget) {
  const double target = 0.4, h = 1e-3;
  Runner run(tendon_servo(50, 5), opts());
  const double ctrl = target;
  run.control.ctrl.world_from_host(0, &ctrl);
  run.set({0.1, -0.2}, {0, 0});
  for (int i = 0; i < 20000; ++i) run.step(h);
  const std::vector<double> q = run.q(), v = run.v();
  EXPECT_NEAR(q[0] + 0.5 * q[1], target, 1e-9);
  EXPECT_LT(std::abs(v[0]) + std::abs(v[1]), 1e-9);
  ASSERT_EQ(run.nhol(), 1);
  EXPECT_EQ(run.param(0, kHolKind), double(kHolKindPd));
  // The servo's generalized impulse is J_t^T gamma = (gamma, 0.5 gamma) and M is diagonal (two
  // arms on the world), so from rest q1 and q2 move in the ratio (1/M11) : (0.5/M22).
  const double M11 = 1.0 * 0.09 + 0.01, M22 = 2.0 * 0.04 + 0.01;
  const double dq1 = q[0] - 0.1, dq2 = q[1] + 0.2;
  EXPECT_NEAR(dq1 * 0.5 / M22, dq2 * 1.0 / M11, 1e-9);
}

// Inactive equalities produce no rows.
TEST(HolonomicPhysics, InactiveEqualityIsIgnored) {
  ModelBuilder b;
  b.set_gravity({0, 0, -kG});
  add_link(b, 0, {0, 0, 0}, {0, 0.4, 0}, {1, 0, 0}, 1.0);
  add_link(b, 0, {1, 0, 0}, {0, 0.4, 0}, {1, 0, 0}, 1.0);
  EqualitySpec e;
  e.type = kEqJoint;
  e.obj1 = 0;
  e.obj2 = 1;
  e.polycoef = {0, -1, 0, 0, 0};
  e.active = false;
  b.add_equality(e);
  Runner run(b.finalize(), opts());
  for (int i = 0; i < 100; ++i) run.step(1e-3);
  EXPECT_EQ(run.nhol(), 0);
  const std::vector<double> q = run.q();
  EXPECT_NEAR(q[0], q[1], 1e-12);  // identical free arms, not mirrored
}

}  // namespace

// ------------------------------------------------------------------------------------------
// The JSON scene with a tendon, a coupler, a connect and a weld (scenes/constrained_mechanisms.json):
// every constraint holds while the mechanisms move.
#include "sap/simulator.hpp"

namespace {
TEST(HolonomicScene, ConstrainedMechanismsHoldTheirConstraints) {
  const Scene scene = load_scene(std::string(SAP_SOURCE_DIR) + "/scenes/constrained_mechanisms.json");
  const Model& m = scene.model;
  ASSERT_EQ(m.ntendon, 1);
  ASSERT_EQ(m.neq, 3);
  SimulatorOptions o;
  o.nworld = 1;
  o.backend = Backend::CPU;
  Simulator sim(scene, o);
  auto qa = [&](const std::vector<double>& q, const char* j) {
    return q[static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(m.joint_id(j))])];
  };
  const std::vector<double> q0 = sim.state().qpos.world_to_host(0);
  const int box = m.joint_id("box_free");
  const std::size_t bq = static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(box)]);
  double worst_mirror = 0, worst_loop = 0, lowest_tendon = 0, box_travel = 0, worst_weld = 0;
  for (int k = 0; k < 1000; ++k) {
    sim.step();
    const std::vector<double> q = sim.state().qpos.world_to_host(0);
    worst_mirror = std::max(worst_mirror, std::abs(qa(q, "hinge_b") + qa(q, "hinge_a")));
    // Parallelogram: rocker = crank, coupler = -crank.
    worst_loop = std::max({worst_loop, std::abs(qa(q, "rocker_hinge") - qa(q, "crank_hinge")),
                           std::abs(qa(q, "coupler_hinge") + qa(q, "crank_hinge"))});
    lowest_tendon = std::min(lowest_tendon, qa(q, "shoulder") + qa(q, "elbow"));
    // The box stays at the pendulum's tip: 0.43 m below the hinge at (0, 2, 1.2) along the rod,
    // which rotates by theta about x.
    const double th = qa(q, "pendulum_hinge");
    const double ex = 0, ey = 2 + 0.43 * std::sin(th), ez = 1.2 - 0.43 * std::cos(th);
    worst_weld = std::max(worst_weld, std::hypot(q[bq] - ex, q[bq + 1] - ey, q[bq + 2] - ez));
    box_travel = std::max(box_travel, std::hypot(q[bq + 1] - q0[bq + 1], q[bq + 2] - q0[bq + 2]));
  }
  EXPECT_LT(worst_mirror, 1e-3);
  EXPECT_LT(worst_loop, 5e-3);
  // The near-rigid limit row lets the swinging chain (about 3 rad/s at impact) overshoot by a
  // couple of steps' travel, as a joint limit does.
  EXPECT_GT(lowest_tendon, -0.6 - 2e-2);
  EXPECT_LT(lowest_tendon, -0.55);  // it reaches the limit
  EXPECT_GT(box_travel, 0.03);      // the box is carried ...
  EXPECT_LT(worst_weld, 5e-3);      // ... at the tip
}
}  // namespace

// ------------------------------------------------------------------------------------------
// A soft MJCF weld (solref 0.02 1) holding a free body under a mocap body, against the steady
// state of our law and against MuJoCo (tests/data/mujoco/weld_sag.json, written by
// tools/reference/weld_sag_reference.py; docs/model-import.md "Compliance from solref").
// Our law (docs/sap-math.md §12.2): at the fixed point vc = 0, the row's impulse is
// gamma = v_hat / R = -x / ((h + tau_d) R) and carries the load, gamma = h m g, so the sag is
// x_ss = (h + tau_d) h R m g. With R = w / (h (h K + B)), tau_d = B/K this is m g w / K, and
// with the translation rows' weight w = 1/m (MuJoCo's diagApprox of those rows) x_ss =
// g (tc dr)^2 = 3.924 mm, whatever the rotational inertia. MuJoCo's soft constraint at rest
// gives (1 - d) g (tc dr)^2 for an impedance d = d0 = dmax (solimp), which our importer does not
// use (d = 1 in its rule), so MuJoCo's sag is (1 - d) times ours.
#include <fstream>
#include <nlohmann/json.hpp>

#include "sap/mjcf.hpp"

namespace {
TEST(HolonomicMjcf, SoftWeldSagMatchesSteadyStateLawAndMuJoCo) {
  std::ifstream f(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/weld_sag.json");
  ASSERT_TRUE(f.good()) << "tests/data/mujoco/weld_sag.json missing (tools/reference/weld_sag_reference.py)";
  const nlohmann::json ref = nlohmann::json::parse(f);
  std::string xml = ref["xml"].get<std::string>();
  xml.replace(xml.find("{solimp}"), 8, "0.9 0.95 0.001");
  const Model model = load_mjcf_string(xml, "weld_sag.xml").model;
  ASSERT_EQ(model.neq, 1);
  const double h = ref["dt"].get<double>(), mass = ref["mass"].get<double>();
  const double tc = ref["solref"][0].get<double>(), dr = ref["solref"][1].get<double>();
  const double K = 1 / (tc * tc * dr * dr), B = 2 / tc, tau_d = B / K;
  const double w_trans = ref["runs"][0]["efc_diagApprox"][0].get<double>();  // MuJoCo: translation rows first, 1/m
  ASSERT_NEAR(w_trans, 1 / mass, 1e-12);
  for (const char* preset : {"approx32", "approx64", "drake"}) {
    Runner run(model, opts(preset));
    const int steps = ref["steps"].get<int>();
    for (int i = 0; i < steps; ++i) run.step(h);
    ASSERT_EQ(run.nhol(), 6);
    const std::vector<double> q = run.q(), v = run.v();
    const double sag = 1.0 - q[2];
    // Rows 3-5 are the translation rows; the z row's fixed point.
    const double R_z = run.param(5, kHolR);
    const double law = (h + tau_d) * h * R_z * mass * kG;
    const double tol = std::string(preset) == "approx32" ? 1e-4 : 1e-6;  // relative
    EXPECT_NEAR(sag, law, tol * law) << preset << ": not at the fixed point of the documented law";
    // The weight of the translation rows is MuJoCo's 1/m (the midpoint, sag/2 below the com,
    // adds (sag/2)^2 / I to it: 1e-4 relative).
    EXPECT_NEAR(R_z * h * (h * K + B), w_trans, 1e-3 * w_trans) << preset;
    EXPECT_NEAR(sag, kG * tc * tc * dr * dr, 1e-3 * kG * tc * tc * dr * dr) << preset;
    EXPECT_LT(std::abs(v[2]), 1e-6) << preset;
    EXPECT_NEAR(q[0], 0.2, 1e-9);
    EXPECT_NEAR(q[1], -0.1, 1e-9);
    // MuJoCo: (1 - d) times ours for a constant impedance d; between the two ends of MuJoCo's
    // default sigmoid (d from 0.9 to 0.95) for the file's solimp.
    for (const auto& r : ref["runs"]) {
      const double d0 = r["solimp"][0].get<double>(), dmax = r["solimp"][1].get<double>();
      const double mj = r["sag"].get<double>();
      if (d0 == dmax) {
        EXPECT_NEAR(mj, (1 - d0) * sag, 2e-3 * (1 - d0) * sag) << preset << " d = " << d0;
      } else {
        EXPECT_GT(mj, (1 - dmax) * sag) << preset;
        EXPECT_LT(mj, (1 - d0) * sag) << preset;
      }
    }
    std::printf("weld sag %s: ours %.4f mm (law %.4f mm, g (tc dr)^2 %.4f mm, w_trans %.6f); MuJoCo %.4f mm with "
                "solimp (0.9 0.95), %.4f mm with d = 0.5\n",
                preset, 1e3 * sag, 1e3 * law, 1e3 * kG * tc * tc * dr * dr, R_z * h * (h * K + B),
                1e3 * ref["runs"][5]["sag"].get<double>(), 1e3 * ref["runs"][1]["sag"].get<double>());
  }
}
}  // namespace

// What a user sets to get MuJoCo's steady sag with an impedance d (solimp d0 = dmax = d): the
// stiffness K d^2 / ((1 - d) dmax^2) = K / (1 - d) in solref's direct form (-K', -B), since MuJoCo
// sags (1 - d) / d^2 dmax^2 g / K and our rule g / K'. Checked against MuJoCo's fixture runs.
namespace {
TEST(HolonomicMjcf, SolrefScaledForImpedanceGivesMuJoCoSag) {
  std::ifstream f(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/weld_sag.json");
  ASSERT_TRUE(f.good()) << "tests/data/mujoco/weld_sag.json missing (tools/reference/weld_sag_reference.py)";
  const nlohmann::json ref = nlohmann::json::parse(f);
  const double h = ref["dt"].get<double>();
  const double tc = ref["solref"][0].get<double>(), dr = ref["solref"][1].get<double>();
  int checked = 0;
  for (const auto& r : ref["runs"]) {
    const double d0 = r["solimp"][0].get<double>(), dmax = r["solimp"][1].get<double>();
    if (d0 != dmax) continue;
    const double K = 1 / (tc * tc * dr * dr * (1 - d0)), B = 2 / tc;
    std::string xml = ref["xml"].get<std::string>();
    xml.replace(xml.find("{solimp}"), 8, "0.9 0.95 0.001");
    const std::string solref = "solref=\"0.02 1\"";
    char direct[64];
    std::snprintf(direct, sizeof direct, "solref=\"%.17g %.17g\"", -K, -B);
    xml.replace(xml.find(solref), solref.size(), direct);
    Runner run(load_mjcf_string(xml, "weld_sag_direct.xml").model, opts("approx64"));
    for (int i = 0; i < ref["steps"].get<int>(); ++i) run.step(h);
    const double sag = 1.0 - run.q()[2], mj = r["sag"].get<double>();
    EXPECT_NEAR(sag, mj, 2e-3 * mj) << "d = " << d0;
    std::printf("d = %.2f: solref (%.6g, %.6g): sag %.4f mm, MuJoCo %.4f mm\n", d0, -K, -B, 1e3 * sag, 1e3 * mj);
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}
}  // namespace

// The weld's rotation rows: the com 0.09 m along -x of the anchor (the body origin), so the weld
// also carries the torque tau = m g 0.09 about y. Ours: pitch = -tau w_r / K with w_r the rotation
// rows' mean diagonal of J diag(A)^-1 J^T (our free joint's block at the body origin:
// 1/Ixx, 1/(Iyy + m 0.09^2), 1/(Izz + m 0.09^2)). MuJoCo's rotation row sags 4 (1 - d) tau
// diagApprox_r / K (its residual and Jacobian are half the angle and half the angular velocity,
// its diagApprox, at the com, is not divided by 4): 4 (1 - d) diagApprox_r / w_r times ours.
namespace {
TEST(HolonomicMjcf, SoftWeldRotationRowsAgainstLawAndMuJoCo) {
  std::ifstream f(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/weld_sag.json");
  ASSERT_TRUE(f.good()) << "tests/data/mujoco/weld_sag.json missing (tools/reference/weld_sag_reference.py)";
  const nlohmann::json ref = nlohmann::json::parse(f);
  const nlohmann::json off = ref["com_offset"];
  std::string xml = ref["xml"].get<std::string>();
  xml.replace(xml.find("{solimp}"), 8, "0.9 0.95 0.001");
  const std::string com = "pos=\"0 0 0\" mass";
  xml.replace(xml.find(com), com.size(), "pos=\"-0.09 0 0\" mass");
  const double h = ref["dt"].get<double>(), mass = ref["mass"].get<double>(), arm = 0.09;
  const double tc = ref["solref"][0].get<double>(), dr = ref["solref"][1].get<double>();
  const double K = 1 / (tc * tc * dr * dr), B = 2 / tc;
  Runner run(load_mjcf_string(xml, "weld_sag_offset.xml").model, opts("approx64"));
  for (int i = 0; i < ref["steps"].get<int>(); ++i) run.step(h);
  const std::vector<double> q = run.q();
  const double s = std::sqrt(q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
  const double pitch = 2 * std::asin(s) * (q[5] < 0 ? -1 : 1);
  const double w_r = run.param(1, kHolR) * h * (h * K + B);
  const double shifted = mass * arm * arm;
  const double w_r_expected = (1 / 0.02 + 1 / (0.03 + shifted) + 1 / (0.04 + shifted)) / 3;
  EXPECT_NEAR(w_r, w_r_expected, 1e-3 * w_r_expected);
  const double tau = mass * kG * arm;
  EXPECT_NEAR(pitch, -tau * w_r / K, 2e-3 * tau * w_r / K);  // the arm shortens by cos(pitch)
  EXPECT_NEAR(1.0 - q[2], kG * tc * tc * dr * dr, 1e-3 * kG * tc * tc * dr * dr);  // translation unchanged
  const double d = off["solimp"][0].get<double>(), mj_w_r = off["efc_diagApprox"][3].get<double>();
  const double mj_pitch = off["pitch"].get<double>();
  EXPECT_NEAR(mj_pitch / pitch, 4 * (1 - d) * mj_w_r / w_r, 1e-2 * 4 * (1 - d) * mj_w_r / w_r);
  std::printf("weld rotation rows: pitch %.3f mrad (law %.3f, w_r %.4f); MuJoCo d = %.2f %.3f mrad (w_r %.4f), ratio %.4f\n",
              1e3 * pitch, -1e3 * tau * w_r / K, w_r, d, 1e3 * mj_pitch, mj_w_r, mj_pitch / pitch);
}
}  // namespace
