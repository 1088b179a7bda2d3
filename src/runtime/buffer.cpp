#include "sap/backend/buffer.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "launch/cuda_api.hpp"

namespace sap {

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::CPU: return "cpu";
    case Backend::CUDA: return "cuda";
    case Backend::Auto: return "auto";
  }
  return "?";
}

Backend parse_backend(const std::string& s) {
  if (s == "cpu") return Backend::CPU;
  if (s == "cuda") return Backend::CUDA;
  if (s == "auto") return Backend::Auto;
  throw std::invalid_argument("unknown backend '" + s + "', expected cpu, cuda or auto");
}

bool cuda_compiled() { return cuda::compiled(); }
int cuda_device_count() { return cuda::device_count(); }
std::string cuda_device_name() { return cuda::device_name(); }

Backend resolve_backend(Backend requested) {
  if (requested == Backend::CPU) return Backend::CPU;
  const int n = cuda::device_count();
  if (requested == Backend::Auto) return n > 0 ? Backend::CUDA : Backend::CPU;
  if (!cuda::compiled())
    throw std::runtime_error(
        "backend 'cuda' requested, but this build has no CUDA backend (configure with -DSAP_WITH_CUDA=ON)");
  if (n == 0) throw std::runtime_error("backend 'cuda' requested, but no CUDA device is available on this machine");
  return Backend::CUDA;
}

namespace {
std::atomic<long long> g_buffer_bytes[2];  // CPU, CUDA
}

long long buffer_bytes_live(Backend b) { return g_buffer_bytes[b == Backend::CUDA ? 1 : 0].load(); }

namespace detail {

void count_buffer_bytes(Backend b, long long delta) noexcept { g_buffer_bytes[b == Backend::CUDA ? 1 : 0] += delta; }

void* mem_alloc(Backend b, std::size_t bytes) {
  if (b == Backend::CUDA) return cuda::mem_alloc(bytes);
  // 64-byte alignment: cache lines, and room for vector loads.
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) throw std::bad_alloc();
  return p;
}

void mem_free(Backend b, void* p) noexcept {
  if (b == Backend::CUDA) cuda::mem_free(p);
  else std::free(p);
}

void mem_copy(void* dst, Backend dst_b, const void* src, Backend src_b, std::size_t bytes) {
  if (dst_b == Backend::CPU && src_b == Backend::CPU) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const int kind = dst_b == Backend::CUDA ? (src_b == Backend::CUDA ? 2 : 0) : 1;
  cuda::mem_copy(dst, src, bytes, kind);
}

void mem_zero(Backend b, void* p, std::size_t bytes) {
  if (b == Backend::CUDA) cuda::mem_zero(p, bytes);
  else std::memset(p, 0, bytes);
}

}  // namespace detail
}  // namespace sap
