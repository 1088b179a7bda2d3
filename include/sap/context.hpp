// Execution context shared by the collision pipeline and the solver: the resolved backend, the
// CPU thread pool, the CUDA stream, and stage clocks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sap/backend/buffer.hpp"
#include "sap/backend/launch_cpu.hpp"
#include "sap/backend/launch_emu.hpp"

namespace sap {

// Records named points of one step and reports the time between consecutive ones. On the CPU
// it reads a steady clock; on CUDA it records events (no synchronisation until read).
class StageClock {
 public:
  virtual ~StageClock() = default;
  virtual void mark(int point) = 0;  // point in [0, npoints)
  // Milliseconds between point i and point i+1 of the last recorded sequence (synchronises on CUDA).
  virtual double elapsed_ms(int from, int to) = 0;
};

class Context {
 public:
  // backend Auto picks CUDA when a device is present. threads <= 0: all hardware threads.
  // emulated_lanes > 0 (CPU backend only): team stages run on the emulated-team executor with
  // that many lanes per world (launch_emu.hpp), to test GPU-only code paths without a GPU.
  explicit Context(Backend backend = Backend::Auto, int threads = 0, int emulated_lanes = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Backend backend() const { return backend_; }
  int threads() const { return pool_ ? pool_->size() : 1; }
  std::string device_name() const;  // "CPU (N threads)" or the CUDA device name
  CpuExec& cpu() { return cpu_exec_; }
  bool emulated() const { return emu_exec_.lanes > 0; }
  EmuExec& emu() { return emu_exec_; }
  // Per-kernel launch and barrier counts of the emulated executor (empty when not emulated).
  std::vector<EmuKernelStats> emulation_stats() const { return emu_runtime_.stats(); }
  void reset_emulation_stats() { emu_runtime_.reset(); }
  void* cuda_stream() const { return stream_; }  // cudaStream_t
  void synchronize();
  std::unique_ptr<StageClock> make_clock(int npoints);

 private:
  Backend backend_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::vector<char>> cpu_scratch_;
  CpuExec cpu_exec_;
  EmuRuntime emu_runtime_;
  EmuExec emu_exec_;
  void* stream_ = nullptr;
};

}  // namespace sap
