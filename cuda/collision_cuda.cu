// The CUDA executor's collision launch, in a translation unit of its own (compiled in
// parallel with cuda/backend_cuda.cu, the other long compile; the kernels of models with condim
// 4 or 6 pairs in cuda/collision_angular_cuda.cu). No physics
// here: the bodies come from src/kernels/collision_*.hpp through launch/launches_impl.hpp.
#include "launch/cuda_api.hpp"
#include "launch_cuda.cuh"  // CudaExec and its launchers, before the templates that use them
#include "collision_angular_cuda.cuh"  // the condim 4/6 models' kernels: cuda/collision_angular_cuda.cu
#include "launch/launches_impl.hpp"

namespace sap {
namespace cuda {

std::unique_ptr<CollisionLaunch> make_collision_launch(Context& ctx) {
  CudaExec exec(static_cast<cudaStream_t>(ctx.cuda_stream()));
  return std::make_unique<CollisionLaunchImpl<CudaExec>>(exec);
}

}  // namespace cuda
}  // namespace sap
