// Emulated-team launcher: runs the CUDA execution model on the CPU so that the code only a GPU
// takes (lane-strided loops, sync() placement, team reductions, the multi-member branches of
// the Cholesky) is exercised and checked on a machine without a GPU.
//   parallel_for(exec, nworld, n, f)              -> f(world, i), indices spread over `lanes`
//                                                    threads (one CUDA thread each), no barrier
//   for_each_world_team(exec, nworld, shmem, f)   -> f(world, team), a team of `lanes` real threads
//                                                    per world (one CUDA thread block), `teams`
//                                                    worlds in flight at once (blocks of a grid)
// sync() is a real barrier with the happens-before edges of __syncthreads (a team of more than
// 32 lanes) or __syncwarp (a team of at most 32 lanes: one warp) and no others, so
// ThreadSanitizer reports a lane that reads what another lane wrote without a sync() between.
// The two kinds are counted separately (block barriers, warp syncs), and so are the warp
// collectives (reduce_*, broadcast, shfl_down, shfl_xor: one count per call), whose data
// exchange runs through per-team slots between real barriers, so ThreadSanitizer sees it.
// A sync() that not every lane of the team reaches (divergent barrier) is detected when the
// other lanes finish the world and raised as an error naming the kernel; a barrier that is
// not completed within barrier_timeout_s (a lane stuck in a loop) aborts the process with the
// kernel's name instead of hanging. reduce_* combine in the order of CudaTeam::reduce
// (shuffle-down tree within each warp of 32, then warp partials in order), so every lane gets
// the same bits as on the GPU.
#pragma once

#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace sap {

// Statistics of emulated launches, per kernel (functor type).
struct EmuKernelStats {
  std::string kernel;      // demangled functor type, e.g. "sap::SapSolveKernel<double>"
  long long launches = 0;  // launches of this kernel
  long long worlds = 0;    // team-worlds executed (team launches only)
  long long barriers = 0;  // block-level barriers completed, summed over worlds
  long long max_barriers_per_world = 0;
  long long warp_syncs = 0;   // warp-level syncs (sync() of a team of <= 32 lanes), summed over worlds
  long long max_warp_syncs_per_world = 0;
  long long collectives = 0;  // warp collectives (reduce_*, broadcast, shfl_*), summed over worlds
  bool team = false;  // launched as a team (warp or block per world) rather than a flat grid
};

// Statistics shared by the emulated launches of one Context (thread-safe).
class EmuRuntime {
 public:
  void record(const EmuKernelStats& launch);  // adds one launch (launches is ignored: +1)
  std::vector<EmuKernelStats> stats() const;  // sorted by kernel name
  void reset();

 private:
  mutable std::mutex mutex_;
  std::vector<EmuKernelStats> stats_;
};

struct EmuExec {
  int lanes = 32;                    // threads per team (CUDA: blockDim.x)
  int teams = 2;                     // worlds in flight at once
  double barrier_timeout_s = 300.0;  // a barrier not completed by then aborts (stuck lane)
  EmuRuntime* runtime = nullptr;     // optional statistics sink
};

namespace emu {

// What a team-wide rendezvous of the emulation stands for (what it is counted as).
enum class SyncKind {
  kBlock,       // __syncthreads (sync() of a team of more than 32 lanes, the barriers of a block reduction)
  kWarp,        // __syncwarp (sync() of a team of at most 32 lanes)
  kCollective,  // the start of a warp collective (shuffle, broadcast, reduction): counted once per call
  kInternal,    // the rest of a collective's exchange: not counted (one collective, several rendezvous)
};

// Thrown inside lanes to unwind them once the team has failed; never escapes a launch.
struct Abort {};

std::string demangle(const char* mangled);

// Barrier and per-team memory of one team (one world at a time). Not a template: defined in
// src/launch/emu_team.cpp.
class TeamState {
 public:
  TeamState(int lanes, std::size_t shmem_bytes, const std::string& kernel, double timeout_s);
  ~TeamState();
  TeamState(const TeamState&) = delete;
  TeamState& operator=(const TeamState&) = delete;

  // Barrier of `lane` (working on `world`), counted as `kind`; throws Abort when the team
  // failed (divergence, an error in another lane).
  void sync(int lane, int world, SyncKind kind);
  // End of the current world for `lane`: every lane must arrive here with no sync() pending.
  void end_world(int lane, int world);
  // Records a failure (first one wins) and releases every waiting lane.
  void fail(const std::string& why);
  bool failed() const;
  std::string error() const;

  char* shared_mem() { return shmem_.get(); }
  unsigned char* reduce_slots() { return slots_.get(); }  // lanes x 16 bytes, 16-aligned
  long long barriers_total() const { return barriers_total_; }
  long long barriers_max_world() const { return barriers_max_world_; }
  long long warp_syncs_total() const { return warp_syncs_total_; }
  long long warp_syncs_max_world() const { return warp_syncs_max_world_; }
  long long collectives_total() const { return collectives_total_; }
  long long worlds() const { return worlds_; }

 private:
  void arrive(int lane, int world, int at, SyncKind kind);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<char[]> shmem_;
  std::unique_ptr<unsigned char[]> slots_;
  long long barriers_total_ = 0, barriers_max_world_ = 0, worlds_ = 0;
  long long warp_syncs_total_ = 0, warp_syncs_max_world_ = 0, collectives_total_ = 0;
};

// Runs body(lane) on `nthread` new threads and joins them; rethrows the first exception.
void run_threads(int nthread, const std::function<void(int)>& body);

// Adds the statistics of one launch to the runtime (no-op when runtime is null).
inline void record_launch(EmuRuntime* runtime, const EmuKernelStats& launch) {
  if (runtime) runtime->record(launch);
}

}  // namespace emu

// A team member (lane) acting for one world. Same interface as CpuTeam and CudaTeam.
// A team of at most 32 lanes is one warp: its sync() is a warp sync and its reductions and
// broadcasts are pure shuffles (CudaTeam: __syncwarp, __shfl_*_sync, no shared memory, no block
// barrier). A larger team syncs with block barriers and reduces / broadcasts through shared
// memory as CudaTeam does. shfl_down / shfl_xor are warp-scoped in both: lane l of a warp of
// width w reads lane l + off (l ^ mask) of the same warp when that is < w, else keeps its value.
class EmuTeam {
 public:
  EmuTeam(emu::TeamState* state, int rank, int size, int world)
      : state_(state), rank_(rank), size_(size), world_(world) {}
  int rank() const { return rank_; }
  int size() const { return size_; }
  void sync() const { state_->sync(rank_, world_, one_warp() ? emu::SyncKind::kWarp : emu::SyncKind::kBlock); }
  char* shared_mem() const { return state_->shared_mem(); }
  template <class S>
  S reduce_sum(S x) const {
    return reduce(x, [](S a, S b) { return a + b; });
  }
  template <class S>
  S reduce_max(S x) const {
    return reduce(x, [](S a, S b) { return a < b ? b : a; });
  }
  // Every lane gets lane src's x (all lanes must call it, with the same src).
  template <class T>
  T broadcast(T x, int src) const {
    if (one_warp()) return exchange(x, [&](int) { return src; });  // __shfl_sync(full, x, src)
    // Block: a shared slot between two block barriers (CudaTeam::broadcast).
    static_assert(sizeof(T) <= 16, "EmuTeam::broadcast: one slot holds 16 bytes");
    state_->sync(rank_, world_, emu::SyncKind::kCollective);
    state_->sync(rank_, world_, emu::SyncKind::kBlock);  // a previous broadcast's readers are done
    unsigned char* slots = state_->reduce_slots();
    if (rank_ == src) std::memcpy(slots, &x, sizeof(T));
    state_->sync(rank_, world_, emu::SyncKind::kBlock);
    T r;
    std::memcpy(&r, slots, sizeof(T));
    return r;
  }
  // __shfl_down_sync within each warp of the team.
  template <class T>
  T shfl_down(T x, int off) const {
    return exchange(x, [&](int l) { return l + off; });
  }
  // __shfl_xor_sync within each warp of the team.
  template <class T>
  T shfl_xor(T x, int mask) const {
    return exchange(x, [&](int l) { return l ^ mask; });
  }

 private:
  bool one_warp() const { return size_ <= 32; }

  // One warp collective: every lane publishes x, then reads the lane of its own warp that
  // src(lane in warp) names (its own x when that lane is outside the warp). Two rendezvous:
  // the first also orders the previous collective's reads before these writes.
  template <class T, class Src>
  T exchange(T x, Src src) const {
    static_assert(sizeof(T) <= 16, "EmuTeam: one exchange slot holds 16 bytes");
    unsigned char* slots = state_->reduce_slots();
    state_->sync(rank_, world_, emu::SyncKind::kCollective);
    std::memcpy(slots + 16 * rank_, &x, sizeof(T));
    state_->sync(rank_, world_, emu::SyncKind::kInternal);
    const int base = rank_ / 32 * 32, width = size_ - base < 32 ? size_ - base : 32;
    const int s = src(rank_ - base);
    if (s < 0 || s >= width) return x;
    T r;
    std::memcpy(&r, slots + 16 * (base + s), sizeof(T));
    return r;
  }

  // CudaTeam::reduce's order: a shuffle-down tree within each warp, then (a team of more than
  // one warp) the warp partials left to right through shared memory between its three block
  // barriers. The exchange runs through per-team slots.
  template <class S, class Op>
  S reduce(S x, Op op) const {
    static_assert(sizeof(S) <= 16, "EmuTeam::reduce: one slot holds 16 bytes");
    state_->sync(rank_, world_, emu::SyncKind::kCollective);  // the slots may still be read by a previous collective
    if (!one_warp()) state_->sync(rank_, world_, emu::SyncKind::kBlock);  // CudaTeam: __syncthreads before the slots
    unsigned char* slots = state_->reduce_slots();
    std::memcpy(slots + 16 * rank_, &x, sizeof(S));
    state_->sync(rank_, world_, one_warp() ? emu::SyncKind::kInternal : emu::SyncKind::kBlock);
    S r{};
    const int nwarp = (size_ + 31) / 32;
    for (int wp = 0; wp < nwarp; ++wp) {
      const int width = size_ - 32 * wp < 32 ? size_ - 32 * wp : 32;
      S v[32];
      for (int l = 0; l < width; ++l) std::memcpy(&v[l], slots + 16 * (32 * wp + l), sizeof(S));
      // __shfl_down_sync tree: at each offset, lane l combines with lane l + off (all lanes read
      // before any writes; ascending l reads an entry not yet updated at this offset).
      for (int off = 16; off > 0; off >>= 1)
        for (int l = 0; l + off < width; ++l) v[l] = op(v[l], v[l + off]);
      r = wp == 0 ? v[0] : op(r, v[0]);
    }
    if (!one_warp()) state_->sync(rank_, world_, emu::SyncKind::kBlock);  // CudaTeam's trailing __syncthreads
    return r;
  }

  emu::TeamState* state_;
  int rank_, size_, world_;
};

template <class F>
void parallel_for(EmuExec& exec, int nworld, int n, const F& f) {
  const long long total = static_cast<long long>(nworld) * n;
  if (total <= 0) return;
  const int nthread = static_cast<int>(total < exec.lanes ? total : exec.lanes);
  emu::run_threads(nthread, [&](int lane) {
    for (long long idx = lane; idx < total; idx += nthread) f(static_cast<int>(idx / n), static_cast<int>(idx % n));
  });
  EmuKernelStats launch;
  launch.kernel = emu::demangle(typeid(F).name());
  emu::record_launch(exec.runtime, launch);
}

template <class F>
void for_each_world_team(EmuExec& exec, int nworld, std::size_t shmem_bytes, const F& f) {
  if (nworld <= 0) return;
  const std::string kernel = emu::demangle(typeid(F).name());
  const int teams = nworld < exec.teams ? nworld : exec.teams;
  std::vector<std::unique_ptr<emu::TeamState>> states;
  for (int t = 0; t < teams; ++t)
    states.push_back(std::make_unique<emu::TeamState>(exec.lanes, shmem_bytes, kernel, exec.barrier_timeout_s));
  const int lanes = exec.lanes;
  // Thread t * lanes + l is lane l of team t; team t takes worlds t, t + teams, ...
  emu::run_threads(teams * lanes, [&](int thread) {
    const int t = thread / lanes, lane = thread % lanes;
    emu::TeamState& st = *states[static_cast<std::size_t>(t)];
    for (int w = t; w < nworld; w += teams) {
      EmuTeam team(&st, lane, lanes, w);
      try {
        f(w, team);
        st.end_world(lane, w);
      } catch (const emu::Abort&) {
        return;
      } catch (const std::exception& e) {
        st.fail("world " + std::to_string(w) + ", lane " + std::to_string(lane) + ": " + e.what());
        return;
      }
    }
  });
  EmuKernelStats launch;
  launch.kernel = kernel;
  launch.team = true;
  for (const auto& st : states) {
    if (st->failed()) throw std::runtime_error(st->error());
    launch.worlds += st->worlds();
    launch.barriers += st->barriers_total();
    launch.warp_syncs += st->warp_syncs_total();
    launch.collectives += st->collectives_total();
    if (st->barriers_max_world() > launch.max_barriers_per_world) launch.max_barriers_per_world = st->barriers_max_world();
    if (st->warp_syncs_max_world() > launch.max_warp_syncs_per_world)
      launch.max_warp_syncs_per_world = st->warp_syncs_max_world();
  }
  emu::record_launch(exec.runtime, launch);
}

}  // namespace sap
