// Instantiates the rollout kernels for the CPU backend (also used under emulated teams: these
// kernels have no team code).
#include "cuda_api.hpp"
#include "rollout_launch_impl.hpp"
#include "sap/backend/launch_cpu.hpp"

namespace sap {

std::unique_ptr<RolloutLaunch> make_rollout_launch_cpu(Context& ctx) {
  return std::make_unique<RolloutLaunchImpl<CpuExec>>(ctx.cpu());
}

std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx) {
  if (ctx.backend() == Backend::CUDA) return cuda::make_rollout_launch(ctx);
  return make_rollout_launch_cpu(ctx);
}

}  // namespace sap
