// MJCF models mean what MuJoCo means (issue 29), end to end through the importer, the collision
// pipeline and the solver, against MuJoCo's own answers for the same files
// (tests/data/mujoco/*.json, tools/reference/mujoco_contact_semantics.py, MuJoCo 4.0.0):
//   - which geom pairs collide (contype/conaffinity, parent and weld filtering, <exclude>,
//     <pair>) and with which parameters (friction max / priority, condim, margin and gap):
//     contact_params.json, contact_filter.json;
//   - stick or slide on a tilted floor, and where a box rests with margins (friction_outcomes.json);
//   - torsional and rolling friction (condim 4, 6) slow a ball at MuJoCo's rates
//     (friction_rates.json);
//   - resting and sliding convex meshes: MuJoCo's contact patch, and a contact wherever MuJoCo
//     has one (mesh_contact_sets.json).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "sap/collision.hpp"
#include "sap/contacts.hpp"
#include "sap/mjcf.hpp"
#include "sap/simulator.hpp"

using namespace sap;

namespace {

nlohmann::json fixture(const std::string& name) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/" + name);
  EXPECT_TRUE(in.good()) << "missing tests/data/mujoco/" << name << " (tools/reference/mujoco_contact_semantics.py)";
  return nlohmann::json::parse(in);
}

struct HostContact {
  std::string g0, g1;
  double phi, friction;
  std::array<double, 3> pos;
  int condim;                          // 3 for a model without torsional/rolling friction
  std::array<double, 4> friction_ext;  // t2, spin, roll1, roll2 (angular models)
};

// Our contacts of one world at qpos (the witness midpoints).
std::vector<HostContact> collide_at(const Model& m, const std::vector<double>& qpos) {
  Context ctx(Backend::CPU, 1);
  CollisionPipeline pipe(m, ctx, 1);
  State st(m, 1, Backend::CPU);
  st.qpos.world_from_host(0, qpos.data());
  Contacts con(1, 64, Backend::CPU, pipe.angular_friction());
  pipe.collide(st, con);
  const int n = con.counts_host()[0];
  const auto geom = con.geom.world_to_host(0);
  const auto phi = con.phi.world_to_host(0), mu = con.friction.world_to_host(0);
  const auto x0 = con.x0.world_to_host(0), x1 = con.x1.world_to_host(0);
  std::vector<int> condim;
  std::vector<double> ext;
  if (con.angular()) {
    condim = con.condim.world_to_host(0);
    ext = con.friction_ext.world_to_host(0);
  }
  std::vector<HostContact> out;
  for (int i = 0; i < n; ++i) {
    HostContact c{m.geom_names[static_cast<std::size_t>(geom[2 * i])], m.geom_names[static_cast<std::size_t>(geom[2 * i + 1])],
                  phi[i], mu[i], {}, 3, {mu[i], 0, 0, 0}};
    for (int k = 0; k < 3; ++k) c.pos[k] = 0.5 * (x0[3 * i + k] + x1[3 * i + k]);
    if (con.angular()) {
      c.condim = condim[static_cast<std::size_t>(i)];
      for (std::size_t k = 0; k < 4; ++k) c.friction_ext[k] = ext[4 * static_cast<std::size_t>(i) + k];
    }
    out.push_back(c);
  }
  return out;
}

double distance(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

double dot(const std::array<double, 3>& a, const std::array<double, 3>& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Area of the convex hull of points projected on the plane normal to the unit vector n (gift
// wrapping; a handful of points).
double hull_area(const std::vector<std::array<double, 3>>& pts, const std::array<double, 3>& n) {
  std::array<double, 3> t1 = std::abs(n[0]) < 0.9 ? std::array<double, 3>{1, 0, 0} : std::array<double, 3>{0, 1, 0};
  const double tn = dot(t1, n);
  for (int k = 0; k < 3; ++k) t1[k] -= tn * n[k];
  const double l = std::sqrt(dot(t1, t1));
  for (double& x : t1) x /= l;
  const std::array<double, 3> t2{n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0]};
  std::vector<std::array<double, 2>> p;
  for (const auto& x : pts) p.push_back({dot(x, t1), dot(x, t2)});
  if (p.size() < 3) return 0;
  std::size_t start = 0;
  for (std::size_t i = 1; i < p.size(); ++i)
    if (p[i][0] < p[start][0]) start = i;
  std::vector<std::size_t> hull;
  std::size_t cur = start;
  do {
    hull.push_back(cur);
    std::size_t next = (cur + 1) % p.size();
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double cr = (p[next][0] - p[cur][0]) * (p[i][1] - p[cur][1]) - (p[next][1] - p[cur][1]) * (p[i][0] - p[cur][0]);
      if (cr < 0) next = i;
    }
    cur = next;
  } while (cur != start && hull.size() <= p.size());
  double a = 0;
  for (std::size_t i = 0; i < hull.size(); ++i) {
    const auto& u = p[hull[i]];
    const auto& v = p[hull[(i + 1) % hull.size()]];
    a += u[0] * v[1] - v[0] * u[1];
  }
  return 0.5 * std::abs(a);
}

std::pair<std::string, std::string> sorted_pair(std::string a, std::string b) {
  if (b < a) std::swap(a, b);
  return {a, b};
}

SimulatorOptions one_cpu_world() {
  SimulatorOptions opt;
  opt.nworld = 1;
  opt.backend = Backend::CPU;
  opt.threads = 1;
  return opt;
}

// Slope of the least-squares line through (t_i, y_i).
double fitted_slope(const std::vector<double>& t, const std::vector<double>& y) {
  const double n = static_cast<double>(t.size());
  double st = 0, sy = 0, stt = 0, sty = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    st += t[i];
    sy += y[i];
    stt += t[i] * t[i];
    sty += t[i] * y[i];
  }
  return (n * sty - st * sy) / (n * stt - st * st);
}

}  // namespace

// Which pairs collide and with which parameters, at each model's initial configuration, for every
// case of contact_params.json (friction max, priority, MuJoCo's minimum 1e-5, condim max,
// margin/gap, <pair> values and defaults, <exclude>, contype/conaffinity) and contact_filter.json
// (parent and weld filtering with filterparent on and off, <exclude>): the same geom pairs; per
// contact MuJoCo's condim and friction (t1, and with condim 4/6 t2, spin, roll1, roll2; 0 for
// condim 1, which is frictionless), and phi = dist - margin (the contact surface shifted out by
// MuJoCo's includemargin; a contact in the gap band has phi > 0: detected, not pressing).
TEST(MujocoSemantics, ContactPairsAndParametersAsMuJoCo) {
  int cases = 0, contacts = 0;
  for (const char* file : {"contact_params.json", "contact_filter.json"}) {
    const nlohmann::json fx = fixture(file);
    for (const auto& c : fx["cases"]) {
      const std::string name = c["name"];
      const Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
      const auto ours = collide_at(s.model, s.qpos0);
      std::set<std::pair<std::string, std::string>> ours_pairs, mj_pairs;
      for (const auto& o : ours) ours_pairs.insert(sorted_pair(o.g0, o.g1));
      if (c.contains("contacts")) {
        for (const auto& k : c["contacts"]) mj_pairs.insert(sorted_pair(k["geom"][0], k["geom"][1]));
        ASSERT_EQ(ours.size() > 0, c["contacts"].size() > 0) << name;
        // Every contact of these cases is between the same two geoms, with the same parameters.
        if (!c["contacts"].empty()) {
          const auto& k = c["contacts"][0];
          const int condim = k["condim"];
          const std::vector<double> f = k["friction"];
          double mj_phi = 1e9;
          for (const auto& kk : c["contacts"])
            mj_phi = std::min(mj_phi, kk["dist"].get<double>() - kk["includemargin"].get<double>());
          double phi = 1e9;
          for (const auto& o : ours) {
            EXPECT_NEAR(o.friction, condim == 1 ? 0.0 : f[0], 1e-12) << name;
            if (condim > 3) {
              EXPECT_EQ(o.condim, condim) << name;
              for (std::size_t j = 0; j < 4; ++j) EXPECT_NEAR(o.friction_ext[j], f[j + 1], 1e-12) << name << " coefficient " << j + 1;
            } else {
              EXPECT_LE(o.condim, 3) << name;
            }
            phi = std::min(phi, o.phi);
            ++contacts;
          }
          EXPECT_NEAR(phi, mj_phi, 1e-9) << name;
        }
      } else {
        for (const auto& p : c["pairs"]) mj_pairs.insert(sorted_pair(p[0], p[1]));
      }
      EXPECT_EQ(ours_pairs, mj_pairs) << name;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 23);
  EXPECT_GT(contacts, 40);
}

// A box on a floor under gravity tilted by atan(0.5) for 1 s: it sticks where MuJoCo's box
// sticks (friction max 1 against 0; max 0.7 where Drake's harmonic mean 0.31 would slide) and
// slides MuJoCo's distance (to 1 %) where MuJoCo's slides (the priority geom's friction 0,
// max 0.3, <pair> friction 0.1, condim 1). Elliptic-cone cases: SAP's cone is elliptic.
TEST(MujocoSemantics, StickOrSlideAsMuJoCo) {
  const nlohmann::json fx = fixture("friction_outcomes.json");
  int sticks = 0, slides = 0;
  for (const auto& c : fx["cases"]) {
    if (c["cone"] != "elliptic") continue;
    const std::string name = c["name"];
    const Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
    Simulator sim(s, one_cpu_world());
    sim.reset();
    sim.step(static_cast<int>(std::lround(1.0 / s.dt)));
    const std::vector<double> q = sim.qpos_view().to_host<double>();
    const double x = q[0] - s.qpos0[0], mj = c["x_at_1s"];
    if (std::abs(mj) < 0.01) {
      EXPECT_LT(std::abs(x), 0.01) << name << ": MuJoCo sticks (" << mj << " m), ours moves " << x << " m";
      ++sticks;
    } else {
      EXPECT_NEAR(x, mj, 0.01 * std::abs(mj)) << name;
      ++slides;
    }
  }
  EXPECT_EQ(sticks, 2);
  EXPECT_EQ(slides, 4);
}

// With margins the contact surface moves out by the margin sum: the box comes to rest at
// dist = margin0 + margin1 (a gap changes nothing). The rest height with margins less the one
// without is MuJoCo's to 20 um; the rest penetration itself is each contact model's compliance
// (SAP's from the solref on the box's mass: about 1 mm here, MuJoCo's soft constraint 0.1 mm).
TEST(MujocoSemantics, BoxRestsAtTheMargin) {
  const nlohmann::json fx = fixture("friction_outcomes.json");
  std::vector<double> ours, mj;
  for (const auto& c : fx["margin_rest"]) {
    const Scene s = load_mjcf_string(c["xml"].get<std::string>(), "margin_rest.xml");
    Simulator sim(s, one_cpu_world());
    sim.reset();
    sim.step(static_cast<int>(std::lround(1.0 / s.dt)));
    ours.push_back(sim.qpos_view().to_host<double>()[2] - 0.1);
    mj.push_back(c["rest_gap"]);
  }
  ASSERT_EQ(ours.size(), 4u);
  EXPECT_NEAR(ours[0], mj[0], 1e-3) << "no margin";
  for (std::size_t i = 1; i < ours.size(); ++i)
    EXPECT_NEAR(ours[i] - ours[0], mj[i] - mj[0], 2e-5) << "margins " << fx["margin_rest"][i]["margin"] << " gaps "
                                                         << fx["margin_rest"][i]["gap"];
}

// Torsional (condim 4, 6) and rolling (condim 6) friction: a ball of radius 0.1 m, 1 kg, spinning
// at 20 rad/s slows at MuJoCo's fitted rate (-48.9 rad/s^2; analytic -mu_spin m g / I = -49.05),
// rolling at 1 m/s slows at MuJoCo's (-0.350 m/s^2 = -5 mu_roll g / (7 r)), to 1.5 %; without the
// rows (condim 3, or condim 4 for rolling) neither slows. Each contact approximation: SAP's
// elliptic cone and the Hunt-Crossley ones (docs/sap-math.md §3.9). Fitted as the fixture's
// generator fits (samples every 10 ms / 20 ms from 0.05 s / 0.1 s while the speed is above
// 2 rad/s / 0.1 m/s).
TEST(MujocoSemantics, TorsionalAndRollingFrictionRatesAsMuJoCo) {
  const nlohmann::json fx = fixture("friction_rates.json");
  int n = 0;
  const std::pair<ContactApproximation, const char*> approximations[] = {
      {ContactApproximation::Sap, "sap"}, {ContactApproximation::Similar, "similar"}, {ContactApproximation::Lagged, "lagged"}};
  for (const auto& [approx, approx_name] : approximations) {
    for (const auto& c : fx["cases"]) {
      if (c["cone"] != "elliptic") continue;
      const std::string name = c["name"];
      Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
      s.qvel0 = c["qvel0"].get<std::vector<double>>();
      const bool spin = c["quantity"] == "omega_z";
      const int index = spin ? 5 : 0;
      const double sample = spin ? 0.01 : 0.02, t_end = spin ? 0.6 : 2.0, t_fit = spin ? 0.05 : 0.1;
      const double y_min = spin ? 2.0 : 0.1;
      SimulatorOptions opt = one_cpu_world();
      opt.override_solver = true;
      opt.solver = s.solver;
      opt.solver.contact_approximation = approx;
      Simulator sim(s, opt);
      sim.reset();
      const int per_sample = static_cast<int>(std::lround(sample / s.dt));
      std::vector<double> t, y;
      for (int k = 1; k * sample <= t_end + 1e-9; ++k) {
        sim.step(per_sample);
        const double v = sim.qvel_view().to_host<double>()[static_cast<std::size_t>(index)];
        if (k * sample >= t_fit - 1e-9 && v > y_min) {
          t.push_back(k * sample);
          y.push_back(v);
        }
      }
      const std::string what = name + " (" + approx_name + ")";
      ASSERT_GT(t.size(), 3u) << what;
      const double rate = fitted_slope(t, y), mj = c["fitted_rate"];
      if (std::abs(mj) > 1e-3) EXPECT_NEAR(rate, mj, 0.015 * std::abs(mj)) << what;
      else EXPECT_LT(std::abs(rate), spin ? 0.1 : 0.005) << what << ": MuJoCo's does not slow";
      ++n;
    }
  }
  EXPECT_EQ(n, 18);
}

// Per-world randomisation reaches the torsional coefficient: a world whose friction scale is 0.5
// (WorldParam::ContactScale) spins down at half the rate of a world at scale 1, both in one step
// call (0.2 s of the spinning ball of friction_rates.json, condim 4).
TEST(MujocoSemantics, FrictionScaleReachesTorsionalFriction) {
  const nlohmann::json fx = fixture("friction_rates.json");
  for (const auto& c : fx["cases"]) {
    if (c["name"] != "spin_condim4" || c["cone"] != "elliptic") continue;
    Scene s = load_mjcf_string(c["xml"].get<std::string>(), "spin_condim4.xml");
    s.qvel0 = c["qvel0"].get<std::vector<double>>();
    SimulatorOptions opt = one_cpu_world();
    opt.nworld = 2;
    Simulator sim(s, opt);
    const std::vector<double> scale = {1, 1, 1, 0.5, 1, 1};
    sim.set_world_params(WorldParam::ContactScale, scale.data());
    sim.reset();
    sim.step(static_cast<int>(std::lround(0.2 / s.dt)));
    const std::vector<double> v = sim.qvel_view().to_host<double>();
    const double slowed0 = 20 - v[5], slowed1 = 20 - v[6 + 5];
    EXPECT_NEAR(slowed0, 49.05 * 0.2, 0.02 * 49.05 * 0.2);
    EXPECT_NEAR(slowed1, 0.5 * slowed0, 0.02 * slowed0);
    return;
  }
  FAIL() << "friction_rates.json has no elliptic spin_condim4 case";
}

namespace {

// One world of scene s stepped n times on the CPU (emulated teams of `lanes` lanes; 0: one
// lane) under preset and linear solver: its qpos, then its qvel.
std::vector<double> angular_run(const Scene& s, Preset preset, LinearSolver solver, int lanes, int n,
                                std::vector<double>* qvel) {
  SimulatorOptions opt = one_cpu_world();
  opt.emulated_lanes = lanes;
  opt.override_solver = true;
  opt.solver = s.solver;
  opt.solver.contact_preset_variant = preset;
  opt.solver.linear_solver = solver;
  Simulator sim(s, opt);
  sim.reset();
  sim.step(n);
  *qvel = sim.qvel_view().to_host<double>();
  return sim.qpos_view().to_host<double>();
}

}  // namespace

// The angular rows on emulated GPU teams (a lane per row / dof, kernels/newton.hpp) give the
// single lane's state, to the rounding of the teams' reductions (the cost sums in another order):
// a ball spinning, rolling and sliding with condim 6 for 20 ms. The teams run the kernels'
// kAngular instantiations as the CUDA backend does (launch/launches_impl.hpp): fp64 and fp32
// objectives (approx64, approx32), the fused Newton loop and the split one (linear_solver =
// reference: NewtonHeadKernel, NewtonTailKernel), teams of 1, 4 and 32 lanes; then an
// ellipsoid (a convex pair: the collision kernel with the convex solvers) spinning with condim 6.
TEST(MujocoSemantics, AngularRowsOnTeamsAsOneLane) {
  const nlohmann::json fx = fixture("friction_rates.json");
  bool found = false;
  for (const auto& c : fx["cases"]) {
    if (c["name"] != "roll_condim6" || c["cone"] != "elliptic") continue;
    found = true;
    Scene s = load_mjcf_string(c["xml"].get<std::string>(), "roll_condim6.xml");
    s.qvel0 = {1.0, 0.3, 0.0, -2.0, 10.0, 15.0};
    for (const Preset preset : {Preset::Approx64, Preset::Approx32})
      for (const LinearSolver solver : {LinearSolver::Cholesky, LinearSolver::Reference}) {
        const std::string what = std::string(preset == Preset::Approx64 ? "approx64" : "approx32") +
                                 (solver == LinearSolver::Reference ? " reference" : " cholesky");
        std::vector<double> v;
        const std::vector<double> one_lane = angular_run(s, preset, solver, 0, 10, &v);
        EXPECT_GT(std::abs(one_lane[0]), 0.015) << what;  // it moved
        EXPECT_LT(v[5], 15.0 - 0.1) << what;              // the torsional row slowed the spin (condim 3: 15)
        for (int lanes : {1, 4, 32}) {
          const std::vector<double> q = angular_run(s, preset, solver, lanes, 10, &v);
          // Measured: identical for approx64 and the split loop, 6e-15 for approx32's fused loop.
          for (std::size_t i = 0; i < q.size(); ++i)
            EXPECT_NEAR(q[i], one_lane[i], 1e-9) << what << ", " << lanes << " lanes, qpos " << i;
        }
      }
  }
  EXPECT_TRUE(found) << "friction_rates.json has no elliptic roll_condim6 case";
  Scene e = load_mjcf_string(R"(<mujoco><option timestep="0.002" cone="elliptic"/><worldbody>
      <geom type="plane" size="2 2 0.1" condim="6" friction="1 0.05 0.001"/>
      <body pos="0 0 0.06"><freejoint/><geom type="ellipsoid" size="0.1 0.08 0.06" mass="1" condim="6"/></body>
    </worldbody></mujoco>)",
                             "ellipsoid_condim6.xml");
  e.qvel0 = {0.5, 0.0, 0.0, 0.0, 0.0, 10.0};
  std::vector<double> v;
  const std::vector<double> one_lane = angular_run(e, Preset::Approx64, LinearSolver::Cholesky, 0, 10, &v);
  EXPECT_LT(v[5], 10.0 - 0.1) << "ellipsoid";  // the torsional row slowed the spin
  for (int lanes : {4, 32}) {
    const std::vector<double> q = angular_run(e, Preset::Approx64, LinearSolver::Cholesky, lanes, 10, &v);
    for (std::size_t i = 0; i < q.size(); ++i)
      EXPECT_NEAR(q[i], one_lane[i], 1e-9) << "ellipsoid, " << lanes << " lanes, qpos " << i;
  }
}

// Resting and sliding faces keep a patch: at each snapshot of MuJoCo's run where MuJoCo has a
// face patch (>= 3 distinct points) we have >= 3 contacts on its contact plane (to 1 mm) whose
// polygon covers at least half the area of MuJoCo's (the two reductions keep different corners
// of one clipped polygon, so the points themselves may differ); where MuJoCo has any contact we
// have one, as deep to 0.1 mm (the snapshot of a mesh cube sliding on a box floor with one
// corner 47 um deep is where GJK once stopped on a duplicate support point and reported no
// contact).
TEST(MujocoSemantics, MeshContactSetsAsMuJoCo) {
  const nlohmann::json fx = fixture("mesh_contact_sets.json");
  int patches = 0, snapshots = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    const Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
    for (const auto& snap : c["snapshots"]) {
      std::vector<std::array<double, 3>> mj;
      double mj_deepest = 1e9;
      for (const auto& k : snap["contacts"]) {
        const std::array<double, 3> p{k["pos"][0], k["pos"][1], k["pos"][2]};
        mj_deepest = std::min(mj_deepest, k["dist"].get<double>());
        bool dup = false;
        for (const auto& q : mj) dup |= distance(p, q) < 1e-6;
        if (!dup) mj.push_back(p);
      }
      if (mj.empty()) continue;
      const auto ours = collide_at(s.model, snap["qpos"].get<std::vector<double>>());
      ++snapshots;
      ASSERT_FALSE(ours.empty()) << name << " step " << snap["step"] << ": MuJoCo has " << mj.size() << " contacts";
      double deepest = 1e9;
      for (const auto& o : ours) deepest = std::min(deepest, o.phi);
      EXPECT_NEAR(deepest, mj_deepest, 1e-4) << name << " step " << snap["step"];
      if (mj.size() < 3) continue;
      EXPECT_GE(ours.size(), 3u) << name << " step " << snap["step"];
      const std::array<double, 3> n{snap["contacts"][0]["normal"][0], snap["contacts"][0]["normal"][1],
                                    snap["contacts"][0]["normal"][2]};
      std::vector<std::array<double, 3>> ours_pos;
      for (const auto& o : ours) {
        ours_pos.push_back(o.pos);
        EXPECT_LT(std::abs(dot(o.pos, n) - dot(mj[0], n)), 1e-3) << name << " step " << snap["step"];
      }
      EXPECT_GT(hull_area(ours_pos, n), 0.5 * hull_area(mj, n)) << name << " step " << snap["step"];
      ++patches;
    }
  }
  EXPECT_GT(patches, 25);
  EXPECT_GT(snapshots, patches);
}

// The same mesh cases stepped (mesh_contact_sets.json's trajectories, sampled every 50 ms):
// resting meshes stay where MuJoCo keeps them (an upper arm off-centre on a faceted base once
// pivoted on a single contact point and slid off: here it must hold within 2 mm), and a mesh
// cube pushed along a mesh or box floor decelerates as MuJoCo's (mu g: both engines' Coulomb
// sliding) and does not tip: sliding distance to 3 % of MuJoCo's at every sample once it has
// moved 1 cm, speed to 0.02 m/s. Bounds that are the contact models' compliance, not the mesh
// contact: SAP's contact (solref on a 1 kg body) rests about 1 mm deep where MuJoCo's soft
// constraint rests 0.1 mm deep (heights to 2 mm), and a compliant patch rocks while it sinks in
// or carries a friction moment: the tilt of a cube of side a sliding with friction mu on a patch
// that sinks delta is about 6 mu delta / a (0.018 rad for mu 0.3, delta 1 mm, a 0.1 m), MuJoCo's
// ten times less; so orientations agree with MuJoCo's to 0.03 rad at every sample (tipping over
// is > 0.5 rad) and to 0.01 rad once settled (t >= 0.4 s: resting, or the cube stopped).
TEST(MujocoSemantics, MeshTrajectoriesAsMuJoCo) {
  const nlohmann::json fx = fixture("mesh_contact_sets.json");
  int resting = 0, sliding = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
    const bool slides = !c["qvel0"].is_null();
    if (slides) s.qvel0 = c["qvel0"].get<std::vector<double>>();
    Simulator sim(s, one_cpu_world());
    sim.reset();
    const auto& ts = c["t"];
    const auto& mq = c["qpos"];
    const auto& mv = c["qvel"];
    int done = 0;
    const std::vector<double> q0 = mq[0].get<std::vector<double>>();
    for (std::size_t k = 1; k < ts.size(); ++k) {
      const int target = static_cast<int>(std::lround(ts[k].get<double>() / s.dt));
      sim.step(target - done);
      done = target;
      const std::vector<double> q = sim.qpos_view().to_host<double>();
      const std::vector<double> v = sim.qvel_view().to_host<double>();
      const std::vector<double> qm = mq[k].get<std::vector<double>>();
      const std::vector<double> vm = mv[k].get<std::vector<double>>();
      ASSERT_TRUE(std::isfinite(q[0]) && std::isfinite(q[2])) << name;
      // Tilt away from MuJoCo's orientation: angle of q_mj^-1 q.
      const double qd = std::abs(q[3] * qm[3] + q[4] * qm[4] + q[5] * qm[5] + q[6] * qm[6]);
      const double tilt = 2 * std::acos(std::min(1.0, qd));
      const double tilt_bound = ts[k].get<double>() >= 0.4 - 1e-9 ? 0.01 : 0.03;
      EXPECT_LT(tilt, tilt_bound) << name << " t " << ts[k] << ": orientation off MuJoCo's by " << tilt << " rad";
      if (!slides) {
        const double off = std::hypot(q[0] - qm[0], q[1] - qm[1], q[2] - qm[2]);
        EXPECT_LT(off, 2e-3) << name << " t " << ts[k] << ": ours at (" << q[0] << ", " << q[1] << ", " << q[2]
                             << "), MuJoCo (" << qm[0] << ", " << qm[1] << ", " << qm[2] << ")";
        continue;
      }
      const double dm = std::hypot(qm[0] - q0[0], qm[1] - q0[1]);
      const double d = std::hypot(q[0] - q0[0], q[1] - q0[1]);
      if (dm > 0.01) EXPECT_NEAR(d, dm, 0.03 * dm) << name << " t " << ts[k] << ": sliding distance";
      EXPECT_NEAR(std::hypot(v[0], v[1]), std::hypot(vm[0], vm[1]), 0.02) << name << " t " << ts[k] << ": speed";
      EXPECT_NEAR(q[2], qm[2], 2e-3) << name << " t " << ts[k] << ": height";
    }
    (slides ? sliding : resting) += 1;
  }
  EXPECT_EQ(resting, 6);
  EXPECT_EQ(sliding, 2);
}
