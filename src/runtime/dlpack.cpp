// NDArray <-> DLPack: zero-copy in both directions, ownership through the deleters.
#include <fmt/format.h>

#include <limits>
#include <string>
#include <vector>

#include "te/ndarray.h"

namespace te {
namespace {

using dlpack::DLDataType;
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;
using dlpack::DLTensor;

// Data of tensors without elements whose producer gave no pointer: te arrays always have
// a non-null, 64-byte aligned data pointer, and nothing is ever read or written here.
alignas(64) uint8_t empty_tensor_block[64];

std::string device_name(dlpack::DLDeviceType t) {
  switch (t) {
    case dlpack::kDLCPU: return "kDLCPU";
    case dlpack::kDLCUDA: return "kDLCUDA";
    case dlpack::kDLCUDAHost: return "kDLCUDAHost";
    case dlpack::kDLOpenCL: return "kDLOpenCL";
    case dlpack::kDLVulkan: return "kDLVulkan";
    case dlpack::kDLMetal: return "kDLMetal";
    case dlpack::kDLVPI: return "kDLVPI";
    case dlpack::kDLROCM: return "kDLROCM";
    case dlpack::kDLROCMHost: return "kDLROCMHost";
    case dlpack::kDLExtDev: return "kDLExtDev";
    case dlpack::kDLCUDAManaged: return "kDLCUDAManaged";
    case dlpack::kDLOneAPI: return "kDLOneAPI";
    case dlpack::kDLWebGPU: return "kDLWebGPU";
    case dlpack::kDLHexagon: return "kDLHexagon";
    case dlpack::kDLMAIA: return "kDLMAIA";
  }
  return fmt::format("device type {}", static_cast<int32_t>(t));
}

std::string dl_type_text(DLDataType t) {
  return fmt::format("{{code {}, bits {}, lanes {}}}", t.code, t.bits, t.lanes);
}

DataType from_dl_type(DLDataType t, const char* what) {
  if (t.lanes != 1)
    throw Error(fmt::format("{}: element type {} has {} lanes; te arrays hold scalars (lanes 1)", what, dl_type_text(t),
                            t.lanes));
  const bool common_width = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  switch (t.code) {
    case dlpack::kDLInt:
      if (common_width) return Int(t.bits);
      break;
    case dlpack::kDLUInt:
      if (common_width) return UInt(t.bits);
      break;
    case dlpack::kDLFloat:
      if (t.bits == 16 || t.bits == 32 || t.bits == 64) return Float(t.bits);
      break;
    case dlpack::kDLBool:
      if (t.bits == 8) return Bool();
      break;
    case dlpack::kDLBfloat:
      if (t.bits == 16) return BFloat(16);
      break;
    case dlpack::kDLComplex: throw Error(fmt::format("{}: complex elements are not supported by te", what));
    case dlpack::kDLOpaqueHandle: throw Error(fmt::format("{}: opaque handle elements are not supported by te", what));
    default:
      throw Error(fmt::format("{}: unknown DLPack type code {} (element type {})", what, t.code, dl_type_text(t)));
  }
  throw Error(
      fmt::format("{}: element type {} has an unsupported width of {} bits for its "
                  "code (te has bool of 8 bits, int/uint of 8/16/32/64, float of "
                  "16/32/64, bfloat of 16)",
                  what, dl_type_text(t), t.bits));
}

DLDataType to_dl_type(DataType t) {
  uint8_t code = t.is_bool()     ? dlpack::kDLBool
                 : t.is_bfloat() ? dlpack::kDLBfloat
                 : t.is_int()    ? dlpack::kDLInt
                 : t.is_uint()   ? dlpack::kDLUInt
                                 : dlpack::kDLFloat;
  return DLDataType{code, static_cast<uint8_t>(t.bytes() * 8), 1};
}

std::string join(const int64_t* values, int32_t n) { return fmt::format("({})", fmt::join(values, values + n, ", ")); }

}  // namespace

// Checks everything te requires of a DLTensor and returns an NDArray whose storage
// pointer is the tensor's first element, owned by `keeper` (the caller's aliasing base).
NDArray NDArray::view_of_dlpack(const DLTensor& t, std::shared_ptr<void> keeper, const char* what) {
  if (t.device.device_type != dlpack::kDLCPU)
    throw Error(
        fmt::format("{}: the tensor is on device {} (id {}); te arrays live in host "
                    "memory (kDLCPU): copy it to the CPU first",
                    what, device_name(t.device.device_type), t.device.device_id));
  DataType dtype = from_dl_type(t.dtype, what);
  if (t.ndim < 0) throw Error(fmt::format("{}: negative ndim {}", what, t.ndim));
  if (t.ndim > 0 && t.shape == nullptr)
    throw Error(fmt::format("{}: ndim is {} but the shape pointer is null", what, t.ndim));
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  int64_t count = 1;
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (shape[d] < 0)
      throw Error(
          fmt::format("{}: dimension {} of shape {} has negative extent {}", what, d, join(t.shape, t.ndim), shape[d]));
  }
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (shape[d] == 0) {
      count = 0;
      break;
    }
    if (__builtin_mul_overflow(count, shape[d], &count) ||
        count > std::numeric_limits<ptrdiff_t>::max() / dtype.bytes())
      throw Error(fmt::format("{}: shape {} has more bytes than the address space holds", what, join(t.shape, t.ndim)));
  }
  if (t.strides != nullptr && count != 0) {
    std::vector<int64_t> expected(static_cast<size_t>(t.ndim));
    int64_t stride = 1;
    bool compact = true;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      expected[d] = stride;
      // A dimension of extent 1 is never stepped over, so any stride describes it.
      if (shape[d] != 1 && t.strides[d] != stride) compact = false;
      stride *= shape[d];
    }
    if (!compact)
      throw Error(
          fmt::format("{}: strides {} of shape {} are not compact row-major (expected "
                      "{}); te arrays are compact row-major: make the tensor contiguous "
                      "first",
                      what, join(t.strides, t.ndim), join(t.shape, t.ndim), join(expected.data(), t.ndim)));
  }
  uint8_t* first = nullptr;
  if (t.data == nullptr) {
    if (count != 0)
      throw Error(
          fmt::format("{}: the data pointer is null but shape {} has {} elements", what, join(t.shape, t.ndim), count));
    first = empty_tensor_block;
  } else {
    first = static_cast<uint8_t*>(t.data) + t.byte_offset;
    if (reinterpret_cast<uintptr_t>(first) % static_cast<uintptr_t>(dtype.bytes()) != 0)
      throw Error(
          fmt::format("{}: the first element (data + byte_offset {}) is not aligned to "
                      "its {}-byte {} elements",
                      what, t.byte_offset, dtype.bytes(), dtype.to_string()));
  }
  NDArray a;
  a.storage_ = std::shared_ptr<uint8_t>(std::move(keeper), first);
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  return a;
}

namespace {

// Calls the producer's deleter when the last NDArray sharing the data goes away.
template <typename Managed>
struct DlpackOwner {
  Managed* managed;
  explicit DlpackOwner(Managed* m) : managed(m) {}
  DlpackOwner(const DlpackOwner&) = delete;
  DlpackOwner& operator=(const DlpackOwner&) = delete;
  ~DlpackOwner() {
    if (managed->deleter != nullptr) managed->deleter(managed);
  }
};

// What te hands out: a reference to the storage plus the shape and strides the
// DLTensor points into, freed by the deleter.
template <typename Managed>
struct DlpackExport {
  NDArray array;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  Managed managed{};
  static void deleter(Managed* self) { delete static_cast<DlpackExport*>(self->manager_ctx); }
};

void check_versioned(const DLManagedTensorVersioned& t, const char* what) {
  if (t.version.major != dlpack::kMajorVersion)
    throw Error(
        fmt::format("{}: DLPack version {}.{} is not supported (te reads major version "
                    "{})",
                    what, t.version.major, t.version.minor, dlpack::kMajorVersion));
  if ((t.flags & dlpack::kFlagReadOnly) != 0)
    throw Error(
        fmt::format("{}: the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) but te "
                    "arrays are writable: pass a writable copy",
                    what));
}

template <typename Managed>
Managed* export_array(const NDArray& a, DLTensor Managed::*tensor_member, const char* what) {
  if (!a.defined()) throw Error(fmt::format("{}: the array is undefined (default-constructed)", what));
  auto ctx = std::make_unique<DlpackExport<Managed>>();
  ctx->array = a;
  ctx->shape = a.shape();
  ctx->strides.assign(ctx->shape.size(), 1);
  for (size_t d = ctx->shape.size(); d-- > 1;) ctx->strides[d - 1] = ctx->strides[d] * ctx->shape[d];
  DLTensor& t = ctx->managed.*tensor_member;
  t.data = ctx->array.data();
  t.device = dlpack::DLDevice{dlpack::kDLCPU, 0};
  t.ndim = static_cast<int32_t>(ctx->shape.size());
  t.dtype = to_dl_type(a.dtype());
  t.shape = ctx->shape.empty() ? nullptr : ctx->shape.data();
  t.strides = ctx->strides.empty() ? nullptr : ctx->strides.data();
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = &DlpackExport<Managed>::deleter;
  return &ctx.release()->managed;
}

}  // namespace

NDArray NDArray::from_dlpack(DLManagedTensor* t) {
  const char* what = "NDArray::from_dlpack";
  if (t == nullptr) throw Error(fmt::format("{}: null DLManagedTensor pointer", what));
  // Validate with a keeper that owns nothing, so that a rejected tensor stays the caller's.
  NDArray checked = view_of_dlpack(t->dl_tensor, nullptr, what);
  auto owner = std::make_shared<DlpackOwner<DLManagedTensor>>(t);
  checked.storage_ = std::shared_ptr<uint8_t>(std::move(owner), checked.storage_.get());
  return checked;
}

NDArray NDArray::from_dlpack(DLManagedTensorVersioned* t) {
  const char* what = "NDArray::from_dlpack";
  if (t == nullptr) throw Error(fmt::format("{}: null DLManagedTensorVersioned pointer", what));
  check_versioned(*t, what);
  NDArray checked = view_of_dlpack(t->dl_tensor, nullptr, what);
  auto owner = std::make_shared<DlpackOwner<DLManagedTensorVersioned>>(t);
  checked.storage_ = std::shared_ptr<uint8_t>(std::move(owner), checked.storage_.get());
  return checked;
}

NDArray NDArray::borrow_dlpack(const DLTensor& t) { return view_of_dlpack(t, nullptr, "DLPack argument"); }

NDArray NDArray::borrow_dlpack(const DLManagedTensorVersioned& t) {
  check_versioned(t, "DLPack argument");
  return view_of_dlpack(t.dl_tensor, nullptr, "DLPack argument");
}

DLManagedTensor* NDArray::to_dlpack() const {
  return export_array(*this, &DLManagedTensor::dl_tensor, "NDArray::to_dlpack");
}

DLManagedTensorVersioned* NDArray::to_dlpack_versioned() const {
  auto* t = export_array(*this, &DLManagedTensorVersioned::dl_tensor, "NDArray::to_dlpack_versioned");
  t->version = dlpack::DLPackVersion{dlpack::kMajorVersion, dlpack::kMinorVersion};
  t->flags = 0;
  return t;
}

}  // namespace te
