#include "sap/context.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "launch/cuda_api.hpp"

namespace sap {

namespace {
class CpuClock final : public StageClock {
 public:
  explicit CpuClock(int n) : t_(static_cast<std::size_t>(n)) {}
  void mark(int p) override { t_[static_cast<std::size_t>(p)] = std::chrono::steady_clock::now(); }
  double elapsed_ms(int from, int to) override {
    return std::chrono::duration<double, std::milli>(t_[static_cast<std::size_t>(to)] -
                                                     t_[static_cast<std::size_t>(from)])
        .count();
  }

 private:
  std::vector<std::chrono::steady_clock::time_point> t_;
};
}  // namespace

Context::Context(Backend backend, int threads, int emulated_lanes) : backend_(resolve_backend(backend)) {
  emu_exec_.lanes = 0;
  if (emulated_lanes < 0 || emulated_lanes > 1024)
    throw std::invalid_argument("Context: emulated_lanes must be in [0, 1024] (a CUDA block), got " +
                                std::to_string(emulated_lanes));
  if (emulated_lanes > 0) {
    if (backend_ != Backend::CPU)
      throw std::invalid_argument("Context: emulated_lanes needs the CPU backend (it emulates CUDA teams on the CPU)");
    emu_exec_.lanes = emulated_lanes;
    emu_exec_.runtime = &emu_runtime_;
  }
  if (backend_ == Backend::CPU) {
    pool_ = std::make_unique<ThreadPool>(threads);
    cpu_exec_.pool = pool_.get();
  } else {
    stream_ = cuda::library_stream();  // shared with every memory operation (backend_cuda.cu)
  }
  cpu_exec_.scratch = &cpu_scratch_;
}

Context::~Context() = default;

std::string Context::device_name() const {
  if (backend_ == Backend::CUDA) return cuda::device_name();
  if (emulated()) return "CPU (emulated teams of " + std::to_string(emu_exec_.lanes) + " lanes)";
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
