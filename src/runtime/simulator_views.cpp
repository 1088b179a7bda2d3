// Simulator, its observations: array views of the state, the controls, the body poses and the
// contact sums (computed on demand), host copies, and the bytes per world of every array.
#include <algorithm>
#include <stdexcept>

#include "launch/cuda_api.hpp"
#include "launch/launches.hpp"
#include "model/solve_data.hpp"
#include "runtime/simulator_detail.hpp"
#include "sap/simulator.hpp"

namespace sap {

using namespace simulator_detail;

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
  SAP_CONTACT_ANGULAR_ARRAYS(SAP_X)  // absent (0 bytes) without torsional/rolling friction
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

}  // namespace sap
