// The collision launches of models with torsional or rolling friction (a contact pair of condim
// 4 or 6: CollisionKernel<S, kConvexSolvers, true>, whose contacts carry condim and the extra
// friction coefficients) are instantiated in cuda/collision_angular_cuda.cu, not in the
// translation unit that includes this header: they compile in parallel with the others.
#pragma once

#include <cstddef>

#include "kernels/collision_world.hpp"
#include "launch_cuda.cuh"

namespace sap {

extern template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<float, false, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<float, true, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<double, false, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const CollisionKernel<double, true, true>&);

}  // namespace sap
