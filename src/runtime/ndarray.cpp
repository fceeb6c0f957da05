// NDArray storage, shape bookkeeping and checked element access.
#include "te/ndarray.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace te {
namespace {

constexpr size_t kAlignment = 64;

bool is_supported_element_type(DataType t) {
  if (t.lanes() != 1) return false;
  if (t.is_bool()) return true;
  if (t.is_integer()) return t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  if (t.is_bfloat()) return t.bits() == 16;
  if (t.is_float()) return t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  return false;
}

std::string format_shape(const std::vector<int64_t>& shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

// Zero-filled storage of at least one aligned block, so even an empty array has a
// valid, non-null, 64-byte aligned pointer.
std::shared_ptr<uint8_t> allocate_zeroed(size_t nbytes, const std::vector<int64_t>& shape, DataType dtype) {
  // nbytes <= PTRDIFF_MAX was checked by the caller, so rounding up cannot wrap.
  const size_t rounded = nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    throw Error(fmt::format("NDArray::empty: cannot allocate {} bytes for a {} array of shape {}", nbytes,
                            dtype.to_string(), format_shape(shape)));
  }
  std::memset(p, 0, rounded);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

}  // namespace

NDArray NDArray::empty(std::vector<int64_t> shape, DataType dtype) {
  if (!is_supported_element_type(dtype)) {
    throw Error(
        fmt::format("NDArray::empty: unsupported dtype {} (an array holds bool, int8/16/32/64, "
                    "uint8/16/32/64, float16/32/64 or bfloat16 elements)",
                    dtype.to_string()));
  }
  bool has_zero_extent = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      throw Error(fmt::format("NDArray::empty: dimension {} of shape {} has negative extent {}", d, format_shape(shape),
                              shape[d]));
    }
    has_zero_extent = has_zero_extent || shape[d] == 0;
  }
  int64_t count = has_zero_extent ? 0 : 1;
  for (size_t d = 0; d < shape.size() && count != 0; ++d) {
    if (__builtin_mul_overflow(count, shape[d], &count)) {
      throw Error(fmt::format("NDArray::empty: shape {} has more than 2^63 - 1 elements", format_shape(shape)));
    }
  }
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(dtype.bytes()), &nbytes) ||
      static_cast<uint64_t>(nbytes) > static_cast<uint64_t>(std::numeric_limits<ptrdiff_t>::max()) - kAlignment) {
    throw Error(fmt::format("NDArray::empty: a {} array of shape {} needs more bytes than the address space holds",
                            dtype.to_string(), format_shape(shape)));
  }
  NDArray a;
  a.storage_ = allocate_zeroed(static_cast<size_t>(nbytes), shape, dtype);
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  return a;
}

int64_t NDArray::size() const {
  if (!defined()) return 0;
  int64_t count = 1;
  for (int64_t extent : shape_) count *= extent;  // cannot overflow: checked in empty()
  return count;
}

size_t NDArray::nbytes() const {
  return defined() ? static_cast<size_t>(size()) * static_cast<size_t>(dtype_.bytes()) : 0;
}

std::string NDArray::shape_string() const { return defined() ? format_shape(shape_) : "(undefined)"; }

NDArray NDArray::copy() const {
  if (!defined()) return NDArray();
  NDArray out = empty(shape_, dtype_);
  if (nbytes() != 0) std::memcpy(out.data(), data(), nbytes());
  return out;
}

int64_t NDArray::offset_of(const std::vector<int64_t>& index) const {
  if (index.size() != shape_.size()) {
    throw Error(fmt::format("NDArray::at: index [{}] has {} entries but the array of shape {} has rank {}",
                            fmt::join(index, ", "), index.size(), shape_string(), shape_.size()));
  }
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape_[d]) {
      throw Error(
          fmt::format("NDArray::at: index [{}] is out of bounds: entry {} is {} but dimension {} of shape {} "
                      "has extent {}",
                      fmt::join(index, ", "), d, index[d], d, shape_string(), shape_[d]));
    }
    offset = offset * shape_[d] + index[d];
  }
  return offset;
}

void NDArray::check_element_type(DataType t, const char* what) const {
  if (!defined()) {
    throw Error(fmt::format("NDArray::{}: the array is undefined (default-constructed)", what));
  }
  if (t != dtype_) {
    throw Error(fmt::format("NDArray::{}: requested element type {} but the array holds {}", what, t.to_string(),
                            dtype_.to_string()));
  }
}

}  // namespace te
