// CollisionLaunch for one executor type. Included only by the backend translation units.
#pragma once

#include "collision_launch.hpp"

namespace sap {

template <class Exec>
class CollisionLaunchImpl final : public CollisionLaunch {
 public:
  explicit CollisionLaunchImpl(Exec exec) : exec_(exec) {}

  void collide(Precision p, bool convex_pairs, int nworld, const ModelView& m, Slab<const double> qpos,
               const CollisionWorkspaceView& ws, const CollisionPairsView& pairs, const ContactsView& contacts) override {
    if (p == Precision::F32) run<float>(convex_pairs, nworld, {m, qpos, pairs, ws, contacts});
    else run<double>(convex_pairs, nworld, {m, qpos, pairs, ws, contacts});
  }

 private:
  struct Args {
    ModelView m;
    Slab<const double> qpos;
    CollisionPairsView pairs;
    CollisionWorkspaceView ws;
    ContactsView contacts;
  };
  template <class S>
  void run(bool convex_pairs, int nworld, const Args& a) {
    if (convex_pairs)
      for_each_world_team(exec_, nworld, 0, CollisionKernel<S, true>{a.m, a.qpos, a.pairs, a.ws, a.contacts});
    else for_each_world_team(exec_, nworld, 0, CollisionKernel<S, false>{a.m, a.qpos, a.pairs, a.ws, a.contacts});
  }

  Exec exec_;
};

}  // namespace sap
