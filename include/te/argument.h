/// \file
/// Argument: one value passed to interpret() or to a built function: an NDArray or a scalar.
#pragma once
#include <cstdint>

#include "te/export.h"
#include "te/ndarray.h"

namespace te {

/// One argument of a call: an NDArray (or a borrowed DLPack tensor) for a buffer
/// parameter, or a number for a scalar parameter. Converts implicitly, so calls read
/// `f(a, b, c, 0.5)`.
class TE_API Argument {
 public:
  /// What the argument holds.
  enum class Kind {
    Array,  ///< an NDArray
    Int,    ///< an integer (for integer or float scalar parameters)
    Float   ///< a floating-point number (for float scalar parameters)
  };
  /// An array (shares its storage).
  Argument(NDArray a) : kind_(Kind::Array), array_(std::move(a)) {}  // NOLINT
  /// An integer scalar.
  Argument(int v) : kind_(Kind::Int), int_(v) {}  // NOLINT
  /// An integer scalar.
  Argument(int64_t v) : kind_(Kind::Int), int_(v) {}  // NOLINT
  /// A floating-point scalar (rounded to the parameter's type at the call).
  Argument(float v) : kind_(Kind::Float), float_(v) {}  // NOLINT
  /// A floating-point scalar (rounded to the parameter's type at the call).
  Argument(double v) : kind_(Kind::Float), float_(v) {}  // NOLINT
  /// A DLPack tensor, borrowed for the call (see NDArray::borrow_dlpack): the caller
  /// keeps it alive and no deleter is called.
  Argument(const dlpack::DLTensor* t)  // NOLINT
      : kind_(Kind::Array), array_(NDArray::borrow_dlpack(*non_null(t))) {}
  /// A DLPack 0.x managed tensor, borrowed for the call (its deleter is not called).
  Argument(const dlpack::DLManagedTensor* t)  // NOLINT
      : kind_(Kind::Array), array_(NDArray::borrow_dlpack(non_null(t)->dl_tensor)) {}
  /// A DLPack 1.x managed tensor, borrowed for the call (its deleter is not called).
  Argument(const dlpack::DLManagedTensorVersioned* t)  // NOLINT
      : kind_(Kind::Array), array_(NDArray::borrow_dlpack(*non_null(t))) {}

  /// What the argument holds.
  Kind kind() const { return kind_; }
  /// kind() == Kind::Array.
  bool is_array() const { return kind_ == Kind::Array; }
  /// The array (undefined unless is_array()).
  const NDArray& array() const { return array_; }
  /// The array (undefined unless is_array()).
  NDArray& array() { return array_; }
  /// The value of a Kind::Int argument.
  int64_t int_value() const { return int_; }
  /// The value of a Kind::Float argument.
  double float_value() const { return float_; }

 private:
  template <typename T>
  static const T* non_null(const T* p) {
    if (p == nullptr) throw Error("a null DLPack tensor pointer was passed as an argument");
    return p;
  }
  Kind kind_;
  NDArray array_;
  int64_t int_ = 0;
  double float_ = 0;
};

}  // namespace te
