// NDArray: an owning, 64-byte aligned, row-major array of any dtype and shape.
// Copies share storage (like a shared_ptr); use copy() for a deep copy.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "te/dtype.h"
#include "te/error.h"
#include "te/float16.h"

namespace te {

// The DataType of a C++ element type: float -> Float(32), te::half -> Float(16), bool -> Bool().
template <typename T>
constexpr DataType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return Bool();
  else if constexpr (std::is_same_v<T, half>) return Float(16);
  else if constexpr (std::is_floating_point_v<T>) return Float(8 * sizeof(T));
  else if constexpr (std::is_signed_v<T>) return Int(8 * sizeof(T));
  else return UInt(8 * sizeof(T));
}

class NDArray {
 public:
  NDArray() = default;

  // Uninitialised storage (zero-filled) for shape; every extent must be >= 0.
  static NDArray empty(std::vector<int64_t> shape, DataType dtype);
  template <typename T>
  static NDArray from_vector(const std::vector<T>& values, std::vector<int64_t> shape) {
    NDArray a = empty(std::move(shape), dtype_of<T>());
    if (static_cast<int64_t>(values.size()) != a.size())
      throw Error("NDArray::from_vector: " + std::to_string(values.size()) +
                  " values do not fill shape " + a.shape_string() + " (" +
                  std::to_string(a.size()) + " elements)");
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < values.size(); ++i) static_cast<uint8_t*>(a.data())[i] = values[i];
    } else if (!values.empty()) {
      std::memcpy(a.data(), values.data(), values.size() * sizeof(T));
    }
    return a;
  }
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

  bool defined() const { return storage_ != nullptr; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  DataType dtype() const { return dtype_; }
  int64_t size() const;           // number of elements
  size_t nbytes() const;          // size() * element bytes
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  std::string shape_string() const;  // "(2, 3, 4)"

  // Element access by full index; checks the rank, the bounds and the element type.
  template <typename T>
  T& at(const std::vector<int64_t>& index) {
    check_element_type(dtype_of<T>(), "at");
    return static_cast<T*>(data())[offset_of(index)];
  }
  template <typename T>
  const T& at(const std::vector<int64_t>& index) const {
    check_element_type(dtype_of<T>(), "at");
    return static_cast<const T*>(data())[offset_of(index)];
  }

  NDArray copy() const;

  // .npy files: version 1.0, 2.0 and 3.0, little-endian, C order; bool, ints, uints,
  // float16/32/64. Errors say which file and why.
  static NDArray load_npy(const std::string& path);
  void save_npy(const std::string& path) const;

 private:
  int64_t offset_of(const std::vector<int64_t>& index) const;
  void check_element_type(DataType t, const char* what) const;

  std::shared_ptr<uint8_t> storage_;
  std::vector<int64_t> shape_;
  DataType dtype_;
};

}  // namespace te
