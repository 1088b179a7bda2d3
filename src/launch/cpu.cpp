// Every stage for the CPU backend (CpuExec: worlds in chunks on the thread pool, one-lane
// teams), float and double bodies: the solver's stages, the collision and the rollout kernels.
#include "launch/reference_solve.hpp"  // before the launches: SolverLaunchImpl calls reference_solve
#include "sap/backend/launch_cpu.hpp"
#include "launch/launches_impl.hpp"

namespace sap {

std::unique_ptr<SolverLaunch> make_solver_launch_cpu(Context& ctx) {
  return std::make_unique<SolverLaunchImpl<CpuExec>>(ctx.cpu());
}

std::unique_ptr<CollisionLaunch> make_collision_launch_cpu(Context& ctx) {
  return std::make_unique<CollisionLaunchImpl<CpuExec>>(ctx.cpu());
}

// Serial (no thread pool): these kernels are light, memory-bound passes over the worlds (masked
// copies, selections, counters, poses, contact sums) that run a few times per step(n); waking the
// pool's threads for each cost more than the work (sap_rollout_bench: a subset reset took 0.8 to
// 2.6 ms per env step at 256 humanoid worlds on 2 busy cores with the pool, 0.03 ms without).
std::unique_ptr<RolloutLaunch> make_rollout_launch_cpu(Context& ctx) {
  CpuExec exec = ctx.cpu();
  exec.pool = nullptr;
  return std::make_unique<RolloutLaunchImpl<CpuExec>>(exec);
}

}  // namespace sap
