// RolloutLaunch for one executor type (included by rollout_cpu.cpp and cuda/rollout_cuda.cu).
#pragma once

#include "launch/rollout_launch.hpp"

namespace sap {

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
