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
      for_each_world_team(exec_, nworld, 0, FreeMotionKernel<float>{m, in, control, d, h, coriolis_passes, status});
    else
      for_each_world_team(exec_, nworld, 0, FreeMotionKernel<double>{m, in, control, d, h, coriolis_passes, status});
  }

  void constraint_setup(Precision weights, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                        const DataView& d, const ContactsView& contacts, const SolveView& s, const SetupParams& p,
                        int* status) override {
    if (weights == Precision::F32)
      for_each_world_team(exec_, nworld, 0, ConstraintSetupKernel<float>{m, in, control, d, contacts, s, p, status});
    else
      for_each_world_team(exec_, nworld, 0, ConstraintSetupKernel<double>{m, in, control, d, contacts, s, p, status});
  }

  void newton_solve(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                    const SolveView& s, const NewtonParams& p, int* status) override {
    if (objective == Precision::F32)
      for_each_world_team(exec_, nworld, 0, SapSolveKernel<float>{m, in, d, s, p, status});
    else
      for_each_world_team(exec_, nworld, 0, SapSolveKernel<double>{m, in, d, s, p, status});
  }

  void integrate(int nworld, const ModelView& m, ConstStateView in, Slab<const double> v_new, StateView out,
                 int mode, double h, const int* status) override {
    parallel_for(exec_, nworld, 1, IntegrateKernel{m, in, v_new, out, mode, h, status});
  }

 private:
  Exec exec_;
};

}  // namespace sap
