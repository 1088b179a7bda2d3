// Instantiates every solver and collision stage for the emulated-team executor (CUDA's
// execution model on CPU threads; include/sap/backend/launch_emu.hpp). Same stage code as the
// CPU and CUDA backends: only the executor differs.
#include "launch/collision_launch_impl.hpp"
#include "launch/reference_solve.hpp"
#include "sap/backend/launch_emu.hpp"
#include "launch/solver_launch_impl.hpp"

namespace sap {

std::unique_ptr<SolverLaunch> make_solver_launch_emu(Context& ctx) {
  return std::make_unique<SolverLaunchImpl<EmuExec>>(ctx.emu());
}

std::unique_ptr<CollisionLaunch> make_collision_launch_emu(Context& ctx) {
  return std::make_unique<CollisionLaunchImpl<EmuExec>>(ctx.emu());
}

}  // namespace sap
