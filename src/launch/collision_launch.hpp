// The collision pipeline's launch: one virtual, implemented once as a template on the executor
// (collision_launch_impl.hpp) and instantiated for the CPU (collision_backend_cpu.cpp) and CUDA
// (cuda/collision_cuda.cu) backends. One call is one launch over all worlds.
#pragma once

#include <memory>

#include "kernels/collision_world.hpp"
#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/solver_options.hpp"

namespace sap {

struct CollisionLaunch {
  virtual ~CollisionLaunch() = default;
  // Contacts of every world at qpos, narrow phase in precision p (a team per world, a pair per
  // lane). convex_pairs: some pair is not analytic (pair_is_analytic), so the kernel with the
  // convex solvers runs; otherwise the analytic-only kernel.
  virtual void collide(Precision p, bool convex_pairs, int nworld, const ModelView& m, Slab<const double> qpos,
                       const CollisionWorkspaceView& ws, const CollisionPairsView& pairs,
                       const ContactsView& contacts) = 0;
};

std::unique_ptr<CollisionLaunch> make_collision_launch_cpu(Context& ctx);
std::unique_ptr<CollisionLaunch> make_collision_launch_emu(Context& ctx);  // backend_emu.cpp

}  // namespace sap
