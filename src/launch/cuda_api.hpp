// Host-side entry points of the CUDA backend. Defined in cuda/backend_cuda.cu when the build
// has CUDA, and by src/cuda_stub.cpp otherwise (where every call says CUDA is not compiled in).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace sap {
class Context;
class StageClock;
struct SolverLaunch;
struct CollisionLaunch;
struct RolloutLaunch;

namespace cuda {
bool compiled();
int device_count();  // 0 on any error
std::string device_name();
void* mem_alloc(std::size_t bytes);
void mem_free(void* p) noexcept;
// kind: 0 host->device, 1 device->host, 2 device->device
void mem_copy(void* dst, const void* src, std::size_t bytes, int kind);
void mem_zero(void* p, std::size_t bytes);
// The stream of every CUDA memory operation and launch (created on first use, non-blocking).
void* library_stream();
void stream_sync(void* s);
std::unique_ptr<StageClock> make_clock(void* stream, int npoints);
// The stage launches on CUDA (launch/launches.hpp): the solver's and the rollout kernels in
// cuda/backend_cuda.cu, the collision in cuda/collision_cuda.cu.
std::unique_ptr<SolverLaunch> make_solver_launch(Context& ctx);
std::unique_ptr<CollisionLaunch> make_collision_launch(Context& ctx);
std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx);
// CUDA graphs of a captured launch sequence on `stream` (Simulator::step(n)).
void graph_begin_capture(void* stream);
void* graph_end_capture(void* stream);  // instantiated graph (cudaGraphExec_t)
void graph_launch(void* exec, void* stream);
void graph_destroy(void* exec) noexcept;
// Ends a capture that failed and discards it, clearing the error it left (the caller rethrows
// the error that stopped the capture, not the capture's own "invalidated").
void graph_abort_capture(void* stream) noexcept;
int current_device();
// Makes `device` current for this host thread (CUDA runtime semantics). CPU-only builds accept 0.
void set_device(int device);
// Device of a device pointer (-1 for host memory).
int device_of(const void* p);
// Makes a device current for a scope and restores the previous one after it; a no-op when the
// device is already current or when device < 0 (the CPU backend).
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (device < 0 || !compiled() || device_count() == 0) return;
    const int cur = current_device();
    if (cur == device) return;
    prev_ = cur;
    set_device(device);
  }
  ~DeviceScope() {
    if (prev_ >= 0) set_device(prev_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int prev_ = -1;
};
// 1 when p is a device (or managed) pointer, 0 for host memory.
bool is_device_pointer(const void* p);
}  // namespace cuda
}  // namespace sap
