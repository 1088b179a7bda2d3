// Simulator: the high-level loop over all worlds of a scene (docs/rollouts.md).
//   sap::Scene scene = sap::load_scene("scenes/box_stack_5.json");   // or sap::load_mjcf(...)
//   sap::Simulator sim(scene, {.nworld = 4096, .backend = sap::Backend::Auto});
//   sap::ArrayView ctrl = sim.control_view(), qpos = sim.qpos_view();
//   for (...) { /* write ctrl */ sim.step(4); /* read qpos */ }
// One step = scene controls at time t (if the scene has schedules) -> collide -> SolverSAP::step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sap/collision.hpp"
#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/rollout.hpp"
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
  int max_rigid_contact = 0;  // 0: the scene's value, else estimate_scene_contact_capacity
  Precision collision_precision = Precision::F64;
  bool scene_controls = true;  // drive actuators by the scene's schedules
  RetryOptions retry;          // per-world step retry with smaller steps (off by default)
  bool cuda_graphs = true;     // step(n) on CUDA replays a captured graph when it can
  // CUDA device index (one Simulator per device in one process); must be 0 on the CPU backend.
  // Every Simulator method makes it current while it runs; code that reads the simulator's
  // buffers directly (state(), contacts) runs with it current (sap::Simulator::device()).
  int device = 0;
};

struct RolloutLaunch;

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

  // ---- Stepping and controls (src/runtime/simulator.cpp; docs/rollouts.md) ----
  // The loop: write the controls (control_view(), or set_control from a caller's array), step(n),
  // read the observation views below. The plain forms (step(), set_control(vector)) are thin
  // wrappers of it.
  //
  // n physics steps with the controls held. With explicit controls (set_control*, or
  // scene_controls off) it does no host work and no host synchronisation per step; on CUDA the
  // n-step sequence is captured once into a CUDA graph and replayed (not with retry, scene
  // schedules or linear_solver = reference, which need the host between steps).
  // One step = scene controls at time t (if the scene has schedules) -> collide -> SolverSAP::step.
  void step(int n);
  // Controls from a caller's array: world w's nu values at src + w * stride (elements; 0: nu),
  // fp32 or fp64, host or (CUDA simulator) device memory. Ordered on the simulator's stream
  // (CUDA: the library stream): a caller writing src on another stream must synchronise first.
  // Disables the scene schedules.
  void set_control(const void* src, DType type, Memory memory = Memory::Host, long long stride = 0);
  // Writable view of the control buffer ctrl, shape (nworld, nu), fp64, on the backend: write
  // it and step. Calling it disables the scene schedules.
  ArrayView control_view();
  // Plain forms. step(): step(1), never captured into a CUDA graph, so the stage clocks run
  // (last_step_times). set_control(ctrl): a host array nworld x nu (world-major), i.e.
  // set_control(ctrl.data(), DType::F64).
  void step();
  void set_control(const std::vector<double>& ctrl);

  double time() const { return time_; }
  // Sets the simulation time (the scene's control schedules are evaluated at it), e.g. to
  // continue from a state copied from another simulator.
  void set_time(double t) { time_ = t; }
  const RetryOptions& retry_options() const { return retry_; }
  void set_retry_options(const RetryOptions& r);
  // Timing of the last step (synchronises on CUDA).
  StepTimes last_step_times();
  // Worlds whose last step failed (non-finite, factorisation): they keep their state (a failed
  // step is deterministic, so they fail again until reset); the others are unaffected.
  std::vector<int> failed_worlds() const;

  // ---- Worlds: resets, snapshots, counters, parameters (src/runtime/simulator_worlds.cpp) ----
  // Resets the selected worlds (all others untouched, bit for bit). A reset world is bit-identical
  // to the same world of a freshly constructed simulator (same source, no noise) and its counters
  // restart at zero. The simulation time is not changed (reset() with no argument sets it to 0).
  void reset(const WorldSelection& worlds, const ResetOptions& options = {});
  // Plain forms: every world to its initial state (qpos0/qvel0 plus the scene's per-world
  // perturbation) and t = 0; the worlds whose mask entry is non-zero (size nworld; all of them:
  // t = 0 too).
  void reset();
  void reset(const std::vector<int>& world_mask);
  // Stores a state (qpos nq, qvel nv; empty qvel: zeros) as a keyframe; returns its index.
  int add_keyframe(const std::vector<double>& qpos, const std::vector<double>& qvel = {});

  // Snapshots: save the selected worlds into `snap` (allocated on first use; other worlds of an
  // existing snapshot are kept), restore the selected worlds from it. A restored world continues
  // bit-identically to the saved one (given the same controls afterwards: controls are part of
  // the snapshot and restored with it). restore() of all worlds also restores the time.
  Snapshot save(const WorldSelection& worlds = WorldSelection::all());
  void save(Snapshot& snap, const WorldSelection& worlds = WorldSelection::all());
  void restore(const Snapshot& snap, const WorldSelection& worlds = WorldSelection::all());

  // Per-world counters since each world's last reset (failures accumulate across steps).
  WorldCounters counters() const;
  // Worlds with at least one failed step since their last reset.
  std::vector<int> failed_worlds_since_reset() const;
  // Per-world energy (host computation over a host copy of the state; a diagnostic).
  std::vector<WorldEnergy> energy();
  // Per-world parameters of one kind from a world-major array (host, or device for a CUDA
  // simulator); see WorldParam for the per-world count (world_param_count). They persist across
  // resets, snapshots and restores. Setting a model kind (mass, gains, gravity) reads the values
  // on the host (a device array is copied back: a synchronising call, meant for episode starts,
  // not the inner loop) and builds slots for the worlds whose values differ from the model's.
  // clear_world_params drops them all. world_params(kind) returns the host copy (empty: not set;
  // not for ContactScale).
  void set_world_params(WorldParam kind, const double* values, Memory memory = Memory::Host);
  void clear_world_params();
  std::vector<double> world_params(WorldParam kind) const;
  // Worlds that have model parameters of their own (the others share the model's).
  int world_param_slots() const { return wp_nslot_; }

  // ---- Observations (src/runtime/simulator_views.cpp) ----
  // Views (read-only by contract), fixed pointers for the simulator's lifetime; ArrayView::
  // to_host() copies one to the host, to_dlpack() exports it:
  //   qpos (nworld, nq), qvel (nworld, nv): the current state, fp64
  //   body_pos (nworld, nbody, 3), body_quat (nworld, nbody, 4, w x y z): body frames of the
  //     current state (computed on demand after each step/reset/restore), fp64
  //   contact_force (nworld, nbody, 3): sum of the last step's contact forces on each body,
  //     world frame, N (impulse / dt); contact_flag (nworld, nbody) int32: 1 when a contact of the
  //     body carried a normal impulse in the last step
  ArrayView qpos_view();
  ArrayView qvel_view();
  ArrayView act_view();  // actuator activations (nworld x na; empty without activation dynamics)
  ArrayView body_pos_view();
  ArrayView body_quat_view();
  ArrayView contact_force_view();
  ArrayView contact_flag_view();
  // Host copies of the current body poses of one world (nbody x 3 and nbody x 4).
  std::vector<double> body_pos(int world);
  std::vector<double> body_quat(int world);

  // Bytes per world of every per-world array this simulator holds now, named by owner
  // ("state.", "control.", "contacts.", "collision.", "data."/"solve."/"solver."/"fp64." of the
  // solver, "sim."); arrays held once for all worlds are not listed. Lazily allocated arrays
  // (pose and contact observations, retry states, the fp64 retry solver) appear once used.
  // Their sum is the growth of the backend's live buffer bytes per added world (tested).
  std::vector<std::pair<std::string, long long>> buffer_bytes_per_world() const;

  // ---- The parts (the lower-level API: CollisionPipeline::collide, SolverSAP::step) ----
  int nworld() const { return nworld_; }
  // CUDA device of this simulator (-1 on the CPU backend).
  int device() const { return device_; }
  const Scene& scene() const { return scene_; }
  Context& context() { return *ctx_; }
  State& state() { return *state_; }
  Control& control() { return *control_; }
  Contacts& contacts() { return *contacts_; }
  SolverSAP& solver() { return *solver_; }
  CollisionPipeline& collision() { return *collision_; }
  int max_rigid_contact() const { return max_rigid_contact_; }

 private:
  void apply_scene_controls();
  void advance(int n, bool may_capture);  // step(n) and step()
  void physics_step();   // one step of every world, with retry when enabled
  void retry_step(double dt);
  void select(const WorldSelection& sel, Buffer<int>& flags);
  void invalidate();     // state changed: observations stale, graphs kept
  void drop_graphs();
  void update_poses();
  void update_contact_obs();
  ArrayView view_of(void* data, DType t, int ndim, long long d0, long long d1, long long d2);
  void reset_counters(const int* flags);

  Scene scene_;
  int nworld_;
  int max_rigid_contact_;
  int device_ = -1;  // CUDA device (-1: CPU backend)
  bool scene_controls_;
  // Every schedule Constant (time- and world-independent, the common case: motors at zero or a
  // keyframe's controls): written once, again only after a restore overwrote the arrays.
  bool scene_controls_constant_ = false, scene_controls_written_ = false;
  double time_ = 0;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<CollisionPipeline> collision_;
  std::unique_ptr<SolverSAP> solver_;
  std::unique_ptr<State> state_, next_;
  std::unique_ptr<Control> control_;
  std::unique_ptr<Contacts> contacts_;
  std::unique_ptr<StageClock> clock_;
  std::vector<double> ctrl_host_, ctrl_vel_host_, ctrl_world_, ctrl_vel_world_;

  // rollout state
  std::unique_ptr<RolloutLaunch> rollout_;
  ModelStorage model_;                             // the model on the backend (rollout kernels)
  RetryOptions retry_;
  bool cuda_graphs_ = true;
  bool stepped_ = false;  // a plain step has run (made the buffers a step allocates on first use)
  BatchedArray<double> init_qpos_, init_qvel_;    // each world's initial state (reset source)
  BatchedArray<double> zero_act_;                 // one world of zero activations (reset source)
  bool init_shared_ = false;                       // one block for all worlds (read with stride 0)
  std::vector<std::pair<Buffer<double>, Buffer<double>>> keyframes_;
  Buffer<int> flags_, flags2_, bad_, active_;     // per-world scratch flags
  Buffer<int> staging_int_;                        // host selections copied to the device
  Buffer<double> staging_dbl_;                     // host arrays copied to the device
  BatchedArray<int> counters_;                     // per world: failures, retries, rescued, steps
  BatchedArray<double> body_pos_, body_quat_, pose_scratch_, contact_force_;
  BatchedArray<int> contact_flag_;
  bool poses_valid_ = false, track_poses_ = false, track_contacts_ = false, capturing_ = false;
  bool skip_contact_obs_ = false;                  // inside step(n) before its last step
  void ensure_pose_buffers();                      // body_pos_, body_quat_, pose_scratch_ on first use
  void ensure_contact_buffers();                   // contact_force_, contact_flag_ on first use
  std::vector<int> last_failed_;                   // retry on: worlds whose last step still failed
  BatchedArray<double> contact_scale_;             // per-world contact parameter factors
  bool has_contact_scale_ = false;
  // Per-world model parameters: host copies of the values of each kind set (empty: not set),
  // and their slots on the backend (only worlds that differ from the model get one).
  std::vector<double> wp_mass_, wp_gain_, wp_gravity_;
  Buffer<int> wp_slot_;
  Buffer<double> wp_data_;
  int wp_nslot_ = 0;
  void rebuild_world_model();
  const std::vector<double>* world_param_host(WorldParam kind) const;
  std::unique_ptr<State> start_, trial_;           // start of the step being retried, its sub-steps
  std::vector<std::pair<long long, void*>> graphs_;  // (n, cudaGraphExec_t)
};

}  // namespace sap
