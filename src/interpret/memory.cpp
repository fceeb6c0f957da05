#include "interpret/memory.h"

#include <fmt/format.h>

namespace te::interp {
namespace {

std::string join(const int64_t* values, size_t count) {
  std::string s;
  for (size_t k = 0; k < count; ++k) s += (k ? ", " : "") + std::to_string(values[k]);
  return s;
}

}  // namespace

void out_of_bounds(const BufferStorage& st, const int64_t* indices, size_t count, bool is_store) {
  const char* what = is_store ? "store to" : "load from";
  if (count == 1)
    throw Error(
        fmt::format("out-of-bounds {} buffer '{}': index {} is outside "
                    "[0, {}) (buffer size {})",
                    what, st.buffer->name, indices[0], st.size, st.size));
  throw Error(
      fmt::format("out-of-bounds {} buffer '{}': index ({}) is outside "
                  "shape ({}) (buffer size {})",
                  what, st.buffer->name, join(indices, count), join(st.shape.data(), st.shape.size()), st.size));
}

void allocate_storage(BufferStorage* st, const BufferNode* buffer, const std::vector<int64_t>& shape) {
  int64_t size = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0)
      throw Error(
          fmt::format("Allocate of buffer '{}': dimension {} has negative "
                      "extent {}",
                      buffer->name, k, shape[k]));
    // Keep the byte count far from overflowing (and from exhausting memory silently).
    constexpr int64_t kMaxBytes = int64_t{1} << 40;
    if (shape[k] != 0 && size > kMaxBytes / 8 / shape[k])
      throw Error(fmt::format("Allocate of buffer '{}' with shape ({}) is too large", buffer->name,
                              join(shape.data(), shape.size())));
    size *= shape[k];
  }
  st->buffer = buffer;
  st->dtype = buffer->dtype;
  st->elem = elem_of(buffer->dtype);
  st->shape = shape;
  st->size = size;
  int64_t bytes = size * buffer->dtype.bytes();
  st->owned.assign(static_cast<size_t>((bytes + 7) / 8), 0);
  st->data = st->owned.data();
}

int64_t checked_offset(const BufferStorage& st, const int64_t* indices, size_t count, bool is_store) {
  if (count == 1) {
    if (indices[0] < 0 || indices[0] >= st.size) out_of_bounds(st, indices, count, is_store);
    return indices[0];
  }
  if (count == 0) {
    if (st.size < 1) out_of_bounds(st, indices, count, is_store);
    return 0;
  }
  if (count != st.shape.size())
    throw Error(
        fmt::format("{} buffer '{}' with {} indices, but it has {} "
                    "dimensions",
                    is_store ? "store to" : "load from", st.buffer->name, count, st.shape.size()));
  int64_t offset = 0;
  for (size_t k = 0; k < count; ++k) {
    if (indices[k] < 0 || indices[k] >= st.shape[k]) out_of_bounds(st, indices, count, is_store);
    offset = offset * st.shape[k] + indices[k];
  }
  return offset;
}

}  // namespace te::interp
