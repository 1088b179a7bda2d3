// The launches of the split Newton loop's tail (linear_solver = reference) are instantiated in
// cuda/newton_tail_cuda.cu, not in the translation unit that includes this header.
#pragma once

#include <cstddef>

#include "kernels/newton.hpp"
#include "launch_cuda.cuh"

namespace sap {

extern template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<float>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<double>&);
// Models with condim 4 or 6 pairs (kAngular, launch/launches_impl.hpp).
extern template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<float, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<double, true>&);

}  // namespace sap
