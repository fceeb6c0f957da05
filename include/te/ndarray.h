/// \file
/// NDArray: an owning, 64-byte aligned, row-major array of any dtype and shape.
/// Copies share storage (like a shared_ptr); use copy() for a deep copy.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "te/bfloat16.h"
#include "te/dlpack.h"
#include "te/dtype.h"
#include "te/error.h"
#include "te/export.h"
#include "te/float16.h"

namespace te {

/// The DataType of a C++ element type: float -> Float(32), te::half -> Float(16),
/// te::bfloat16 -> BFloat(16), bool -> Bool().
template <typename T>
constexpr DataType dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return Bool();
  else if constexpr (std::is_same_v<T, half>)
    return Float(16);
  else if constexpr (std::is_same_v<T, bfloat16>)
    return BFloat(16);
  else if constexpr (std::is_floating_point_v<T>)
    return Float(8 * sizeof(T));
  else if constexpr (std::is_signed_v<T>)
    return Int(8 * sizeof(T));
  else
    return UInt(8 * sizeof(T));
}

/// An owning, 64-byte aligned, compact row-major array of any dtype and shape, in host
/// memory. Copies share the storage (like a shared_ptr); copy() makes a deep copy.
class TE_API NDArray {
 public:
  /// An undefined array (defined() is false).
  NDArray() = default;

  /// Uninitialised storage (zero-filled) for shape; every extent must be >= 0.
  static NDArray empty(std::vector<int64_t> shape, DataType dtype);
  /// A new array of shape holding values (row-major); T gives the dtype (dtype_of<T>()).
  /// te::Error if the count does not match the shape.
  template <typename T>
  static NDArray from_vector(const std::vector<T>& values, std::vector<int64_t> shape) {
    NDArray a = empty(std::move(shape), dtype_of<T>());
    if (static_cast<int64_t>(values.size()) != a.size())
      throw Error("NDArray::from_vector: " + std::to_string(values.size()) + " values do not fill shape " +
                  a.shape_string() + " (" + std::to_string(a.size()) + " elements)");
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < values.size(); ++i) static_cast<uint8_t*>(a.data())[i] = values[i];
    } else if (!values.empty()) {
      std::memcpy(a.data(), values.data(), values.size() * sizeof(T));
    }
    return a;
  }
  /// All elements, row-major; te::Error unless T is the array's element type.
  template <typename T>
  std::vector<T> to_vector() const {
    check_element_type(dtype_of<T>(), "to_vector");
    std::vector<T> out(static_cast<size_t>(size()));
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<const uint8_t*>(data())[i] != 0;
    } else if (!out.empty()) {
      std::memcpy(out.data(), data(), out.size() * sizeof(T));
    }
    return out;
  }

  /// Whether the array has storage (false for a default-constructed one).
  bool defined() const { return storage_ != nullptr; }
  /// The extent of each dimension.
  const std::vector<int64_t>& shape() const { return shape_; }
  /// The number of dimensions.
  int ndim() const { return static_cast<int>(shape_.size()); }
  /// The element type.
  DataType dtype() const { return dtype_; }
  int64_t size() const;   ///< number of elements
  size_t nbytes() const;  ///< size() * element bytes
  /// The first element (64-byte aligned for arrays te allocates; never null when defined).
  void* data() { return storage_.get(); }
  /// The first element.
  const void* data() const { return storage_.get(); }
  std::string shape_string() const;  ///< "(2, 3, 4)"

  /// Element access by full index; checks the rank, the bounds and the element type.
  template <typename T>
  T& at(const std::vector<int64_t>& index) {
    check_element_type(dtype_of<T>(), "at");
    return static_cast<T*>(data())[offset_of(index)];
  }
  /// Element access by full index (const).
  template <typename T>
  const T& at(const std::vector<int64_t>& index) const {
    check_element_type(dtype_of<T>(), "at");
    return static_cast<const T*>(data())[offset_of(index)];
  }

  /// A deep copy: new storage with the same shape, dtype and values.
  NDArray copy() const;

  // ---- DLPack (te/dlpack.h): zero-copy exchange with other array libraries ----
  /// Takes ownership of a DLPack 0.x managed tensor without copying: the NDArray's
  /// storage is the tensor's data, and `t->deleter(t)` runs exactly once, when the last
  /// NDArray sharing it is destroyed. The tensor must be on the CPU, compact row-major
  /// (null strides, or the strides of that layout), aligned to its element size and of
  /// a type te has (bool, int/uint 8-64, float16/32/64, bfloat16). Otherwise throws te::Error
  /// naming the problem, and the caller keeps ownership (the deleter is not called).
  static NDArray from_dlpack(dlpack::DLManagedTensor* t);
  /// As above for a DLPack 1.x versioned tensor; also rejects a major version other than
  /// 1 and read-only tensors (te arrays are writable).
  static NDArray from_dlpack(dlpack::DLManagedTensorVersioned* t);
  /// A view of memory the caller keeps alive and owns (no deleter is ever called): what
  /// a built function or interpret() does with a `DLTensor*` argument. Same checks as
  /// from_dlpack.
  static NDArray borrow_dlpack(const dlpack::DLTensor& t);
  /// A view of a versioned tensor's data (no ownership); also checks its version and
  /// rejects read-only tensors.
  static NDArray borrow_dlpack(const dlpack::DLManagedTensorVersioned& t);
  /// A DLPack 0.x managed tensor sharing this array's storage (zero-copy; compact
  /// strides given explicitly). The consumer must call its deleter exactly once; until
  /// then the storage stays alive even if every NDArray is gone. te::Error if undefined.
  dlpack::DLManagedTensor* to_dlpack() const;
  /// As to_dlpack, as a DLPack 1.x versioned tensor (version 1.1, flags 0).
  dlpack::DLManagedTensorVersioned* to_dlpack_versioned() const;

  /// .npy files: version 1.0, 2.0 and 3.0, little-endian, C order; bool, ints, uints,
  /// float16/32/64. Errors say which file and why. NumPy has no bfloat16: a file that
  /// holds bfloat16 bits reads as UInt(16) here; load_npy(path, BFloat(16)) reads it as
  /// bfloat16.
  static NDArray load_npy(const std::string& path);
  /// load_npy with the elements read as `dtype`: the file's own type, or BFloat(16) from
  /// a file of 2-byte integers ('<u2' as save_npy writes bfloat16, or '<i2' as from
  /// torch's `t.view(torch.int16)`), whose bits are taken as they are. te::Error naming
  /// the file and both types otherwise (a float16 file is refused: its values would need
  /// a conversion, not a reinterpretation).
  static NDArray load_npy(const std::string& path, DataType dtype);
  /// Writes the array as a version 1.0 .npy file; te::Error naming the file on failure.
  /// bfloat16 arrays are written as '<u2' (uint16, the raw bits: NumPy has no bfloat16);
  /// read them back with load_npy(path, BFloat(16)), or in NumPy with
  /// `(np.load(p).astype(np.uint32) << 16).view(np.float32)`.
  void save_npy(const std::string& path) const;

 private:
  /// Checks a DLTensor and views its first element, kept alive by `keeper` (null: a borrow).
  static NDArray view_of_dlpack(const dlpack::DLTensor& t, std::shared_ptr<void> keeper, const char* what);
  int64_t offset_of(const std::vector<int64_t>& index) const;
  void check_element_type(DataType t, const char* what) const;

  std::shared_ptr<uint8_t> storage_;
  std::vector<int64_t> shape_;
  DataType dtype_;
};

}  // namespace te
