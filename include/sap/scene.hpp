// Scenes: a model plus everything needed to run it (time step, worlds, contact capacity,
// solver options, initial state). Loaded from JSON scene files (docs/scene-format.md).
#pragma once

#include <string>
#include <vector>

#include "sap/model.hpp"
#include "sap/solver_options.hpp"

namespace sap {

struct Scene {
  std::string name;
  std::string source;  // file the scene came from ("" when parsed from a string)
  Model model;
  double dt = 0.001;
  int num_worlds = 1;
  int max_rigid_contact = 0;
  SolverOptions solver;
  std::vector<double> qpos0;  // initial configuration (nq)
  std::vector<double> qvel0;  // initial velocity (nv)
};

// Loads a JSON scene. Errors are std::runtime_error with the message
// "<file>: <json pointer>: <what was expected>".
Scene load_scene(const std::string& path);
// Parses JSON text; `source` names it in errors, `base_dir` resolves relative asset paths.
Scene parse_scene(const std::string& json_text, const std::string& source, const std::string& base_dir = ".");

}  // namespace sap
