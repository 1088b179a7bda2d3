// CUDA launcher for the two launch shapes (no physics here):
//   parallel_for(exec, nworld, n, f)                  one thread per (world, i)
//   for_each_world_team(exec, nworld, shmem, f)       one thread block per world
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace sap {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

// Launch configuration of one backend instance. The team size is validated where it is set
// (a whole number of warps: the reductions shuffle across full warps) and again at launch
// against the device's limits.
class CudaExec {
 public:
  // Reads the current device's limits once (not per launch).
  explicit CudaExec(cudaStream_t s) : stream(s) {
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&max_threads_, cudaDevAttrMaxThreadsPerBlock, device), "cudaDeviceGetAttribute");
    cuda_check(cudaDeviceGetAttribute(&max_shmem_, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
               "cudaDeviceGetAttribute");
  }
  cudaStream_t stream = nullptr;
  int max_threads_per_block() const { return max_threads_; }
  std::size_t max_shared_per_block() const { return static_cast<std::size_t>(max_shmem_); }

  int team_size() const { return team_size_; }
  void set_team_size(int threads) {
    if (threads < 32 || threads > max_threads_ || threads % 32 != 0)
      throw std::invalid_argument("CudaExec: team size must be a multiple of 32 in [32, " +
                                  std::to_string(max_threads_) + "] (threads per world), got " +
                                  std::to_string(threads));
    team_size_ = threads;
  }

 private:
  int team_size_ = 64;  // threads per world in team launches
  int max_threads_ = 1024, max_shmem_ = 48 * 1024;
};

// A thread block acting for one world.
class CudaTeam {
 public:
  __device__ explicit CudaTeam(char* shmem) : shmem_(shmem) {}
  __device__ int rank() const { return static_cast<int>(threadIdx.x); }
  __device__ int size() const { return static_cast<int>(blockDim.x); }
  __device__ void sync() const { __syncthreads(); }
  __device__ char* shared_mem() const { return shmem_; }

  template <class S>
  __device__ S reduce_sum(S x) const {
    return reduce(x, [](S a, S b) { return a + b; });
  }
  template <class S>
  __device__ S reduce_max(S x) const {
    return reduce(x, [](S a, S b) { return a < b ? b : a; });
  }

 private:
  // Shuffle-down tree within each warp (offsets 16 ... 1), then the warp partials in order:
  // every thread returns the same bits. EmuTeam::reduce (launch_emu.hpp) is its CPU twin.
  // A partial last warp combines only its existing lanes (the shuffle mask names them).
  template <class S, class Op>
  __device__ S reduce(S x, Op op) const {
    // One slot per warp (up to 32 warps), typed storage for any trivially copyable S.
    __shared__ __align__(16) unsigned char partial_bytes[32 * sizeof(S)];
    S* partial = reinterpret_cast<S*>(partial_bytes);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarp = (blockDim.x + 31) >> 5;
    const int width = min(32, static_cast<int>(blockDim.x) - 32 * warp);
    const unsigned mask = width == 32 ? 0xffffffffu : (1u << width) - 1u;
    for (int off = 16; off > 0; off >>= 1) {
      const S y = __shfl_down_sync(mask, x, off);
      if (lane + off < width) x = op(x, y);
    }
    __syncthreads();  // the slots may still be read by a previous reduction
    if (lane == 0) partial[warp] = x;
    __syncthreads();
    S r = partial[0];
    for (int k = 1; k < nwarp; ++k) r = op(r, partial[k]);
    __syncthreads();
    return r;
  }
  char* shmem_;
};

template <class F>
__global__ void parallel_for_kernel(F f, int nworld, int n) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(nworld) * n) return;
  f(static_cast<int>(idx / n), static_cast<int>(idx % n));
}

template <class F>
__global__ void team_kernel(F f) {
  extern __shared__ __align__(16) char shmem[];  // 16-byte aligned: any scalar or vector type
  CudaTeam team(shmem);
  f(static_cast<int>(blockIdx.x), team);
}

template <class F>
void parallel_for(CudaExec& exec, int nworld, int n, const F& f) {
  const long long total = static_cast<long long>(nworld) * n;
  if (total <= 0) return;
  const int threads = 128;
  const unsigned blocks = static_cast<unsigned>((total + threads - 1) / threads);
  parallel_for_kernel<<<blocks, threads, 0, exec.stream>>>(f, nworld, n);
  cuda_check(cudaGetLastError(), "parallel_for launch");
}

template <class F>
void for_each_world_team(CudaExec& exec, int nworld, std::size_t shmem_bytes, const F& f) {
  if (nworld <= 0) return;
  if (shmem_bytes > exec.max_shared_per_block())
    throw std::invalid_argument("for_each_world_team: " + std::to_string(shmem_bytes) +
                                " bytes of shared memory per world exceed the device's " +
                                std::to_string(exec.max_shared_per_block()));
  if (shmem_bytes > 48 * 1024)
    cuda_check(cudaFuncSetAttribute(team_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shmem_bytes)),
               "team shared memory opt-in");
  team_kernel<<<static_cast<unsigned>(nworld), exec.team_size(), shmem_bytes, exec.stream>>>(f);
  cuda_check(cudaGetLastError(), "for_each_world_team launch");
}

}  // namespace sap
