// CUDA instantiation of the collision launch (no physics here: the bodies come from
// src/kernels/collision_*.hpp through collision_launch_impl.hpp).
#include "launch/collision_launch_impl.hpp"
#include "launch/cuda_api.hpp"
#include "launch_cuda.cuh"  // CudaExec and its launchers, before the templates that use them

namespace sap {
namespace cuda {

std::unique_ptr<CollisionLaunch> make_collision_launch(Context& ctx) {
  CudaExec exec(static_cast<cudaStream_t>(ctx.cuda_stream()));
  return std::make_unique<CollisionLaunchImpl<CudaExec>>(exec);
}

}  // namespace cuda
}  // namespace sap
