// Runtime state: buffer storage and a Frame of variable and buffer slots (one Frame per
// GPU thread when threads run in lockstep).
#pragma once
#include <cstdint>
#include <vector>

#include "interpret/value.h"
#include "te/expr.h"

namespace te::interp {

// A buffer's element type as one flat code, so element access is a single switch.
enum class Elem : uint8_t { Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64 };
inline Elem elem_of(DataType t) {
  auto pick = [&](Elem e8, Elem e16, Elem e32, Elem e64) {
    return t.bits() == 8 ? e8 : t.bits() == 16 ? e16 : t.bits() == 32 ? e32 : e64;
  };
  if (t.is_bool()) return Elem::Bool;
  if (t.is_bfloat()) return Elem::BF16;
  if (t.is_float()) return pick(Elem::F16, Elem::F16, Elem::F32, Elem::F64);
  if (t.is_uint()) return pick(Elem::U8, Elem::U16, Elem::U32, Elem::U64);
  return pick(Elem::I8, Elem::I16, Elem::I32, Elem::I64);
}

// The memory behind a buffer: a parameter's NDArray or an Allocate's own storage.
struct BufferStorage {
  const BufferNode* buffer = nullptr;  // for its name in messages
  DataType dtype;                      // element type
  Elem elem = Elem::I32;               // the same, as a code
  void* data = nullptr;
  int64_t size = 0;             // elements
  std::vector<int64_t> shape;   // row-major extents (multi-index accesses)
  std::vector<uint64_t> owned;  // an Allocate's zero-filled storage
};

// Slots are assigned by compile(): one per binding site (parameter, let, loop, allocate),
// so a binding never needs undoing and lookups are an index.
struct Frame {
  std::vector<Scalar> vars;
  std::vector<BufferStorage*> buffers;
  std::vector<Scalar> shuffled;  // each warp shuffle's result for this thread
};

}  // namespace te::interp
