// CPU launcher for the two launch shapes every stage uses:
//   parallel_for(exec, nworld, n, f)                      -> f(world, i)
//   for_each_world_team(exec, nworld, shmem_bytes, f)     -> f(world, team)
// On the CPU a team has one member; team-cooperative bodies collapse to serial loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sap/backend/thread_pool.hpp"

namespace sap {

class CpuTeam {
 public:
  static constexpr bool kOneLane = true;  // one_lane_team<CpuTeam>() (sap/backend/hd.hpp)
  explicit CpuTeam(char* shmem = nullptr) : shmem_(shmem) {}
  int rank() const { return 0; }
  int size() const { return 1; }
  void sync() const {}
  char* shared_mem() const { return shmem_; }
  template <class S>
  S reduce_sum(S x) const {
    return x;
  }
  template <class S>
  S reduce_max(S x) const {
    return x;
  }
  // One lane: the source is this lane, a shuffle's source lane is outside the (one-lane) warp.
  template <class T>
  T broadcast(T x, int /*src*/) const {
    return x;
  }
  template <class T>
  T shfl_down(T x, int /*off*/) const {
    return x;
  }
  template <class T>
  T shfl_xor(T x, int /*mask*/) const {
    return x;
  }

 private:
  char* shmem_;
};

struct CpuExec {
  static constexpr bool kOneLane = true;  // its teams are CpuTeams: one_lane_exec<CpuExec>() (sap/backend/hd.hpp)
  ThreadPool* pool = nullptr;
  // Per-slot scratch standing in for CUDA shared memory; grown outside the step loop by
  // reserve_shared(), which the solver calls at construction with its largest request.
  std::vector<std::vector<char>>* scratch = nullptr;

  int chunks(int nworld) const {
    const int threads = pool ? pool->size() : 1;
    // A few chunks per thread balances uneven worlds (some converge sooner).
    const int c = threads * 4;
    return nworld < c ? nworld : c;
  }
};

inline void reserve_shared(CpuExec& exec, std::size_t bytes) {
  const int slots = exec.pool ? exec.pool->size() : 1;
  exec.scratch->resize(static_cast<std::size_t>(slots));
  for (auto& s : *exec.scratch)
    if (s.size() < bytes) s.assign(bytes, 0);
}

template <class F>
void parallel_for(CpuExec& exec, int nworld, int n, const F& f) {
  if (nworld <= 0 || n <= 0) return;
  const int nchunk = exec.chunks(nworld);
  auto body = [&](int c, int /*slot*/) {
    const int w0 = static_cast<int>(static_cast<long long>(nworld) * c / nchunk);
    const int w1 = static_cast<int>(static_cast<long long>(nworld) * (c + 1) / nchunk);
    for (int w = w0; w < w1; ++w)
      for (int i = 0; i < n; ++i) f(w, i);
  };
  if (exec.pool && nchunk > 1) exec.pool->run(nchunk, body);
  else
    for (int c = 0; c < nchunk; ++c) body(c, 0);
}

template <class F>
void for_each_world_team(CpuExec& exec, int nworld, std::size_t shmem_bytes, const F& f) {
  if (nworld <= 0) return;
  const int nchunk = exec.chunks(nworld);
  if (exec.scratch->empty() || (*exec.scratch)[0].size() < shmem_bytes) reserve_shared(exec, shmem_bytes);
  auto body = [&](int c, int slot) {
    CpuTeam team((*exec.scratch)[static_cast<std::size_t>(slot)].data());
    const int w0 = static_cast<int>(static_cast<long long>(nworld) * c / nchunk);
    const int w1 = static_cast<int>(static_cast<long long>(nworld) * (c + 1) / nchunk);
    for (int w = w0; w < w1; ++w) f(w, team);
  };
  if (exec.pool && nchunk > 1) exec.pool->run(nchunk, body);
  else
    for (int c = 0; c < nchunk; ++c) body(c, 0);
}

// for_each_world_team for kernels that run several worlds side by side on one thread:
// f(w0, g, teams, extra) for groups of g <= G consecutive worlds (every group full but the
// last), teams[0 .. g) with shmem_bytes of scratch each and `extra` with extra_bytes shared by
// the group. The chunks on the thread pool are runs of whole groups (exec.chunks of the groups:
// a few per thread), so no chunk boundary splits a group. No result depends on which thread or
// group a world runs in: the worlds share no data.
template <int G, class F>
void for_each_world_group(CpuExec& exec, int nworld, std::size_t shmem_bytes, std::size_t extra_bytes, const F& f) {
  if (nworld <= 0) return;
  const std::size_t stride = (shmem_bytes + 63) / 64 * 64;  // each team's scratch 64-byte aligned
  const std::size_t bytes = 64 + G * stride + extra_bytes;  // 64: room to align the start
  const int ngroup = (nworld + G - 1) / G;
  const int nchunk = exec.chunks(ngroup);
  if (exec.scratch->empty() || (*exec.scratch)[0].size() < bytes) reserve_shared(exec, bytes);
  auto body = [&](int c, int slot) {
    char* base = (*exec.scratch)[static_cast<std::size_t>(slot)].data();
    base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64;  // vector scratch: 64-byte aligned
    CpuTeam teams[G];
    for (int k = 0; k < G; ++k) teams[k] = CpuTeam(base + k * stride);
    const int g0 = static_cast<int>(static_cast<long long>(ngroup) * c / nchunk);
    const int g1 = static_cast<int>(static_cast<long long>(ngroup) * (c + 1) / nchunk);
    for (int w = G * g0; w < G * g1 && w < nworld; w += G) f(w, nworld - w < G ? nworld - w : G, teams, base + G * stride);
  };
  if (exec.pool && nchunk > 1) exec.pool->run(nchunk, body);
  else
    for (int c = 0; c < nchunk; ++c) body(c, 0);
}

}  // namespace sap
