// ArrayView -> DLPack (dlpack 0.6+, Debian libdlpack-dev). The tensor aliases the simulator's
// buffer; its deleter frees only the metadata allocated here.
#include <stdexcept>

#include "launch/cuda_api.hpp"
#include "sap/rollout.hpp"

#if defined(SAP_WITH_DLPACK)
#include <dlpack/dlpack.h>
#endif

namespace sap {

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
