// CollisionLaunch for one executor type. Included only by the backend translation units.
#pragma once

#include "collision_launch.hpp"

namespace sap {

template <class Exec>
class CollisionLaunchImpl final : public CollisionLaunch {
 public:
  explicit CollisionLaunchImpl(Exec exec) : exec_(exec) {}

  void collide(Precision p, int nworld, const ModelView& m, Slab<const double> qpos, const CollisionWorkspaceView& ws,
               const CollisionPairsView& pairs, const ContactsView& contacts) override {
    if (p == Precision::F32) for_each_world_team(exec_, nworld, 0, CollisionKernel<float>{m, qpos, pairs, ws, contacts});
    else for_each_world_team(exec_, nworld, 0, CollisionKernel<double>{m, qpos, pairs, ws, contacts});
  }

 private:
  Exec exec_;
};

}  // namespace sap
