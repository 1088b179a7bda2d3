// ArrayView: host copies, and DLPack tensors (dlpack 0.6+, Debian libdlpack-dev). A tensor
// aliases the simulator's buffer; its deleter frees only the metadata allocated here.
#include <stdexcept>
#include <string>
#include <type_traits>

#include "launch/cuda_api.hpp"
#include "sap/rollout.hpp"

#if defined(SAP_WITH_DLPACK)
#include <dlpack/dlpack.h>
#endif

namespace sap {

template <class T>
std::vector<T> ArrayView::to_host() const {
  const DType want = std::is_same_v<T, double> ? DType::F64 : std::is_same_v<T, float> ? DType::F32 : DType::I32;
  if (dtype != want)
    throw std::invalid_argument("ArrayView::to_host: the view holds " +
                                std::string(dtype == DType::F64 ? "fp64" : dtype == DType::F32 ? "fp32" : "int32") +
                                " elements");
  std::vector<T> out(static_cast<std::size_t>(ndim > 0 ? size() : 0));
  if (!out.empty()) detail::mem_copy(out.data(), Backend::CPU, data, backend, out.size() * sizeof(T));
  return out;
}
template std::vector<double> ArrayView::to_host<double>() const;
template std::vector<float> ArrayView::to_host<float>() const;
template std::vector<int> ArrayView::to_host<int>() const;

#if defined(SAP_WITH_DLPACK)
namespace {
struct Holder {
  DLManagedTensor tensor;
  int64_t shape[3];
  int64_t strides[3];
};
void delete_holder(DLManagedTensor* t) { delete static_cast<Holder*>(t->manager_ctx); }
}  // namespace

int ArrayView::device_id() const {
  if (backend != Backend::CUDA) return 0;
  const int d = cuda::device_of(data);
  return d >= 0 ? d : cuda::current_device();
}

DLManagedTensor* ArrayView::to_dlpack() const {
  if (ndim < 1 || ndim > 3) throw std::runtime_error("ArrayView::to_dlpack: empty view");
  auto* h = new Holder{};
  for (int i = 0; i < ndim; ++i) {
    h->shape[i] = shape[static_cast<std::size_t>(i)];
    h->strides[i] = strides[static_cast<std::size_t>(i)];
  }
  DLTensor& t = h->tensor.dl_tensor;
  t.data = data;
  t.device.device_type = backend == Backend::CUDA ? kDLCUDA : kDLCPU;
  t.device.device_id = device_id();
  t.ndim = ndim;
  t.dtype.code = dtype == DType::I32 ? kDLInt : kDLFloat;
  t.dtype.bits = dtype == DType::F64 ? 64 : 32;
  t.dtype.lanes = 1;
  t.shape = h->shape;
  t.strides = h->strides;
  t.byte_offset = 0;
  h->tensor.manager_ctx = h;
  h->tensor.deleter = delete_holder;
  return &h->tensor;
}
#else
int ArrayView::device_id() const {
  if (backend != Backend::CUDA) return 0;
  const int d = cuda::device_of(data);
  return d >= 0 ? d : cuda::current_device();
}

DLManagedTensor* ArrayView::to_dlpack() const {
  throw std::runtime_error("ArrayView::to_dlpack: this build has no DLPack (install libdlpack-dev and reconfigure)");
}
#endif

}  // namespace sap
