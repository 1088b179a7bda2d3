// The solver's stage launches, one virtual per stage; implemented once as a template on the
// executor (solver_launch_impl.hpp) and instantiated for the CPU (backend_cpu.cpp) and CUDA
// (cuda/backend_cuda.cu) backends. Each call is one launch over all worlds.
#pragma once

#include <memory>

#include "kernels/contact_jacobian.hpp"
#include "kernels/newton.hpp"
#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/data.hpp"
#include "sap/solver_options.hpp"

namespace sap {

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
  // Body poses and com-based quantities at qpos, in precision p.
  // poses_given: the body poses in d are already those of qpos in precision p (computed by the
  // collision stage); only the com quantities are computed. Worlds whose status has
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
                                ControlView control, const DataView& d, const ContactsView& contacts,
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
  // q_{n+1} from q_n, v_n and v_{n+1}, act_{n+1} from act_n and ctrl (stage 4); worlds with
  // failure bits keep their state.
  virtual void integrate(int nworld, const ModelView& m, ConstStateView in, Slab<const double> v_new,
                         ControlView control, StateView out, PositionIntegrationMode mode, double h,
                         const int* status) = 0;
};

std::unique_ptr<SolverLaunch> make_solver_launch_cpu(Context& ctx);
std::unique_ptr<SolverLaunch> make_solver_launch_emu(Context& ctx);  // emulated teams (backend_emu.cpp)
std::unique_ptr<SolverLaunch> make_solver_launch(Context& ctx);

}  // namespace sap
