// Contact fidelity under every preset and contact approximation (issue 31; docs/solver.md,
// "Contact fidelity"): bodies sliding, sticking, rolling and tipping on an incline against
// rigid-body mechanics with Coulomb friction (tests/contact_fidelity.hpp defines the cases, the
// analytic answers and the bounds). This is the cross-section CI runs; bench/sap_fidelity runs the
// full sweep and tools/checks/fidelity_matrix.py writes its acceptance matrix into docs/solver.md.
//
// Under each preset's default contact approximation and under `lagged`, every world in the
// rigid-body domain must pass: distance within 2 % of Coulomb's, rotation within 1 degree of the
// compliant lean, creep within the regularised stiction's prediction, rolling at
// g sin / (1 + I / (m r^2)) without slip, the tall box tipping 1.5 degrees above its analytic
// angle and holding 1.5 degrees below it. Under `sap` and `similar` (which glide: a sliding
// contact separates at about mu |v_t|, docs/sap-math.md §3.7) the figures are printed and no
// world may fail or go non-finite.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "contact_fidelity.hpp"

using namespace sap;
using namespace sap::fidelity;

namespace {

struct ConfigCase {
  const char* preset;
  const char* approximation;  // "default": the preset's own
};

class ContactFidelity : public ::testing::TestWithParam<ConfigCase> {};

Config config_of(const ConfigCase& c) {
  Config cfg;
  cfg.preset = c.preset;
  const std::string a = c.approximation;
  if (a == "sap") cfg.approximation = ContactApproximation::Sap;
  if (a == "similar") cfg.approximation = ContactApproximation::Similar;
  if (a == "lagged") cfg.approximation = ContactApproximation::Lagged;
  return cfg;
}

}  // namespace

TEST_P(ContactFidelity, CrossSection) {
  const ConfigCase c = GetParam();
  const Config cfg = config_of(c);
  const std::string a = c.approximation;
  const bool must_pass = a == "default" || a == "lagged";
  int judged = 0, passed = 0;
  for (const Group& g : ci_cross_section()) {
    const std::vector<WorldResult> res = run_group(g, cfg);
    for (const WorldResult& r : res) {
      const WorldSpec& w = r.spec;
      std::printf("%s %-5s %-16s m %4g k %6.0e %5.2f deg mu %.2f: figure %+.4f rotation %.3g deg (bound %.3g) "
                  "airborne %d/%d max |v_n| %.3g%s%s\n",
                  cfg.label().c_str(), motion_name(w.motion), shape_name(g.shape), w.mass, w.stiffness, w.angle_deg, w.mu,
                  r.figure, r.rotation_deg, r.rotation_bound_deg, r.airborne_steps, r.steps, r.max_normal_speed,
                  r.pass ? "" : " FAIL ", r.note.c_str());
      EXPECT_FALSE(r.failed) << shape_name(g.shape) << " " << motion_name(w.motion) << " m " << w.mass << " k "
                             << w.stiffness << ": a failed world (failed step or non-finite state)";
      if (!r.judged) continue;
      ++judged;
      passed += r.pass ? 1 : 0;
      if (must_pass)
        EXPECT_TRUE(r.pass) << cfg.label() << " " << motion_name(w.motion) << " " << shape_name(g.shape) << " m "
                            << w.mass << " kg, k " << w.stiffness << " N/m, " << w.angle_deg << " deg, mu " << w.mu
                            << ": " << r.note << " (figure " << r.figure << ", rotation " << r.rotation_deg
                            << " deg, bound " << r.rotation_bound_deg << ")";
    }
  }
  std::printf("%s: %d/%d judged worlds pass\n", cfg.label().c_str(), passed, judged);
  EXPECT_GT(judged, 150);  // the cross-section stays inside the rigid-body domain
}

INSTANTIATE_TEST_SUITE_P(
    Presets, ContactFidelity,
    ::testing::Values(ConfigCase{"approx32", "default"}, ConfigCase{"approx32", "lagged"}, ConfigCase{"approx32", "sap"},
                      ConfigCase{"approx32", "similar"}, ConfigCase{"approx64", "default"}, ConfigCase{"approx64", "lagged"},
                      ConfigCase{"approx64", "sap"}, ConfigCase{"approx64", "similar"}, ConfigCase{"drake", "default"},
                      ConfigCase{"drake", "lagged"}, ConfigCase{"drake", "sap"}, ConfigCase{"drake", "similar"}),
    [](const auto& info) { return std::string(info.param.preset) + "_" + info.param.approximation; });

// The analytic answers themselves: the tipping angle of the tall box is atan(b / c) for rigid
// contact and decreases by the compliant lean; the lean vanishes with the stiffness; the
// penetration domain excludes the soft, heavy worlds.
TEST(ContactFidelityCases, AnalyticAnswers) {
  const WorldSpec stiff{Motion::Tip, 1, 1e12, 0, 0.9};
  EXPECT_NEAR(tipping_angle_deg(stiff), std::atan(1.0 / 3.0) / kDeg, 1e-6);
  const WorldSpec soft{Motion::Tip, 20, 1e5, 0, 0.9};
  const double th = tipping_angle_deg(soft) * kDeg;
  EXPECT_NEAR(th + 20 * kGravity * std::cos(th) / (4 * 5e4 * 0.05), std::atan(1.0 / 3.0), 1e-9);
  EXPECT_LT(compliant_lean_deg(Shape::Cube, {Motion::Slide, 1, 1e12, 30, 0.45}), 1e-6);
  EXPECT_FALSE(rigid_domain(Shape::Sphere, {Motion::Roll, 20, 1e4, 30, 0.5}).empty());
  EXPECT_TRUE(rigid_domain(Shape::Sphere, {Motion::Roll, 1, 1e6, 30, 0.5}).empty());
  // The sweep's friction pairs keep their margins from the friction angle.
  for (const SlidePair& p : kSlidePairs) EXPECT_GE(std::tan(p.angle_deg * kDeg) - p.mu, 0.1);
  for (const SlidePair& p : kStickPairs) EXPECT_GE(p.mu - std::tan(p.angle_deg * kDeg), 0.13);
}

// docs/sap-math.md §8.5: under the midpoint map the contact laws take the gap half a step ahead,
// phi + (h/2) v_n. A step of the midpoint map from (q, v) therefore solves the same problem as a
// step of sap_euler from (q + (h/2) v, v) when nothing else depends on the position: a sphere on
// a free joint, not spinning (no Coriolis terms), pressed into a plane while sliding, for which
// the gap is linear in the height and the Jacobian independent of it.
TEST(ContactFidelityCases, MidpointMapTakesTheGapHalfAStepAhead) {
  Group g = make_group(Shape::Sphere, 2e-3, 0.002, {}, {});
  g.worlds = {WorldSpec{Motion::Roll, 1, 1e6, 0, 0.5}};
  const Scene scene = group_scene(g);  // level ground, gravity -z
  const double h = scene.dt;
  const std::vector<double> v = {0.3, 0, -0.5, 0, 0, 0};
  const std::vector<double> q = {0, 0, 0.05 - 1e-3, 1, 0, 0, 0};  // 1 mm deep
  std::vector<double> q_ahead = q;
  for (int i = 0; i < 3; ++i) q_ahead[static_cast<std::size_t>(i)] += 0.5 * h * v[static_cast<std::size_t>(i)];
  for (ContactApproximation a : {ContactApproximation::Sap, ContactApproximation::Similar, ContactApproximation::Lagged}) {
    auto step = [&](PositionIntegrationMode map, const std::vector<double>& q0) {
      SimulatorOptions o;
      o.nworld = 1;
      o.backend = Backend::CPU;
      o.threads = 1;
      o.override_solver = true;
      o.solver.contact_preset_variant = Preset::Approx64;
      o.solver.contact_approximation = a;
      o.solver.position_integration = map;
      o.solver.line_search_variant = LineSearchVariant::ExactRoot;  // both solved to round-off
      o.solver.rel_tol = 1e-14;
      Simulator sim(scene, o);
      sim.state().qpos.world_from_host(0, q0.data());
      sim.state().qvel.world_from_host(0, v.data());
      sim.step();
      EXPECT_TRUE(sim.failed_worlds().empty());
      return sim.state().qvel.world_to_host(0);
    };
    const std::vector<double> mid = step(PositionIntegrationMode::Midpoint, q);
    const std::vector<double> ahead = step(PositionIntegrationMode::SapEuler, q_ahead);
    const std::vector<double> same_q = step(PositionIntegrationMode::SapEuler, q);
    double d_ahead = 0, d_same = 0;
    for (std::size_t i = 0; i < mid.size(); ++i) {
      d_ahead = std::max(d_ahead, std::abs(mid[i] - ahead[i]));
      d_same = std::max(d_same, std::abs(mid[i] - same_q[i]));
    }
    EXPECT_LT(d_ahead, 1e-12) << static_cast<int>(a);
    EXPECT_GT(d_same, 1e-3) << static_cast<int>(a) << ": the half step of gap (0.5 mm) must change the impulse";
  }
}
