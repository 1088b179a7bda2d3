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
    if (p == Precision::F32) parallel_for(exec_, nworld, 1, CollisionKernel<float>{m, qpos, pairs, ws, contacts});
    else parallel_for(exec_, nworld, 1, CollisionKernel<double>{m, qpos, pairs, ws, contacts});
  }

 private:
  Exec exec_;
};

}  // namespace sap
