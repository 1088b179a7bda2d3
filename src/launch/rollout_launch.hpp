// Launches of the rollout kernels (kernels/rollout.hpp), one virtual per kernel; implemented
// once as a template on the executor (rollout_launch_impl.hpp) and instantiated for the CPU
// (rollout_cpu.cpp) and CUDA (cuda/rollout_cuda.cu). Every call is one launch, no sync.
#pragma once

#include <memory>

#include "kernels/fp64_retry.hpp"
#include "kernels/rollout.hpp"
#include "sap/context.hpp"

namespace sap {

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

std::unique_ptr<RolloutLaunch> make_rollout_launch_cpu(Context& ctx);
std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx);

}  // namespace sap
