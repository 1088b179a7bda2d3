// Emulated-team launcher: runs the CUDA execution model on the CPU so that the code only a GPU
// takes (lane-strided loops, sync() placement, team reductions, the multi-member branches of
// the Cholesky) is exercised and checked on a machine without a GPU.
//   parallel_for(exec, nworld, n, f)              -> f(world, i), indices spread over `lanes`
//                                                    threads (one CUDA thread each), no barrier
//   for_each_world_team(exec, nworld, shmem, f)   -> f(world, team), a team of `lanes` real threads
//                                                    per world (one CUDA thread block), `teams`
//                                                    worlds in flight at once (blocks of a grid)
// sync() is a real barrier with the happens-before edges of __syncthreads and no others, so
// ThreadSanitizer reports a lane that reads what another lane wrote without a sync() between.
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
  bool team = false;  // launched as a team (block per world) rather than a flat grid
};

// Statistics shared by the emulated launches of one Context (thread-safe).
class EmuRuntime {
 public:
  void record(const std::string& kernel, bool team, long long worlds, long long barriers,
              long long max_barriers_per_world);
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

// Thrown inside lanes to unwind them once the team has failed; never escapes a launch.
struct Abort {};

std::string demangle(const char* mangled);

// Barrier and per-team memory of one team (one world at a time). Not a template: defined in
// src/emu_team.cpp.
class TeamState {
 public:
  TeamState(int lanes, std::size_t shmem_bytes, const std::string& kernel, double timeout_s);
  ~TeamState();
  TeamState(const TeamState&) = delete;
  TeamState& operator=(const TeamState&) = delete;

  // Block barrier of `lane` (working on `world`); throws Abort when the team failed
  // (divergence, an error in another lane).
  void sync(int lane, int world);
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
  long long worlds() const { return worlds_; }

 private:
  void arrive(int lane, int world, int at);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<char[]> shmem_;
  std::unique_ptr<unsigned char[]> slots_;
  long long barriers_total_ = 0, barriers_max_world_ = 0, worlds_ = 0;
};

// Runs body(lane) on `nthread` new threads and joins them; rethrows the first exception.
void run_threads(int nthread, const std::function<void(int)>& body);

// Adds the statistics of one launch to the runtime (no-op when runtime is null).
inline void record_launch(EmuRuntime* runtime, const std::string& kernel, bool team, long long worlds,
                          long long barriers, long long max_barriers_per_world) {
  if (runtime) runtime->record(kernel, team, worlds, barriers, max_barriers_per_world);
}

}  // namespace emu

// A team member (lane) acting for one world. Same interface as CpuTeam and CudaTeam.
class EmuTeam {
 public:
  EmuTeam(emu::TeamState* state, int rank, int size, int world)
      : state_(state), rank_(rank), size_(size), world_(world) {}
  int rank() const { return rank_; }
  int size() const { return size_; }
  void sync() const { state_->sync(rank_, world_); }
  char* shared_mem() const { return state_->shared_mem(); }
  template <class S>
  S reduce_sum(S x) const {
    return reduce(x, [](S a, S b) { return a + b; });
  }
  template <class S>
  S reduce_max(S x) const {
    return reduce(x, [](S a, S b) { return a < b ? b : a; });
  }

 private:
  // The three barriers of CudaTeam::reduce, the shuffle exchange through per-team slots.
  template <class S, class Op>
  S reduce(S x, Op op) const {
    static_assert(sizeof(S) <= 16, "EmuTeam::reduce: one slot holds 16 bytes");
    state_->sync(rank_, world_);  // the slots may still be read by a previous reduction
    unsigned char* slots = state_->reduce_slots();
    std::memcpy(slots + 16 * rank_, &x, sizeof(S));
    state_->sync(rank_, world_);
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
    state_->sync(rank_, world_);
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
  emu::record_launch(exec.runtime, emu::demangle(typeid(F).name()), false, 0, 0, 0);
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
  long long worlds = 0, barriers = 0, max_world = 0;
  for (const auto& st : states) {
    if (st->failed()) throw std::runtime_error(st->error());
    worlds += st->worlds();
    barriers += st->barriers_total();
    if (st->barriers_max_world() > max_world) max_world = st->barriers_max_world();
  }
  emu::record_launch(exec.runtime, kernel, true, worlds, barriers, max_world);
}

}  // namespace sap
