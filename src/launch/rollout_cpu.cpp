// Instantiates the rollout kernels for the CPU backend (also used under emulated teams: these
// kernels have no team code).
#include "launch/cuda_api.hpp"
#include "launch/rollout_launch_impl.hpp"
#include "sap/backend/launch_cpu.hpp"

namespace sap {

// Serial (no thread pool): these kernels are light, memory-bound passes over the worlds (masked
// copies, selections, counters, poses, contact sums) that run a few times per step(n); waking the
// pool's threads for each cost more than the work (sap_rollout_bench: a subset reset took 0.8 to
// 2.6 ms per env step at 256 humanoid worlds on 2 busy cores with the pool, 0.03 ms without).
std::unique_ptr<RolloutLaunch> make_rollout_launch_cpu(Context& ctx) {
  CpuExec exec = ctx.cpu();
  exec.pool = nullptr;
  return std::make_unique<RolloutLaunchImpl<CpuExec>>(exec);
}

std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx) {
  if (ctx.backend() == Backend::CUDA) return cuda::make_rollout_launch(ctx);
  return make_rollout_launch_cpu(ctx);
}

}  // namespace sap
