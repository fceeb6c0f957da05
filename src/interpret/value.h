// Values the interpreter computes with: one lane (Scalar) and a lane vector (LaneVec).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>

namespace te::interp {

// One lane. Which member is live follows from the lane's DataType: bool, int and uint
// lanes use `i` (wrapped to the type's width, uint64 as its bit pattern), float lanes
// use `f` (always a value exactly representable in the lane's float type).
union Scalar {
  int64_t i;
  double f;
};
inline Scalar int_scalar(int64_t v) {
  Scalar s;
  s.i = v;
  return s;
}
inline Scalar float_scalar(double v) {
  Scalar s;
  s.f = v;
  return s;
}

// The lanes of a vector value; up to kInline lanes live inline so the usual vector
// widths never touch the heap.
class LaneVec {
 public:
  static constexpr int kInline = 16;

  LaneVec() = default;
  explicit LaneVec(int n) { resize(n); }
  LaneVec(const LaneVec& o) { *this = o; }
  LaneVec& operator=(const LaneVec& o) {
    if (this != &o) {
      resize(o.n_);
      std::copy(o.data(), o.data() + o.n_, data());
    }
    return *this;
  }

  // Resizes to n lanes, all zero.
  void resize(int n) {
    if (n > kInline && n > heap_capacity_) {
      heap_.reset(new Scalar[static_cast<size_t>(n)]);
      heap_capacity_ = n;
    }
    n_ = n;
    std::fill(data(), data() + n_, int_scalar(0));
  }
  int size() const { return n_; }
  Scalar* data() { return n_ > kInline ? heap_.get() : inline_; }
  const Scalar* data() const { return n_ > kInline ? heap_.get() : inline_; }
  Scalar& operator[](int k) { return data()[k]; }
  const Scalar& operator[](int k) const { return data()[k]; }

 private:
  int n_ = 0;
  int heap_capacity_ = 0;
  Scalar inline_[kInline] = {};
  std::unique_ptr<Scalar[]> heap_;
};

}  // namespace te::interp
