// Buffer memory: element reads and writes by dtype, bounds-checked index flattening and
// Allocate's storage.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "interpret/frame.h"
#include "te/bfloat16.h"
#include "te/float16.h"

namespace te::interp {

// Gives storage its own zero-filled memory of the given shape (te::Error on a negative
// extent or a size that does not fit in memory).
void allocate_storage(BufferStorage* storage, const BufferNode* buffer, const std::vector<int64_t>& shape);

// The element offset of one access: either a single flat index or one index per
// dimension of the storage (row-major). Throws te::Error naming the buffer, the index
// and the size when the access is out of bounds.
int64_t checked_offset(const BufferStorage& storage, const int64_t* indices, size_t count, bool is_store);
// The common case: one flat index.
[[noreturn]] void out_of_bounds(const BufferStorage& storage, const int64_t* indices, size_t count, bool is_store);
inline int64_t checked_offset(const BufferStorage& storage, int64_t index, bool is_store) {
  if (index < 0 || index >= storage.size) out_of_bounds(storage, &index, 1, is_store);
  return index;
}

// The element at offset (already checked) as a lane of the storage's dtype, and back.
inline Scalar read_element(const BufferStorage& st, int64_t k) {
  const void* p = st.data;
  switch (st.elem) {
    case Elem::Bool: return int_scalar(static_cast<const uint8_t*>(p)[k] != 0);
    case Elem::I8: return int_scalar(static_cast<const int8_t*>(p)[k]);
    case Elem::I16: return int_scalar(static_cast<const int16_t*>(p)[k]);
    case Elem::I32: return int_scalar(static_cast<const int32_t*>(p)[k]);
    case Elem::I64: return int_scalar(static_cast<const int64_t*>(p)[k]);
    case Elem::U8: return int_scalar(static_cast<const uint8_t*>(p)[k]);
    case Elem::U16: return int_scalar(static_cast<const uint16_t*>(p)[k]);
    case Elem::U32: return int_scalar(static_cast<const uint32_t*>(p)[k]);
    case Elem::U64: return int_scalar(static_cast<int64_t>(static_cast<const uint64_t*>(p)[k]));
    case Elem::F16: return float_scalar(static_cast<float>(static_cast<const half*>(p)[k]));
    case Elem::BF16: return float_scalar(static_cast<float>(static_cast<const bfloat16*>(p)[k]));
    case Elem::F32: return float_scalar(static_cast<const float*>(p)[k]);
    case Elem::F64: return float_scalar(static_cast<const double*>(p)[k]);
  }
  return int_scalar(0);
}

// Int/UInt lanes are already wrapped to the type's width; the narrowings keep the bits.
inline void write_element(const BufferStorage& st, int64_t k, Scalar v) {
  void* p = st.data;
  switch (st.elem) {
    case Elem::Bool: static_cast<uint8_t*>(p)[k] = v.i != 0; return;
    case Elem::I8:
    case Elem::U8: static_cast<uint8_t*>(p)[k] = static_cast<uint8_t>(v.i); return;
    case Elem::I16:
    case Elem::U16: static_cast<uint16_t*>(p)[k] = static_cast<uint16_t>(v.i); return;
    case Elem::I32:
    case Elem::U32: static_cast<uint32_t*>(p)[k] = static_cast<uint32_t>(v.i); return;
    case Elem::I64:
    case Elem::U64: static_cast<uint64_t*>(p)[k] = static_cast<uint64_t>(v.i); return;
    case Elem::F16: static_cast<half*>(p)[k] = half(static_cast<float>(v.f)); return;
    case Elem::BF16: static_cast<bfloat16*>(p)[k] = bfloat16(static_cast<float>(v.f)); return;
    case Elem::F32: static_cast<float*>(p)[k] = static_cast<float>(v.f); return;
    case Elem::F64: static_cast<double*>(p)[k] = v.f; return;
  }
}

// st[k] += v, an atomic add's lane (one thread runs at a time): the sum of the element
// and v rounded once to the storage's type; integers wrap.
inline void add_element(const BufferStorage& st, int64_t k, Scalar v) {
  Scalar sum = read_element(st, k);
  const bool is_float = st.elem == Elem::F16 || st.elem == Elem::BF16 || st.elem == Elem::F32 || st.elem == Elem::F64;
  if (is_float)
    sum.f += v.f;
  else
    sum.i = static_cast<int64_t>(static_cast<uint64_t>(sum.i) + static_cast<uint64_t>(v.i));
  write_element(st, k, sum);
}

}  // namespace te::interp
