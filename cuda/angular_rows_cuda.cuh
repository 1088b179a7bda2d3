// The launches of the solver kernels' instantiations for models with torsional or rolling
// friction (contact pairs of condim 4 or 6: kAngular = true, launch/launches_impl.hpp) are
// instantiated in cuda/angular_rows_cuda.cu (the split Newton tail's in cuda/newton_tail_cuda.cu,
// the collision's in cuda/collision_angular_cuda.cu), not in the translation unit that includes
// this header: they compile in parallel with the others.
#pragma once

#include <cstddef>

#include "kernels/constraint_setup.hpp"
#include "kernels/newton.hpp"
#include "launch_cuda.cuh"
#include "sap/model.hpp"

namespace sap {

extern template void for_each_world_team(CudaExec&, int, std::size_t, const ConstraintSetupKernel<float, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const ConstraintSetupKernel<double, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const PerWorldModelKernel<ConstraintSetupKernel<float, true>>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const PerWorldModelKernel<ConstraintSetupKernel<double, true>>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const SapSolveKernel<float, false, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const SapSolveKernel<double, false, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonHeadKernel<float, true>&);
extern template void for_each_world_team(CudaExec&, int, std::size_t, const NewtonHeadKernel<double, true>&);

}  // namespace sap
