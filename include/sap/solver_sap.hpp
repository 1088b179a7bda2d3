// SolverSAP: one SAP time step for all worlds.
//   1 free motion     A = M + hD, v* = v + h A^-1 k
//   2 contact setup   contact frames, Jacobians, weights w_i, R_i, v_hat_i; limits and drives
//   3 SAP solve       v = argmin l(v) by Newton with line search (per-world masks)
//   4 integrate       q_{n+1} = Phi(q_n, v_n, v_{n+1}, h)
// Collision is a separate call (CollisionPipeline::collide) whose contacts are passed in.
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/data.hpp"
#include "sap/model.hpp"
#include "sap/solver_options.hpp"
#include "sap/status.hpp"

namespace sap {

struct SolverLaunch;
struct RolloutLaunch;
class SolveData;

// Per-world diagnostics of the last step, as host vectors.
struct StepDiagnostics {
  std::vector<int> status;                      // WorldStatusBits
  std::vector<int> newton_iterations;           // Newton iterations (0: converged at the warm start)
  std::vector<int> line_search_iterations;      // line-search evaluations, summed over iterations
  std::vector<int> truncated_contacts;          // contacts dropped by the collision capacity
  std::vector<int> contacts;                    // contacts in the solve
  std::vector<double> cost;                     // final SAP cost
  std::vector<double> residual;                 // |D g| / (eps_a + eps_r s) at exit (<= 1: converged on it)
  std::vector<double> optimality;               // |D g| at exit, D = diag(A)^-1/2 (sqrt(J) units; 0 without rows)
  std::vector<std::vector<double>> cost_trace;  // cost at each Newton iterate (for analysis)
  std::vector<int> exit_reason;                 // 1: optimality test, 2: cost stall test, 0: other
};

// One contact's impulse from the last step: gamma in the contact frame [t1, t2, n] (N s) and
// the frame itself (columns of R_WC); the force on body 1 in world is R_WC gamma / dt.
struct ContactImpulse {
  double gamma[3];
  double frame[9];  // R_WC row-major
};

// Wall time of each stage of the last step (device time on CUDA), milliseconds.
struct StageTimes {
  double free_motion = 0, contact_setup = 0, solve = 0, integrate = 0;
  double total() const { return free_motion + contact_setup + solve + integrate; }
};

// Entries of the longest merged Jacobian row of any body pair: the union of the two bodies'
// dof paths to their roots (sizes the contact and equality Jacobian rows, docs/gpu.md).
int max_body_pair_dofs(const Model& model);

class SolverSAP {
 public:
  // max_rigid_contact: per-world contact capacity (the capacity of the Contacts passed to step).
  SolverSAP(const Model& model, Context& ctx, int nworld, const SolverOptions& options = {}, int max_rigid_contact = 0);
  ~SolverSAP();
  SolverSAP(const SolverSAP&) = delete;
  SolverSAP& operator=(const SolverSAP&) = delete;

  // Advances every world by dt. state_out may alias state_in. contacts may be empty
  // (capacity 0); their capacity must not exceed max_rigid_contact. Worlds whose step fails keep their state and carry
  // failure bits in world_status(); the other worlds are unaffected.
  void step(const State& state_in, State& state_out, const Control& control, const Contacts& contacts, double dt);

  // Restricts the next steps to the worlds whose flag is non-zero (per-world int array on the
  // solver's backend, nullptr: all worlds). The other worlds keep their state and report
  // kStatusSkipped (used by the simulator's retry sub-steps). The pointer must stay valid.
  void set_active_worlds(const int* active) { active_ = active; }
  // Per-world model parameters (masses, inertias, actuator gains, gravity; see WorldModelView),
  // arrays on the solver's backend that must stay valid; a default view (slot null): none.
  void set_world_model(const WorldModelView& wm);
  const WorldModelView& world_model() const { return world_model_; }
  // The caller computes the body poses itself before every step: forward kinematics of the
  // step's in.qpos in precision p, written into data()'s xpos, xquat, xmat, xipos, xanchor and
  // xaxis (the Simulator's collision pipeline, which shares those arrays). The solver's poses
  // are the fp64 forward kinematics rounded to its pose precision (use_f64_boundary_pose): when
  // p is fp64, the kinematics stage only rounds them (fp32 poses) and computes the com
  // quantities, bit for bit what it would compute itself (same function, same qpos); with fp32
  // it recomputes them. std::nullopt (default): the solver computes them.
  void set_poses_given(std::optional<Precision> p) { poses_given_ = p; }
  // Stage clocks on (default) or off (off while a CUDA graph is captured).
  void set_timing(bool on) { timing_ = on; }
  // The fp64 repeat of failed fp32 steps (option fp64_retry) runs on the device: the failed
  // worlds get slots of a compact fp64 solver of fp64_retry_capacity() worlds, in world order.
  // Outside a CUDA graph it reads one count on the host per step (nothing more when no world
  // failed) and takes as many rounds as needed. In a graph (set_fp64_retry_in_graph(true) while
  // the launches are captured) it runs one round with no host read, and counts the failed
  // worlds past the capacity in fp64_retry_overflow(); prepare_fp64_retry() must have built
  // its buffers before the capture (no allocation during a capture).
  void set_fp64_retry_in_graph(bool in_graph) { fp64_retry_in_graph_ = in_graph; }
  void prepare_fp64_retry(int contact_capacity);
  // True when the option is on and some stage runs in fp32 (otherwise there is nothing to retry).
  bool fp64_retry_active() const;
  int fp64_retry_capacity() const { return retry_capacity_; }
  // Per world since construction (host copies): steps repeated in fp64; those whose fp64 repeat
  // succeeded (no bit of kStatusFp64RetryOn and not kStatusFailed); steps that needed the repeat
  // but found no slot (CUDA graph, more failed worlds than the capacity: the fp32 outcome stays).
  std::vector<int> fp64_retries() const { return retry_counter(0); }
  std::vector<int> fp64_rescued() const { return retry_counter(1); }
  std::vector<int> fp64_retry_overflow() const { return retry_counter(2); }
  // Per-world status of the last step on the solver's backend (no copy, no sync).
  const int* status_data() const { return status_.data(); }

  const SolverConfig& config() const { return config_; }
  const Model& model() const { return model_; }
  int nworld() const { return nworld_; }
  Context& context() { return ctx_; }

  // Diagnostics of the last step (host copies; synchronise on CUDA).
  StageTimes last_stage_times();
  std::vector<int> world_status() const;
  int failed_world_count() const;
  StepDiagnostics diagnostics() const;
  int last_newton_iterations() const;              // max over worlds
  int last_line_search_iterations() const;         // total over worlds (spec: for profiling)
  long long last_truncated_contact_count() const;  // total over worlds
  std::vector<ContactImpulse> contact_impulses(int world) const;
  // Generalized velocity of the last solve (host copy of one world).
  std::vector<double> solved_velocity(int world) const;
  // Bytes per world of each per-world array of the solver ("data.<name>" for the dynamics
  // workspace Data, "solve.<name>" for the constraint and Newton buffers), in declaration order.
  std::vector<std::pair<std::string, long long>> buffer_bytes_per_world() const;
  // Bytes per world of team shared memory (on chip) of the stages that keep their working set
  // there ("free_motion", "newton"; on_chip_bytes decides), not counted above. 0: global.
  std::vector<std::pair<std::string, long long>> on_chip_bytes_per_world() const;

  // Workspace access for tests and tools (v*, A, ... and the constraint buffers of the last
  // step; SolveData is defined in src/model/solve_data.hpp). M shares A's storage in the solver
  // (DataLayout), so data().M is empty and view().M points at A.
  Data& data() { return data_; }
  SolveData& solve_data() { return *solve_; }

 private:
  Model model_;
  Context& ctx_;
  int nworld_;
  long long free_motion_on_chip_bytes_ = 0, newton_on_chip_bytes_ = 0;  // on_chip_bytes_per_world
  SolverConfig config_;
  ModelStorage storage_;
  Data data_;
  std::unique_ptr<SolveData> solve_;
  int max_rigid_contact_ = 0;
  Buffer<int> status_;
  Buffer<int> solve_ok_;  // per world: the reference linear solve succeeded (split Newton loop)
  std::unique_ptr<SolverLaunch> launch_;
  WorldModelView world_model_;
  std::unique_ptr<StageClock> clock_;
  std::unique_ptr<RolloutLaunch> rollout_;
  const int* active_ = nullptr;
  bool timing_ = true;
  std::optional<Precision> poses_given_;  // set_poses_given
  bool timed_ = false;
  // fp64 retry (fp64_retry): the same step with every stage in fp64, for the failed worlds only,
  // by a compact solver of retry_capacity_ slots (kernels/fp64_retry.hpp). Built on first use
  // or by prepare_fp64_retry.
  SolverOptions options_;
  int retry_capacity_ = 0;
  bool fp64_retry_in_graph_ = false;
  std::unique_ptr<SolverSAP> solver64_;
  std::unique_ptr<State> start64_;                   // the step's inputs when it is in place
  std::unique_ptr<State> slot_in_, slot_out_;        // per slot
  std::unique_ptr<Control> slot_control_;            // per slot
  std::unique_ptr<Contacts> slot_contacts_;          // per slot
  Buffer<int> slot_world_, slot_active_, slot_model_;  // per slot: world, occupied, world-model row
  Buffer<int> retry_chunk_count_;
  Buffer<int> retry_counters_;  // 3 x nworld: retries, rescued, overflow
  void allocate_retry_scan();
  bool retry_ready(int contact_capacity) const;
  std::vector<int> retry_counter(int which) const;
  void step_once(const State& state_in, State& state_out, const Control& control, const Contacts& contacts, double dt);
  void retry_in_fp64(const State& state_in, State& state_out, const Control& control, const Contacts& contacts,
                     double dt);
};

}  // namespace sap
