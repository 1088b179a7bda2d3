// Simulator: the high-level loop over all worlds of a scene.
//   sap::Scene scene = sap::load_scene("scenes/box_stack_5.json");
//   sap::Simulator sim(scene, {.nworld = 4096, .backend = sap::Backend::Auto});
//   sim.reset();  for (...) sim.step();   sim.state().qpos ...
// One step = scene controls at time t (if the scene has schedules) -> collide -> SolverSAP::step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sap/collision.hpp"
#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/scene.hpp"
#include "sap/solver_sap.hpp"

namespace sap {

struct SimulatorOptions {
  int nworld = 0;  // 0: the scene's num_worlds
  Backend backend = Backend::Auto;
  int threads = 0;               // CPU threads (0: all)
  int emulated_lanes = 0;        // > 0: CPU backend runs team stages on emulated GPU teams (tests)
  bool override_solver = false;  // use `solver` instead of the scene's solver options
  SolverOptions solver;
  int max_rigid_contact = 0;  // 0: the scene's value, else estimate_contact_capacity
  Precision collision_precision = Precision::F64;
  bool scene_controls = true;  // drive actuators by the scene's schedules
};

struct StepTimes {
  double collide = 0;  // ms
  StageTimes solver;   // ms per solver stage
  double total() const { return collide + solver.total(); }
};

class Simulator {
 public:
  Simulator(const Scene& scene, const SimulatorOptions& options = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Initial state of every world (qpos0/qvel0 plus the scene's per-world perturbation) and t = 0.
  void reset();
  // Resets only the worlds whose mask entry is non-zero (size nworld); the others continue.
  void reset(const std::vector<int>& world_mask);
  // Explicit controls (host array nworld x nu, world-major); disables the scene schedules.
  void set_control(const std::vector<double>& ctrl);
  void step();

  double time() const { return time_; }
  // Sets the simulation time (the scene's control schedules are evaluated at it), e.g. to
  // continue from a state copied from another simulator.
  void set_time(double t) { time_ = t; }
  int nworld() const { return nworld_; }
  const Scene& scene() const { return scene_; }
  Context& context() { return *ctx_; }
  State& state() { return *state_; }
  Control& control() { return *control_; }
  Contacts& contacts() { return *contacts_; }
  SolverSAP& solver() { return *solver_; }
  CollisionPipeline& collision() { return *collision_; }
  int max_rigid_contact() const { return max_rigid_contact_; }

  // Timing of the last step (synchronises on CUDA).
  StepTimes last_step_times();
  // Worlds whose last step failed (non-finite, factorisation): they keep their state (a failed
  // step is deterministic, so they fail again until reset); the others are unaffected.
  std::vector<int> failed_worlds() const;

 private:
  void apply_scene_controls();

  Scene scene_;
  int nworld_;
  int max_rigid_contact_;
  bool scene_controls_;
  double time_ = 0;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<CollisionPipeline> collision_;
  std::unique_ptr<SolverSAP> solver_;
  std::unique_ptr<State> state_, next_;
  std::unique_ptr<Control> control_;
  std::unique_ptr<Contacts> contacts_;
  std::unique_ptr<StageClock> clock_;
  std::vector<double> ctrl_host_, ctrl_vel_host_, ctrl_world_, ctrl_vel_world_;
};

}  // namespace sap
