// The launch layer: one virtual per stage kernel, grouped by who launches it (the solver's
// stages, the collision pipeline, the rollout kernels of the simulator). Each interface is
// implemented once as a template on the executor (launch/launches_impl.hpp) and instantiated
// per executor: launch/cpu.cpp (CpuExec), launch/emu.cpp (EmuExec, emulated GPU teams) and
// cuda/ (CudaExec). Every call is one launch over all worlds, with no synchronisation.
//
// Where a launch comes from: make_solver_launch, make_collision_launch and make_rollout_launch
// (launch/factories.cpp) pick the executor of a Context.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/collision_world.hpp"
#include "kernels/constraint_setup.hpp"
#include "kernels/fp64_retry.hpp"
#include "kernels/newton.hpp"
#include "kernels/rollout.hpp"
#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/data.hpp"
#include "sap/solver_options.hpp"

namespace sap {

// ---------------------------------------------------------------- the solver's stages (SolverSAP)
struct SolverLaunch {
  virtual ~SolverLaunch() = default;
  // Per-world model parameters (slot == nullptr: none). kinematics, free_motion and
  // constraint_setup, the stages that read masses, inertias, gains and gravity, honour it.
  WorldModelView world_model;
  // Working sets in the team's shared memory (the solver decides by size, docs/gpu.md): the
  // free-motion scratch and factor (FreeMotionOnChip), the fused Newton solve's system
  // (NewtonOnChip). The launches size the shared memory from the layouts.
  bool free_motion_on_chip = false;
  bool newton_system_on_chip = false;
  bool newton_rows_on_chip = false;  // only with the system
  // Body poses (the fp64 forward kinematics rounded to p) and com-based quantities (in p) at qpos.
  // poses_given: the body poses in d are already the fp64 forward kinematics of qpos (computed by
  // the collision stage); they are only rounded to p. Worlds whose status has
  // kStatusSkipped are not computed (here, in free motion and in constraint setup).
  virtual void kinematics(Precision p, bool poses_given, int nworld, const ModelView& m, Slab<const double> qpos,
                          const DataView& d, const int* status) = 0;
  // Spatial tendons and the explicit forces of fluids and muscles (stage 1b, kernels/actuation.hpp),
  // in precision p; only for models that have them.
  virtual void actuation(Precision p, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                         const DataView& d, double h, const int* status) = 0;
  // A = M + hD and v* (stage 1), in precision p.
  virtual void free_motion(Precision p, int nworld, const ModelView& m, ConstStateView in, ControlView control,
                           const DataView& d, double h, int coriolis_passes, int* status) = 0;
  // Contact frames, Jacobians, weights (precision of the weights), limit and PD rows (stage 2).
  virtual void constraint_setup(Precision weights, int nworld, const ModelView& m, ConstStateView in,
                                ControlView control, const ConstDataView& d, const ConstContactsView& contacts,
                                const SolveView& s, const StepParams& p, int* status) = 0;
  // Newton iterations of every world (stage 3), objective in precision p.
  virtual void newton_solve(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                            const SolveView& s, const StepParams& p, int* status) = 0;
  // The split Newton loop (linear_solver = reference): the phases of newton_solve as separate
  // launches (kernels/newton.hpp), with a library factorisation in between.
  virtual void newton_begin(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                            const SolveView& s, const StepParams& p, int* status) = 0;
  virtual void newton_head(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                           const SolveView& s, const StepParams& p, int* status) = 0;
  // Factors and solves the loaded systems of the worlds that need a direction (Eigen LLT on the
  // CPU, cuSOLVER batched on CUDA); solve_ok[w] = 1 on success. Returns how many were solved
  // (0: every world is done).
  virtual int reference_linear_solve(bool f32, int nworld, const ModelView& m, const DataView& d, const SolveView& s,
                                     int* solve_ok) = 0;
  virtual void newton_tail(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                           const SolveView& s, const StepParams& p, int* status, const int* solve_ok) = 0;
  virtual void newton_finish(Precision objective, int nworld, const ModelView& m, ConstStateView in, const DataView& d,
                             const SolveView& s, const StepParams& p, int* status) = 0;
  // q_{n+1} from q_n, v_n and v_{n+1}, act_{n+1} = stage 1b's act_next (stage 4); worlds with
  // failure bits keep their state.
  virtual void integrate(int nworld, const ModelView& m, ConstStateView in, Slab<const double> v_new,
                         Slab<const double> act_next, StateView out, PositionIntegrationMode mode, double h,
                         const int* status) = 0;
};

// ---------------------------------------------------------------- collision (CollisionPipeline)
struct CollisionLaunch {
  virtual ~CollisionLaunch() = default;
  // Contacts of every world at qpos, narrow phase in precision p (a team per world, a pair per
  // lane). convex_pairs: some pair is not analytic (pair_is_analytic), so the kernel with the
  // convex solvers runs; otherwise the analytic-only kernel.
  virtual void collide(Precision p, bool convex_pairs, int nworld, const ModelView& m, Slab<const double> qpos,
                       const CollisionWorkspaceView& ws, const CollisionPairsView& pairs,
                       const ContactsView& contacts) = 0;
};

// ---------------------------------------------------------------- rollout kernels (Simulator)
// Launches of kernels/rollout.hpp (subset resets, snapshots, controls, observations) and of the
// fp64 retry's slot kernels (kernels/fp64_retry.hpp).
struct RolloutLaunch {
  virtual ~RolloutLaunch() = default;
  virtual void select_index(int count, const int* idx, int nworld, int* flags) = 0;
  virtual void select_mask(int nworld, const void* mask, bool bytes, int* flags) = 0;
  virtual void copy(int nworld, int n, Slab<double> dst, Slab<const double> src, const int* flags) = 0;
  virtual void copy(int nworld, int n, Slab<int> dst, Slab<const int> src, const int* flags) = 0;
  virtual void zero(int nworld, int n, Slab<int> dst, const int* flags) = 0;
  virtual void reset_noise(int nworld, const ModelView& m, StateView s, const int* flags, double qpos_std,
                           double qvel_std, std::uint64_t seed) = 0;
  virtual void convert_in(int nworld, int n, Slab<double> dst, const void* src, ElemType t, long long stride) = 0;
  virtual void body_poses(int nworld, const ModelView& m, Slab<const double> qpos, Slab<double> pos,
                          Slab<double> quat, Slab<double> scratch) = 0;
  virtual void body_contacts(int nworld, const BodyContactKernel& k) = 0;
  virtual void scale_contacts(int nworld, const ContactsView& c, Slab<const double> scale) = 0;
  virtual void accumulate_status(int nworld, const int* status, int mask, Slab<int> acc) = 0;
  virtual void mark_skipped(int nworld, const int* active, int* status) = 0;
  virtual void or_status(int nworld, const int* status, int mask, int* bad) = 0;
  // fp64 retry (kernels/fp64_retry.hpp).
  virtual void retry_chunk_counts(int nchunk, const RetryChunkCountKernel& k) = 0;
  virtual void retry_slots(int nchunk, const RetrySlotKernel& k) = 0;
  virtual void gather(int nslot, int n, Slab<double> dst, Slab<const double> src, const int* world_of) = 0;
  virtual void gather(int nslot, int n, Slab<int> dst, Slab<const int> src, const int* world_of) = 0;
  virtual void retry_merge(int nslot, const RetryMergeKernel& k) = 0;
};

// ---------------------------------------------------------------- factories
// The launches for a Context: its CUDA device, its emulated teams (Context::emulated()), or the
// CPU thread pool. The rollout kernels run serially on the CPU backends (launch/cpu.cpp).
std::unique_ptr<SolverLaunch> make_solver_launch(Context& ctx);
std::unique_ptr<CollisionLaunch> make_collision_launch(Context& ctx);
std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx);

// Per executor (launch/cpu.cpp, launch/emu.cpp; the CUDA ones are cuda::make_* in
// launch/cuda_api.hpp).
std::unique_ptr<SolverLaunch> make_solver_launch_cpu(Context& ctx);
std::unique_ptr<CollisionLaunch> make_collision_launch_cpu(Context& ctx);
std::unique_ptr<RolloutLaunch> make_rollout_launch_cpu(Context& ctx);
std::unique_ptr<SolverLaunch> make_solver_launch_emu(Context& ctx);
std::unique_ptr<CollisionLaunch> make_collision_launch_emu(Context& ctx);

}  // namespace sap
