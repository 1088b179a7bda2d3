// Simulator, its worlds: selections, resets (initial state, keyframes, given states, noise),
// snapshots, per-world counters and energy, per-world model parameters.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "launch/cuda_api.hpp"
#include "launch/launches.hpp"
#include "model/solve_data.hpp"
#include "runtime/simulator_detail.hpp"
#include "sap/dynamics.hpp"
#include "sap/simulator.hpp"

namespace sap {

using namespace simulator_detail;

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
  scene_controls_written_ = false;  // the next step writes constant scene schedules again
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
