#include "sap/simulator.hpp"

#include <stdexcept>

namespace sap {

Simulator::Simulator(const Scene& scene, const SimulatorOptions& o)
    : scene_(scene), nworld_(o.nworld > 0 ? o.nworld : scene.num_worlds), scene_controls_(o.scene_controls) {
  if (nworld_ <= 0) throw std::invalid_argument("Simulator: nworld must be positive");
  max_rigid_contact_ = o.max_rigid_contact > 0       ? o.max_rigid_contact
                       : scene.max_rigid_contact > 0 ? scene.max_rigid_contact
                                                     : estimate_contact_capacity(scene.model, 1024);
  ctx_ = std::make_unique<Context>(o.backend, o.threads, o.emulated_lanes);
  const Backend b = ctx_->backend();
  collision_ = std::make_unique<CollisionPipeline>(scene.model, *ctx_, nworld_, o.collision_precision);
  solver_ = std::make_unique<SolverSAP>(scene.model, *ctx_, nworld_, o.override_solver ? o.solver : scene.solver,
                                        max_rigid_contact_);
  state_ = std::make_unique<State>(scene.model, nworld_, b);
  next_ = std::make_unique<State>(scene.model, nworld_, b);
  control_ = std::make_unique<Control>(scene.model, nworld_, b);
  contacts_ = std::make_unique<Contacts>(nworld_, max_rigid_contact_, b);
  clock_ = ctx_->make_clock(2);
  ctrl_host_.assign(static_cast<std::size_t>(nworld_) * static_cast<std::size_t>(scene.model.nu), 0.0);
  ctrl_vel_host_ = ctrl_host_;
  ctrl_world_.assign(static_cast<std::size_t>(scene.model.nu), 0.0);
  ctrl_vel_world_ = ctrl_world_;
  reset();
}

Simulator::~Simulator() = default;

void Simulator::reset() { reset(std::vector<int>(static_cast<std::size_t>(nworld_), 1)); }

void Simulator::reset(const std::vector<int>& mask) {
  if (static_cast<int>(mask.size()) != nworld_)
    throw std::invalid_argument("Simulator::reset: mask has " + std::to_string(mask.size()) + " entries, expected " +
                                std::to_string(nworld_));
  std::vector<double> q, v;
  bool all = true;
  for (int w = 0; w < nworld_; ++w) {
    if (!mask[static_cast<std::size_t>(w)]) {
      all = false;
      continue;
    }
    scene_initial_state(scene_, w, q, v);
    state_->qpos.world_from_host(w, q.data());
    state_->qvel.world_from_host(w, v.data());
  }
  if (all) time_ = 0;
}

void Simulator::set_control(const std::vector<double>& ctrl) {
  const std::size_t n = static_cast<std::size_t>(nworld_) * static_cast<std::size_t>(scene_.model.nu);
  if (ctrl.size() != n)
    throw std::invalid_argument("Simulator::set_control: expected " + std::to_string(n) +
                                " values (nworld x nu), got " + std::to_string(ctrl.size()));
  scene_controls_ = false;
  control_->ctrl.buffer().upload(ctrl);
}

void Simulator::apply_scene_controls() {
  const int nu = scene_.model.nu;
  if (nu == 0 || !scene_controls_ || scene_.controls.empty()) return;
  for (int w = 0; w < nworld_; ++w) {
    scene_control(scene_, time_, w, ctrl_world_, ctrl_vel_world_);  // sized once: no allocation
    std::copy(ctrl_world_.begin(), ctrl_world_.end(), ctrl_host_.begin() + static_cast<long>(w) * nu);
    std::copy(ctrl_vel_world_.begin(), ctrl_vel_world_.end(), ctrl_vel_host_.begin() + static_cast<long>(w) * nu);
  }
  control_->ctrl.buffer().upload(ctrl_host_);
  control_->ctrl_vel.buffer().upload(ctrl_vel_host_);
}

void Simulator::step() {
  apply_scene_controls();
  clock_->mark(0);
  collision_->collide(*state_, *contacts_);
  clock_->mark(1);
  solver_->step(*state_, *next_, *control_, *contacts_, scene_.dt);
  std::swap(state_, next_);
  time_ += scene_.dt;
}

StepTimes Simulator::last_step_times() {
  StepTimes t;
  t.collide = clock_->elapsed_ms(0, 1);
  t.solver = solver_->last_stage_times();
  return t;
}

std::vector<int> Simulator::failed_worlds() const {
  std::vector<int> out;
  const std::vector<int> st = solver_->world_status();
  for (int w = 0; w < nworld_; ++w)
    if (st[static_cast<std::size_t>(w)] & kStatusFailureMask) out.push_back(w);
  return out;
}

}  // namespace sap
