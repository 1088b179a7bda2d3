#include "sap/backend/thread_pool.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SAP_CPU_RELAX() _mm_pause()
#else
#define SAP_CPU_RELAX() std::this_thread::yield()
#endif

namespace sap {

namespace {
// A step launches 5-6 stages back to back; waking a sleeping worker costs tens of microseconds,
// so workers and the caller poll for about that long before blocking.
constexpr int kSpinIterations = 4000;
}  // namespace

ThreadPool::ThreadPool(int threads) {
  int n = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  if (n < 1) n = 1;
  for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(int ntask, const std::function<void(int, int)>& task) {
  if (ntask <= 0) return;
  if (workers_.empty() || ntask == 1) {
    for (int t = 0; t < ntask; ++t) task(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mutex_);
    job_ = &task;
    ntask_ = ntask;
    next_.store(0, std::memory_order_relaxed);
    active_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (int t = next_.fetch_add(1); t < ntask; t = next_.fetch_add(1)) task(t, 0);
  for (int s = 0; s < kSpinIterations && active_.load(std::memory_order_acquire) != 0; ++s) SAP_CPU_RELAX();
  if (active_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lk(mutex_);
    done_.wait(lk, [this] { return active_.load(std::memory_order_acquire) == 0; });
  }
}

void ThreadPool::worker_loop(int slot) {
  unsigned seen = 0;
  for (;;) {
    for (int s = 0; s < kSpinIterations && generation_.load(std::memory_order_acquire) == seen; ++s) SAP_CPU_RELAX();
    const std::function<void(int, int)>* job;
    int ntask;
    {
      std::unique_lock<std::mutex> lk(mutex_);
      wake_.wait(lk, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      if (stop_) return;
      seen = generation_.load(std::memory_order_acquire);
      job = job_;
      ntask = ntask_;
    }
    for (int t = next_.fetch_add(1); t < ntask; t = next_.fetch_add(1)) (*job)(t, slot);
    if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lk(mutex_);  // the caller may be about to wait
      done_.notify_all();
    }
  }
}

}  // namespace sap
