// Backend selection and RAII buffers living on the CPU heap or in CUDA device memory.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sap {

enum class Backend { CPU, CUDA, Auto };

const char* backend_name(Backend b);
Backend parse_backend(const std::string& s);  // "cpu" | "cuda" | "auto"; throws otherwise

// True when this build has the CUDA backend compiled in.
bool cuda_compiled();
// Number of usable CUDA devices; 0 when the build has no CUDA or the driver reports any error
// (machines without an NVIDIA driver answer "driver version is insufficient", not zero).
int cuda_device_count();
// Name of device 0 ("" when none).
std::string cuda_device_name();
// Resolves Auto to CUDA when a device is present, else CPU. Asking for CUDA without a device
// (or in a CPU-only build) throws a std::runtime_error that says which.
Backend resolve_backend(Backend requested);

namespace detail {
void* mem_alloc(Backend b, std::size_t bytes);
void mem_free(Backend b, void* p) noexcept;
void mem_copy(void* dst, Backend dst_b, const void* src, Backend src_b, std::size_t bytes);
void mem_zero(Backend b, void* p, std::size_t bytes);
void count_buffer_bytes(Backend b, long long delta) noexcept;
}  // namespace detail

// Bytes held by live Buffers on a backend (all threads; for memory reports such as sap_bench's
// bytes per world: the difference between two world counts).
long long buffer_bytes_live(Backend b);

// Owning, non-copyable, movable array of T on one backend. Sized once at construction;
// the step loop never allocates.
template <class T>
class Buffer {
 public:
  using value_type = T;
  Buffer() = default;
  Buffer(Backend b, std::size_t n) { allocate(b, n); }
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }

  void allocate(Backend b, std::size_t n) {
    release();
    backend_ = b;
    size_ = n;
    if (n > 0) {
      ptr_ = static_cast<T*>(detail::mem_alloc(b, n * sizeof(T)));
      detail::count_buffer_bytes(b, static_cast<long long>(n * sizeof(T)));
      detail::mem_zero(b, ptr_, n * sizeof(T));
    }
  }
  void release() noexcept {
    if (ptr_) {
      detail::mem_free(backend_, ptr_);
      detail::count_buffer_bytes(backend_, -static_cast<long long>(size_ * sizeof(T)));
    }
    ptr_ = nullptr;
    size_ = 0;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  Backend backend() const { return backend_; }
  bool empty() const { return size_ == 0; }

  void zero() {
    if (size_) detail::mem_zero(backend_, ptr_, size_ * sizeof(T));
  }
  void upload(const T* host, std::size_t n, std::size_t offset = 0) {
    check_range(n, offset);
    if (n) detail::mem_copy(ptr_ + offset, backend_, host, Backend::CPU, n * sizeof(T));
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void download(T* host, std::size_t n, std::size_t offset = 0) const {
    check_range(n, offset);
    if (n) detail::mem_copy(host, Backend::CPU, ptr_ + offset, backend_, n * sizeof(T));
  }
  std::vector<T> to_host() const {
    std::vector<T> h(size_);
    download(h.data(), size_);
    return h;
  }
  // Copies the whole content of another buffer of the same size (any backends).
  void copy_from(const Buffer& o) {
    if (o.size_ != size_) throw std::runtime_error("Buffer::copy_from: size mismatch");
    if (size_) detail::mem_copy(ptr_, backend_, o.ptr_, o.backend_, size_ * sizeof(T));
  }

 private:
  void check_range(std::size_t n, std::size_t offset) const {
    if (offset + n > size_)
      throw std::out_of_range("Buffer: range [" + std::to_string(offset) + ", " + std::to_string(offset + n) +
                              ") exceeds size " + std::to_string(size_));
  }
  void swap(Buffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(size_, o.size_);
    std::swap(backend_, o.backend_);
  }
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
  Backend backend_ = Backend::CPU;
};

}  // namespace sap
