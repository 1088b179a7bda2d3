// The scenes every cross-backend test runs: each JSON scene of scenes/ and the G1 and Panda MJCF
// models of models/ (the repository's vendored models). g1_rough_terrain is the heightfield scene
// (G1 on rough ground).
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sap/simulator.hpp"

namespace sap::testing {

inline const std::string kScenes = std::string(SAP_SOURCE_DIR) + "/scenes/";

inline const std::vector<std::string> kSceneCases = {"pendulum",
                                                     "double_pendulum",
                                                     "free_tumbling_box",
                                                     "multi_joints",
                                                     "pd_arm",
                                                     "sphere_on_ground",
                                                     "box_on_incline",
                                                     "free_cube",
                                                     "box_stack_5",
                                                     "franka_cube",
                                                     "sphere_pile",
                                                     "constrained_mechanisms",
                                                     "humanoid",
                                                     "g1",
                                                     "g1_rough_terrain",
                                                     "panda"};

// JSON scenes by file name; the MJCF models through a one-asset scene (as sap_bench loads them).
inline Scene load_named(const std::string& name) {
  auto mjcf = [](const std::string& path, const std::string& keyframe) {
    return std::string(R"({"schema_version": 1, "name": "m", "simulation": {"dt": 0.002, "num_worlds": 1},
      "assets": [{"id": "robot", "type": "mjcf", "path": ")") +
           path + R"(", "keyframe": ")" + keyframe + R"("}]})";
  };
  if (name == "g1") return parse_scene(mjcf("../models/unitree_g1/scene_flat.xml", "home"), "g1", kScenes);
  if (name == "panda")
    return parse_scene(mjcf("../models/franka_emika_panda/mjx_single_cube.xml", "home"), "panda", kScenes);
  return load_scene(kScenes + name + ".json");
}

// Steps before the compared states: long enough for dropped bodies to land, pendulums to swing.
inline int warmup_steps(const Scene& s) { return std::max(10, static_cast<int>(0.1 / s.dt)); }

// `nworld` CPU worlds on one thread, the solver's defaults under `preset`.
inline SimulatorOptions cpu_preset_options(Preset preset, int nworld = 1) {
  SimulatorOptions o;
  o.nworld = nworld;
  o.backend = Backend::CPU;
  o.threads = 1;
  o.override_solver = true;
  o.solver.contact_preset_variant = preset;
  return o;
}

// `nworld` CPU worlds on one thread with the scene's solver options under `preset`.
inline SimulatorOptions cpu_scene_options(const Scene& scene, const std::string& preset, int nworld = 1) {
  SimulatorOptions o = cpu_preset_options(parse_preset(preset), nworld);
  o.solver = scene.solver;
  o.solver.contact_preset_variant = parse_preset(preset);
  return o;
}

// Two CPU worlds with the scene's solver options under `preset` (two teams in flight on the
// emulated executor: cross-world races are visible to the sanitizer).
inline SimulatorOptions parity_options(const Scene& scene, const std::string& preset, int emulated_lanes = 0,
                                       LinearSolver linear_solver = LinearSolver::Cholesky) {
  SimulatorOptions o = cpu_scene_options(scene, preset, 2);
  o.emulated_lanes = emulated_lanes;
  o.solver.linear_solver = linear_solver;
  // The pair bound, not the simulator's probe estimate: these tests compare executors and
  // build many simulators (a probe rollout each would only add time, sanitizers included).
  if (scene.max_rigid_contact == 0) o.max_rigid_contact = estimate_contact_capacity(scene.model, 1024);
  return o;
}

}  // namespace sap::testing
