#include "sap/solver_sap.hpp"

#include <stdexcept>

#include "cuda_api.hpp"
#include "kernels/integrate.hpp"
#include "solver_launch.hpp"

namespace sap {

std::unique_ptr<SolverLaunch> make_solver_launch(Context& ctx) {
  if (ctx.backend() == Backend::CUDA) return cuda::make_solver_launch(ctx);
  return make_solver_launch_cpu(ctx);
}

namespace {
enum ClockPoint { kStart, kAfterFreeMotion, kAfterSetup, kAfterSolve, kAfterIntegrate, kNumPoints };
}

SolverSAP::SolverSAP(const Model& model, Context& ctx, int nworld, const SolverOptions& options)
    : model_(model), ctx_(ctx), nworld_(nworld), config_(options.resolve()) {
  if (nworld <= 0) throw std::invalid_argument("SolverSAP: nworld must be positive, got " + std::to_string(nworld));
  if (model.nv == 0) throw std::invalid_argument("SolverSAP: the model has no degrees of freedom");
  model_.validate();
  storage_ = ModelStorage(model_, ctx.backend());
  data_ = Data(model_, nworld, ctx.backend());
  status_.allocate(ctx.backend(), static_cast<std::size_t>(nworld));
  launch_ = make_solver_launch(ctx);
  clock_ = ctx.make_clock(kNumPoints);
}

SolverSAP::~SolverSAP() = default;

void SolverSAP::step(const State& in, State& out, const Control& control, const Contacts& contacts, double dt) {
  if (!(dt > 0)) throw std::invalid_argument("SolverSAP::step: dt must be positive, got " + std::to_string(dt));
  if (in.nworld() != nworld_ || out.nworld() != nworld_)
    throw std::invalid_argument("SolverSAP::step: state has " + std::to_string(in.nworld()) + " worlds, solver " +
                                std::to_string(nworld_));
  if (in.backend() != ctx_.backend() || out.backend() != ctx_.backend())
    throw std::invalid_argument("SolverSAP::step: state lives on another backend than the solver");
  if (control.ctrl.nworld() != nworld_ && model_.nu > 0)
    throw std::invalid_argument("SolverSAP::step: control has the wrong number of worlds");
  (void)contacts;

  const ModelView m = storage_.view();
  const DataView d = data_.view();
  status_.zero();
  clock_->mark(kStart);
  const Precision pose = config_.use_f64_boundary_pose ? Precision::F64 : Precision::F32;
  launch_->kinematics(pose, nworld_, m, in.qpos.slab(), d);
  const int coriolis_passes = config_.coriolis == CoriolisMode::Midpoint ? config_.coriolis_iterations : 0;
  launch_->free_motion(config_.free_motion_solve_precision, nworld_, m, in.view(), control.view(), d, dt,
                       coriolis_passes, status_.data());
  clock_->mark(kAfterFreeMotion);
  clock_->mark(kAfterSetup);
  // Without constraints the SAP minimiser is v* itself.
  Slab<const double> v_new{d.v_star.ptr, d.v_star.stride};
  clock_->mark(kAfterSolve);
  const int mode = config_.position_integration == PositionIntegrationMode::Midpoint ? kIntegrateMidpoint
                                                                                     : kIntegrateSapEuler;
  launch_->integrate(nworld_, m, in.view(), v_new, out.view(), mode, dt, status_.data());
  clock_->mark(kAfterIntegrate);
  timed_ = true;
}

StageTimes SolverSAP::last_stage_times() {
  StageTimes t;
  if (!timed_) return t;
  t.free_motion = clock_->elapsed_ms(kStart, kAfterFreeMotion);
  t.contact_setup = clock_->elapsed_ms(kAfterFreeMotion, kAfterSetup);
  t.solve = clock_->elapsed_ms(kAfterSetup, kAfterSolve);
  t.integrate = clock_->elapsed_ms(kAfterSolve, kAfterIntegrate);
  return t;
}

std::vector<int> SolverSAP::world_status() const { return status_.to_host(); }

int SolverSAP::failed_world_count() const {
  int n = 0;
  for (int s : world_status()) n += (s & kStatusFailureMask) ? 1 : 0;
  return n;
}

}  // namespace sap
