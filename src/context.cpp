#include "sap/context.hpp"

#include <chrono>

#include "cuda_api.hpp"

namespace sap {

namespace {
class CpuClock final : public StageClock {
 public:
  explicit CpuClock(int n) : t_(static_cast<std::size_t>(n)) {}
  void mark(int p) override { t_[static_cast<std::size_t>(p)] = std::chrono::steady_clock::now(); }
  double elapsed_ms(int from, int to) override {
    return std::chrono::duration<double, std::milli>(t_[static_cast<std::size_t>(to)] - t_[static_cast<std::size_t>(from)]).count();
  }

 private:
  std::vector<std::chrono::steady_clock::time_point> t_;
};
}  // namespace

Context::Context(Backend backend, int threads) : backend_(resolve_backend(backend)) {
  if (backend_ == Backend::CPU) {
    pool_ = std::make_unique<ThreadPool>(threads);
    cpu_exec_.pool = pool_.get();
  } else {
    stream_ = cuda::stream_create();
  }
  cpu_exec_.scratch = &cpu_scratch_;
}

Context::~Context() {
  if (stream_) cuda::stream_destroy(stream_);
}

std::string Context::device_name() const {
  if (backend_ == Backend::CUDA) return cuda::device_name();
  return "CPU (" + std::to_string(threads()) + " threads)";
}

void Context::synchronize() {
  if (backend_ == Backend::CUDA) cuda::stream_sync(stream_);
}

std::unique_ptr<StageClock> Context::make_clock(int npoints) {
  if (backend_ == Backend::CUDA) return cuda::make_clock(stream_, npoints);
  return std::make_unique<CpuClock>(npoints);
}

}  // namespace sap
