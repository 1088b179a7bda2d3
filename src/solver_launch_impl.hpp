// SolverLaunch for one executor type. Included only by the backend translation units, each of
// which declares reference_solve(Exec&, ...) for its executor before including this file.
#pragma once

#include "kernels/actuation.hpp"
#include "kernels/free_motion.hpp"
#include "kernels/integrate.hpp"
#include "solver_launch.hpp"

namespace sap {

template <class Exec>
class SolverLaunchImpl final : public SolverLaunch {
 public:
  explicit SolverLaunchImpl(Exec exec) : exec_(exec) {}

  void kinematics(Precision p, bool poses_given, int nworld, const ModelView& m, Slab<const double> qpos,
                  const DataView& d, const int* status) override {
    if (p == Precision::F32) run_teams(nworld, KinematicsKernel<float>{m, qpos, poses_given, d, status});
    else run_teams(nworld, KinematicsKernel<double>{m, qpos, poses_given, d, status});
  }

  void actuation(Precision p, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                 const DataView& d, double h, const int* status) override {
    if (p == Precision::F32) run_teams(nworld, ActuationKernel<float>{m, in, control, h, status, d});
    else run_teams(nworld, ActuationKernel<double>{m, in, control, h, status, d});
  }

  void free_motion(Precision p, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                   const DataView& d, double h, int coriolis_passes, int* status) override {
    const bool f32 = p == Precision::F32, on_chip = free_motion_on_chip;
    const std::size_t bytes = on_chip ? shared_bytes(FreeMotionOnChip::layout(m.nv, m.nbody, m.nv_pad, f32)) : 0;
    if (f32) run_teams(nworld, FreeMotionKernel<float>{m, in, control, h, coriolis_passes, d, status, on_chip}, bytes);
    else run_teams(nworld, FreeMotionKernel<double>{m, in, control, h, coriolis_passes, d, status, on_chip}, bytes);
  }

  void constraint_setup(Precision weights, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                        const DataView& d, const ContactsView& contacts, const SolveView& s, const StepParams& p,
                        int* status) override {
    if (weights == Precision::F32)
      run_teams(nworld, ConstraintSetupKernel<float>{m, in, control, contacts, p, d, s, status});
    else run_teams(nworld, ConstraintSetupKernel<double>{m, in, control, contacts, p, d, s, status});
  }

  void newton_solve(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                    const SolveView& s, const StepParams& p, int* status) override {
    const bool on_chip = newton_system_on_chip, rows = on_chip && newton_rows_on_chip;
    const bool f32 = p.config.contact_linear_solve_precision == Precision::F32;
    const std::size_t bytes =
        on_chip ? shared_bytes(NewtonOnChip::layout(m.nv_pad, f32, rows, s.size.nrow(), s.size.nG(), s.size.njac)) : 0;
    if (objective == Precision::F32)
      for_each_world_team(exec_, nworld, bytes, SapSolveKernel<float>{m, in, p, d, s, status, on_chip, rows});
    else for_each_world_team(exec_, nworld, bytes, SapSolveKernel<double>{m, in, p, d, s, status, on_chip, rows});
  }

  void newton_begin(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                    const SolveView& s, const StepParams& p, int* status) override {
    split_phase<NewtonBeginKernel>(objective, nworld, m, in, d, s, p, status);
  }
  void newton_head(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                   const SolveView& s, const StepParams& p, int* status) override {
    split_phase<NewtonHeadKernel>(objective, nworld, m, in, d, s, p, status);
  }
  int reference_linear_solve(bool f32, int nworld, const ModelView& m, const DataView& d, const SolveView& s,
                             int* solve_ok) override {
    return reference_solve(exec_, reference_workspace_, f32, nworld, m.nv, m.nv_pad, d.chol, s.newton_int, solve_ok);
  }
  void newton_tail(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                   const SolveView& s, const StepParams& p, int* status, const int* solve_ok) override {
    if (objective == Precision::F32)
      for_each_world_team(exec_, nworld, 0, NewtonTailKernel<float>{{m, in, p, d, s, status}, solve_ok});
    else for_each_world_team(exec_, nworld, 0, NewtonTailKernel<double>{{m, in, p, d, s, status}, solve_ok});
  }
  void newton_finish(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                     const SolveView& s, const StepParams& p, int* status) override {
    split_phase<NewtonFinishKernel>(objective, nworld, m, in, d, s, p, status);
  }

  void integrate(int nworld, const ModelView& m, ConstStateView in, Slab<const double> v_new, ControlView control,
                 StateView out, PositionIntegrationMode mode, double h, const int* status) override {
    parallel_for(exec_, nworld, 1, IntegrateKernel{m, in, v_new, control, mode, h, status, out});
  }

 private:
  // Launches of the stages that read per-world model parameters: the plain kernel when no
  // world has any (the default path is unchanged), else the per-world-model wrapper.
  template <class K>
  void run_teams(int nworld, const K& k, std::size_t shared = 0) {
    if (world_model.slot) for_each_world_team(exec_, nworld, shared, PerWorldModelKernel<K>{k, world_model});
    else for_each_world_team(exec_, nworld, shared, k);
  }
  template <class Layout>
  static std::size_t shared_bytes(const Layout& l) {
    return static_cast<std::size_t>(l.bytes());
  }

  template <template <class> class Phase>
  void split_phase(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                   const SolveView& s, const StepParams& p, int* status) {
    if (objective == Precision::F32) for_each_world_team(exec_, nworld, 0, Phase<float>{{m, in, p, d, s, status}});
    else for_each_world_team(exec_, nworld, 0, Phase<double>{{m, in, p, d, s, status}});
  }

  Exec exec_;
  std::shared_ptr<void> reference_workspace_;  // the backend's reference-solve state (e.g. a cuSOLVER handle)
};

}  // namespace sap
