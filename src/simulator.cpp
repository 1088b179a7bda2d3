#include "sap/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "cuda_api.hpp"
#include "rollout_launch.hpp"
#include "sap/dynamics.hpp"
#include "solve_data.hpp"

namespace sap {

namespace {
template <class T>
Slab<const T> cs(const BatchedArray<T>& a) {
  return a.slab();
}
enum CounterSlot : int { kCountFailures = 0, kCountRetries, kCountRescued, kNumCounters };
}

ContactCapacityEstimate estimate_scene_contact_capacity(const Scene& scene, const SolverOptions* solver) {
  ContactCapacityEstimate e;
  e.pair_bound = estimate_contact_capacity(scene.model, 1024);
  if (e.pair_bound == 0) return e;
  SimulatorOptions po;
  po.nworld = 1;
  po.backend = Backend::CPU;
  po.threads = 1;
  po.max_rigid_contact = e.pair_bound;  // explicit: the probe itself does not probe
  if (solver) {
    po.override_solver = true;
    po.solver = *solver;
  }
  Simulator probe(scene, po);
  e.probe_steps = static_cast<int>(
      std::min<double>(kContactProbeMaxSteps, std::ceil(kContactProbeSeconds / scene.dt - 1e-9)));
  for (int k = 0; k < e.probe_steps; ++k) {
    probe.step();
    e.probe_max = std::max(e.probe_max, probe.contacts().counts_host()[0]);
  }
  e.capacity = std::min(e.pair_bound, std::max(kContactProbeFloor, kContactProbeFactor * e.probe_max));
  return e;
}

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
  contacts_ = std::make_unique<Contacts>(nworld_, max_rigid_contact_, b);
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

// ---------------------------------------------------------------- selection and resets

void Simulator::select(const WorldSelection& sel, Buffer<int>& flags) {
  const cuda::DeviceScope on_device(device_);
  const Backend b = ctx_->backend();
  if (sel.memory == Memory::Device && b != Backend::CUDA)
    throw std::invalid_argument("Simulator: a device world selection needs the CUDA backend");
  switch (sel.kind) {
    case WorldSelection::Kind::All: {
      std::vector<int> ones(static_cast<std::size_t>(nworld_), 1);
      flags.upload(ones);
      return;
    }
    case WorldSelection::Kind::Mask: {
      if (sel.count != nworld_)
        throw std::invalid_argument("Simulator: world mask has " + std::to_string(sel.count) + " entries, expected " +
                                    std::to_string(nworld_));
      const void* src = sel.data;
      if (sel.memory == Memory::Host && b == Backend::CUDA) {  // stage the host mask
        std::vector<int> m(static_cast<std::size_t>(nworld_));
        for (int w = 0; w < nworld_; ++w)
          m[static_cast<std::size_t>(w)] = sel.bytes ? static_cast<const std::uint8_t*>(sel.data)[w] != 0
                                                     : static_cast<const int*>(sel.data)[w] != 0;
        flags.upload(m);
        return;
      }
      rollout_->select_mask(nworld_, src, sel.bytes, flags.data());
      return;
    }
    case WorldSelection::Kind::Indices: {
      if (sel.count < 0) throw std::invalid_argument("Simulator: negative index count");
      flags.zero();
      const int* idx = static_cast<const int*>(sel.data);
      if (sel.memory == Memory::Host) {
        for (int i = 0; i < sel.count; ++i)
          if (idx[i] < 0 || idx[i] >= nworld_)
            throw std::out_of_range("Simulator: world index " + std::to_string(idx[i]) + " out of range [0, " +
                                    std::to_string(nworld_) + ")");
        if (b == Backend::CUDA) {
          if (staging_int_.size() < static_cast<std::size_t>(sel.count))
            staging_int_.allocate(b, static_cast<std::size_t>(std::max(sel.count, nworld_)));
          staging_int_.upload(idx, static_cast<std::size_t>(sel.count));
          idx = staging_int_.data();
        }
      }
      rollout_->select_index(sel.count, idx, nworld_, flags.data());
      return;
    }
  }
}

void Simulator::reset_counters(const int* flags) {
  const cuda::DeviceScope on_device(device_);
  rollout_->zero(nworld_, kNumCounters, counters_.slab(), flags);
}

void Simulator::reset() {
  const cuda::DeviceScope on_device(device_);
  reset(WorldSelection::all());
  time_ = 0;
}

void Simulator::reset(const std::vector<int>& mask) {
  const cuda::DeviceScope on_device(device_);
  if (static_cast<int>(mask.size()) != nworld_)
    throw std::invalid_argument("Simulator::reset: mask has " + std::to_string(mask.size()) + " entries, expected " +
                                std::to_string(nworld_));
  reset(WorldSelection::mask(mask));
  if (std::all_of(mask.begin(), mask.end(), [](int x) { return x != 0; })) time_ = 0;
}

void Simulator::reset(const WorldSelection& sel, const ResetOptions& o) {
  const cuda::DeviceScope on_device(device_);
  const Model& m = scene_.model;
  select(sel, flags_);
  const int* f = flags_.data();
  Slab<const double> q, v;
  switch (o.source) {
    case ResetOptions::Source::Initial:
      q = cs(init_qpos_);
      v = cs(init_qvel_);
      if (init_shared_) q.stride = v.stride = 0;  // one block for every world
      break;
    case ResetOptions::Source::Keyframe: {
      if (o.keyframe < 0 || o.keyframe >= static_cast<int>(keyframes_.size()))
        throw std::out_of_range("Simulator::reset: keyframe " + std::to_string(o.keyframe) + " does not exist (" +
                                std::to_string(keyframes_.size()) + " added)");
      const auto& k = keyframes_[static_cast<std::size_t>(o.keyframe)];
      q = {k.first.data(), 0};  // stride 0: one block for every world
      v = {k.second.data(), 0};
      break;
    }
    case ResetOptions::Source::States: {
      if (!o.qpos) throw std::invalid_argument("Simulator::reset: source States needs qpos");
      const std::size_t nq = static_cast<std::size_t>(m.nq) * static_cast<std::size_t>(nworld_);
      const std::size_t nv = static_cast<std::size_t>(m.nv) * static_cast<std::size_t>(nworld_);
      if (o.memory == Memory::Device && ctx_->backend() != Backend::CUDA)
        throw std::invalid_argument("Simulator::reset: device states need the CUDA backend");
      if (o.memory == Memory::Host && ctx_->backend() == Backend::CUDA) {
        if (staging_dbl_.size() < nq + nv) staging_dbl_.allocate(Backend::CUDA, nq + nv);
        staging_dbl_.upload(o.qpos, nq);
        if (o.qvel) staging_dbl_.upload(o.qvel, nv, nq);
        else detail::mem_zero(Backend::CUDA, staging_dbl_.data() + nq, nv * sizeof(double));
        q = {staging_dbl_.data(), m.nq};
        v = {staging_dbl_.data() + nq, m.nv};
      } else {
        q = {o.qpos, m.nq};
        if (o.qvel) v = {o.qvel, m.nv};
        else {
          if (staging_dbl_.size() < static_cast<std::size_t>(m.nv) || staging_dbl_.backend() != ctx_->backend())
            staging_dbl_.allocate(ctx_->backend(), static_cast<std::size_t>(std::max(m.nv, 1)));
          staging_dbl_.zero();
          v = {staging_dbl_.data(), 0};
        }
      }
      break;
    }
  }
  rollout_->copy(nworld_, m.nq, state_->qpos.slab(), q, f);
  rollout_->copy(nworld_, m.nv, state_->qvel.slab(), v, f);
  if (m.na > 0) rollout_->copy(nworld_, m.na, state_->act.slab(), Slab<const double>{zero_act_.buffer().data(), 0}, f);
  if (o.qpos_noise > 0 || o.qvel_noise > 0)
    rollout_->reset_noise(nworld_, model_.view(), state_->view(), f, o.qpos_noise,
                          o.qvel_noise, o.seed);
  reset_counters(f);
  invalidate();
  if (track_poses_) update_poses();  // the pose views show the reset state (as after step/restore)
}

int Simulator::add_keyframe(const std::vector<double>& qpos, const std::vector<double>& qvel) {
  const cuda::DeviceScope on_device(device_);
  const Model& m = scene_.model;
  if (static_cast<int>(qpos.size()) != m.nq || (!qvel.empty() && static_cast<int>(qvel.size()) != m.nv))
    throw std::invalid_argument("Simulator::add_keyframe: expected qpos of " + std::to_string(m.nq) +
                                " and qvel of " + std::to_string(m.nv) + " (or empty) values");
  Buffer<double> q(ctx_->backend(), static_cast<std::size_t>(m.nq)), v(ctx_->backend(), static_cast<std::size_t>(m.nv));
  q.upload(qpos);
  if (!qvel.empty()) v.upload(qvel);
  keyframes_.emplace_back(std::move(q), std::move(v));
  return static_cast<int>(keyframes_.size()) - 1;
}

// ---------------------------------------------------------------- controls

void Simulator::set_control(const std::vector<double>& ctrl) {
  const cuda::DeviceScope on_device(device_);
  const std::size_t n = static_cast<std::size_t>(nworld_) * static_cast<std::size_t>(scene_.model.nu);
  if (ctrl.size() != n)
    throw std::invalid_argument("Simulator::set_control: expected " + std::to_string(n) +
                                " values (nworld x nu), got " + std::to_string(ctrl.size()));
  scene_controls_ = false;
  control_->ctrl.buffer().upload(ctrl);
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

ArrayView Simulator::view_of(void* data, DType t, int ndim, long long d0, long long d1, long long d2) {
  ArrayView v;
  v.data = data;
  v.dtype = t;
  v.backend = ctx_->backend();
  v.ndim = ndim;
  v.shape = {d0, d1, d2};
  v.strides = {ndim == 3 ? d1 * d2 : d1, ndim == 3 ? d2 : 1, 1};
  if (ndim < 3) v.shape[2] = 0, v.strides[2] = 0;
  return v;
}

ArrayView Simulator::control_view() {
  const cuda::DeviceScope on_device(device_);
  scene_controls_ = false;
  return view_of(control_->ctrl.buffer().data(), DType::F64, 2, nworld_, scene_.model.nu, 0);
}
ArrayView Simulator::qpos_view() { return view_of(state_->qpos.buffer().data(), DType::F64, 2, nworld_, scene_.model.nq, 0); }
ArrayView Simulator::qvel_view() { return view_of(state_->qvel.buffer().data(), DType::F64, 2, nworld_, scene_.model.nv, 0); }
ArrayView Simulator::act_view() { return view_of(state_->act.buffer().data(), DType::F64, 2, nworld_, scene_.model.na, 0); }
std::vector<std::pair<std::string, long long>> Simulator::buffer_bytes_per_world() const {
  std::vector<std::pair<std::string, long long>> out;
  auto add = [&](const std::string& name, const auto& a) {
    using T = typename std::decay_t<decltype(a.buffer())>::value_type;
    if (a.per_world() > 0 && a.nworld() == nworld_)
      out.emplace_back(name, static_cast<long long>(a.per_world() * sizeof(T)));
  };
  auto add_state = [&](const std::string& name, const State* st) {
    if (!st) return;
    add(name + ".qpos", st->qpos);
    add(name + ".qvel", st->qvel);
    add(name + ".act", st->act);
  };
  add_state("state", state_.get());
  add("control.ctrl", control_->ctrl);
  add("control.ctrl_vel", control_->ctrl_vel);
  add("control.ctrl_ff", control_->ctrl_ff);
  add("control.qfrc_applied", control_->qfrc_applied);
  out.emplace_back("contacts.count", static_cast<long long>(sizeof(int)));
  out.emplace_back("contacts.dropped", static_cast<long long>(sizeof(int)));
#define SAP_X(name, type, dim) add("contacts." #name, contacts_->name);
  SAP_CONTACT_ARRAYS(SAP_X)
#undef SAP_X
  for (const auto& e : collision_->buffer_bytes_per_world()) out.push_back(e);
  for (const auto& e : solver_->buffer_bytes_per_world()) out.push_back(e);
  add("sim.init_qpos", init_qpos_);  // absent when every world starts alike (one block)
  add("sim.init_qvel", init_qvel_);
  for (const char* f : {"sim.flags", "sim.flags2", "sim.bad", "sim.active"})
    out.emplace_back(f, static_cast<long long>(sizeof(int)));
  add("sim.counters", counters_);
  add("sim.body_pos", body_pos_);
  add("sim.body_quat", body_quat_);
  add("sim.pose_scratch", pose_scratch_);
  add("sim.contact_force", contact_force_);
  add("sim.contact_flag", contact_flag_);
  add("sim.contact_scale", contact_scale_);
  add_state("sim.retry_start", start_.get());
  add_state("sim.retry_trial", trial_.get());
  out.erase(std::remove_if(out.begin(), out.end(), [](const auto& e) { return e.second == 0; }), out.end());
  return out;
}

void Simulator::ensure_pose_buffers() {
  if (!body_pos_.buffer().empty() || scene_.model.nbody == 0) return;
  const Model& m = scene_.model;
  const Backend b = ctx_->backend();
  body_pos_.allocate(b, nworld_, static_cast<std::size_t>(3 * m.nbody));
  body_quat_.allocate(b, nworld_, static_cast<std::size_t>(4 * m.nbody));
  pose_scratch_.allocate(b, nworld_, static_cast<std::size_t>(12 * m.nbody + 6 * m.njnt));
  poses_valid_ = false;
}

void Simulator::ensure_contact_buffers() {
  if (!contact_flag_.buffer().empty() || scene_.model.nbody == 0) return;
  const Model& m = scene_.model;
  const Backend b = ctx_->backend();
  contact_force_.allocate(b, nworld_, static_cast<std::size_t>(3 * m.nbody));
  contact_flag_.allocate(b, nworld_, static_cast<std::size_t>(m.nbody));
}

ArrayView Simulator::body_pos_view() {
  const cuda::DeviceScope on_device(device_);
  ensure_pose_buffers();
  track_poses_ = true;
  update_poses();
  return view_of(body_pos_.buffer().data(), DType::F64, 3, nworld_, scene_.model.nbody, 3);
}
ArrayView Simulator::body_quat_view() {
  const cuda::DeviceScope on_device(device_);
  ensure_pose_buffers();
  track_poses_ = true;
  update_poses();
  return view_of(body_quat_.buffer().data(), DType::F64, 3, nworld_, scene_.model.nbody, 4);
}
ArrayView Simulator::contact_force_view() {
  const cuda::DeviceScope on_device(device_);
  if (!track_contacts_) drop_graphs();
  ensure_contact_buffers();
  track_contacts_ = true;
  return view_of(contact_force_.buffer().data(), DType::F64, 3, nworld_, scene_.model.nbody, 3);
}
ArrayView Simulator::contact_flag_view() {
  const cuda::DeviceScope on_device(device_);
  if (!track_contacts_) drop_graphs();
  ensure_contact_buffers();
  track_contacts_ = true;
  return view_of(contact_flag_.buffer().data(), DType::I32, 2, nworld_, scene_.model.nbody, 0);
}

std::vector<double> Simulator::body_pos(int world) {
  const cuda::DeviceScope on_device(device_);
  update_poses();
  return body_pos_.world_to_host(world);
}
std::vector<double> Simulator::body_quat(int world) {
  const cuda::DeviceScope on_device(device_);
  update_poses();
  return body_quat_.world_to_host(world);
}

void Simulator::update_poses() {
  const cuda::DeviceScope on_device(device_);
  ensure_pose_buffers();
  if (poses_valid_) return;
  rollout_->body_poses(nworld_, model_.view(), cs(state_->qpos), body_pos_.slab(), body_quat_.slab(),
                       pose_scratch_.slab());
  poses_valid_ = true;
}

void Simulator::update_contact_obs() {
  const cuda::DeviceScope on_device(device_);
  ensure_contact_buffers();
  const SolveData& sd = solver_->solve_data();
  BodyContactKernel k{scene_.model.nbody, contacts_->view(), cs(sd.con_count), cs(sd.gamma),
                      cs(sd.con_frame), 1.0 / scene_.dt,        contact_force_.slab(), contact_flag_.slab()};
  rollout_->body_contacts(nworld_, k);
}

void Simulator::apply_scene_controls() {
  const cuda::DeviceScope on_device(device_);
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

// ---------------------------------------------------------------- stepping

void Simulator::step() {
  const cuda::DeviceScope on_device(device_);
  physics_step();
  if (track_poses_) update_poses();
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
    const double h = dt / nsub;
    trial_->copy_from(*start_);
    active_.upload(remaining);
    solver_->set_active_worlds(active_.data());
    std::fill(fail.begin(), fail.end(), 0);
    for (int i = 0; i < nsub; ++i) {
      collision_->collide(*trial_, *contacts_);
      if (has_contact_scale_) rollout_->scale_contacts(nworld_, contacts_->view(), cs(contact_scale_));
      solver_->step(*trial_, *trial_, *control_, *contacts_, h);
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

void Simulator::step(int n) {
  const cuda::DeviceScope on_device(device_);
  if (n < 1) throw std::invalid_argument("Simulator::step: n must be >= 1, got " + std::to_string(n));
  const bool host_controls = scene_controls_ && !scene_.controls.empty() && scene_.model.nu > 0;
  const bool graph = ctx_->backend() == Backend::CUDA && cuda_graphs_ && retry_.depth == 0 && !host_controls &&
                     solver_->config().linear_solver == LinearSolver::Cholesky;
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
        cuda::graph_destroy(cuda::graph_end_capture(stream));
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

// ---------------------------------------------------------------- snapshots

struct Snapshot::Impl {
  int nworld = 0;
  Backend backend = Backend::CPU;
  BatchedArray<double> qpos, qvel, act, ctrl, ctrl_vel, ctrl_ff, qfrc_applied;
  BatchedArray<int> counters;
  double time = 0;
};
Snapshot::Snapshot() = default;
Snapshot::~Snapshot() = default;
Snapshot::Snapshot(Snapshot&&) noexcept = default;
Snapshot& Snapshot::operator=(Snapshot&&) noexcept = default;
bool Snapshot::empty() const { return !impl_; }
double Snapshot::time() const { return impl_ ? impl_->time : 0; }

Snapshot Simulator::save(const WorldSelection& worlds) {
  const cuda::DeviceScope on_device(device_);
  Snapshot s;
  save(s, worlds);
  return s;
}

void Simulator::save(Snapshot& snap, const WorldSelection& worlds) {
  const cuda::DeviceScope on_device(device_);
  const Model& m = scene_.model;
  const Backend b = ctx_->backend();
  if (!snap.impl_) {
    snap.impl_ = std::make_unique<Snapshot::Impl>();
    auto& i = *snap.impl_;
    i.nworld = nworld_;
    i.backend = b;
    i.qpos.allocate(b, nworld_, static_cast<std::size_t>(m.nq));
    i.qvel.allocate(b, nworld_, static_cast<std::size_t>(m.nv));
    i.act.allocate(b, nworld_, static_cast<std::size_t>(m.na));
    i.ctrl.allocate(b, nworld_, static_cast<std::size_t>(m.nu));
    i.ctrl_vel.allocate(b, nworld_, static_cast<std::size_t>(m.nu));
    i.ctrl_ff.allocate(b, nworld_, static_cast<std::size_t>(m.nu));
    i.qfrc_applied.allocate(b, nworld_, static_cast<std::size_t>(m.nv));
    i.counters.allocate(b, nworld_, kNumCounters);
  } else if (snap.impl_->nworld != nworld_ || snap.impl_->backend != b || snap.impl_->qpos.per_world() != std::size_t(m.nq)) {
    throw std::invalid_argument("Simulator::save: the snapshot belongs to a simulator of another shape or backend");
  }
  select(worlds, flags_);
  auto& i = *snap.impl_;
  const int* f = flags_.data();
  rollout_->copy(nworld_, m.nq, i.qpos.slab(), cs(state_->qpos), f);
  rollout_->copy(nworld_, m.nv, i.qvel.slab(), cs(state_->qvel), f);
  if (m.na > 0) rollout_->copy(nworld_, m.na, i.act.slab(), cs(state_->act), f);
  rollout_->copy(nworld_, m.nu, i.ctrl.slab(), cs(control_->ctrl), f);
  rollout_->copy(nworld_, m.nu, i.ctrl_vel.slab(), cs(control_->ctrl_vel), f);
  rollout_->copy(nworld_, m.nu, i.ctrl_ff.slab(), cs(control_->ctrl_ff), f);
  rollout_->copy(nworld_, m.nv, i.qfrc_applied.slab(), cs(control_->qfrc_applied), f);
  rollout_->copy(nworld_, kNumCounters, i.counters.slab(), cs(counters_), f);
  i.time = time_;
}

void Simulator::restore(const Snapshot& snap, const WorldSelection& worlds) {
  const cuda::DeviceScope on_device(device_);
  const Model& m = scene_.model;
  if (!snap.impl_) throw std::invalid_argument("Simulator::restore: empty snapshot");
  auto& i = *snap.impl_;
  if (i.nworld != nworld_ || i.backend != ctx_->backend() || i.qpos.per_world() != std::size_t(m.nq))
    throw std::invalid_argument("Simulator::restore: the snapshot belongs to a simulator of another shape or backend");
  select(worlds, flags_);
  const int* f = flags_.data();
  rollout_->copy(nworld_, m.nq, state_->qpos.slab(), cs(i.qpos), f);
  rollout_->copy(nworld_, m.nv, state_->qvel.slab(), cs(i.qvel), f);
  if (m.na > 0) rollout_->copy(nworld_, m.na, state_->act.slab(), cs(i.act), f);
  rollout_->copy(nworld_, m.nu, control_->ctrl.slab(), cs(i.ctrl), f);
  rollout_->copy(nworld_, m.nu, control_->ctrl_vel.slab(), cs(i.ctrl_vel), f);
  rollout_->copy(nworld_, m.nu, control_->ctrl_ff.slab(), cs(i.ctrl_ff), f);
  rollout_->copy(nworld_, m.nv, control_->qfrc_applied.slab(), cs(i.qfrc_applied), f);
  rollout_->copy(nworld_, kNumCounters, counters_.slab(), cs(i.counters), f);
  if (worlds.kind == WorldSelection::Kind::All) time_ = i.time;
  invalidate();
  if (track_poses_) update_poses();
}

// ---------------------------------------------------------------- diagnostics and parameters

WorldCounters Simulator::counters() const {
  const cuda::DeviceScope on_device(device_);
  const std::vector<int> c = counters_.buffer().to_host();
  WorldCounters out;
  for (int w = 0; w < nworld_; ++w) {
    const int* p = c.data() + static_cast<std::size_t>(w) * kNumCounters;
    out.failures.push_back(p[kCountFailures]);
    out.retries.push_back(p[kCountRetries]);
    out.rescued.push_back(p[kCountRescued]);
  }
  return out;
}

std::vector<int> Simulator::failed_worlds_since_reset() const {
  const cuda::DeviceScope on_device(device_);
  const WorldCounters c = counters();
  std::vector<int> out;
  for (int w = 0; w < nworld_; ++w)
    if (c.failures[static_cast<std::size_t>(w)] > 0) out.push_back(w);
  return out;
}

std::vector<WorldEnergy> Simulator::energy() {
  const cuda::DeviceScope on_device(device_);
  const Model& m = scene_.model;
  const std::vector<double> q = state_->qpos.buffer().to_host(), v = state_->qvel.buffer().to_host();
  DynamicsEvaluator ev(m);
  std::vector<WorldEnergy> out(static_cast<std::size_t>(nworld_));
  Model mw;  // a world's model with its own parameters (mass, inertia, gravity)
  for (int w = 0; w < nworld_; ++w) {
    const double* qw = q.data() + static_cast<std::size_t>(w) * m.nq;
    const std::size_t ws = static_cast<std::size_t>(w);
    const bool own_mass = !wp_mass_.empty() && wp_mass_[ws] != 1.0;
    const bool own_gravity = !wp_gravity_.empty() && (wp_gravity_[3 * ws] != m.gravity[0] ||
                                                      wp_gravity_[3 * ws + 1] != m.gravity[1] ||
                                                      wp_gravity_[3 * ws + 2] != m.gravity[2]);
    DynamicsEvaluator* evp = &ev;
    std::unique_ptr<DynamicsEvaluator> own;
    if (own_mass || own_gravity) {
      mw = m;
      if (own_mass) {
        for (double& x : mw.body_mass) x *= wp_mass_[ws];
        for (double& x : mw.body_inertia) x *= wp_mass_[ws];
      }
      if (own_gravity)
        for (std::size_t k = 0; k < 3; ++k) mw.gravity[k] = wp_gravity_[3 * ws + k];
      own = std::make_unique<DynamicsEvaluator>(mw);
      evp = own.get();
    }
    DynamicsEvaluator& ev_w = *evp;
    ev_w.compute(qw, v.data() + static_cast<std::size_t>(w) * m.nv);
    double spring = 0;
    for (int j = 0; j < m.njnt; ++j) {
      const std::size_t js = static_cast<std::size_t>(j);
      const int t = m.jnt_type[js];
      if ((t == kJointHinge || t == kJointSlide) && m.jnt_stiffness[js] != 0) {
        const double d = qw[m.jnt_qposadr[js]] - m.jnt_springref[js];
        spring += 0.5 * m.jnt_stiffness[js] * d * d;
      }
    }
    WorldEnergy& e = out[static_cast<std::size_t>(w)];
    e.kinetic = ev_w.kinetic_energy();
    e.spring = spring;
    e.gravity = ev_w.potential_energy() - spring;
  }
  return out;
}

const std::vector<double>* Simulator::world_param_host(WorldParam kind) const {
  const cuda::DeviceScope on_device(device_);
  switch (kind) {
    case WorldParam::MassScale: return &wp_mass_;
    case WorldParam::ActuatorGainScale: return &wp_gain_;
    case WorldParam::Gravity: return &wp_gravity_;
    default: return nullptr;
  }
}

std::vector<double> Simulator::world_params(WorldParam kind) const {
  const cuda::DeviceScope on_device(device_);
  if (kind == WorldParam::ContactScale) {
    if (!has_contact_scale_) return {};
    return contact_scale_.buffer().to_host();
  }
  const std::vector<double>* v = world_param_host(kind);
  if (!v) throw std::invalid_argument("Simulator::world_params: unknown parameter kind");
  return *v;
}

void Simulator::set_world_params(WorldParam kind, const double* values, Memory memory) {
  const cuda::DeviceScope on_device(device_);
  const Backend b = ctx_->backend();
  if (memory == Memory::Device && b != Backend::CUDA)
    throw std::invalid_argument("Simulator::set_world_params: device arrays need the CUDA backend");
  if (!values) throw std::invalid_argument("Simulator::set_world_params: null pointer");
  if (kind == WorldParam::ContactScale) {
    if (!has_contact_scale_) contact_scale_.allocate(b, nworld_, 3);  // per-world memory only once used
    if (memory == Memory::Host) contact_scale_.buffer().upload(values, contact_scale_.buffer().size());
    else detail::mem_copy(contact_scale_.buffer().data(), Backend::CUDA, values, Backend::CUDA,
                          contact_scale_.buffer().size() * sizeof(double));
    has_contact_scale_ = true;
    drop_graphs();
    return;
  }
  std::vector<double>* dst = const_cast<std::vector<double>*>(world_param_host(kind));
  if (!dst) throw std::invalid_argument("Simulator::set_world_params: unknown parameter kind");
  const std::size_t n = static_cast<std::size_t>(nworld_) * static_cast<std::size_t>(world_param_count(kind));
  std::vector<double> v(n);
  if (memory == Memory::Host) std::copy(values, values + n, v.begin());
  else detail::mem_copy(v.data(), Backend::CPU, values, Backend::CUDA, n * sizeof(double));
  for (std::size_t i = 0; i < n; ++i) {
    const double x = v[i];
    const bool ok = kind == WorldParam::MassScale          ? std::isfinite(x) && x > 0
                    : kind == WorldParam::ActuatorGainScale ? std::isfinite(x) && x >= 0
                                                            : std::isfinite(x);
    if (!ok)
      throw std::invalid_argument("Simulator::set_world_params: value " + std::to_string(x) + " of world " +
                                  std::to_string(i / static_cast<std::size_t>(world_param_count(kind))) +
                                  (kind == WorldParam::MassScale ? " (mass scale must be finite and > 0)"
                                   : kind == WorldParam::ActuatorGainScale ? " (gain factors must be finite and >= 0)"
                                                                           : " (gravity must be finite)"));
  }
  *dst = std::move(v);
  rebuild_world_model();
}

void Simulator::clear_world_params() {
  const cuda::DeviceScope on_device(device_);
  has_contact_scale_ = false;
  contact_scale_ = BatchedArray<double>();
  wp_mass_.clear();
  wp_gain_.clear();
  wp_gravity_.clear();
  rebuild_world_model();
}

// Slots for the worlds whose model parameters differ from the model's; the solver's kinematics,
// free motion and constraint setup read them (SolverLaunch::world_model).
void Simulator::rebuild_world_model() {
  const cuda::DeviceScope on_device(device_);
  const Model& m = scene_.model;
  const std::size_t nb = static_cast<std::size_t>(m.nbody), nu = static_cast<std::size_t>(m.nu);
  std::vector<int> slot(static_cast<std::size_t>(nworld_), -1);
  int nslot = 0;
  for (std::size_t w = 0; w < slot.size(); ++w) {
    bool custom = !wp_mass_.empty() && wp_mass_[w] != 1.0;
    for (std::size_t k = 0; k < 3; ++k) {
      custom = custom || (!wp_gain_.empty() && wp_gain_[3 * w + k] != 1.0);
      custom = custom || (!wp_gravity_.empty() && wp_gravity_[3 * w + k] != m.gravity[k]);
    }
    if (custom) slot[w] = nslot++;
  }
  wp_nslot_ = nslot;
  drop_graphs();
  if (nslot == 0) {  // every world reads the model: no per-world memory, the plain kernels
    wp_slot_ = Buffer<int>();
    wp_data_ = Buffer<double>();
    solver_->set_world_model(WorldModelView{});
    return;
  }
  const std::size_t ns = static_cast<std::size_t>(nslot);
  const std::size_t o_mass = 0, o_inertia = o_mass + ns * nb, o_kp = o_inertia + ns * 6 * nb, o_kd = o_kp + ns * nu,
                    o_gear = o_kd + ns * nu, o_grav = o_gear + ns * nu, total = o_grav + ns * 3;
  std::vector<double> data(total);
  for (std::size_t w = 0; w < slot.size(); ++w) {
    if (slot[w] < 0) continue;
    const std::size_t s = static_cast<std::size_t>(slot[w]);
    const double ms = wp_mass_.empty() ? 1.0 : wp_mass_[w];
    for (std::size_t i = 0; i < nb; ++i) data[o_mass + s * nb + i] = ms * m.body_mass[i];
    for (std::size_t i = 0; i < 6 * nb; ++i) data[o_inertia + s * 6 * nb + i] = ms * m.body_inertia[i];
    const double g0 = wp_gain_.empty() ? 1.0 : wp_gain_[3 * w], g1 = wp_gain_.empty() ? 1.0 : wp_gain_[3 * w + 1],
                 g2 = wp_gain_.empty() ? 1.0 : wp_gain_[3 * w + 2];
    for (std::size_t u = 0; u < nu; ++u) {
      data[o_kp + s * nu + u] = g0 * m.actuator_kp[u];
      data[o_kd + s * nu + u] = g1 * m.actuator_kd[u];
      data[o_gear + s * nu + u] = g2 * m.actuator_gear[u];
    }
    for (std::size_t k = 0; k < 3; ++k) data[o_grav + 3 * s + k] = wp_gravity_.empty() ? m.gravity[k] : wp_gravity_[3 * w + k];
  }
  const Backend b = ctx_->backend();
  wp_slot_ = Buffer<int>(b, slot.size());
  wp_slot_.upload(slot);
  wp_data_ = Buffer<double>(b, total);
  wp_data_.upload(data);
  const double* base = wp_data_.data();
  WorldModelView wm;
  wm.slot = wp_slot_.data();
  wm.mass = base + o_mass;
  wm.inertia = base + o_inertia;
  wm.kp = base + o_kp;
  wm.kd = base + o_kd;
  wm.gear = base + o_gear;
  wm.gravity = base + o_grav;
  solver_->set_world_model(wm);
}

}  // namespace sap
