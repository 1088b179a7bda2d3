// Instantiates the rollout kernels (src/kernels/rollout.hpp) for CUDA. No physics here.
#include "launch/cuda_api.hpp"
#include "launch_cuda.cuh"
#include "launch/rollout_launch_impl.hpp"

namespace sap::cuda {

std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx) {
  CudaExec exec(static_cast<cudaStream_t>(ctx.cuda_stream()));
  return std::make_unique<RolloutLaunchImpl<CudaExec>>(exec);
}

}  // namespace sap::cuda
