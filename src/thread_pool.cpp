#include "sap/backend/thread_pool.hpp"

namespace sap {

ThreadPool::ThreadPool(int threads) {
  int n = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  if (n < 1) n = 1;
  for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mutex_);
    stop_ = true;
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
    next_.store(0);
    active_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  for (int t = next_.fetch_add(1); t < ntask; t = next_.fetch_add(1)) task(t, 0);
  std::unique_lock<std::mutex> lk(mutex_);
  done_.wait(lk, [this] { return active_ == 0; });
  job_ = nullptr;
}

void ThreadPool::worker_loop(int slot) {
  unsigned seen = 0;
  for (;;) {
    const std::function<void(int, int)>* job;
    int ntask;
    {
      std::unique_lock<std::mutex> lk(mutex_);
      wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      ntask = ntask_;
    }
    for (int t = next_.fetch_add(1); t < ntask; t = next_.fetch_add(1)) (*job)(t, slot);
    {
      std::lock_guard<std::mutex> lk(mutex_);
      if (--active_ == 0) done_.notify_all();
    }
  }
}

}  // namespace sap
