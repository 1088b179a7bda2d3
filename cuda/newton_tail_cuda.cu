// The team kernels of the split Newton loop's tail (NewtonTailKernel: line search and update
// after the reference linear solve) in a translation unit of their own, compiled with
// -maxrregcount=128 (CMakeLists.txt). The cap keeps NewtonTailKernel<double> at 16 one-warp
// worlds per SM without spills. A per-kernel __maxnreg__(128) spills (56 B): the cap must also
// bound the module's fp64-division slow-path subroutines, whose calls pin registers in the line
// search's evaluations (docs/gpu.md, kernel report). Every other kernel stays uncapped: a cap
// changes ptxas' choices below it too. No physics here.
#include "newton_tail_cuda.cuh"

namespace sap {

template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<float>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<double>&);
// Models with condim 4 or 6 pairs (kAngular, launch/launches_impl.hpp), under the same cap.
template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<float, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonTailKernel<double, true>&);

}  // namespace sap
