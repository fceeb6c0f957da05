// Argument: one value passed to interpret() or to a built function: an NDArray or a scalar.
#pragma once
#include <cstdint>

#include "te/ndarray.h"

namespace te {

class Argument {
 public:
  enum class Kind { Array, Int, Float };
  Argument(NDArray a) : kind_(Kind::Array), array_(std::move(a)) {}  // NOLINT
  Argument(int v) : kind_(Kind::Int), int_(v) {}                     // NOLINT
  Argument(int64_t v) : kind_(Kind::Int), int_(v) {}                 // NOLINT
  Argument(float v) : kind_(Kind::Float), float_(v) {}               // NOLINT
  Argument(double v) : kind_(Kind::Float), float_(v) {}              // NOLINT

  Kind kind() const { return kind_; }
  bool is_array() const { return kind_ == Kind::Array; }
  const NDArray& array() const { return array_; }
  NDArray& array() { return array_; }
  int64_t int_value() const { return int_; }
  double float_value() const { return float_; }

 private:
  Kind kind_;
  NDArray array_;
  int64_t int_ = 0;
  double float_ = 0;
};

}  // namespace te
