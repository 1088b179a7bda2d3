// Every solver and collision stage for the emulated-team executor (EmuExec: CUDA's execution
// model on CPU threads, include/sap/backend/launch_emu.hpp). Same stage code as the CPU and CUDA
// backends: only the executor differs. The rollout kernels have no team code and run on the
// CPU executor (launch/factories.cpp).
#include "launch/reference_solve.hpp"  // before the launches: SolverLaunchImpl calls reference_solve
#include "sap/backend/launch_emu.hpp"
#include "launch/launches_impl.hpp"

namespace sap {

std::unique_ptr<SolverLaunch> make_solver_launch_emu(Context& ctx) {
  return std::make_unique<SolverLaunchImpl<EmuExec>>(ctx.emu());
}

std::unique_ptr<CollisionLaunch> make_collision_launch_emu(Context& ctx) {
  return std::make_unique<CollisionLaunchImpl<EmuExec>>(ctx.emu());
}

}  // namespace sap
