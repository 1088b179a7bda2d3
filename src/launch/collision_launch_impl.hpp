// CollisionLaunch for one executor type. Included only by the backend translation units.
#pragma once

#include "launch/collision_launch.hpp"

namespace sap {

template <class Exec>
class CollisionLaunchImpl final : public CollisionLaunch {
 public:
  explicit CollisionLaunchImpl(Exec exec) : exec_(exec) {}

  void collide(Precision p, bool convex_pairs, int nworld, const ModelView& m, Slab<const double> qpos,
               const CollisionWorkspaceView& ws, const CollisionPairsView& pairs, const ContactsView& contacts) override {
    const ContactsView& c = contacts;
    if (p == Precision::F32 && convex_pairs)
      for_each_world_team(exec_, nworld, 0, CollisionKernel<float, true>{m, qpos, pairs, ws, c});
    else if (p == Precision::F32) for_each_world_team(exec_, nworld, 0, CollisionKernel<float, false>{m, qpos, pairs, ws, c});
    else if (convex_pairs) for_each_world_team(exec_, nworld, 0, CollisionKernel<double, true>{m, qpos, pairs, ws, c});
    else for_each_world_team(exec_, nworld, 0, CollisionKernel<double, false>{m, qpos, pairs, ws, c});
  }

 private:
  Exec exec_;
};

}  // namespace sap
