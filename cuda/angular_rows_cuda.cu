// The team kernels of models with torsional or rolling friction (condim 4 and 6: the kAngular
// instantiations of constraint setup, the fused Newton solve and the split Newton head;
// kernels/contact_angular_rows.hpp, docs/sap-math.md §3.9) in a translation unit of their own,
// compiled in parallel with cuda/backend_cuda.cu. Every other model runs the kAngular = false
// kernels, which carry none of their code (docs/gpu.md, kernel report). No physics here.
#include "angular_rows_cuda.cuh"

namespace sap {

template void for_each_world_team(CudaExec&, int, std::size_t, const ConstraintSetupKernel<float, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const ConstraintSetupKernel<double, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const PerWorldModelKernel<ConstraintSetupKernel<float, true>>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const PerWorldModelKernel<ConstraintSetupKernel<double, true>>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const SapSolveKernel<float, false, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const SapSolveKernel<double, false, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonHeadKernel<float, true>&);
template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonHeadKernel<double, true>&);

}  // namespace sap
