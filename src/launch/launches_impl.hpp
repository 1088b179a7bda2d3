// Every launch of launch/launches.hpp for one executor type Exec (CpuExec, EmuExec, CudaExec),
// written once: the executor files (launch/cpu.cpp, launch/emu.cpp, cuda/*.cu) include this
// header and instantiate the classes. A translation unit that instantiates SolverLaunchImpl
// declares reference_solve(Exec&, ...) for its executor before including this file
// (launch/reference_solve.hpp for the host executors, cuda/backend_cuda.cu for CUDA).
//
// Models with torsional or rolling friction (contact pairs of condim 4 or 6, SolveSizes::nacon
// > 0) run instantiations of their own of the kernels that set up or visit the constraint rows
// (ConstraintSetupKernel, SapSolveKernel, NewtonHeadKernel, NewtonTailKernel: kAngular = true),
// and so does the collision (CollisionKernel, whose contacts then carry condim and the extra
// friction coefficients); every other model runs the kAngular = false ones, which carry no
// angular code. Every executor picks the same way, so the emulated teams run the angular path
// as the GPU does.
#pragma once

#include "kernels/actuation.hpp"
#include "kernels/free_motion.hpp"
#include "kernels/integrate.hpp"
#include "launch/launches.hpp"

namespace sap {

template <class Exec>
class SolverLaunchImpl final : public SolverLaunch {
 public:
  explicit SolverLaunchImpl(Exec exec) : exec_(exec) {}

  void kinematics(Precision p, bool poses_given, int nworld, const ModelView& m, Slab<const double> qpos,
                  const DataView& d, const int* status) override {
    if (p == Precision::F32 && poses_given) run_teams(nworld, KinematicsKernel<float, true>{m, qpos, d, status});
    else if (p == Precision::F32) run_teams(nworld, KinematicsKernel<float>{m, qpos, d, status});
    else if (poses_given) run_teams(nworld, KinematicsKernel<double, true>{m, qpos, d, status});
    else run_teams(nworld, KinematicsKernel<double>{m, qpos, d, status});
  }

  void actuation(Precision p, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                 const DataView& d, double h, const int* status) override {
    if (p == Precision::F32) run_teams(nworld, ActuationKernel<float>{m, in, control, h, status, d});
    else run_teams(nworld, ActuationKernel<double>{m, in, control, h, status, d});
  }

  void free_motion(Precision p, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                   const DataView& d, double h, int coriolis_passes, int* status) override {
    const bool f32 = p == Precision::F32, on_chip = free_motion_on_chip;
    const std::size_t bytes =
        on_chip ? shared_bytes(FreeMotionOnChip::layout(m.nv, m.nbody, m.nv_pad, f32, f32 && one_lane_exec<Exec>()))
                : 0;
    auto launch = [&](const auto& k) {  // per-world model parameters: their wrapper, world by world
      if (world_model.slot || !run_world_groups(nworld, k, bytes)) run_teams(nworld, k, bytes);
    };
    if (f32) launch(FreeMotionKernel<float>{m, in, control, h, coriolis_passes, d, status, on_chip});
    else launch(FreeMotionKernel<double>{m, in, control, h, coriolis_passes, d, status, on_chip});
  }

  void constraint_setup(Precision weights, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                        const ConstDataView& d, const ConstContactsView& contacts, const SolveView& s,
                        const StepParams& p, int* status) override {
    if (s.size.nacon > 0) constraint_setup_as<true>(weights, nworld, m, in, control, d, contacts, s, p, status);
    else constraint_setup_as<false>(weights, nworld, m, in, control, d, contacts, s, p, status);
  }

  void newton_solve(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                    const SolveView& s, const StepParams& p, int* status) override {
    if (s.size.nacon > 0) newton_solve_as<true>(objective, nworld, m, in, d, s, p, status);
    else newton_solve_as<false>(objective, nworld, m, in, d, s, p, status);
  }

  void newton_begin(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                    const SolveView& s, const StepParams& p, int* status) override {
    split_phase<NewtonBeginKernel>(objective, nworld, m, in, d, s, p, status);
  }
  void newton_head(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                   const SolveView& s, const StepParams& p, int* status) override {
    if (s.size.nacon > 0) split_phase<NewtonHeadAngular>(objective, nworld, m, in, d, s, p, status);
    else split_phase<NewtonHeadPlain>(objective, nworld, m, in, d, s, p, status);
  }
  int reference_linear_solve(bool f32, int nworld, const ModelView& m, const DataView& d, const SolveView& s,
                             int* solve_ok) override {
    return reference_solve(exec_, reference_workspace_, f32, nworld, m.nv, m.nv_pad, d.chol, s.newton_int, solve_ok);
  }
  void newton_tail(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                   const SolveView& s, const StepParams& p, int* status, const int* solve_ok) override {
    if (s.size.nacon > 0) newton_tail_as<true>(objective, nworld, m, in, d, s, p, status, solve_ok);
    else newton_tail_as<false>(objective, nworld, m, in, d, s, p, status, solve_ok);
  }
  void newton_finish(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                     const SolveView& s, const StepParams& p, int* status) override {
    split_phase<NewtonFinishKernel>(objective, nworld, m, in, d, s, p, status);
  }

  void integrate(int nworld, const ModelView& m, ConstStateView in, Slab<const double> v_new, Slab<const double> act_next,
                 StateView out, PositionIntegrationMode mode, double h, const int* status) override {
    parallel_for(exec_, nworld, 1, IntegrateKernel{m, in, v_new, act_next, mode, h, status, out});
  }

 private:
  // One-parameter aliases for split_phase's `template <class> class Phase`: a template with a
  // defaulted second parameter does not match it under clang (the fuzzer build) without
  // -frelaxed-template-template-args.
  template <class So>
  using NewtonHeadAngular = NewtonHeadKernel<So, true>;
  template <class So>
  using NewtonHeadPlain = NewtonHeadKernel<So, false>;

  template <bool kAngular>
  void constraint_setup_as(Precision weights, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                           const ConstDataView& d, const ConstContactsView& contacts, const SolveView& s,
                           const StepParams& p, int* status) {
    if (weights == Precision::F32)
      run_teams(nworld, ConstraintSetupKernel<float, kAngular>{m, in, control, contacts, p, d, s.rows(), s.stats, status});
    else run_teams(nworld, ConstraintSetupKernel<double, kAngular>{m, in, control, contacts, p, d, s.rows(), s.stats, status});
  }
  template <bool kAngular>
  void newton_solve_as(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                       const SolveView& s, const StepParams& p, int* status) {
    const bool on_chip = newton_system_on_chip, rows = on_chip && newton_rows_on_chip;
    const bool f32 = p.config.contact_linear_solve_precision == Precision::F32;
    const std::size_t bytes =
        on_chip ? shared_bytes(NewtonOnChip::layout(m.nv_pad, f32, rows, s.size.nrow(), s.size.nG(), s.size.njac)) : 0;
    if (objective == Precision::F32)
      solve_teams(nworld, bytes, SapSolveKernel<float, false, kAngular>{m, in, p, d, s.rows(), s.newton(), status, d.chol, d.chol_first, on_chip, rows});
    else solve_teams(nworld, bytes, SapSolveKernel<double, false, kAngular>{m, in, p, d, s.rows(), s.newton(), status, d.chol, d.chol_first, on_chip, rows});
  }
  // The fused solve's launch (its kernel reads no per-world model parameters).
  template <class K>
  void solve_teams(int nworld, std::size_t bytes, const K& k) {
    if (!run_world_groups(nworld, k, bytes)) for_each_world_team(exec_, nworld, bytes, k);
  }
  // On one-lane CPU teams, a kernel with run_worlds (the free motion, the fused solve) takes
  // kWorldLanes worlds of a chunk side by side, their factorisations together in SIMD lanes
  // (kernels/cholesky_worlds.hpp; the same bits as world by world). False: not launched (other
  // executors, which run their teams as usual).
  template <class K>
  bool run_world_groups(int nworld, const K& k, std::size_t bytes) {
#if !defined(__CUDACC__)
    if constexpr (one_lane_exec<Exec>()) {
      for_each_world_group<kWorldLanes>(exec_, nworld, bytes, k.world_lanes_bytes(),
                                        [&](int w0, int g, auto* teams, char* lanes) { k.run_worlds(w0, g, teams, lanes); });
      return true;
    }
#endif
    return false;
  }
  template <bool kAngular>
  void newton_tail_as(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                      const SolveView& s, const StepParams& p, int* status, const int* solve_ok) {
    if (objective == Precision::F32)
      for_each_world_team(exec_, nworld, 0, NewtonTailKernel<float, kAngular>{{m, in, p, d, s.rows(), s.newton(), status, d.chol, d.chol_first}, solve_ok});
    else for_each_world_team(exec_, nworld, 0, NewtonTailKernel<double, kAngular>{{m, in, p, d, s.rows(), s.newton(), status, d.chol, d.chol_first}, solve_ok});
  }

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
    if (objective == Precision::F32) for_each_world_team(exec_, nworld, 0, Phase<float>{{m, in, p, d, s.rows(), s.newton(), status, d.chol, d.chol_first}});
    else for_each_world_team(exec_, nworld, 0, Phase<double>{{m, in, p, d, s.rows(), s.newton(), status, d.chol, d.chol_first}});
  }

  Exec exec_;
  std::shared_ptr<void> reference_workspace_;  // the backend's reference-solve state (e.g. a cuSOLVER handle)
};

template <class Exec>
class CollisionLaunchImpl final : public CollisionLaunch {
 public:
  explicit CollisionLaunchImpl(Exec exec) : exec_(exec) {}

  void collide(Precision p, bool convex_pairs, int nworld, const ModelView& m, Slab<const double> qpos,
               const CollisionWorkspaceView& ws, const CollisionPairsView& pairs, const ContactsView& contacts) override {
    if (contacts.angular()) collide_as<true>(p, convex_pairs, nworld, m, qpos, ws, pairs, contacts);
    else collide_as<false>(p, convex_pairs, nworld, m, qpos, ws, pairs, contacts);
  }

 private:
  // kAngular: the contacts carry condim and the extra friction coefficients (a pair of condim 4 or 6).
  template <bool kAngular>
  void collide_as(Precision p, bool convex_pairs, int nworld, const ModelView& m, Slab<const double> qpos,
                  const CollisionWorkspaceView& ws, const CollisionPairsView& pairs, const ContactsView& c) {
    // One lane's fp64 body-pair broad phase keeps a bit per pair in the team's scratch.
    const std::size_t bytes = one_lane_exec<Exec>() ? static_cast<std::size_t>(pairs.broad_phase_bytes()) : 0;
    if (p == Precision::F32 && convex_pairs)
      for_each_world_team(exec_, nworld, 0, CollisionKernel<float, true, kAngular>{m, qpos, pairs, ws, c});
    else if (p == Precision::F32)
      for_each_world_team(exec_, nworld, 0, CollisionKernel<float, false, kAngular>{m, qpos, pairs, ws, c});
    else if (convex_pairs)
      for_each_world_team(exec_, nworld, bytes, CollisionKernel<double, true, kAngular>{m, qpos, pairs, ws, c});
    else for_each_world_team(exec_, nworld, bytes, CollisionKernel<double, false, kAngular>{m, qpos, pairs, ws, c});
  }

  Exec exec_;
};

template <class Exec>
class RolloutLaunchImpl final : public RolloutLaunch {
 public:
  explicit RolloutLaunchImpl(Exec exec) : exec_(exec) {}
  void select_index(int count, const int* idx, int nworld, int* flags) override {
    parallel_for(exec_, count, 1, SelectIndexKernel{idx, nworld, flags});
  }
  void select_mask(int nworld, const void* mask, bool bytes, int* flags) override {
    parallel_for(exec_, nworld, 1, SelectMaskKernel{mask, bytes, flags});
  }
  void copy(int nworld, int n, Slab<double> dst, Slab<const double> src, const int* flags) override {
    parallel_for(exec_, nworld, n, MaskedCopyKernel<double>{dst, src, flags});
  }
  void copy(int nworld, int n, Slab<int> dst, Slab<const int> src, const int* flags) override {
    parallel_for(exec_, nworld, n, MaskedCopyKernel<int>{dst, src, flags});
  }
  void zero(int nworld, int n, Slab<int> dst, const int* flags) override {
    parallel_for(exec_, nworld, n, MaskedZeroKernel<int>{dst, flags});
  }
  void reset_noise(int nworld, const ModelView& m, StateView s, const int* flags, double qpos_std, double qvel_std,
                   std::uint64_t seed) override {
    parallel_for(exec_, nworld, 1, ResetNoiseKernel{m, s, flags, qpos_std, qvel_std, seed});
  }
  void convert_in(int nworld, int n, Slab<double> dst, const void* src, ElemType t, long long stride) override {
    parallel_for(exec_, nworld, n, ConvertInKernel{dst, src, t, stride});
  }
  void body_poses(int nworld, const ModelView& m, Slab<const double> qpos, Slab<double> pos, Slab<double> quat,
                  Slab<double> scratch) override {
    parallel_for(exec_, nworld, 1, BodyPoseKernel{m, qpos, pos, quat, scratch});
  }
  void body_contacts(int nworld, const BodyContactKernel& k) override { parallel_for(exec_, nworld, 1, k); }
  void scale_contacts(int nworld, const ContactsView& c, Slab<const double> scale) override {
    parallel_for(exec_, nworld, 1, ContactScaleKernel{c, scale});
    if (c.angular()) parallel_for(exec_, nworld, 1, FrictionExtScaleKernel{c, scale});
  }
  void accumulate_status(int nworld, const int* status, int mask, Slab<int> acc) override {
    parallel_for(exec_, nworld, 1, AccumulateStatusKernel{status, mask, acc});
  }
  void mark_skipped(int nworld, const int* active, int* status) override {
    parallel_for(exec_, nworld, 1, MarkSkippedKernel{active, status});
  }
  void or_status(int nworld, const int* status, int mask, int* bad) override {
    parallel_for(exec_, nworld, 1, OrStatusKernel{status, mask, bad});
  }
  void retry_chunk_counts(int nchunk, const RetryChunkCountKernel& k) override { parallel_for(exec_, nchunk, 1, k); }
  void retry_slots(int nchunk, const RetrySlotKernel& k) override { parallel_for(exec_, nchunk, 1, k); }
  void gather(int nslot, int n, Slab<double> dst, Slab<const double> src, const int* world_of) override {
    parallel_for(exec_, nslot, n, GatherWorldsKernel<double>{dst, src, world_of});
  }
  void gather(int nslot, int n, Slab<int> dst, Slab<const int> src, const int* world_of) override {
    parallel_for(exec_, nslot, n, GatherWorldsKernel<int>{dst, src, world_of});
  }
  void retry_merge(int nslot, const RetryMergeKernel& k) override { parallel_for(exec_, nslot, 1, k); }

 private:
  Exec exec_;
};

}  // namespace sap
