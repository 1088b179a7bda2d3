// Initial states outside the joint limits (issue 29 item 6; docs/scene-format.md "Initial state
// and joint limits"): one rule for MJCF, URDF and JSON scenes. The stated initial configuration
// is used as given and a note names every joint outside its range; a URDF states none, and its
// zero moves to the nearest limit (with a note). Then the folded arm of
// tests/data/initial_limits_folded_arm.xml, stepped from its qpos0 (0.8, 1.1 and 1.1 rad outside
// three ranges) against MuJoCo's trajectory (tests/data/initial_limits_mujoco.json, written by
// tools/reference/initial_limits_mujoco.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/fp64_retry.hpp"
#include "sap/mjcf.hpp"
#include "sap/scene.hpp"
#include "sap/simulator.hpp"
#include "sap/status.hpp"
#include "scene_cases.hpp"

namespace {

using namespace sap;

// One world on the CPU backend, one thread, under `preset`.
SimulatorOptions one_cpu_world(Preset preset) { return sap::testing::cpu_preset_options(preset); }

std::string src(const std::string& rel) { return std::string(SAP_SOURCE_DIR) + "/" + rel; }

// The notes on the joint limits of a scene (kInitialStateLimitsNote).
std::vector<std::string> limit_notes(const Scene& s) {
  std::vector<std::string> out;
  for (const std::string& w : s.warnings)
    if (w.find(kInitialStateLimitsNote) != std::string::npos) out.push_back(w);
  return out;
}

TEST(InitialLimits, MjcfStartsAsGivenWithANoteNamingEachJoint) {
  const Scene s = load_mjcf(src("tests/data/initial_limits_folded_arm.xml"));
  for (double q : s.qpos0) EXPECT_EQ(q, 0.0);  // never moved
  const std::vector<std::string> notes = limit_notes(s);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("3 joint(s) start outside their range (up to 1.1)"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("'j2' at 0, 0.8 above [-2.5, -0.8]"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("'j3' at 0, 1.1 below [1.1, 5.2]"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("'j5'"), std::string::npos) << notes[0];
  // A model inside its ranges has no such note.
  const Scene inside = load_mjcf_string(
      "<mujoco><worldbody><body><joint name='a' range='-1 1'/><geom size='0.1'/></body></worldbody></mujoco>", "in.xml");
  EXPECT_TRUE(limit_notes(inside).empty());
}

TEST(InitialLimits, UrdfZeroMovesToTheNearestLimitWithANote) {
  const Scene s = load_urdf(src("tests/data/folded_arm.urdf"));
  ASSERT_EQ(s.qpos0.size(), 2u);
  EXPECT_EQ(s.qpos0[0], 0.0);  // shoulder: 0 is inside [-1.5, 1.5]
  EXPECT_EQ(s.qpos0[1], 2.5);  // elbow: 0 is outside [2.5, 3.8]
  const std::vector<std::string> notes = limit_notes(s);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("a URDF states no initial configuration"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("'elbow' 0 -> 2.5 (range [2.5, 3.8])"), std::string::npos) << notes[0];
}

TEST(InitialLimits, JsonUsesWhatItStatesAndMovesOnlyAUrdfAssetsZero) {
  const std::string base = src("tests/data");
  // A URDF asset: its zero moves to the nearest limit, as a bare URDF's.
  const Scene urdf = parse_scene(R"({"schema_version": 1, "name": "t", "assets": [{"type": "urdf", "path": "folded_arm.urdf"}]})", "urdf.json", base);
  ASSERT_EQ(urdf.qpos0.size(), 2u);
  EXPECT_EQ(urdf.qpos0[1], 2.5);
  ASSERT_EQ(limit_notes(urdf).size(), 1u);
  EXPECT_NE(limit_notes(urdf)[0].find("urdf.json: /assets/0: "), std::string::npos) << limit_notes(urdf)[0];
  // What the scene states is used as given: initial_joint_q puts the elbow back at zero.
  const Scene stated = parse_scene(
      R"({"schema_version": 1, "name": "t", "assets": [{"type": "urdf", "path": "folded_arm.urdf"}],
          "initial_joint_q": [{"joint": "elbow", "value": 0}]})",
      "stated.json", base);
  EXPECT_EQ(stated.qpos0[1], 0.0);
  const std::vector<std::string> notes = limit_notes(stated);
  ASSERT_EQ(notes.size(), 2u);  // the asset's zero, then the stated start
  EXPECT_NE(notes[1].find("stated.json: /initial_joint_q: "), std::string::npos) << notes[1];
  EXPECT_NE(notes[1].find("'elbow' at 0, 2.5 below [2.5, 3.8]"), std::string::npos) << notes[1];
  // An MJCF asset: its qpos0 as given.
  const Scene mjcf =
      parse_scene(R"({"schema_version": 1, "name": "t", "assets": [{"type": "mjcf", "path": "initial_limits_folded_arm.xml"}]})", "mjcf.json", base);
  for (double q : mjcf.qpos0) EXPECT_EQ(q, 0.0);
  ASSERT_EQ(limit_notes(mjcf).size(), 1u);
  EXPECT_NE(limit_notes(mjcf)[0].find("3 joint(s) start outside their range"), std::string::npos);
}

// A non-finite fp32 step is repeated in fp64 (fp32's range is exceeded long before fp64's).
TEST(InitialLimits, NonFiniteFp32StepIsRepeatedInFp64) {
  EXPECT_TRUE(needs_fp64_retry(kStatusNonFinite));
  EXPECT_TRUE(needs_fp64_retry(kStatusNonFinite | kStatusConverged));
  EXPECT_FALSE(needs_fp64_retry(kStatusNonFinite | kStatusFp64Retry));  // once per step
  EXPECT_FALSE(needs_fp64_retry(kStatusConverged));
}

// The folded arm from its qpos0, against MuJoCo, on drake's preset: finite, no failed world,
// and j2 (0.8 rad outside, no contact in its way) returns into its range as in MuJoCo. j3 and j5
// differ, and the test records it: MuJoCo's soft limit (solreflimit, time constant 0.02 s) yields
// to the folded forearm's self-contact, and MuJoCo's j3/j5 settle 0.1 rad outside their ranges;
// SAP's near-rigid limit removes the whole violation within a step or two (v = -phi/(2h), 275
// rad/s for 1.1 rad) and the joints end inside (docs/scene-format.md "Initial state and joint
// limits").
TEST(InitialLimits, FoldedArmOnDrakeAgainstMuJoCo) {
  std::ifstream f(src("tests/data/initial_limits_mujoco.json"));
  ASSERT_TRUE(f.good());
  const nlohmann::json ref = nlohmann::json::parse(f);
  const Scene scene = load_mjcf(src(ref["model"].get<std::string>()));
  SimulatorOptions so = one_cpu_world(Preset::Drake);
  Simulator sim(scene, so);
  sim.reset();
  const std::vector<std::string> names = ref["joints"].get<std::vector<std::string>>();
  ASSERT_EQ(names.size(), 3u);
  int step = 0;
  std::vector<double> q;
  for (const auto& sample : ref["samples"]) {
    ASSERT_TRUE(sample["finite"].get<bool>());
    const int until = static_cast<int>(std::lround(sample["time"].get<double>() / scene.dt));
    for (; step < until; ++step) sim.step();
    q = sim.state().qpos.world_to_host(0);
    for (double x : q) ASSERT_TRUE(std::isfinite(x));
  }
  EXPECT_TRUE(sim.failed_worlds().empty());
  const auto& last = ref["samples"].back()["q"];
  const std::size_t j2 = static_cast<std::size_t>(scene.model.jnt_qposadr[static_cast<std::size_t>(scene.model.joint_id(names[0]))]);
  const double lo = ref["range"][0][0].get<double>(), hi = ref["range"][0][1].get<double>();
  ASSERT_GT(last[0].get<double>(), lo);  // MuJoCo's j2 is back inside its range at 1 s
  ASSERT_LT(last[0].get<double>(), hi);
  EXPECT_GT(q[j2], lo - 1e-3);  // ours too (to the limit row's compliance)
  EXPECT_LT(q[j2], hi + 1e-3);
  EXPECT_NEAR(q[j2], last[0].get<double>(), 0.5);  // -2.24 vs MuJoCo's -1.94 rad
}

// The approximate presets from the folded arm's start: the near-rigid limit and contact rows
// send the joints to ~550 rad/s in the first step (MuJoCo's largest joint speed on the whole
// trajectory is 15 rad/s). At such speeds the midpoint Coriolis passes of free motion do not
// contract (h |A^-1 dC/dv| / 2 > 1) and used to amplify the speed step after step (1e64 rad/s,
// approx64 too, so the fp64 retry could not rescue it); a non-contracting pass now falls back
// to the explicit Coriolis terms (kernels/free_motion.hpp). Every preset steps finitely, with no
// failed world, and j2 returns into its range as in MuJoCo. (Peaks stay far above MuJoCo's:
// the near-rigid first step is the difference, docs/scene-format.md.)
TEST(InitialLimits, FoldedArmStepsFinitelyOnEveryPreset) {
  const Scene scene = load_mjcf(src("tests/data/initial_limits_folded_arm.xml"));
  const std::size_t j2 = static_cast<std::size_t>(scene.model.jnt_qposadr[static_cast<std::size_t>(scene.model.joint_id("j2"))]);
  for (Preset preset : {Preset::Approx32, Preset::Approx64, Preset::Drake}) {
    SCOPED_TRACE(to_string(preset));
    SimulatorOptions so = one_cpu_world(preset);
    Simulator sim(scene, so);
    sim.reset();
    double vmax = 0;
    int fallbacks = 0;  // steps whose midpoint passes fell back to explicit Coriolis (status bit)
    for (int i = 0; i < 500; ++i) {
      sim.step();
      for (double v : sim.state().qvel.world_to_host(0)) vmax = std::max(vmax, std::abs(v));
      fallbacks += (sim.solver().diagnostics().status[0] & kStatusCoriolisFallback) != 0;
    }
    EXPECT_TRUE(sim.failed_worlds_since_reset().empty());
    std::printf("%s: peak |qvel| %.0f rad/s, %d Coriolis fallbacks\n", to_string(preset), vmax, fallbacks);
    if (preset == Preset::Drake) EXPECT_EQ(fallbacks, 0);  // explicit Coriolis: no passes
    else EXPECT_GT(fallbacks, 0);                          // the fast start needs them, and they are counted
    EXPECT_LT(vmax, 1e4);  // bounded: 550 rad/s after the first step, transient peaks of a few 1000
    const std::vector<double> q = sim.state().qpos.world_to_host(0);
    for (double x : q) ASSERT_TRUE(std::isfinite(x));
    EXPECT_GT(q[j2], -2.5 - 1e-3);  // j2 inside [-2.5, -0.8], as MuJoCo's at 1 s
    EXPECT_LT(q[j2], -0.8 + 1e-3);
  }
}

// The fallback itself, on a torque-free body with inertia diag(1, 2, 3) and no gravity, one step
// of approx64 (h = 2 ms). Spinning at 3000 rad/s about a non-principal axis (h |w| = 6) the
// midpoint passes do not contract and the step equals, bit for bit, the step with explicit Coriolis terms; at
// 1 rad/s they contract, and the midpoint step differs from the explicit one (as it should:
// O(h^3) angular momentum drift instead of O(h^2)).
TEST(InitialLimits, NonContractingMidpointCoriolisFallsBackToExplicit) {
  Scene scene = load_mjcf_string(
      "<mujoco><option gravity='0 0 0' timestep='0.002'/><worldbody><body><freejoint/>"
      "<inertial pos='0 0 0' mass='1' diaginertia='1 2 3'/></body></worldbody></mujoco>",
      "spinner.xml");
  auto one_step = [&](double spin, CoriolisMode mode) {
    scene.qvel0 = {0, 0, 0, spin, 0.7 * spin, 0.3 * spin};
    SimulatorOptions so = one_cpu_world(Preset::Approx64);
    so.solver.coriolis = mode;
    Simulator sim(scene, so);
    sim.reset();
    sim.step();
    EXPECT_TRUE(sim.failed_worlds().empty());
    const bool fallback = (sim.solver().diagnostics().status[0] & kStatusCoriolisFallback) != 0;
    return std::make_pair(sim.state().qvel.world_to_host(0), fallback);
  };
  const auto fast_mid = one_step(3000, CoriolisMode::Midpoint), fast_exp = one_step(3000, CoriolisMode::Explicit);
  EXPECT_EQ(fast_mid.first, fast_exp.first);
  EXPECT_TRUE(fast_mid.second);    // the fallback is reported in the world's status
  EXPECT_FALSE(fast_exp.second);   // explicit mode has no passes to fall back from
  const auto slow_mid = one_step(1, CoriolisMode::Midpoint), slow_exp = one_step(1, CoriolisMode::Explicit);
  EXPECT_NE(slow_mid.first, slow_exp.first);
  EXPECT_FALSE(slow_mid.second);
}


// The CPU runs the fp32 free motion of four worlds side by side (kernels/tree_worlds.hpp: their
// biases and solves in SIMD lanes, pass by pass). Worlds whose midpoint passes fall back (3000
// rad/s) and worlds whose passes contract (1 rad/s), with 1 and 3 passes, in one group of four
// and in a group of three: each world's steps and status are bitwise those of its run alone.
TEST(InitialLimits, FallbackAmongWorldsSideBySideAsAlone) {
  Scene scene = load_mjcf_string(
      "<mujoco><option gravity='0 0 0' timestep='0.002'/><worldbody><body><freejoint/>"
      "<inertial pos='0 0 0' mass='1' diaginertia='1 2 3'/></body></worldbody></mujoco>",
      "spinner.xml");
  const double spins[4] = {3000, 1, 2500, 0.5};
  auto run = [&](const std::vector<int>& ids, int passes) {
    SimulatorOptions so = sap::testing::cpu_preset_options(Preset::Approx32, static_cast<int>(ids.size()));
    so.solver.coriolis_iterations = passes;
    Simulator sim(scene, so);
    sim.reset();
    std::vector<std::vector<double>> out(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const double w = spins[ids[k]];
      const std::vector<double> v = {0, 0, 0, w, 0.7 * w, 0.3 * w};
      sim.state().qvel.world_from_host(static_cast<int>(k), v.data());
    }
    for (int step = 0; step < 3; ++step) {
      sim.step();
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const std::vector<double> v = sim.state().qvel.world_to_host(static_cast<int>(k));
        out[k].insert(out[k].end(), v.begin(), v.end());
        out[k].push_back((sim.solver().diagnostics().status[k] & kStatusCoriolisFallback) != 0 ? 1.0 : 0.0);
      }
    }
    return out;
  };
  for (int passes : {1, 3}) {
    SCOPED_TRACE(passes);
    const auto four = run({0, 1, 2, 3}, passes), three = run({1, 2, 3}, passes);
    EXPECT_EQ(four[0].back(), 1.0);  // the fast worlds fall back, the slow ones do not
    EXPECT_EQ(four[1].back(), 0.0);
    for (int w = 0; w < 4; ++w) {
      const auto alone = run({w}, passes);
      EXPECT_EQ(alone[0], four[static_cast<std::size_t>(w)]) << "world " << w << " among four";
      if (w > 0) EXPECT_EQ(alone[0], three[static_cast<std::size_t>(w - 1)]) << "world " << w << " among three";
    }
  }
}

}  // namespace
