// Simulator, stepping: construction, controls, step() and step(n) (plain launches or a CUDA
// graph), per-world retry with smaller steps. Worlds (resets, snapshots, counters, per-world
// parameters): simulator_worlds.cpp; observation views: simulator_views.cpp.
#include "sap/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "launch/cuda_api.hpp"
#include "launch/launches.hpp"
#include "model/solve_data.hpp"
#include "runtime/simulator_detail.hpp"

namespace sap {

using namespace simulator_detail;

Simulator::Simulator(const Scene& scene, const SimulatorOptions& o)
    : scene_(scene), nworld_(o.nworld > 0 ? o.nworld : scene.num_worlds), scene_controls_(o.scene_controls) {
  if (nworld_ <= 0) throw std::invalid_argument("Simulator: nworld must be positive");
  // The CUDA device of this simulator: every method makes it current while it runs.
  if (resolve_backend(o.backend) == Backend::CUDA) {
    const int n = cuda::device_count();
    if (o.device < 0 || o.device >= n)
      throw std::invalid_argument("Simulator: CUDA device " + std::to_string(o.device) + " does not exist (" +
                                  std::to_string(n) + " visible)");
    device_ = o.device;
  } else if (o.device != 0) {
    throw std::invalid_argument("Simulator: device " + std::to_string(o.device) +
                                " given for the CPU backend (it has only device 0)");
  }
  const cuda::DeviceScope on_device(device_);
  max_rigid_contact_ = o.max_rigid_contact > 0       ? o.max_rigid_contact
                       : scene.max_rigid_contact > 0 ? scene.max_rigid_contact
                       : estimate_scene_contact_capacity(scene, o.override_solver ? &o.solver : nullptr).capacity;
  ctx_ = std::make_unique<Context>(o.backend, o.threads, o.emulated_lanes);
  const Backend b = ctx_->backend();
  collision_ = std::make_unique<CollisionPipeline>(scene.model, *ctx_, nworld_, o.collision_precision);
  solver_ = std::make_unique<SolverSAP>(scene.model, *ctx_, nworld_, o.override_solver ? o.solver : scene.solver,
                                        max_rigid_contact_);
  state_ = std::make_unique<State>(scene.model, nworld_, b);
  control_ = std::make_unique<Control>(scene.model, nworld_, b);
  contacts_ = std::make_unique<Contacts>(nworld_, max_rigid_contact_, b, collision_->angular_friction());
  // The narrow phase's body kinematics live in the solver's kinematics arrays (both computed
  // from q_n every step, collision first): one copy per world instead of two.
  collision_->share_kinematics_workspace(solver_->data());
  // ... and the solver's kinematics stage skips the poses when they are in its own precision
  // (approx64 and drake with the default fp64 collision): forward kinematics once per step.
  solver_->set_poses_given(o.collision_precision);
  clock_ = ctx_->make_clock(2);
  model_ = ModelStorage(scene.model, b);
  rollout_ = make_rollout_launch(*ctx_);
  cuda_graphs_ = o.cuda_graphs;
  const Model& m = scene.model;
  const std::size_t nw = static_cast<std::size_t>(nworld_);
  ctrl_host_.assign(nw * static_cast<std::size_t>(m.nu), 0.0);
  ctrl_vel_host_ = ctrl_host_;
  ctrl_world_.assign(static_cast<std::size_t>(m.nu), 0.0);
  ctrl_vel_world_ = ctrl_world_;
  scene_controls_constant_ = std::all_of(scene.controls.begin(), scene.controls.end(), [](const ControlSchedule& c) {
    return c.kind == ControlSchedule::Kind::Constant;
  });
  // Each world's initial state, kept on the backend: every reset copies from it. When every
  // world starts alike (no perturbation) one block is kept and read with stride 0.
  {
    std::vector<double> q, v, qa(nw * static_cast<std::size_t>(m.nq)), va(nw * static_cast<std::size_t>(m.nv));
    for (int w = 0; w < nworld_; ++w) {
      scene_initial_state(scene_, w, q, v);
      std::copy(q.begin(), q.end(), qa.begin() + static_cast<long>(w) * m.nq);
      std::copy(v.begin(), v.end(), va.begin() + static_cast<long>(w) * m.nv);
    }
    init_shared_ = true;  // bit-identical blocks
    for (std::size_t i = static_cast<std::size_t>(m.nq); i < qa.size() && init_shared_; ++i)
      init_shared_ = std::memcmp(&qa[i], &qa[i % static_cast<std::size_t>(m.nq)], sizeof(double)) == 0;
    for (std::size_t i = static_cast<std::size_t>(m.nv); i < va.size() && init_shared_; ++i)
      init_shared_ = std::memcmp(&va[i], &va[i % static_cast<std::size_t>(m.nv)], sizeof(double)) == 0;
    const int nblock = init_shared_ ? 1 : nworld_;
    init_qpos_.allocate(b, nblock, static_cast<std::size_t>(m.nq));
    init_qvel_.allocate(b, nblock, static_cast<std::size_t>(m.nv));
    init_qpos_.buffer().upload(qa.data(), init_qpos_.buffer().size());
    init_qvel_.buffer().upload(va.data(), init_qvel_.buffer().size());
    zero_act_.allocate(b, 1, static_cast<std::size_t>(m.na));
    zero_act_.buffer().zero();
  }
  flags_.allocate(b, nw);
  flags2_.allocate(b, nw);
  bad_.allocate(b, nw);
  active_.allocate(b, nw);
  counters_.allocate(b, nworld_, kNumCounters);
  // body_pos_, body_quat_, pose_scratch_, contact_force_, contact_flag_: allocated on first
  // request (ensure_pose_buffers, ensure_contact_buffers), outside any graph capture.
  set_retry_options(o.retry);
  reset();
}

Simulator::~Simulator() {
  const cuda::DeviceScope on_device(device_);
  drop_graphs();
}

void Simulator::drop_graphs() {
  const cuda::DeviceScope on_device(device_);
  for (auto& g : graphs_) cuda::graph_destroy(g.second);
  graphs_.clear();
}

void Simulator::invalidate() { poses_valid_ = false; }

void Simulator::set_retry_options(const RetryOptions& r) {
  const cuda::DeviceScope on_device(device_);
  if (r.depth < 0 || r.depth > 20)
    throw std::invalid_argument("Simulator: retry depth must be in [0, 20], got " + std::to_string(r.depth));
  retry_ = r;
  if (retry_.on == 0) retry_.on = kStatusFailed | kStatusLineSearchFailed | kStatusIterationLimit;
  if (retry_.depth > 0 && !start_) start_ = std::make_unique<State>(scene_.model, nworld_, ctx_->backend());
  drop_graphs();
}

// ---------------------------------------------------------------- controls

// The plain form of set_control(src, DType::F64, Memory::Host): the same values.
void Simulator::set_control(const std::vector<double>& ctrl) {
  const std::size_t n = static_cast<std::size_t>(nworld_) * static_cast<std::size_t>(scene_.model.nu);
  if (ctrl.size() != n)
    throw std::invalid_argument("Simulator::set_control: expected " + std::to_string(n) +
                                " values (nworld x nu), got " + std::to_string(ctrl.size()));
  set_control(ctrl.data(), DType::F64, Memory::Host);
}

void Simulator::set_control(const void* src, DType type, Memory memory, long long stride) {
  const cuda::DeviceScope on_device(device_);
  const int nu = scene_.model.nu;
  scene_controls_ = false;
  if (nu == 0) return;
  if (type == DType::I32) throw std::invalid_argument("Simulator::set_control: controls are fp32 or fp64");
  if (!src) throw std::invalid_argument("Simulator::set_control: null pointer");
  const long long st = stride > 0 ? stride : nu;
  if (st < nu) throw std::invalid_argument("Simulator::set_control: stride " + std::to_string(st) + " < nu");
  const Backend b = ctx_->backend();
  if (memory == Memory::Device && b != Backend::CUDA)
    throw std::invalid_argument("Simulator::set_control: device controls need the CUDA backend");
  const ElemType t = type == DType::F32 ? ElemType::F32 : ElemType::F64;
  if (b == Backend::CUDA && memory == Memory::Host) {  // convert on the host, one upload
    for (int w = 0; w < nworld_; ++w)
      for (int i = 0; i < nu; ++i) {
        const long long k = static_cast<long long>(w) * st + i;
        ctrl_host_[static_cast<std::size_t>(w) * nu + static_cast<std::size_t>(i)] =
            t == ElemType::F32 ? static_cast<const float*>(src)[k] : static_cast<const double*>(src)[k];
      }
    control_->ctrl.buffer().upload(ctrl_host_);
    return;
  }
  rollout_->convert_in(nworld_, nu, control_->ctrl.slab(), src, t, st);
}

ArrayView Simulator::control_view() {
  const cuda::DeviceScope on_device(device_);
  scene_controls_ = false;
  return view_of(control_->ctrl.buffer().data(), DType::F64, 2, nworld_, scene_.model.nu, 0);
}

void Simulator::apply_scene_controls() {
  const cuda::DeviceScope on_device(device_);
  const int nu = scene_.model.nu;
  if (nu == 0 || !scene_controls_ || scene_.controls.empty()) return;
  // Constant schedules hold their values: evaluating and uploading nworld x nu of them before
  // every step would cost the host ~1 ms per step at 8,192 worlds, exposed wherever a step reads
  // the device (the fp64 retry's count) and keeping such scenes out of CUDA graphs.
  if (scene_controls_constant_ && scene_controls_written_) return;
  for (int w = 0; w < nworld_; ++w) {
    scene_control(scene_, time_, w, ctrl_world_, ctrl_vel_world_);  // sized once: no allocation
    std::copy(ctrl_world_.begin(), ctrl_world_.end(), ctrl_host_.begin() + static_cast<long>(w) * nu);
    std::copy(ctrl_vel_world_.begin(), ctrl_vel_world_.end(), ctrl_vel_host_.begin() + static_cast<long>(w) * nu);
  }
  control_->ctrl.buffer().upload(ctrl_host_);
  control_->ctrl_vel.buffer().upload(ctrl_vel_host_);
  scene_controls_written_ = true;
}

// ---------------------------------------------------------------- stepping

// The plain form of step(1), never captured into a CUDA graph: the stage clocks run
// (last_step_times).
void Simulator::step() { advance(1, false); }

void Simulator::step(int n) {
  if (n < 1) throw std::invalid_argument("Simulator::step: n must be >= 1, got " + std::to_string(n));
  advance(n, true);
}

void Simulator::physics_step() {
  const cuda::DeviceScope on_device(device_);
  apply_scene_controls();
  const bool retry = retry_.depth > 0;
  if (retry) start_->copy_from(*state_);
  if (!capturing_) clock_->mark(0);
  collision_->collide(*state_, *contacts_);
  if (has_contact_scale_) rollout_->scale_contacts(nworld_, contacts_->view(), cs(contact_scale_));
  if (!capturing_) clock_->mark(1);
  solver_->step(*state_, *state_, *control_, *contacts_, scene_.dt);  // in place: views keep their pointer
  if (track_contacts_ && !skip_contact_obs_) update_contact_obs();
  if (retry) retry_step(scene_.dt);
  else rollout_->accumulate_status(nworld_, solver_->status_data(), kStatusFailed,
                                   {counters_.buffer().data() + kCountFailures, kNumCounters});
  time_ += scene_.dt;
  invalidate();
}

void Simulator::retry_step(double dt) {
  const cuda::DeviceScope on_device(device_);
  const std::size_t nw = static_cast<std::size_t>(nworld_);
  const std::vector<int> st = solver_->world_status();  // host read: retry needs the host
  std::vector<int> remaining(nw, 0);
  int nbad = 0;
  for (std::size_t w = 0; w < nw; ++w) nbad += remaining[w] = (st[w] & retry_.on) ? 1 : 0;
  last_failed_.clear();
  std::vector<int> cnt = counters_.buffer().to_host();
  auto count = [&](std::size_t w, int slot) { cnt[w * kNumCounters + static_cast<std::size_t>(slot)] += 1; };
  for (std::size_t w = 0; w < nw; ++w)
    if (!remaining[w] && (st[w] & kStatusFailed)) {
      count(w, kCountFailures);
      last_failed_.push_back(static_cast<int>(w));
    }
  if (nbad == 0) {
    counters_.buffer().upload(cnt);
    return;
  }
  if (!trial_) trial_ = std::make_unique<State>(scene_.model, nworld_, ctx_->backend());
  const std::vector<int> bad = remaining;
  std::vector<int> rescued(nw, 0), fail(nw, 0);
  for (int level = 1; level <= retry_.depth && nbad > 0; ++level) {
    const int nsub = 1 << level;
    const double sub_dt = dt / nsub;
    trial_->copy_from(*start_);
    active_.upload(remaining);
    solver_->set_active_worlds(active_.data());
    std::fill(fail.begin(), fail.end(), 0);
    for (int i = 0; i < nsub; ++i) {
      collision_->collide(*trial_, *contacts_);
      if (has_contact_scale_) rollout_->scale_contacts(nworld_, contacts_->view(), cs(contact_scale_));
      solver_->step(*trial_, *trial_, *control_, *contacts_, sub_dt);
      const std::vector<int> s = solver_->world_status();
      for (std::size_t w = 0; w < nw; ++w)
        if (remaining[w] && (s[w] & retry_.on)) fail[w] = 1;
    }
    solver_->set_active_worlds(nullptr);
    std::vector<int> ok(nw, 0);
    for (std::size_t w = 0; w < nw; ++w)
      if (remaining[w] && !fail[w]) {
        ok[w] = rescued[w] = 1;
        remaining[w] = 0;
        --nbad;
      }
    flags2_.upload(ok);  // rescued at this level: take the sub-stepped state
    rollout_->copy(nworld_, scene_.model.nq, state_->qpos.slab(), cs(trial_->qpos), flags2_.data());
    rollout_->copy(nworld_, scene_.model.nv, state_->qvel.slab(), cs(trial_->qvel), flags2_.data());
    if (scene_.model.na > 0)
      rollout_->copy(nworld_, scene_.model.na, state_->act.slab(), cs(trial_->act), flags2_.data());
  }
  for (std::size_t w = 0; w < nw; ++w) {
    if (!bad[w]) continue;
    count(w, kCountRetries);
    if (rescued[w]) count(w, kCountRescued);
    else {
      count(w, kCountFailures);
      last_failed_.push_back(static_cast<int>(w));
    }
  }
  counters_.buffer().upload(cnt);
  if (retry_.auto_reset && nbad > 0) {
    const double t = time_;
    reset(WorldSelection::mask(remaining));  // counters of those worlds restart at zero
    time_ = t;
  }
}

// n physics steps: plain launches, or (may_capture, CUDA, no host work between the steps) the
// replay of a CUDA graph captured once per n.
void Simulator::advance(int n, bool may_capture) {
  const cuda::DeviceScope on_device(device_);
  // Time-dependent scene schedules are host work before every step; constant ones are written
  // here, outside any capture (a pageable upload cannot be captured), and hold in the graph.
  const bool host_controls =
      scene_controls_ && !scene_.controls.empty() && scene_.model.nu > 0 && !scene_controls_constant_;
  if (!host_controls) apply_scene_controls();
  // A capture must allocate nothing (cudaMalloc during a capture invalidates it): the first steps
  // of a Simulator run as plain launches, which make every buffer a step allocates on first use.
  const bool graph = may_capture && ctx_->backend() == Backend::CUDA && cuda_graphs_ && retry_.depth == 0 &&
                     !host_controls && solver_->config().linear_solver == LinearSolver::Cholesky && stepped_;
  // The contact observations describe the last step: only the last of the n steps computes them.
  auto n_steps = [&] {
    for (int k = 0; k < n; ++k) {
      skip_contact_obs_ = k + 1 < n;
      physics_step();
    }
    skip_contact_obs_ = false;
  };
  if (!graph) {
    try {
      n_steps();
    } catch (...) {
      skip_contact_obs_ = false;
      throw;
    }
    stepped_ = true;
  } else {
    void* exec = nullptr;
    for (auto& g : graphs_)
      if (g.first == n) exec = g.second;
    void* stream = ctx_->cuda_stream();
    if (!exec) {  // capture the n-step launch sequence once (nothing runs during capture)
      const double t = time_;
      capturing_ = true;
      solver_->set_timing(false);
      // The fp64 retry inside the graph: its buffers now (no allocation during a capture), one
      // round per step and no host read (SolverSAP::set_fp64_retry_in_graph).
      solver_->prepare_fp64_retry(contacts_->capacity());
      solver_->set_fp64_retry_in_graph(true);
      cuda::graph_begin_capture(stream);
      try {
        n_steps();
      } catch (...) {
        skip_contact_obs_ = false;
        capturing_ = false;
        solver_->set_timing(true);
        solver_->set_fp64_retry_in_graph(false);
        cuda::graph_abort_capture(stream);
        throw;
      }
      exec = cuda::graph_end_capture(stream);
      capturing_ = false;
      solver_->set_timing(true);
      solver_->set_fp64_retry_in_graph(false);
      graphs_.emplace_back(n, exec);
      time_ = t;
    }
    cuda::graph_launch(exec, stream);
    time_ += n * scene_.dt;
    invalidate();
  }
  if (track_poses_) update_poses();
}

StepTimes Simulator::last_step_times() {
  const cuda::DeviceScope on_device(device_);
  StepTimes t;
  t.collide = clock_->elapsed_ms(0, 1);
  t.solver = solver_->last_stage_times();
  return t;
}

std::vector<int> Simulator::failed_worlds() const {
  const cuda::DeviceScope on_device(device_);
  if (retry_.depth > 0) return last_failed_;
  std::vector<int> out;
  const std::vector<int> st = solver_->world_status();
  for (int w = 0; w < nworld_; ++w)
    if (st[static_cast<std::size_t>(w)] & kStatusFailed) out.push_back(w);
  return out;
}

}  // namespace sap
