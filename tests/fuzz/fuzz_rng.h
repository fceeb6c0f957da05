// The fuzzers' random source: a seeded 64-bit generator with the few draws they need, or
// (for libFuzzer) the bytes of an input, so that its mutations steer each choice. Every
// fuzz case is a pure function of its seed or bytes: a failing one reproduces exactly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace te::fuzz {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Draws from data (not copied: it must outlive the Rng); zeros once it runs out.
  Rng(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint64_t bits() { return data_ ? take_bytes(8) : engine_(); }
  // Uniform in [0, n); n > 0. From bytes: as few as n needs.
  uint64_t below(uint64_t n) {
    if (!data_) return engine_() % n;
    return take_bytes(n <= 256 ? 1 : n <= 65536 ? 2 : 8) % n;
  }
  // Uniform in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1)); }
  bool chance(int percent) { return static_cast<int>(below(100)) < percent; }
  // In [lo, hi): 53 random bits, the same on every platform.
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(bits() >> 11) * (1.0 / 9007199254740992.0);
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }
  template <typename T, size_t N>
  const T& pick(const T (&v)[N]) {
    return v[below(N)];
  }
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  uint64_t take_bytes(int n) {
    uint64_t v = 0;
    for (int k = 0; k < n; ++k) v = (v << 8) | (pos_ < size_ ? data_[pos_++] : 0);
    return v;
  }

  std::mt19937_64 engine_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0, pos_ = 0;
};

}  // namespace te::fuzz
