// Per-world contact capacity of a scene by a probe rollout (docs/collision.md, "Capacity";
// declared in sap/collision.hpp).
#include <algorithm>
#include <cmath>

#include "sap/collision.hpp"
#include "sap/simulator.hpp"

namespace sap {

ContactCapacityEstimate estimate_scene_contact_capacity(const Scene& scene, const SolverOptions* solver) {
  ContactCapacityEstimate e;
  e.pair_bound = estimate_contact_capacity(scene.model, 1024);
  if (e.pair_bound == 0) return e;
  SimulatorOptions po;
  po.nworld = 1;
  po.backend = Backend::CPU;
  po.threads = 1;
  po.max_rigid_contact = e.pair_bound;  // explicit: the probe itself does not probe
  if (solver) {
    po.override_solver = true;
    po.solver = *solver;
  }
  Simulator probe(scene, po);
  e.probe_steps = static_cast<int>(
      std::min<double>(kContactProbeMaxSteps, std::ceil(kContactProbeSeconds / scene.dt - 1e-9)));
  for (int k = 0; k < e.probe_steps; ++k) {
    probe.step();
    e.probe_max = std::max(e.probe_max, probe.contacts().counts_host()[0]);
  }
  e.capacity = std::min(e.pair_bound, std::max(kContactProbeFloor, kContactProbeFactor * e.probe_max));
  return e;
}

}  // namespace sap
