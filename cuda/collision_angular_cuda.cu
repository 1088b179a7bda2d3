// The collision kernels of models with torsional or rolling friction (condim 4 and 6: the
// kAngular instantiations, whose contacts carry condim and the extra friction coefficients) in
// a translation unit of their own, compiled in parallel with cuda/collision_cuda.cu. Every
// other model runs the kAngular = false kernels, which carry none of their code (docs/gpu.md,
// kernel report). No physics here.
#include "collision_angular_cuda.cuh"

namespace sap {

template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<float, false, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<float, true, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<double, false, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<double, true, true>&);

}  // namespace sap
