// Scenes: a model plus everything needed to run it (time step, worlds, contact capacity,
// solver options, initial state, control schedules, per-world perturbations). Loaded from
// JSON scene files; the format is documented in docs/scene-format.md.
//
// Conventions: quaternions are (w, x, y, z) everywhere, in the JSON too (the Warp YAML scenes
// use (x, y, z, w)). Generalized coordinates follow the Model (MuJoCo's conventions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sap/model.hpp"
#include "sap/solver_options.hpp"

namespace sap {

// Time law of one actuator's control (ctrl) and of its velocity target (ctrl_vel, the time
// derivative of the law; used by PD actuators).
struct ControlSchedule {
  enum class Kind { Constant, Sinusoid, Keyframes };
  Kind kind = Kind::Constant;
  double value = 0;  // Constant
  // Sinusoid: offset + amplitude sin(2 pi frequency_hz t + phase + phase_per_world * world)
  double amplitude = 0, frequency_hz = 0, phase = 0, offset = 0, phase_per_world = 0;
  // Keyframes: strictly increasing times; linear interpolation, values held outside the range.
  std::vector<double> times, values;
};

// Random per-world perturbation of the initial state: independent Gaussian noise on every
// qpos and qvel entry (quaternions renormalised), deterministic in (seed, world).
struct ScenePerturbation {
  double qpos_std = 0;
  double qvel_std = 0;
  std::uint64_t seed = 0;
};

struct Scene {
  std::string name;
  std::string description;
  std::string source;  // file the scene came from ("" when parsed from a string)
  Model model;
  double dt = 0.001;
  int num_worlds = 1;
  int max_rigid_contact = 0;  // per world; 0 = not given (use estimate_contact_capacity)
  SolverOptions solver;
  std::vector<double> qpos0;              // initial configuration (nq), before perturbation
  std::vector<double> qvel0;              // initial velocity (nv), before perturbation
  std::vector<ControlSchedule> controls;  // one per actuator (nu)
  ScenePerturbation perturbation;
  // Accepted-but-ignored inputs and other notes ("<file>: <json pointer>: <what>"); never empty
  // silently: every key the loader does not act on is listed here.
  std::vector<std::string> warnings;
};

// Loads a JSON scene. Errors are std::runtime_error with the message
// "<file>: <json pointer>: <what was expected>".
Scene load_scene(const std::string& path);
// Parses JSON text; `source` names it in errors, `base_dir` resolves relative asset paths.
Scene parse_scene(const std::string& json_text, const std::string& source, const std::string& base_dir = ".");

// Initial states outside joint limits (docs/scene-format.md "Initial state and joint limits"):
// one rule for MJCF, URDF and JSON scenes. The initial configuration is the one the file states
// (MJCF: qpos0, i.e. the joints' ref, or a keyframe; JSON: the assets' reference configuration,
// keyframes and initial_joint_q), used as given, as MuJoCo does: the limit rows push a joint
// that starts outside its range back. A URDF states no initial configuration; its scenes start
// at the configuration nearest to zero that the joint limits admit (zero where admissible).
// Either way the scene gets a note naming every joint that starts outside its range, or whose
// zero was moved.
//
// Limited hinge/slide joints [joint_begin, joint_end) of a URDF model whose coordinate in qpos
// lies outside their range start at the nearest limit. Returns the note ("" when none moved).
std::string urdf_start_within_limits(const Model& model, int joint_begin, int joint_end, std::vector<double>& qpos,
                                     const std::string& source);
// The note naming every limited hinge/slide joint whose coordinate in qpos lies outside its
// range, with its distance to the range ("" when none does). Notes start with "<source>: "
// (nothing when source is empty).
std::string initial_state_limits_note(const Model& model, const std::vector<double>& qpos, const std::string& source);
// The common start of both notes (tests and tools find them by it).
inline constexpr const char* kInitialStateLimitsNote = "initial state outside the joint limits";

// Initial state of world `world`: qpos0/qvel0 plus the scene's perturbation (if any).
void scene_initial_state(const Scene& scene, int world, std::vector<double>& qpos, std::vector<double>& qvel);
// Controls of world `world` at `time`: ctrl (nu) and the PD velocity targets ctrl_vel (nu).
void scene_control(const Scene& scene, double time, int world, std::vector<double>& ctrl,
                   std::vector<double>& ctrl_vel);
// Value of one schedule at `time`; its time derivative in *rate when rate is not null.
double control_schedule_value(const ControlSchedule& s, double time, int world, double* rate = nullptr);

// Evaluates the scalar expressions accepted wherever the scene format expects a number:
// numbers, pi, + - * / and parentheses ("pi * 0.5", "-pi/4", "2 * pi * 0.25").
// Throws std::invalid_argument naming the offending text.
double evaluate_scene_expression(const std::string& text);

}  // namespace sap
