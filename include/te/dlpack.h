/// \file
/// DLPack interchange: the DLPack ABI structs (0.x `DLManagedTensor` and the 1.x
/// `DLManagedTensorVersioned`), declared by te in namespace te::dlpack.
///
/// te does not need DLPack's own header: these declarations follow the DLPack
/// specification (https://dmlc.github.io/dlpack/latest/c_api.html) and have the same
/// memory layout as its C structs, so a pointer from any DLPack producer (PyTorch, NumPy,
/// CuPy, JAX, TVM...) can be passed with a reinterpret_cast, as te::dlpack::from_c()
/// does. They live in a namespace so that they never clash with `dlpack/dlpack.h` when
/// both are included.
///
/// Conversions (declared in te/ndarray.h):
///  - NDArray::from_dlpack(DLManagedTensor*) / from_dlpack(DLManagedTensorVersioned*):
///    zero-copy; the NDArray takes ownership and calls the producer's deleter exactly once,
///    when its last copy is destroyed.
///  - NDArray::to_dlpack() / to_dlpack_versioned(): zero-copy; the consumer calls the
///    returned tensor's deleter once, which releases te's reference to the storage.
///  - NDArray::borrow_dlpack(const DLTensor&): a view for the caller's scope, no ownership.
///  - Built functions and interpret() accept `DLTensor*` (and managed tensors) directly
///    as arguments: the call borrows them and never calls a deleter.
///
/// te arrays live in host memory, are compact row-major and writable: tensors on another
/// device, with non-compact strides, read-only, or of a type te lacks (complex, vectors of
/// lanes) are rejected with a te::Error saying which rule they break.
#pragma once
#include <cstdint>
#include <type_traits>

namespace te::dlpack {

/// The DLPack version te implements (1.1) and writes into DLManagedTensorVersioned.
inline constexpr uint32_t kMajorVersion = 1;
/// The DLPack minor version te implements.
inline constexpr uint32_t kMinorVersion = 1;

/// DLManagedTensorVersioned::flags: the consumer must not write the data.
inline constexpr uint64_t kFlagReadOnly = uint64_t{1} << 0;
/// DLManagedTensorVersioned::flags: the producer made a copy the consumer owns alone.
inline constexpr uint64_t kFlagIsCopied = uint64_t{1} << 1;
/// DLManagedTensorVersioned::flags: sub-byte elements are padded to whole bytes.
inline constexpr uint64_t kFlagIsSubbytePadded = uint64_t{1} << 2;

/// DLPack's version pair (`DLPackVersion`).
struct DLPackVersion {
  uint32_t major;  ///< Incompatible ABI changes bump this.
  uint32_t minor;  ///< Compatible additions bump this.
};

/// Where the data lives (`DLDeviceType`). te accepts kDLCPU only (and produces it).
enum DLDeviceType : int32_t {
  kDLCPU = 1,           ///< Host memory.
  kDLCUDA = 2,          ///< CUDA device memory.
  kDLCUDAHost = 3,      ///< Pinned CUDA host memory (cudaMallocHost).
  kDLOpenCL = 4,        ///< OpenCL device memory.
  kDLVulkan = 7,        ///< Vulkan buffer.
  kDLMetal = 8,         ///< Metal buffer.
  kDLVPI = 9,           ///< Verilog simulator buffer.
  kDLROCM = 10,         ///< ROCm device memory.
  kDLROCMHost = 11,     ///< Pinned ROCm host memory.
  kDLExtDev = 12,       ///< Reserved for extension devices.
  kDLCUDAManaged = 13,  ///< CUDA managed (unified) memory.
  kDLOneAPI = 14,       ///< oneAPI unified shared memory.
  kDLWebGPU = 15,       ///< WebGPU buffer.
  kDLHexagon = 16,      ///< Qualcomm Hexagon DSP memory.
  kDLMAIA = 17,         ///< Microsoft MAIA device memory.
};

/// A device: its type and ordinal (`DLDevice`).
struct DLDevice {
  DLDeviceType device_type;  ///< kDLCPU, kDLCUDA, ...
  int32_t device_id;         ///< Ordinal of the device; 0 for the host.
};

/// Element kinds (`DLDataTypeCode`).
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,           ///< Signed integer.
  kDLUInt = 1,          ///< Unsigned integer.
  kDLFloat = 2,         ///< IEEE floating point.
  kDLOpaqueHandle = 3,  ///< Opaque pointer.
  kDLBfloat = 4,        ///< bfloat16 (16 bits only): te's BFloat(16).
  kDLComplex = 5,       ///< Complex numbers (not supported by te).
  kDLBool = 6,          ///< Boolean stored as one byte per element (bits == 8).
};

/// An element type (`DLDataType`): code, bits per lane, lanes (1 for scalars).
struct DLDataType {
  uint8_t code;    ///< A DLDataTypeCode.
  uint8_t bits;    ///< Bits of one lane: 8, 16, 32, 64.
  uint16_t lanes;  ///< Lanes per element; te accepts 1.
};

/// The tensor description shared by both managed forms (`DLTensor`). The array's first
/// element is at `(char*)data + byte_offset`; `strides` (in elements) may be null, which
/// means compact row-major.
struct DLTensor {
  void* data;            ///< Base pointer (may be null when the tensor has no elements).
  DLDevice device;       ///< Where `data` lives.
  int32_t ndim;          ///< Number of dimensions.
  DLDataType dtype;      ///< Element type.
  int64_t* shape;        ///< `ndim` extents.
  int64_t* strides;      ///< `ndim` strides in elements, or null for compact row-major.
  uint64_t byte_offset;  ///< Bytes from `data` to the first element.
};

/// The unversioned managed tensor of DLPack 0.x (`DLManagedTensor`): whoever holds it
/// calls `deleter(self)` once when done.
struct DLManagedTensor {
  DLTensor dl_tensor;                      ///< The tensor.
  void* manager_ctx;                       ///< The producer's bookkeeping.
  void (*deleter)(DLManagedTensor* self);  ///< Releases the tensor; may be null.
};

/// The versioned managed tensor of DLPack 1.x (`DLManagedTensorVersioned`).
struct DLManagedTensorVersioned {
  DLPackVersion version;                            ///< The producer's DLPack version.
  void* manager_ctx;                                ///< The producer's bookkeeping.
  void (*deleter)(DLManagedTensorVersioned* self);  ///< Releases the tensor; may be null.
  uint64_t flags;                                   ///< kFlagReadOnly, kFlagIsCopied, ...
  DLTensor dl_tensor;                               ///< The tensor.
};

static_assert(std::is_standard_layout_v<DLTensor> && sizeof(DLTensor) == 48,
              "te::dlpack::DLTensor must match DLPack's C layout");
static_assert(sizeof(DLManagedTensor) == 64 && sizeof(DLManagedTensorVersioned) == 80,
              "te's managed DLPack structs must match DLPack's C layout");

/// Reinterprets a pointer to a layout-identical struct of DLPack's own header (for
/// example the global `DLManagedTensor` of `<dlpack/dlpack.h>`) as te's declaration of it:
/// `NDArray::from_dlpack(te::dlpack::from_c<te::dlpack::DLManagedTensor>(p))`. Only the
/// size is checked; pass the matching struct.
template <typename TeStruct, typename CStruct>
TeStruct* from_c(CStruct* p) {
  static_assert(sizeof(TeStruct) == sizeof(CStruct) && std::is_standard_layout_v<CStruct>,
                "te::dlpack::from_c: the struct does not have the layout of TeStruct");
  return reinterpret_cast<TeStruct*>(p);
}

/// The opposite of from_c: te's struct as DLPack's own (e.g. to hand `to_dlpack()` to a
/// library that takes the global `DLManagedTensor` of DLPack's header).
template <typename CStruct, typename TeStruct>
CStruct* to_c(TeStruct* p) {
  static_assert(sizeof(TeStruct) == sizeof(CStruct) && std::is_standard_layout_v<CStruct>,
                "te::dlpack::to_c: the struct does not have the layout of TeStruct");
  return reinterpret_cast<CStruct*>(p);
}

}  // namespace te::dlpack
