// Instantiates the collision launch for the CPU backend (float and double narrow phase).
#include "launch/collision_launch_impl.hpp"
#include "sap/backend/launch_cpu.hpp"

namespace sap {

std::unique_ptr<CollisionLaunch> make_collision_launch_cpu(Context& ctx) {
  return std::make_unique<CollisionLaunchImpl<CpuExec>>(ctx.cpu());
}

}  // namespace sap
