// Instantiates every stage for the CPU backend (float and double bodies).
#include "launch/reference_solve.hpp"
#include "sap/backend/launch_cpu.hpp"
#include "launch/solver_launch_impl.hpp"

namespace sap {

std::unique_ptr<SolverLaunch> make_solver_launch_cpu(Context& ctx) {
  return std::make_unique<SolverLaunchImpl<CpuExec>>(ctx.cpu());
}

}  // namespace sap
