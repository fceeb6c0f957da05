// TMA tensor maps in the emulation: CUtensorMap and cuTensorMapEncodeTiled, checked as the
// CUDA driver API documents them (cuda.h, "Tensor Map Object Managment"). The map holds
// what hopper_emulation.h's cp.async.bulk.tensor reads; the tiled mode with element
// strides of 1 and no interleave is what te uses, anything else is refused.
#pragma once
#include <cstdint>
#include <cstring>

typedef enum CUresult_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 } CUresult;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
typedef struct alignas(64) CUtensorMap_st {
  unsigned long long opaque[16];
} CUtensorMap;
typedef enum CUtensorMapDataType_enum {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16,
  CU_TENSOR_MAP_DATA_TYPE_UINT32,
  CU_TENSOR_MAP_DATA_TYPE_INT32,
  CU_TENSOR_MAP_DATA_TYPE_UINT64,
  CU_TENSOR_MAP_DATA_TYPE_INT64,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
} CUtensorMapDataType;
typedef enum CUtensorMapInterleave_enum {
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  CU_TENSOR_MAP_INTERLEAVE_16B,
  CU_TENSOR_MAP_INTERLEAVE_32B
} CUtensorMapInterleave;
typedef enum CUtensorMapSwizzle_enum {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B,
  CU_TENSOR_MAP_SWIZZLE_64B,
  CU_TENSOR_MAP_SWIZZLE_128B
} CUtensorMapSwizzle;
typedef enum CUtensorMapL2promotion_enum {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B
} CUtensorMapL2promotion;
typedef enum CUtensorMapFloatOOBfill_enum {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
} CUtensorMapFloatOOBfill;

namespace te_emu {

// What the emulation keeps in a CUtensorMap's 128 bytes.
struct TensorMapFields {
  unsigned long long magic;
  const unsigned char* global;
  unsigned long long dims[5];
  unsigned long long strides[5];  // bytes; strides[0] is the element size
  unsigned box[5];
  unsigned rank, element_bytes, swizzle_width;
};
static_assert(sizeof(TensorMapFields) <= sizeof(CUtensorMap), "the fields fit in the map");
constexpr unsigned long long kTensorMapMagic = 0x7465746d61703031ull;  // "tetmap01"

inline unsigned tensor_map_element_bytes(CUtensorMapDataType t) {
  switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
  }
  return 0;
}

}  // namespace te_emu

// The driver's requirements, each an error here: the map 64-byte aligned; rank 1..5; the
// global address 16-byte aligned; dims in 1..2^32; strides (rank - 1 of them, bytes) a
// multiple of 16 below 2^40, each at least the extent of the dimension below; box dims in
// 1..256 with box[0] * element size a multiple of 16 and, when swizzled, at most the
// swizzle's span; element strides in 1..8 (te: all 1).
inline CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* global,
                                       const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                       const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  const unsigned element = te_emu::tensor_map_element_bytes(type);
  if (map == nullptr || reinterpret_cast<uintptr_t>(map) % 64 || element == 0 || rank < 1 || rank > 5 ||
      reinterpret_cast<uintptr_t>(global) % 16 || interleave != CU_TENSOR_MAP_INTERLEAVE_NONE ||
      swizzle > CU_TENSOR_MAP_SWIZZLE_128B)
    return CUDA_ERROR_INVALID_VALUE;
  static const unsigned spans[4] = {0, 32, 64, 128};
  te_emu::TensorMapFields f{};
  f.magic = te_emu::kTensorMapMagic;
  f.global = static_cast<const unsigned char*>(global);
  f.rank = rank;
  f.element_bytes = element;
  f.swizzle_width = spans[swizzle];
  f.strides[0] = element;
  for (unsigned i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32) || box[i] == 0 || box[i] > 256 || element_strides[i] != 1)
      return CUDA_ERROR_INVALID_VALUE;
    f.dims[i] = dims[i];
    f.box[i] = box[i];
    if (i > 0) {
      const cuuint64_t s = strides[i - 1];
      if (s % 16 || s >= (1ull << 40) || s < f.strides[i - 1] * dims[i - 1]) return CUDA_ERROR_INVALID_VALUE;
      f.strides[i] = s;
    }
  }
  if ((box[0] * element) % 16 || (f.swizzle_width && box[0] * element > f.swizzle_width))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(map, 0, sizeof *map);
  std::memcpy(map, &f, sizeof f);
  return CUDA_SUCCESS;
}
