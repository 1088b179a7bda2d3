// SolverSAP: one SAP time step for all worlds.
//   1 free motion     A = M + hD, v* = v + h A^-1 k
//   2 contact setup   contact frames, Jacobians, weights w_i, R_i, v_hat_i; limits and drives
//   3 SAP solve       v = argmin l(v) by Newton with line search (per-world masks)
//   4 integrate       q_{n+1} = Phi(q_n, v_n, v_{n+1}, h)
// Collision is a separate call (CollisionPipeline::collide) whose contacts are passed in.
#pragma once

#include <memory>
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

// Wall time of each stage of the last step (device time on CUDA), milliseconds.
struct StageTimes {
  double free_motion = 0, contact_setup = 0, solve = 0, integrate = 0;
  double total() const { return free_motion + contact_setup + solve + integrate; }
};

class SolverSAP {
 public:
  SolverSAP(const Model& model, Context& ctx, int nworld, const SolverOptions& options = {});
  ~SolverSAP();
  SolverSAP(const SolverSAP&) = delete;
  SolverSAP& operator=(const SolverSAP&) = delete;

  // Advances every world by dt. state_out may alias state_in. contacts may be empty
  // (capacity 0). Worlds whose step fails keep their state and carry failure bits in
  // world_status(); the other worlds are unaffected.
  void step(const State& state_in, State& state_out, const Control& control, const Contacts& contacts, double dt);

  const SolverConfig& config() const { return config_; }
  const Model& model() const { return model_; }
  int nworld() const { return nworld_; }
  Context& context() { return ctx_; }

  // Diagnostics of the last step (host copies; synchronise on CUDA).
  StageTimes last_stage_times();
  std::vector<int> world_status() const;
  int failed_world_count() const;

  // Workspace access for tests and tools (v*, A, M, ... of the last step).
  Data& data() { return data_; }

 private:
  Model model_;
  Context& ctx_;
  int nworld_;
  SolverConfig config_;
  ModelStorage storage_;
  Data data_;
  Buffer<int> status_;
  std::unique_ptr<SolverLaunch> launch_;
  std::unique_ptr<StageClock> clock_;
  bool timed_ = false;
};

}  // namespace sap
