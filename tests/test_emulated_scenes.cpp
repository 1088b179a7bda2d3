// The GPU's execution model on the CPU: every scene and the humanoid, G1 and Panda MJCF models
// stepped with emulated teams of N lanes (N = 2, 3, 32, 33, 64: partial warps, several warps)
// against the one-lane CPU oracle. Team reductions sum in another order and the multi-member
// Cholesky solves by columns, so the two differ by rounding: velocities are compared within the
// bound derived in backend_parity.hpp from the solver's stopping test; statuses, Newton
// iteration counts and contact counts must be equal.
//
// SAP_EMU_LANES (comma-separated) and SAP_EMU_SCENES (comma-separated names) narrow the run,
// e.g. for the ThreadSanitizer configuration.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "backend_parity.hpp"
#include "scene_cases.hpp"

using namespace sap;
using namespace sap::testing;

namespace {

std::vector<int> lane_counts() {
  std::vector<int> lanes = {2, 3, 32, 33, 64};
  if (const char* env = std::getenv("SAP_EMU_LANES")) {
    lanes.clear();
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ',');) lanes.push_back(std::stoi(item));
  }
  return lanes;
}

bool scene_selected(const std::string& name) {
  const char* env = std::getenv("SAP_EMU_SCENES");
  if (!env) return true;
  std::stringstream ss(env);
  for (std::string item; std::getline(ss, item, ',');)
    if (item == name) return true;
  return false;
}

class EmulatedScene : public ::testing::TestWithParam<std::string> {};

// One step from the same states (the initial one and one after warm-up) at each lane count of
// `lanes`, against the one-lane CPU backend with options o.
void check_one_step(const std::string& name, const Scene& scene, const SimulatorOptions& o, const std::string& label,
                    const std::vector<int>& lanes) {
  Simulator ref(scene, o);
  const double eps = setup_epsilon(ref.solver().config());
  std::vector<StepRecord> before, after;  // oracle states and their next step
  std::vector<double> times;
  for (int k = 0, stop = warmup_steps(scene); k <= stop; ++k) {
    if (k == 0 || k == stop) {
      Simulator probe(scene, o);
      copy_state(ref, probe);
      probe.step();
      after.push_back(record_step(probe));
      before.push_back(record_step(ref));
      times.push_back(ref.time());
    }
    if (k < stop) ref.step();
  }
  for (int n : lanes) {
    SimulatorOptions oe = o;
    oe.emulated_lanes = n;
    Simulator emu(scene, oe);
    for (std::size_t p = 0; p < before.size(); ++p) {
      emu.state().qpos.buffer().upload(before[p].qpos);
      emu.state().qvel.buffer().upload(before[p].qvel);
      emu.set_time(times[p]);
      emu.step();
      const std::string what = name + " " + label + " lanes " + std::to_string(n) + (p == 0 ? " initial" : " warm");
      const double worst = expect_step_agrees(after[p], record_step(emu), scene.model.nq, eps, what);
      ::testing::Test::RecordProperty(what, std::to_string(worst));
    }
  }
}

TEST_P(EmulatedScene, OneStepAgreesWithOneLane) {
  const std::string name = GetParam();
  if (!scene_selected(name)) GTEST_SKIP() << name << " not in SAP_EMU_SCENES";
  const Scene scene = load_named(name);
  for (const char* preset : {"approx64", "approx32", "drake"}) {
    // approx32 and drake at one warp and a partial second warp; approx64 at every count.
    std::vector<int> lanes = lane_counts();
    if (std::string(preset) != "approx64")
      lanes.erase(std::remove_if(lanes.begin(), lanes.end(), [](int n) { return n != 32 && n != 33; }), lanes.end());
    check_one_step(name, scene, parity_options(scene, preset), preset, lanes);
  }
}

// The Hunt-Crossley contact rows (contact_approximation = similar, lagged) on two contact-rich
// scenes (box faces, sphere pile), each approximation with the drake and the approx32 preset, at
// one warp or a partial second warp. Kept small: emulated lanes are OS threads (and run under
// TSan in CI).
TEST(EmulatedHuntCrossley, OneStepAgreesWithOneLane) {
  struct Case {
    const char *scene, *approx, *preset;
    int lanes;
  };
  for (const Case& c : {Case{"box_stack_5", "similar", "drake", 33}, Case{"box_stack_5", "lagged", "drake", 32},
                        Case{"sphere_pile", "lagged", "approx32", 33}, Case{"sphere_pile", "similar", "approx32", 32}}) {
    if (!scene_selected(c.scene)) continue;
    const Scene scene = load_named(c.scene);
    SimulatorOptions o = parity_options(scene, c.preset);
    set_solver_option(o.solver, "contact_approximation", c.approx);
    check_one_step(c.scene, scene, o, std::string(c.preset) + " " + c.approx, {c.lanes});
  }
}

// Short trajectories from reset: the same statuses and iteration counts at every step; states
// within the sum of the per-step bounds (each step's bound covers the solve; a difference
// entering a step is carried by the step map, contracting for dissipative contact, and is
// allowed a factor kCarry).
TEST_P(EmulatedScene, TrajectoryAgreesWithOneLane) {
  constexpr double kCarry = 10;
  const std::string name = GetParam();
  if (!scene_selected(name)) GTEST_SKIP() << name << " not in SAP_EMU_SCENES";
  const Scene scene = load_named(name);
  const int steps = 8;
  const std::vector<int> lanes = std::getenv("SAP_EMU_LANES") ? lane_counts() : std::vector<int>{3, 32};
  for (int n : lanes) {
    SimulatorOptions o = parity_options(scene, "approx64");
    Simulator ref(scene, o);
    o.emulated_lanes = n;
    Simulator emu(scene, o);
    const double eps = setup_epsilon(ref.solver().config());
    std::vector<double> budget(static_cast<std::size_t>(ref.nworld()), 0.0);  // sum of earlier bounds
    for (int k = 0; k < steps; ++k) {
      ref.step();
      emu.step();
      const StepRecord a = record_step(ref), b = record_step(emu);
      for (int w = 0; w < ref.nworld(); ++w) {
        const std::size_t i = static_cast<std::size_t>(w);
        EXPECT_EQ(a.diag.status[i], b.diag.status[i]) << name << " lanes " << n << " step " << k;
        EXPECT_EQ(a.diag.newton_iterations[i], b.diag.newton_iterations[i]) << name << " lanes " << n << " step " << k;
        const WorldComparison c = compare_world(a, b, w, scene.model.nq, eps);
        EXPECT_LE(c.dv_A, kCarry * budget[i] + c.bound)
            << name << " lanes " << n << " step " << k << " world " << w << " bound " << c.bound;
        budget[i] += c.bound;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenes, EmulatedScene, ::testing::ValuesIn(kSceneCases),
                         [](const auto& info) { return info.param; });

}  // namespace
