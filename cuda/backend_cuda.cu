// CUDA backend: memory, streams, clocks, and the instantiation of every stage for CUDA.
// No physics here: the stage bodies come from src/kernels through solver_launch_impl.hpp.
#include <cuda_runtime.h>

#include <vector>

#include "cuda_api.hpp"
#include "launch_cuda.cuh"
#include "sap/context.hpp"
#include "solver_launch_impl.hpp"

namespace sap {
namespace cuda {

bool compiled() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "insufficient driver" error
    return 0;
  }
  return n;
}

std::string device_name() {
  if (device_count() == 0) return "";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "";
  return p.name;
}

void* mem_alloc(std::size_t bytes) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}

void mem_free(void* p) noexcept { cudaFree(p); }

// Every copy and memset runs on the library stream, the stream every Context launches its
// kernels on, so the order of memory operations and kernels is the stream's order: nothing
// depends on the legacy default stream's implicit synchronisation (the stream is created
// non-blocking). Copies to the host wait for their data; host-to-device copies from pageable
// memory return once the source has been staged, so the caller may reuse it at once.
void* library_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return s;  // lives until the process ends (destroying it at exit races the runtime's teardown)
  }();
  return stream;
}

void mem_copy(void* dst, const void* src, std::size_t bytes, int kind) {
  const cudaMemcpyKind k = kind == 0 ? cudaMemcpyHostToDevice : kind == 1 ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
  const cudaStream_t s = static_cast<cudaStream_t>(library_stream());
  cuda_check(cudaMemcpyAsync(dst, src, bytes, k, s), "cudaMemcpyAsync");
  if (k == cudaMemcpyDeviceToHost) cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

void mem_zero(void* p, std::size_t bytes) {
  cuda_check(cudaMemsetAsync(p, 0, bytes, static_cast<cudaStream_t>(library_stream())), "cudaMemsetAsync");
}

void stream_sync(void* s) { cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize"); }

namespace {
class CudaClock final : public StageClock {
 public:
  CudaClock(cudaStream_t s, int n) : stream_(s), ev_(static_cast<std::size_t>(n)) {
    for (auto& e : ev_) cuda_check(cudaEventCreate(&e), "cudaEventCreate");
  }
  ~CudaClock() override {
    for (auto& e : ev_) cudaEventDestroy(e);
  }
  void mark(int p) override { cuda_check(cudaEventRecord(ev_[static_cast<std::size_t>(p)], stream_), "cudaEventRecord"); }
  double elapsed_ms(int from, int to) override {
    cuda_check(cudaEventSynchronize(ev_[static_cast<std::size_t>(to)]), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, ev_[static_cast<std::size_t>(from)], ev_[static_cast<std::size_t>(to)]),
               "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> ev_;
};
}  // namespace

std::unique_ptr<StageClock> make_clock(void* stream, int npoints) {
  return std::make_unique<CudaClock>(static_cast<cudaStream_t>(stream), npoints);
}

std::unique_ptr<SolverLaunch> make_solver_launch(Context& ctx) {
  CudaExec exec(static_cast<cudaStream_t>(ctx.cuda_stream()));
  return std::make_unique<SolverLaunchImpl<CudaExec>>(exec);
}

}  // namespace cuda
}  // namespace sap
