// CPU-only builds: the CUDA entry points exist and report that CUDA is not compiled in.
#include <stdexcept>

#include "launch/cuda_api.hpp"
#include "sap/context.hpp"
#include "launch/launches.hpp"

namespace sap::cuda {
namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error("the CUDA backend is not compiled into this build (configure with -DSAP_WITH_CUDA=ON)");
}
}  // namespace
bool compiled() { return false; }
int device_count() { return 0; }
std::string device_name() { return ""; }
void* mem_alloc(std::size_t) { unavailable(); }
void mem_free(void*) noexcept {}
void mem_copy(void*, const void*, std::size_t, int) { unavailable(); }
void mem_zero(void*, std::size_t) { unavailable(); }
void* library_stream() { unavailable(); }
void stream_sync(void*) { unavailable(); }
std::unique_ptr<StageClock> make_clock(void*, int) { unavailable(); }
std::unique_ptr<SolverLaunch> make_solver_launch(Context&) { unavailable(); }
std::unique_ptr<CollisionLaunch> make_collision_launch(Context&) { unavailable(); }
std::unique_ptr<RolloutLaunch> make_rollout_launch(Context&) { unavailable(); }
void graph_begin_capture(void*) { unavailable(); }
void* graph_end_capture(void*) { unavailable(); }
void graph_launch(void*, void*) { unavailable(); }
void graph_destroy(void*) noexcept {}
void graph_abort_capture(void*) noexcept {}
int current_device() { return 0; }
void set_device(int device) {
  if (device != 0) unavailable();
}
int device_of(const void*) { return -1; }
bool is_device_pointer(const void*) { return false; }
}  // namespace sap::cuda
