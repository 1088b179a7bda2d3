// CUDA launcher for the two launch shapes (no physics here):
//   parallel_for(exec, nworld, n, f)                  one thread per (world, i)
//   for_each_world_team(exec, nworld, shmem, f)       one thread block per world
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace sap {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

struct CudaExec {
  cudaStream_t stream = nullptr;
  int team_size = 64;  // threads per world in team launches
};

// A thread block acting for one world. reduce_* use a small static shared buffer.
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
  template <class S, class Op>
  __device__ S reduce(S x, Op op) const {
    __shared__ double partial[32];  // one slot per warp (up to 1024 threads); fits any S
    for (int off = 16; off > 0; off >>= 1) x = op(x, __shfl_down_sync(0xffffffffu, x, off));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarp = (blockDim.x + 31) >> 5;
    __syncthreads();
    if (lane == 0) reinterpret_cast<S*>(partial)[warp] = x;
    __syncthreads();
    S r = reinterpret_cast<S*>(partial)[0];
    for (int k = 1; k < nwarp; ++k) r = op(r, reinterpret_cast<S*>(partial)[k]);
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
  extern __shared__ char shmem[];
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
  if (shmem_bytes > 48 * 1024)
    cuda_check(cudaFuncSetAttribute(team_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shmem_bytes)),
               "team shared memory opt-in");
  team_kernel<<<static_cast<unsigned>(nworld), exec.team_size, shmem_bytes, exec.stream>>>(f);
  cuda_check(cudaGetLastError(), "for_each_world_team launch");
}

}  // namespace sap
