// SolverLaunch for one executor type. Included only by the backend translation units.
#pragma once

#include "kernels/free_motion.hpp"
#include "kernels/integrate.hpp"
#include "solver_launch.hpp"

namespace sap {

template <class Exec>
class SolverLaunchImpl final : public SolverLaunch {
 public:
  explicit SolverLaunchImpl(Exec exec) : exec_(exec) {}

  void kinematics(Precision p, int nworld, const ModelView& m, Slab<const double> qpos, const DataView& d) override {
    if (p == Precision::F32)
      parallel_for(exec_, nworld, 1, KinematicsKernel<float>{m, qpos, d});
    else
      parallel_for(exec_, nworld, 1, KinematicsKernel<double>{m, qpos, d});
  }

  void free_motion(Precision p, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                   const DataView& d, double h, int coriolis_passes, int* status) override {
    if (p == Precision::F32)
      for_each_world_team(exec_, nworld, free_motion_shared_bytes(), FreeMotionKernel<float>{m, in, control, d, h, coriolis_passes, status});
    else
      for_each_world_team(exec_, nworld, free_motion_shared_bytes(), FreeMotionKernel<double>{m, in, control, d, h, coriolis_passes, status});
  }

  void integrate(int nworld, const ModelView& m, ConstStateView in, Slab<const double> v_new, StateView out,
                 int mode, double h, const int* status) override {
    parallel_for(exec_, nworld, 1, IntegrateKernel{m, in, v_new, out, mode, h, status});
  }

 private:
  Exec exec_;
};

}  // namespace sap
