// Collision pipeline: geometry of every world -> batched SAP contacts.
//   CollisionPipeline::collide(state, contacts)  before  SolverSAP::step(..., contacts, dt)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/data.hpp"
#include "sap/model.hpp"
#include "sap/solver_options.hpp"

namespace sap {

struct CollisionLaunch;
struct Scene;

class CollisionPipeline {
 public:
  // precision: scalar of the narrow phase (fp64 by default; fp32 for speed).
  CollisionPipeline(const Model& model, Context& ctx, int nworld, Precision precision = Precision::F64);
  ~CollisionPipeline();
  CollisionPipeline(const CollisionPipeline&) = delete;
  CollisionPipeline& operator=(const CollisionPipeline&) = delete;

  // Fills `contacts` (capacity fixed at its construction) from state.qpos of every world.
  // Contacts beyond capacity: the deepest are kept, the others counted in contacts.dropped.
  void collide(const State& state, Contacts& contacts);

  // Uses d's body kinematics arrays (xpos, xquat, xmat, xipos, xanchor, xaxis) as the scratch
  // of collide() instead of the pipeline's own, which are freed. collide() writes them from
  // qpos before reading them; the owner must not expect them to survive a collide() (the
  // Simulator passes its solver's Data, whose kinematics stage rewrites them every step).
  // d must have this pipeline's world count and model.
  void share_kinematics_workspace(Data& d);

  // Whether some candidate pair needs the convex solvers (GJK/EPA, heightfield; see
  // pair_is_analytic in src/kernels/collision_world.hpp). Without one, collide() launches the
  // kernel compiled for the analytic pairs only (same contacts; on CUDA far fewer registers).
  bool uses_convex_solvers() const;

  // Whether some pair has torsional or rolling friction (condim 4 or 6 under the model's
  // contact rule): collide() then needs Contacts made with angular = true.
  bool angular_friction() const;

  // Bytes per world of each per-world array ("collision.<name>"; shared arrays not listed).
  std::vector<std::pair<std::string, long long>> buffer_bytes_per_world() const;

  // Total contacts dropped by the last collide() over all worlds (a host read of the contacts
  // passed to it, which must still exist; synchronises on CUDA only when called).
  long long last_dropped_total() const;

  // Candidate pairs whose shape combination has no narrow phase (a cylinder against anything
  // but a plane). They never produce contacts; they are counted here, described in warnings()
  // and reported once on stderr when the pipeline is built.
  int unsupported_pair_count() const;
  const std::vector<std::string>& warnings() const;
  // Candidate pairs collided every call (model pairs minus the unsupported ones).
  int active_pair_count() const;
  // Groups of candidate pairs that the CPU's one-lane fp64 collision tests by one sphere per
  // body pair before the pairs' own prunes (the body-pair broad phase; 0: none, the pairs are
  // tested one by one). The contacts are the same either way.
  int body_pair_group_count() const;
  Precision precision() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const Contacts* last_contacts_ = nullptr;
};

// A per-world contact capacity for a model: the sum over candidate pairs of the most
// contacts each pair type can produce (box-box 8, box-plane 4, capsule pairs 2, ...),
// optionally capped. Good default for simulation.max_rigid_contact.
int estimate_contact_capacity(const Model& model, int cap = 1 << 20);

// Per-world contact capacity of a scene when neither the options nor the scene give one
// (docs/collision.md, "Capacity"): a probe rollout of world 0 (CPU, one thread, the scene's
// solver, initial state and control schedules) for min(kContactProbeSeconds / dt,
// kContactProbeMaxSteps) steps at the pair bound B = estimate_contact_capacity(model, 1024);
// with P the most contacts it meets in a step, the capacity is
//   min(B, max(kContactProbeFloor, kContactProbeFactor * P)).
// 0 when the model has no candidate pairs (B = 0). Overflow later is counted per world
// (Contacts::dropped, StepDiagnostics::truncated_contacts), never silent.
constexpr double kContactProbeSeconds = 1.0;
constexpr int kContactProbeMaxSteps = 250;
constexpr int kContactProbeFloor = 8;
constexpr int kContactProbeFactor = 2;
struct ContactCapacityEstimate {
  int capacity = 0;     // the rule above
  int pair_bound = 0;   // B
  int probe_max = 0;    // P
  int probe_steps = 0;  // steps of the probe (0: no probe)
};
// solver: the options the simulator will run (nullptr: the scene's). Defined in
// src/runtime/contact_capacity.cpp (the probe is a one-world Simulator).
ContactCapacityEstimate estimate_scene_contact_capacity(const Scene& scene, const SolverOptions* solver = nullptr);

}  // namespace sap
