// Persistent worker pool for the CPU backend: worlds are independent, so a batch is cut into
// contiguous chunks of worlds, one task each. Which thread runs a chunk never changes results.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sap {

class ThreadPool {
 public:
  // threads <= 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }  // workers + caller

  // Calls task(t) for t in [0, ntask) across the pool and the calling thread; returns when all
  // are done. Each call to task gets a distinct worker slot in [0, size()) through `slot`.
  void run(int ntask, const std::function<void(int task, int slot)>& task);

 private:
  void worker_loop(int slot);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)>* job_ = nullptr;
  int ntask_ = 0;
  std::atomic<int> next_{0};
  std::atomic<int> active_{0};
  std::atomic<unsigned> generation_{0};
  bool stop_ = false;
};

}  // namespace sap
