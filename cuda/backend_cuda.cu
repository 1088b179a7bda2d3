// CUDA backend: memory, streams, clocks, graphs, and the CUDA executor's launches of the solver's
// stages and the rollout kernels (the collision's are in cuda/collision_cuda.cu, the split
// Newton tail's in cuda/newton_tail_cuda.cu, the solver kernels of models with condim 4 or 6
// pairs in cuda/angular_rows_cuda.cu). No physics here: the stage bodies come from
// src/kernels through launch/launches_impl.hpp.
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "launch/cuda_api.hpp"
#include "kernels/newton.hpp"
#include "angular_rows_cuda.cuh"
#include "launch_cuda.cuh"
#include "newton_tail_cuda.cuh"
#include "sap/backend/buffer.hpp"
#include "sap/context.hpp"

namespace sap {

// Reference linear solve of the split Newton loop on CUDA (linear_solver = reference):
// cuSOLVER's batched Cholesky over the worlds that need a direction. The factor buffer holds
// the lower triangle of H row-major with leading dimension ld, which is the upper triangle of
// the same matrix column-major: potrf/potrs run on it in place with CUBLAS_FILL_MODE_UPPER.
namespace {

void cusolver_check(cusolverStatus_t st, const char* what) {
  if (st != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuSOLVER error in ") + what + ": status " +
                             std::to_string(static_cast<int>(st)));
}

struct CusolverWorkspace {
  cusolverDnHandle_t handle = nullptr;
  int nworld = 0;
  Buffer<void*> a_ptr, b_ptr;  // compacted pointers to the systems that need a solve
  Buffer<int> world_of;        // batch entry -> world
  Buffer<int> info;            // per batch entry (potrf), then one entry for potrs
  Buffer<int> count;
  ~CusolverWorkspace() {
    if (handle) cusolverDnDestroy(handle);
  }
};

// Gathers the worlds whose phase asks for a direction (order irrelevant: each system is
// factored independently of its batch position).
__global__ void gather_systems(int nworld, int ld, Slab<double> chol, Slab<int> newton_int, bool f32, void** a_ptr,
                               void** b_ptr, int* world_of, int* count) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= nworld || newton_int(w)[kIterPhase] != kNewtonNeedsDirection) return;
  const int k = atomicAdd(count, 1);
  double* base = chol(w);
  if (f32) {
    a_ptr[k] = base;
    b_ptr[k] = reinterpret_cast<float*>(base) + ld * ld;
  } else {
    a_ptr[k] = base;
    b_ptr[k] = base + ld * ld;
  }
  world_of[k] = w;
}

__global__ void scatter_info(int n, const int* world_of, const int* info, int* solve_ok) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) solve_ok[world_of[k]] = info[k] == 0;
}

}  // namespace

int reference_solve(CudaExec& exec, std::shared_ptr<void>& workspace, bool f32, int nworld, int nv, int ld,
                    Slab<double> chol, Slab<int> newton_int, int* solve_ok) {
  if (!workspace || static_cast<CusolverWorkspace*>(workspace.get())->nworld != nworld) {
    auto ws = std::make_shared<CusolverWorkspace>();
    cusolver_check(cusolverDnCreate(&ws->handle), "cusolverDnCreate");
    ws->nworld = nworld;
    const std::size_t n = static_cast<std::size_t>(nworld);
    ws->a_ptr.allocate(Backend::CUDA, n);
    ws->b_ptr.allocate(Backend::CUDA, n);
    ws->world_of.allocate(Backend::CUDA, n);
    ws->info.allocate(Backend::CUDA, n + 1);
    ws->count.allocate(Backend::CUDA, 1);
    workspace = ws;
  }
  auto& ws = *static_cast<CusolverWorkspace*>(workspace.get());
  cusolver_check(cusolverDnSetStream(ws.handle, exec.stream), "cusolverDnSetStream");
  cuda_check(cudaMemsetAsync(ws.count.data(), 0, sizeof(int), exec.stream), "cudaMemsetAsync");
  const int threads = 128, blocks = (nworld + threads - 1) / threads;
  gather_systems<<<blocks, threads, 0, exec.stream>>>(nworld, ld, chol, newton_int, f32, ws.a_ptr.data(),
                                                      ws.b_ptr.data(), ws.world_of.data(), ws.count.data());
  cuda_check(cudaGetLastError(), "gather_systems launch");
  int batch = 0;  // the host needs the batch size: one small copy per Newton iteration
  cuda_check(cudaMemcpyAsync(&batch, ws.count.data(), sizeof(int), cudaMemcpyDeviceToHost, exec.stream),
             "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(exec.stream), "cudaStreamSynchronize");
  if (batch == 0) return 0;
  const cublasFillMode_t upper = CUBLAS_FILL_MODE_UPPER;
  int* info = ws.info.data();
  if (f32) {
    auto a = reinterpret_cast<float**>(ws.a_ptr.data());
    auto b = reinterpret_cast<float**>(ws.b_ptr.data());
    cusolver_check(cusolverDnSpotrfBatched(ws.handle, upper, nv, a, ld, info, batch), "cusolverDnSpotrfBatched");
    cusolver_check(cusolverDnSpotrsBatched(ws.handle, upper, nv, 1, a, ld, b, ld, info + nworld, batch),
                   "cusolverDnSpotrsBatched");
  } else {
    auto a = reinterpret_cast<double**>(ws.a_ptr.data());
    auto b = reinterpret_cast<double**>(ws.b_ptr.data());
    cusolver_check(cusolverDnDpotrfBatched(ws.handle, upper, nv, a, ld, info, batch), "cusolverDnDpotrfBatched");
    cusolver_check(cusolverDnDpotrsBatched(ws.handle, upper, nv, 1, a, ld, b, ld, info + nworld, batch),
                   "cusolverDnDpotrsBatched");
  }
  scatter_info<<<(batch + threads - 1) / threads, threads, 0, exec.stream>>>(batch, ws.world_of.data(), info, solve_ok);
  cuda_check(cudaGetLastError(), "scatter_info launch");
  return batch;
}

}  // namespace sap

#include "launch/launches_impl.hpp"

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

void mem_free(void* p) noexcept {
  // With several devices, free on the pointer's device (a Simulator may be destroyed while
  // another device is current).
  if (device_count() > 1) {
    const int d = device_of(p);
    if (d >= 0) {
      int cur = 0;
      cudaGetDevice(&cur);
      cudaSetDevice(d);
      cudaFree(p);
      cudaSetDevice(cur);
      return;
    }
  }
  cudaFree(p);
}

// Every copy and memset runs on the library stream, the stream every Context launches its
// kernels on, so the order of memory operations and kernels is the stream's order: nothing
// depends on the legacy default stream's implicit synchronisation (the stream is created
// non-blocking). Copies to the host wait for their data; host-to-device copies from pageable
// memory return once the source has been staged, so the caller may reuse it at once.
// One library stream per device (a Simulator per device in one process: SimulatorOptions::device),
// created on first use on the current device.
void* library_stream() {
  constexpr int kMaxDevices = 64;
  static std::mutex mutex;
  static cudaStream_t streams[kMaxDevices] = {};
  const int d = current_device();
  if (d < 0 || d >= kMaxDevices) throw std::runtime_error("CUDA device index " + std::to_string(d) + " out of range");
  std::lock_guard<std::mutex> lock(mutex);
  if (!streams[d]) {
    cudaStream_t s = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    streams[d] = s;  // lives until the process ends (destroying it at exit races the runtime's teardown)
  }
  return streams[d];
}

// The device whose library stream orders a memory operation on p (several devices: the
// pointer's own; one device: the current one, without a runtime query).
static int memory_device(const void* p) {
  static const int ndevice = device_count();
  if (ndevice <= 1) return -1;
  return device_of(p);
}

void mem_copy(void* dst, const void* src, std::size_t bytes, int kind) {
  const cudaMemcpyKind k = kind == 0   ? cudaMemcpyHostToDevice
                           : kind == 1 ? cudaMemcpyDeviceToHost
                                       : cudaMemcpyDeviceToDevice;
  const DeviceScope on(memory_device(k == cudaMemcpyHostToDevice ? dst : src));
  const cudaStream_t s = static_cast<cudaStream_t>(library_stream());
  cuda_check(cudaMemcpyAsync(dst, src, bytes, k, s), "cudaMemcpyAsync");
  if (k == cudaMemcpyDeviceToHost) cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

void mem_zero(void* p, std::size_t bytes) {
  const DeviceScope on(memory_device(p));
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
  void mark(int p) override {
    cuda_check(cudaEventRecord(ev_[static_cast<std::size_t>(p)], stream_), "cudaEventRecord");
  }
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

void graph_begin_capture(void* stream) {
  // Thread-local mode: other host threads may keep using CUDA while this one captures.
  cuda_check(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal),
             "cudaStreamBeginCapture");
}

void* graph_end_capture(void* stream) {
  cudaGraph_t graph = nullptr;
  cuda_check(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0ULL);
  cudaGraphDestroy(graph);
  cuda_check(e, "cudaGraphInstantiate");
  return exec;
}

void graph_launch(void* exec, void* stream) {
  cuda_check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), static_cast<cudaStream_t>(stream)),
             "cudaGraphLaunch");
}

void graph_destroy(void* exec) noexcept {
  if (exec) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
}

void graph_abort_capture(void* stream) noexcept {
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
  cudaGetLastError();
}

int current_device() {
  int d = 0;
  cuda_check(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

void set_device(int device) {
  const int n = device_count();
  if (device < 0 || device >= n)
    throw std::runtime_error("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(n) +
                             " visible)");
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
}

int device_of(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) ? a.device : -1;
}

bool is_device_pointer(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

std::unique_ptr<SolverLaunch> make_solver_launch(Context& ctx) {
  CudaExec exec(static_cast<cudaStream_t>(ctx.cuda_stream()));
  return std::make_unique<SolverLaunchImpl<CudaExec>>(exec);
}

std::unique_ptr<RolloutLaunch> make_rollout_launch(Context& ctx) {
  CudaExec exec(static_cast<cudaStream_t>(ctx.cuda_stream()));
  return std::make_unique<RolloutLaunchImpl<CudaExec>>(exec);
}

}  // namespace cuda
}  // namespace sap
