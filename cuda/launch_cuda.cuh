// CUDA launcher for the two launch shapes (no physics here):
//   parallel_for(exec, nworld, n, f)                  one thread per (world, i)
//   for_each_world_team(exec, nworld, shmem, f)       one warp per world (team of 32, several per
//                                                     block) or one block per world (larger team)
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
//
// Team launch shape: a team of 32 threads (the default) is one warp per world, and a block
// holds worlds_per_block() such warps (worlds), each with its own slice of the block's dynamic
// shared memory; the warps of a block never wait for each other (no block barrier). A larger
// team (a multiple of 32) takes a block per world and syncs with block barriers.
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
  // Worlds (one-warp teams) per block when the team size is 32; 1 for larger teams.
  int worlds_per_block() const { return team_size_ == 32 ? warps_per_block_ : 1; }
  void set_worlds_per_block(int worlds) {
    if (worlds < 1 || 32 * worlds > max_threads_)
      throw std::invalid_argument("CudaExec: worlds per block (one-warp teams) must be in [1, " +
                                  std::to_string(max_threads_ / 32) + "], got " + std::to_string(worlds));
    warps_per_block_ = worlds;
  }

 private:
  int team_size_ = 32;       // threads per world in team launches: one warp
  int warps_per_block_ = 2;  // one-warp teams per block (64 threads: see docs/gpu.md)
  int max_threads_ = 1024, max_shmem_ = 48 * 1024;
};

namespace cuda_detail {
// A warp shuffle of any trivially copyable T, 4-byte word by word (__shfl_*_sync's own overloads
// cover only the arithmetic types). kind: 0 = idx (src lane), 1 = down (offset), 2 = xor (mask).
template <int kind, class T>
__device__ __forceinline__ T shfl(unsigned mask, T x, int arg) {
  constexpr int n = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned w[n] = {};
  memcpy(w, &x, sizeof(T));
#pragma unroll
  for (int i = 0; i < n; ++i) {
    if (kind == 0) w[i] = __shfl_sync(mask, w[i], arg);
    else if (kind == 1) w[i] = __shfl_down_sync(mask, w[i], arg);
    else w[i] = __shfl_xor_sync(mask, w[i], arg);
  }
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}
}  // namespace cuda_detail

// The threads acting for one world. kOneWarp (the team size is 32): one warp of a block that
// holds several worlds; sync() is __syncwarp, reductions and broadcasts are pure shuffles (no
// shared memory, no block barrier); rank and size are compile-time simple (lane id, 32), so the
// lane-strided loops of the kernels stride by a constant. Otherwise the team is the whole block
// (64, 96, ... threads): __syncthreads and warp partials through shared memory. Same interface
// as CpuTeam/EmuTeam.
template <bool kOneWarp>
class CudaTeam {
 public:
  __device__ explicit CudaTeam(char* shmem) : shmem_(shmem) {}
  __device__ int rank() const { return kOneWarp ? static_cast<int>(threadIdx.x & 31u) : static_cast<int>(threadIdx.x); }
  __device__ int size() const { return kOneWarp ? 32 : static_cast<int>(blockDim.x); }
  __device__ void sync() const {
    if (kOneWarp) __syncwarp();
    else __syncthreads();
  }
  __device__ char* shared_mem() const { return shmem_; }

  template <class S>
  __device__ S reduce_sum(S x) const {
    return reduce(x, [](S a, S b) { return a + b; });
  }
  template <class S>
  __device__ S reduce_max(S x) const {
    return reduce(x, [](S a, S b) { return a < b ? b : a; });
  }
  // Every thread gets thread src's x (all threads call it with the same src).
  template <class T>
  __device__ T broadcast(T x, int src) const {
    if (kOneWarp) return cuda_detail::shfl<0>(0xffffffffu, x, src);
    __shared__ __align__(16) unsigned char slot_bytes[sizeof(T)];
    __syncthreads();  // a previous broadcast's readers are done
    if (rank() == src) memcpy(slot_bytes, &x, sizeof(T));
    __syncthreads();
    T r;
    memcpy(&r, slot_bytes, sizeof(T));
    return r;
  }
  // Within each warp of the team (width 32): the value of lane + off, own value past the warp.
  template <class T>
  __device__ T shfl_down(T x, int off) const {
    return cuda_detail::shfl<1>(warp_mask(), x, off);
  }
  template <class T>
  __device__ T shfl_xor(T x, int mask) const {
    return cuda_detail::shfl<2>(warp_mask(), x, mask);
  }

 private:
  // The existing lanes of this thread's warp of the team (all 32 for a multiple of 32).
  __device__ unsigned warp_mask() const {
    if (kOneWarp) return 0xffffffffu;
    const int width = min(32, size() - (rank() & ~31));
    return width == 32 ? 0xffffffffu : (1u << width) - 1u;
  }

  // Shuffle-down tree within each warp (offsets 16 ... 1); a one-warp team then broadcasts lane
  // 0's result by shuffle; a larger team combines the warp partials in order through shared
  // memory: every thread returns the same bits. EmuTeam::reduce (launch_emu.hpp) is its CPU twin.
  // A partial last warp combines only its existing lanes (the shuffle mask names them).
  template <class S, class Op>
  __device__ S reduce(S x, Op op) const {
    const int lane = rank() & 31, warp = rank() >> 5;
    const int width = kOneWarp ? 32 : min(32, size() - 32 * warp);
    const unsigned mask = warp_mask();
    for (int off = 16; off > 0; off >>= 1) {
      const S y = __shfl_down_sync(mask, x, off);
      if (lane + off < width) x = op(x, y);
    }
    if (kOneWarp) return __shfl_sync(mask, x, 0);
    // One slot per warp (up to 32 warps), typed storage for any trivially copyable S.
    __shared__ __align__(16) unsigned char partial_bytes[32 * sizeof(S)];
    S* partial = reinterpret_cast<S*>(partial_bytes);
    const int nwarp = (size() + 31) >> 5;
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

// One-warp teams: block b runs worlds b * (blockDim.x / 32) + t, t the warp of the block, and
// warp t uses bytes [t * shmem_stride, (t + 1) * shmem_stride) of the dynamic shared memory. A
// warp past the last world leaves at once: nothing waits for it (no block barrier).
template <class F>
__global__ void team_kernel_warp(F f, int nworld, unsigned shmem_stride) {
  extern __shared__ __align__(16) char shmem[];  // 16-byte aligned, stride a multiple of 16
  const int t = static_cast<int>(threadIdx.x >> 5);
  const int w = static_cast<int>(blockIdx.x * (blockDim.x >> 5)) + t;
  if (w >= nworld) return;
  CudaTeam<true> team(shmem + static_cast<std::size_t>(t) * shmem_stride);
  f(w, team);
}

// Larger teams: a block per world.
template <class F>
__global__ void team_kernel(F f) {
  extern __shared__ __align__(16) char shmem[];  // 16-byte aligned: any scalar or vector type
  CudaTeam<false> team(shmem);
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
  const int per_block = exec.worlds_per_block(), team = exec.team_size();
  const std::size_t stride = (shmem_bytes + 15) / 16 * 16, block_bytes = stride * static_cast<std::size_t>(per_block);
  if (block_bytes > exec.max_shared_per_block())
    throw std::invalid_argument("for_each_world_team: " + std::to_string(shmem_bytes) + " bytes of shared memory per world (x" +
                                std::to_string(per_block) + " worlds per block) exceed the device's " +
                                std::to_string(exec.max_shared_per_block()));
  const unsigned blocks = static_cast<unsigned>((nworld + per_block - 1) / per_block);
  if (team == 32) {
    if (block_bytes > 48 * 1024)
      cuda_check(cudaFuncSetAttribute(team_kernel_warp<F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(block_bytes)),
                 "team shared memory opt-in");
    team_kernel_warp<<<blocks, 32 * per_block, block_bytes, exec.stream>>>(f, nworld, static_cast<unsigned>(stride));
  } else {
    if (block_bytes > 48 * 1024)
      cuda_check(cudaFuncSetAttribute(team_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(block_bytes)),
                 "team shared memory opt-in");
    team_kernel<<<blocks, team, block_bytes, exec.stream>>>(f);
  }
  cuda_check(cudaGetLastError(), "for_each_world_team launch");
}

}  // namespace sap
