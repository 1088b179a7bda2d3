// The non-template half of the emulated-team launcher (include/sap/backend/launch_emu.hpp):
// the team barrier with divergence detection, lane threads, kernel names and statistics.
#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "sap/backend/launch_emu.hpp"

namespace sap {

void EmuRuntime::record(const EmuKernelStats& l) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(stats_.begin(), stats_.end(), [&](const EmuKernelStats& s) { return s.kernel == l.kernel; });
  if (it == stats_.end()) {
    stats_.push_back({});
    it = stats_.end() - 1;
    it->kernel = l.kernel;
  }
  it->team = l.team;
  it->launches += 1;
  it->worlds += l.worlds;
  it->barriers += l.barriers;
  it->max_barriers_per_world = std::max(it->max_barriers_per_world, l.max_barriers_per_world);
  it->warp_syncs += l.warp_syncs;
  it->max_warp_syncs_per_world = std::max(it->max_warp_syncs_per_world, l.max_warp_syncs_per_world);
  it->collectives += l.collectives;
}

std::vector<EmuKernelStats> EmuRuntime::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<EmuKernelStats> s = stats_;
  std::sort(s.begin(), s.end(), [](const EmuKernelStats& a, const EmuKernelStats& b) { return a.kernel < b.kernel; });
  return s;
}

void EmuRuntime::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.clear();
}

namespace emu {

std::string demangle(const char* mangled) {
  int status = 0;
  char* s = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && s) ? s : mangled;
  std::free(s);
  return out;
}

namespace {
enum LaneAt { kRunning = 0, kAtSync = 1, kAtEnd = 2 };

// "{0, 2-5}" for the lanes whose entry equals `what`.
std::string lane_set(const std::vector<int>& where, int what) {
  std::string out;
  const int n = static_cast<int>(where.size());
  for (int l = 0; l < n;) {
    if (where[static_cast<std::size_t>(l)] != what) {
      ++l;
      continue;
    }
    int e = l;
    while (e + 1 < n && where[static_cast<std::size_t>(e + 1)] == what) ++e;
    out += (out.empty() ? "" : ", ") + std::to_string(l) + (e > l ? "-" + std::to_string(e) : "");
    l = e + 1;
  }
  return "{" + out + "}";
}
const char* kind_name(SyncKind k) {
  switch (k) {
    case SyncKind::kBlock: return "block barrier";
    case SyncKind::kWarp: return "warp sync";
    case SyncKind::kCollective: return "warp collective (shuffle/broadcast/reduction)";
    default: return "collective's exchange";
  }
}
}  // namespace

struct TeamState::Impl {
  std::mutex mutex;
  std::condition_variable cv;
  int lanes = 0;
  std::string kernel;
  double timeout_s = 0;
  int at_sync = 0, at_end = 0;
  SyncKind pending_kind = SyncKind::kInternal;  // kind of the rendezvous the first arrived lane waits at
  long long generation = 0;
  long long world_barriers = 0;     // block barriers completed in the current world
  long long world_warp_syncs = 0;   // warp syncs completed in the current world
  long long world_collectives = 0;  // warp collectives started in the current world
  long long rendezvous = 0;         // rendezvous of any kind in the current world (error messages)
  std::vector<int> where;        // LaneAt per lane
  bool failed = false;
  std::string error;

  void fail_locked(const std::string& why) {
    if (!failed) {
      failed = true;
      error = "emulated team kernel '" + kernel + "' (" + std::to_string(lanes) + " lanes): " + why;
    }
    cv.notify_all();
  }

  std::string divergence(int world) const {
    return "world " + std::to_string(world) + ": divergent sync(): lanes " + lane_set(where, kAtSync) +
           " wait at barrier #" + std::to_string(rendezvous + 1) + " of the world while lanes " +
           lane_set(where, kAtEnd) + " have finished it";
  }

  // Waits until the barrier of generation `gen` completes; throws Abort once the team failed.
  void wait(std::unique_lock<std::mutex>& lock, long long gen, int world) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (generation == gen && !failed) {
      if (cv.wait_until(lock, deadline) == std::cv_status::timeout && generation == gen && !failed) {
        // A lane neither reaches the barrier nor finishes (an endless loop): it cannot be
        // unwound from outside, so stop the process with the kernel's name instead of hanging.
        std::fprintf(stderr,
                     "sap: emulated team kernel '%s' (%d lanes), world %d: barrier #%lld not completed within "
                     "%.0f s: lanes %s wait at sync(), lanes %s finished the world, lanes %s never arrived\n",
                     kernel.c_str(), lanes, world, rendezvous + 1, timeout_s, lane_set(where, kAtSync).c_str(),
                     lane_set(where, kAtEnd).c_str(), lane_set(where, kRunning).c_str());
        std::abort();
      }
    }
    if (failed) throw Abort{};
  }
};

TeamState::TeamState(int lanes, std::size_t shmem_bytes, const std::string& kernel, double timeout_s)
    : impl_(std::make_unique<Impl>()),
      shmem_(new char[shmem_bytes > 0 ? shmem_bytes : 1]()),
      slots_(new unsigned char[16 * static_cast<std::size_t>(lanes)]()) {
  if (lanes <= 0) throw std::invalid_argument("emulated team: lanes must be positive, got " + std::to_string(lanes));
  impl_->lanes = lanes;
  impl_->kernel = kernel;
  impl_->timeout_s = timeout_s;
  impl_->where.assign(static_cast<std::size_t>(lanes), kRunning);
}

TeamState::~TeamState() = default;

// A lane arrives at a barrier (kAtSync) or at the end of its world (kAtEnd). The barrier
// completes when every lane has arrived at the same kind; arrivals of both kinds adding up to
// the whole team mean a divergent barrier that can never complete.
void TeamState::arrive(int lane, int world, int at, SyncKind kind) {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.failed) throw Abort{};
  if (at == kAtSync) {
    // Lanes meeting at different kinds of rendezvous (a sync() against a shuffle) diverge.
    if (s.at_sync == 0) s.pending_kind = kind;
    else if (s.pending_kind != kind) {
      s.fail_locked("world " + std::to_string(world) + ": divergent team operations: lane " + std::to_string(lane) +
                    " reaches a " + kind_name(kind) + " while lanes " + lane_set(s.where, kAtSync) + " wait at a " +
                    kind_name(s.pending_kind) + " (rendezvous #" + std::to_string(s.rendezvous + 1) + " of the world)");
      throw Abort{};
    }
  }
  s.where[static_cast<std::size_t>(lane)] = at;
  ++(at == kAtSync ? s.at_sync : s.at_end);
  if (s.at_sync + s.at_end < s.lanes) {
    s.wait(lock, s.generation, world);
    return;
  }
  if (s.at_sync > 0 && s.at_end > 0) {
    s.fail_locked(s.divergence(world));
    throw Abort{};
  }
  if (at == kAtSync) {
    ++s.rendezvous;
    if (kind == SyncKind::kBlock) ++s.world_barriers;
    else if (kind == SyncKind::kWarp) ++s.world_warp_syncs;
    else if (kind == SyncKind::kCollective) ++s.world_collectives;
  } else {
    barriers_total_ += s.world_barriers;
    barriers_max_world_ = std::max(barriers_max_world_, s.world_barriers);
    warp_syncs_total_ += s.world_warp_syncs;
    warp_syncs_max_world_ = std::max(warp_syncs_max_world_, s.world_warp_syncs);
    collectives_total_ += s.world_collectives;
    ++worlds_;
    s.world_barriers = s.world_warp_syncs = s.world_collectives = s.rendezvous = 0;
  }
  s.at_sync = s.at_end = 0;
  ++s.generation;
  std::fill(s.where.begin(), s.where.end(), kRunning);
  s.cv.notify_all();
}

void TeamState::sync(int lane, int world, SyncKind kind) { arrive(lane, world, kAtSync, kind); }

void TeamState::end_world(int lane, int world) { arrive(lane, world, kAtEnd, SyncKind::kInternal); }

void TeamState::fail(const std::string& why) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->fail_locked(why);
}

bool TeamState::failed() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->failed;
}

std::string TeamState::error() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->error;
}

void run_threads(int nthread, const std::function<void(int)>& body) {
  std::mutex mutex;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(nthread));
  for (int i = 0; i < nthread; ++i)
    threads.emplace_back([&, i] {
      try {
        body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!first) first = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace emu
}  // namespace sap
