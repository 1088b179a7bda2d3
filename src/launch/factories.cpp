// Where every launch comes from: the executor of a Context (CUDA, emulated teams, CPU threads).
#include "launch/cuda_api.hpp"
#include "launch/launches.hpp"

namespace sap {

std::unique_ptr<SolverLaunch> make_solver_launch(Context& ctx) {
  if (ctx.backend() == Backend::CUDA) return cuda::make_solver_launch(ctx);
  if (ctx.emulated()) return make_solver_launch_emu(ctx);
  return make_solver_launch_cpu(ctx);
}

std::unique_ptr<CollisionLaunch> make_collision_launch(Context& ctx) {
  if (ctx.backend() == Backend::CUDA) return cuda::make_collision_launch(ctx);
  if (ctx.emulated()) return make_collision_launch_emu(ctx);
  return make_collision_launch_cpu(ctx);
}

// The rollout kernels have no team code: under emulated teams they run on the CPU executor.
std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx) {
  if (ctx.backend() == Backend::CUDA) return cuda::make_rollout_launch(ctx);
  return make_rollout_launch_cpu(ctx);
}

}  // namespace sap
