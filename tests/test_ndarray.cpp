// NDArray storage and element access, te::half conversions, and .npy reading/writing
// (against files written by numpy itself: see scripts/gen_npy_test_data.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "te/ndarray.h"

namespace {

namespace fs = std::filesystem;
using te::DataType;
using te::half;
using te::NDArray;

const std::string kNpyDir = std::string(TE_TEST_DATA_DIR) + "/npy/";

// The message of the te::Error that f throws ("" and a test failure if none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const te::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a te::Error";
  return "";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// A hand-made .npy file: the prefix for `major`.`minor`, then header and data verbatim.
std::string make_npy(int major, int minor, const std::string& header, const std::string& data) {
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(static_cast<char>(minor));
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + data;
}

// A fresh folder per test, removed afterwards (ctest may run tests in parallel).
class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("te_test_ndarray_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a hand-made file and returns the load_npy error message.
  std::string load_error(const std::string& name, const std::string& bytes) {
    write_bytes(path(name), bytes);
    std::string msg = error_of([&] { NDArray::load_npy(path(name)); });
    EXPECT_CONTAINS(msg, "'" + path(name) + "'");
    return msg;
  }

  NDArray load_made(const std::string& name, const std::string& bytes) {
    write_bytes(path(name), bytes);
    return NDArray::load_npy(path(name));
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------
// Construction

TEST(NDArray, EmptyIsZeroFilledAndAligned) {
  NDArray a = NDArray::empty({2, 3, 4}, te::Float(32));
  EXPECT_TRUE(a.defined());
  EXPECT_EQ(a.ndim(), 3);
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(a.dtype(), te::Float(32));
  EXPECT_EQ(a.size(), 24);
  EXPECT_EQ(a.nbytes(), 96u);
  EXPECT_EQ(a.shape_string(), "(2, 3, 4)");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (float v : a.to_vector<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(NDArray, ZeroDimensionalHasOneElement) {
  NDArray a = NDArray::empty({}, te::Float(64));
  EXPECT_EQ(a.ndim(), 0);
  EXPECT_EQ(a.size(), 1);
  EXPECT_EQ(a.nbytes(), 8u);
  EXPECT_EQ(a.shape_string(), "()");
  a.at<double>({}) = 2.5;
  EXPECT_EQ(a.to_vector<double>(), std::vector<double>{2.5});
  EXPECT_EQ(NDArray::empty({7}, te::Int(8)).shape_string(), "(7)");
}

TEST(NDArray, ZeroExtentsGiveAValidPointer) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{0}, {0, 3}, {3, 0, 2}, {int64_t{1} << 62, 0, int64_t{1} << 62}}) {
    NDArray a = NDArray::empty(shape, te::Float(32));
    EXPECT_EQ(a.size(), 0);
    EXPECT_EQ(a.nbytes(), 0u);
    ASSERT_NE(a.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
    EXPECT_TRUE(a.to_vector<float>().empty());
  }
}

TEST(NDArray, ElementBytesOfEveryDtype) {
  const std::vector<std::pair<DataType, size_t>> cases = {{te::Bool(), 1},    {te::Int(8), 1},    {te::Int(16), 2},
                                                          {te::Int(32), 4},   {te::Int(64), 8},   {te::UInt(8), 1},
                                                          {te::UInt(16), 2},  {te::UInt(32), 4},  {te::UInt(64), 8},
                                                          {te::Float(16), 2}, {te::Float(32), 4}, {te::Float(64), 8}};
  for (const auto& [dtype, bytes] : cases) {
    NDArray a = NDArray::empty({3, 5}, dtype);
    EXPECT_EQ(a.dtype(), dtype);
    EXPECT_EQ(a.nbytes(), 15 * bytes) << dtype.to_string();
  }
}

TEST(NDArray, RejectsUnsupportedDtypes) {
  for (DataType t : {te::Float(32, 4), te::Int(4), te::Float(8), te::Handle(), te::Void()}) {
    std::string msg = error_of([&] { NDArray::empty({2}, t); });
    EXPECT_CONTAINS(msg, "NDArray::empty: unsupported dtype");
  }
}

TEST(NDArray, NegativeExtentNamesTheDimension) {
  std::string msg = error_of([] { NDArray::empty({2, -3, 4}, te::Float(32)); });
  EXPECT_CONTAINS(msg, "dimension 1");
  EXPECT_CONTAINS(msg, "(2, -3, 4)");
  EXPECT_CONTAINS(msg, "negative extent -3");
}

TEST(NDArray, SizeOverflowIsAnError) {
  const int64_t big = int64_t{1} << 32;
  std::string msg = error_of([&] { NDArray::empty({big, big}, te::Int(8)); });
  EXPECT_CONTAINS(msg, "more than 2^63 - 1 elements");
  EXPECT_CONTAINS(msg, "(4294967296, 4294967296)");
  // Element count fits, bytes do not.
  msg = error_of([] { NDArray::empty({int64_t{1} << 62}, te::Float(64)); });
  EXPECT_CONTAINS(msg, "needs more bytes than the address space holds");
  msg = error_of([] { NDArray::empty({int64_t{1} << 60}, te::Float(64)); });
  EXPECT_CONTAINS(msg, "float64 array of shape (1152921504606846976)");
}

#if defined(__SANITIZE_ADDRESS__)
#define TE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TE_UNDER_ASAN 1
#endif
#endif

TEST(NDArray, AllocationFailureIsAnError) {
#ifdef TE_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer aborts on huge allocations instead of returning null";
#else
  // 2^50 bytes exceed any user address space, so the allocator must refuse.
  std::string msg = error_of([] { NDArray::empty({int64_t{1} << 50}, te::UInt(8)); });
  EXPECT_CONTAINS(msg, "cannot allocate 1125899906842624 bytes");
#endif
}

TEST(NDArray, UndefinedArray) {
  NDArray a;
  EXPECT_FALSE(a.defined());
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(a.nbytes(), 0u);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.shape_string(), "(undefined)");
  EXPECT_FALSE(a.copy().defined());
  EXPECT_CONTAINS(error_of([&] { a.to_vector<float>(); }), "NDArray::to_vector: the array is undefined");
  EXPECT_CONTAINS(error_of([&] { a.at<float>({}); }), "NDArray::at: the array is undefined");
}

// ---------------------------------------------------------------------------------------
// Element access

TEST(NDArray, AtIsRowMajor) {
  NDArray a = NDArray::empty({2, 3, 4}, te::Int(32));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) a.at<int32_t>({i, j, k}) = static_cast<int32_t>(100 * i + 10 * j + k);
  const auto* raw = static_cast<const int32_t*>(a.data());
  EXPECT_EQ(raw[0], 0);
  EXPECT_EQ(raw[1], 1);
  EXPECT_EQ(raw[4], 10);
  EXPECT_EQ(raw[12], 100);
  EXPECT_EQ(raw[23], 123);
  const NDArray& c = a;
  EXPECT_EQ(c.at<int32_t>({1, 2, 3}), 123);
  EXPECT_EQ(&c.at<int32_t>({1, 0, 2}), raw + 14);
}

TEST(NDArray, AtChecksRank) {
  NDArray a = NDArray::empty({2, 3}, te::Float(32));
  std::string msg = error_of([&] { a.at<float>({1}); });
  EXPECT_CONTAINS(msg, "index [1] has 1 entries");
  EXPECT_CONTAINS(msg, "shape (2, 3) has rank 2");
  msg = error_of([&] { a.at<float>({0, 0, 0}); });
  EXPECT_CONTAINS(msg, "index [0, 0, 0] has 3 entries");
}

TEST(NDArray, AtChecksBounds) {
  NDArray a = NDArray::empty({2, 3}, te::Float(32));
  std::string msg = error_of([&] { a.at<float>({1, 3}); });
  EXPECT_CONTAINS(msg, "index [1, 3] is out of bounds");
  EXPECT_CONTAINS(msg, "entry 1 is 3");
  EXPECT_CONTAINS(msg, "dimension 1 of shape (2, 3) has extent 3");
  msg = error_of([&] { a.at<float>({-1, 0}); });
  EXPECT_CONTAINS(msg, "index [-1, 0] is out of bounds: entry 0 is -1");
  const NDArray& c = a;
  msg = error_of([&] { c.at<float>({2, 0}); });
  EXPECT_CONTAINS(msg, "dimension 0 of shape (2, 3) has extent 2");
  NDArray empty = NDArray::empty({0}, te::Float(32));
  EXPECT_CONTAINS(error_of([&] { empty.at<float>({0}); }), "has extent 0");
}

TEST(NDArray, AtChecksType) {
  NDArray a = NDArray::empty({2}, te::Int(32));
  std::string msg = error_of([&] { a.at<float>({0}); });
  EXPECT_CONTAINS(msg, "NDArray::at: requested element type float32 but the array holds int32");
  EXPECT_CONTAINS(error_of([&] { a.at<uint32_t>({0}); }), "requested element type uint32");
}

// ---------------------------------------------------------------------------------------
// from_vector / to_vector / copy

template <typename T>
void expect_vector_round_trip(const std::vector<T>& values) {
  NDArray a = NDArray::from_vector(values, {static_cast<int64_t>(values.size())});
  EXPECT_EQ(a.dtype(), te::dtype_of<T>());
  EXPECT_EQ(a.to_vector<T>(), values);
}

TEST(NDArray, VectorRoundTripForEveryType) {
  expect_vector_round_trip<bool>({true, false, true, true});
  expect_vector_round_trip<int8_t>({-128, 0, 127});
  expect_vector_round_trip<int16_t>({-32768, 1, 32767});
  expect_vector_round_trip<int32_t>({std::numeric_limits<int32_t>::min(), 5});
  expect_vector_round_trip<int64_t>({std::numeric_limits<int64_t>::min(), 5});
  expect_vector_round_trip<uint8_t>({0, 255});
  expect_vector_round_trip<uint16_t>({0, 65535});
  expect_vector_round_trip<uint32_t>({0, 4294967295u});
  expect_vector_round_trip<uint64_t>({0, std::numeric_limits<uint64_t>::max()});
  expect_vector_round_trip<float>({1.5f, -0.0f, 3e38f});
  expect_vector_round_trip<double>({1e-300, -2.0});
  NDArray h = NDArray::from_vector(std::vector<half>{half(1.5f), half(-2.0f)}, {2});
  EXPECT_EQ(h.dtype(), te::Float(16));
  EXPECT_EQ(h.to_vector<half>()[0].bits, 0x3e00);
  EXPECT_EQ(h.to_vector<half>()[1].bits, 0xc000);
  // bool storage is one byte per element, 0 or 1.
  NDArray b = NDArray::from_vector(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(std::string(static_cast<const char*>(b.data()), 3), std::string("\1\0\1", 3));
}

TEST(NDArray, FromVectorChecksCount) {
  std::string msg = error_of([] { NDArray::from_vector(std::vector<float>{1, 2, 3}, {2, 2}); });
  EXPECT_CONTAINS(msg, "3 values do not fill shape (2, 2) (4 elements)");
  EXPECT_EQ(NDArray::from_vector(std::vector<float>{}, {0, 4}).size(), 0);
  EXPECT_EQ(NDArray::from_vector(std::vector<float>{7}, {}).at<float>({}), 7.0f);
}

TEST(NDArray, ToVectorChecksType) {
  NDArray a = NDArray::from_vector(std::vector<int32_t>{1, 2}, {2});
  std::string msg = error_of([&] { a.to_vector<float>(); });
  EXPECT_CONTAINS(msg, "NDArray::to_vector: requested element type float32 but the array holds int32");
  EXPECT_CONTAINS(error_of([&] { a.to_vector<int64_t>(); }), "int64");
  NDArray h = NDArray::empty({1}, te::Float(16));
  EXPECT_CONTAINS(error_of([&] { h.to_vector<uint16_t>(); }),
                  "requested element type uint16 but the array holds float16");
}

TEST(NDArray, CopiesShareAndCopyDoesNot) {
  NDArray a = NDArray::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray shared = a;
  NDArray deep = a.copy();
  EXPECT_EQ(shared.data(), a.data());
  EXPECT_NE(deep.data(), a.data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(deep.data()) % 64, 0u);
  EXPECT_EQ(deep.shape(), a.shape());
  EXPECT_EQ(deep.dtype(), a.dtype());
  a.at<float>({0, 1}) = 20;
  EXPECT_EQ(shared.at<float>({0, 1}), 20.0f);
  EXPECT_EQ(deep.at<float>({0, 1}), 2.0f);
  EXPECT_EQ(deep.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(NDArray::empty({0, 2}, te::Int(8)).copy().shape(), (std::vector<int64_t>{0, 2}));
}

// ---------------------------------------------------------------------------------------
// float16

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The value a finite half encodes, from the definition.
double half_value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

TEST(Float16, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = half::half_bits_to_float(bits);
    ASSERT_EQ(half::float_to_half_bits(f), bits) << "half 0x" << std::hex << h;
    const int exponent = (bits >> 10) & 0x1f;
    const bool negative = (bits & 0x8000) != 0;
    ASSERT_EQ(std::signbit(f), negative);
    if (exponent != 0x1f) {
      ASSERT_EQ(static_cast<double>(f), half_value(bits)) << "half 0x" << std::hex << h;
    } else if ((bits & 0x3ff) == 0) {
      ASSERT_TRUE(std::isinf(f));
    } else {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_EQ((bits_of(f) >> 13) & 0x3ff, bits & 0x3ffu);  // the payload is kept
    }
  }
}

TEST(Float16, MidpointsRoundToEven) {
  // For every pair of neighbouring non-negative halves (including 65504 and the
  // would-be next value 65536, which rounds to infinity), the midpoint is a float.
  for (uint16_t lo = 0; lo < 0x7c00; ++lo) {
    const uint16_t hi = lo + 1;
    const double lo_value = half_value(lo);
    const double hi_value = hi == 0x7c00 ? 65536.0 : half_value(hi);
    const float mid = static_cast<float>((lo_value + hi_value) / 2);
    ASSERT_EQ(static_cast<double>(mid), (lo_value + hi_value) / 2);
    const uint16_t even = (lo & 1) ? hi : lo;
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      ASSERT_EQ(half::float_to_half_bits(s * mid), sign | even) << "midpoint of 0x" << std::hex << lo;
      ASSERT_EQ(half::float_to_half_bits(s * std::nextafter(mid, 0.0f)), sign | lo);
      ASSERT_EQ(half::float_to_half_bits(s * std::nextafter(mid, 1e30f)), sign | hi);
    }
  }
}

TEST(Float16, SpecialValues) {
  EXPECT_EQ(half::float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(half::float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(half::float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(half::float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(half::float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(half::float_to_half_bits(65519.99f), 0x7bff);
  EXPECT_EQ(half::float_to_half_bits(65520.0f), 0x7c00);
  EXPECT_EQ(half::float_to_half_bits(1e10f), 0x7c00);
  EXPECT_EQ(half::float_to_half_bits(-std::numeric_limits<float>::max()), 0xfc00);
  EXPECT_EQ(half::float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(half::float_to_half_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(half::float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(half::float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(half::float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(half::float_to_half_bits(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(half::float_to_half_bits(-std::ldexp(1.0f, -14)), 0x8400);  // smallest normal
  EXPECT_EQ(half::float_to_half_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(half::float_to_half_bits(-std::numeric_limits<float>::min()), 0x8000);
  // NaN stays NaN, keeping its sign and the top of its payload, even when the payload
  // lies only in bits that half cannot hold.
  EXPECT_EQ(half::float_to_half_bits(float_of(0x7fc00000u)), 0x7e00);
  EXPECT_EQ(half::float_to_half_bits(float_of(0xffc00000u)), 0xfe00);
  EXPECT_EQ(half::float_to_half_bits(float_of(0x7f802000u)), 0x7c01);
  EXPECT_EQ(half::float_to_half_bits(float_of(0x7f800001u)), 0x7c01);
  EXPECT_EQ(half::half_bits_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits_of(half::half_bits_to_float(0x8000)), 0x80000000u);
  EXPECT_EQ(half::half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half::half_bits_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(static_cast<float>(half(0.1f)), 0.0999755859375f);
  EXPECT_EQ(half::from_bits(0x3555).bits, 0x3555);
}

// Nearest half by search over all finite halves; ties to the even encoding.
uint16_t reference_float_to_half(float f) {
  static const std::vector<double> positives = [] {
    std::vector<double> v;
    for (uint16_t h = 0; h < 0x7c00; ++h) v.push_back(half_value(h));
    return v;
  }();
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7c00;
  const auto it = std::lower_bound(positives.begin(), positives.end(), a);
  if (it == positives.end()) return sign | 0x7bff;  // between 65504 and 65520
  const auto hi = static_cast<uint16_t>(it - positives.begin());
  if (*it == a || hi == 0) return sign | hi;
  const uint16_t lo = hi - 1;
  const double below = a - positives[lo], above = positives[hi] - a;
  if (below < above) return sign | lo;
  if (above < below) return sign | hi;
  return sign | ((lo & 1) ? hi : lo);
}

TEST(Float16, FloatSweepMatchesReference) {
  // About a million floats spread over every exponent, both signs.
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093) {
    const float f = float_of(static_cast<uint32_t>(u));
    if (std::isnan(f)) continue;
    ASSERT_EQ(half::float_to_half_bits(f), reference_float_to_half(f)) << "float bits 0x" << std::hex << u;
  }
}

// ---------------------------------------------------------------------------------------
// .npy files written by numpy

template <typename T>
void expect_numpy_file(const std::string& name, const std::vector<int64_t>& shape, const std::vector<T>& values) {
  SCOPED_TRACE(name);
  NDArray a = NDArray::load_npy(kNpyDir + name);
  EXPECT_EQ(a.dtype(), te::dtype_of<T>());
  EXPECT_EQ(a.shape(), shape);
  EXPECT_EQ(a.to_vector<T>(), values);
}

TEST(NpyNumpyFiles, IntegerAndBoolContents) {
  expect_numpy_file<bool>("bool_2x3.npy", {2, 3}, {true, false, true, false, false, true});
  expect_numpy_file<int8_t>("int8_5.npy", {5}, {-128, -1, 0, 1, 127});
  expect_numpy_file<uint8_t>("uint8_5.npy", {5}, {0, 1, 127, 128, 255});
  expect_numpy_file<int16_t>("int16_2x3.npy", {2, 3}, {-32768, -1, 0, 1, 2, 32767});
  expect_numpy_file<uint16_t>("uint16_2x3.npy", {2, 3}, {0, 1, 2, 255, 256, 65535});
  expect_numpy_file<int32_t>("int32_2x2.npy", {2, 2},
                             {std::numeric_limits<int32_t>::min(), -1, 7, std::numeric_limits<int32_t>::max()});
  expect_numpy_file<uint32_t>("uint32_4.npy", {4}, {0, 1, 65536, 4294967295u});
  expect_numpy_file<int64_t>("int64_3.npy", {3},
                             {std::numeric_limits<int64_t>::min(), -1, std::numeric_limits<int64_t>::max()});
  expect_numpy_file<uint64_t>("uint64_3.npy", {3}, {0, 1, std::numeric_limits<uint64_t>::max()});
  expect_numpy_file<uint8_t>("uint8_15d_growth_pad.npy", std::vector<int64_t>(15, 1), {42});
  std::vector<int64_t> shape14(14, 1);
  shape14[1] = 100;
  std::vector<uint8_t> iota100(100);
  for (int i = 0; i < 100; ++i) iota100[i] = static_cast<uint8_t>(i);
  expect_numpy_file<uint8_t>("uint8_14d_full_pad_block.npy", shape14, iota100);
  expect_numpy_file<int16_t>("int16_v3_3.npy", {3}, {-5, 0, 5});
}

TEST(NpyNumpyFiles, FloatContents) {
  NDArray h = NDArray::load_npy(kNpyDir + "float16_2x4.npy");
  EXPECT_EQ(h.dtype(), te::Float(16));
  EXPECT_EQ(h.shape(), (std::vector<int64_t>{2, 4}));
  std::vector<uint16_t> bits;
  for (half v : h.to_vector<half>()) bits.push_back(v.bits);
  // 0, -0, 1, -2.5, 65504, 2^-24, inf, numpy's NaN.
  EXPECT_EQ(bits, (std::vector<uint16_t>{0x0000, 0x8000, 0x3c00, 0xc100, 0x7bff, 0x0001, 0x7c00, 0x7e00}));
  std::vector<float> f32;
  for (int i = 0; i < 12; ++i) f32.push_back(static_cast<float>(i) * 0.5f - 3.0f);
  expect_numpy_file<float>("float32_2x3x2.npy", {2, 3, 2}, f32);
  expect_numpy_file<double>("float64_3x2.npy", {3, 2},
                            {0.1, -0.2, 1e300, -1e-300, 5e-324, -std::numeric_limits<double>::infinity()});
  expect_numpy_file<float>("float32_v2_2x3.npy", {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_numpy_file<double>("float64_0d.npy", {}, {3.5});
  expect_numpy_file<float>("float32_empty_0x3.npy", {0, 3}, {});
}

TEST(NpyNumpyFiles, GridSampleCaseInput) {
  NDArray a = NDArray::load_npy(kNpyDir + "gs2d_input_2x3x5x7_f32.npy");
  EXPECT_EQ(a.dtype(), te::Float(32));
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 3, 5, 7}));
  EXPECT_EQ(bits_of(a.at<float>({0, 0, 0, 0})), 0xbf9ee763u);  // -1.2414364
  EXPECT_EQ(bits_of(a.at<float>({1, 2, 4, 6})), 0x3eb1e115u);  // 0.34742036
  double sum = 0;
  for (float v : a.to_vector<float>()) sum += v;
  EXPECT_NEAR(sum, -6.9358413950540125, 1e-9);
}

TEST_F(NpyTest, SaveWritesWhatNumpyWrites) {
  // Every version 1.0 file numpy wrote comes back byte for byte.
  for (const char* name : {"bool_2x3.npy", "int8_5.npy", "uint8_5.npy", "int16_2x3.npy", "uint16_2x3.npy",
                           "int32_2x2.npy", "uint32_4.npy", "int64_3.npy", "uint64_3.npy", "float16_2x4.npy",
                           "float32_2x3x2.npy", "float64_3x2.npy", "float64_0d.npy", "float32_empty_0x3.npy",
                           "uint8_15d_growth_pad.npy", "uint8_14d_full_pad_block.npy", "gs2d_input_2x3x5x7_f32.npy"}) {
    SCOPED_TRACE(name);
    const std::string original = read_bytes(kNpyDir + name);
    NDArray::load_npy(kNpyDir + name).save_npy(path(name));
    EXPECT_EQ(read_bytes(path(name)), original);
  }
}

TEST(NpyNumpyFiles, FortranOrderIsRejected) {
  const std::string file = kNpyDir + "int32_fortran_2x3.npy";
  std::string msg = error_of([&] { NDArray::load_npy(file); });
  EXPECT_CONTAINS(msg, "NDArray::load_npy: cannot read '" + file + "'");
  EXPECT_CONTAINS(msg, "shape (2, 3) is in Fortran order; only C order is supported");
}

TEST(NpyNumpyFiles, BigEndianIsRejected) {
  const std::string file = kNpyDir + "int32_bigendian_3.npy";
  std::string msg = error_of([&] { NDArray::load_npy(file); });
  EXPECT_CONTAINS(msg, "'" + file + "'");
  EXPECT_CONTAINS(msg, "dtype '>i4' is big-endian; only little-endian data is supported");
}

// ---------------------------------------------------------------------------------------
// .npy round trips

TEST_F(NpyTest, RoundTripEveryDtypeAndShape) {
  const std::vector<DataType> dtypes = {te::Bool(),   te::Int(8),    te::Int(16),   te::Int(32),
                                        te::Int(64),  te::UInt(8),   te::UInt(16),  te::UInt(32),
                                        te::UInt(64), te::Float(16), te::Float(32), te::Float(64)};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {5}, {2, 3}, {0, 3}, {2, 0, 4}, {3, 1, 2, 2}, {1, 1, 1, 1, 1, 7}};
  for (DataType dtype : dtypes) {
    for (const auto& shape : shapes) {
      NDArray a = NDArray::empty(shape, dtype);
      SCOPED_TRACE(dtype.to_string() + " " + a.shape_string());
      auto* bytes = static_cast<uint8_t*>(a.data());
      for (size_t i = 0; i < a.nbytes(); ++i) {
        bytes[i] = dtype.is_bool() ? (i % 3 == 0) : static_cast<uint8_t>(i * 37 + 11);
      }
      const std::string file = path("a.npy");
      a.save_npy(file);
      const std::string written = read_bytes(file);
      ASSERT_GE(written.size(), 10u);
      EXPECT_EQ(written.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
      const size_t header_len = static_cast<uint8_t>(written[8]) | static_cast<uint8_t>(written[9]) << 8;
      EXPECT_EQ((10 + header_len) % 64, 0u);
      EXPECT_EQ(written[10 + header_len - 1], '\n');
      EXPECT_EQ(written.size(), 10 + header_len + a.nbytes());

      NDArray b = NDArray::load_npy(file);
      EXPECT_EQ(b.dtype(), dtype);
      EXPECT_EQ(b.shape(), shape);
      ASSERT_EQ(b.nbytes(), a.nbytes());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
    }
  }
}

TEST_F(NpyTest, HugeHeaderUsesVersion2) {
  // 22000 unit dimensions: the header no longer fits version 1.0's 16-bit length.
  NDArray a = NDArray::empty(std::vector<int64_t>(22000, 1), te::Int(16));
  a.at<int16_t>(std::vector<int64_t>(22000, 0)) = -7;
  a.save_npy(path("big_header.npy"));
  const std::string written = read_bytes(path("big_header.npy"));
  EXPECT_EQ(written.substr(0, 8), std::string("\x93NUMPY\x02\x00", 8));
  const uint64_t header_len = static_cast<uint8_t>(written[8]) | static_cast<uint8_t>(written[9]) << 8 |
                              static_cast<uint64_t>(static_cast<uint8_t>(written[10])) << 16;
  EXPECT_GT(header_len, 65535u);
  EXPECT_EQ((12 + header_len) % 64, 0u);
  EXPECT_EQ(written.size(), 12 + header_len + 2);
  NDArray b = NDArray::load_npy(path("big_header.npy"));
  EXPECT_EQ(b.ndim(), 22000);
  EXPECT_EQ(b.to_vector<int16_t>(), std::vector<int16_t>{-7});
}

TEST_F(NpyTest, SaveErrors) {
  EXPECT_CONTAINS(error_of([&] { NDArray().save_npy(path("x.npy")); }),
                  "NDArray::save_npy: cannot save an undefined array to '" + path("x.npy") + "'");
  const std::string missing_dir = path("no_such_dir/x.npy");
  std::string msg = error_of([&] { NDArray::empty({2}, te::Float(32)).save_npy(missing_dir); });
  EXPECT_CONTAINS(msg, "NDArray::save_npy: cannot open '" + missing_dir + "' for writing");
  EXPECT_CONTAINS(msg, "No such file or directory");
}

// ---------------------------------------------------------------------------------------
// .npy header parsing

TEST_F(NpyTest, HeaderKeyOrderSpacingAndQuotes) {
  const std::string data = bytes_of(std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  for (const std::string& header :
       {std::string("{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4'}"),
        std::string("{ 'fortran_order' :False,'descr':'<i4' ,  'shape':(2,3,),  }  \n"),
        std::string("\n{\"descr\": \"<i4\",\n 'shape': ( 2 , 3 ) ,\t'fortran_order': False,}\n"),
        std::string("{'descr': 'i4', 'fortran_order': False, 'shape': (2L, 3L), }"),
        std::string("{'descr': '=i4', 'fortran_order': False, 'shape': (2, 3)}")}) {
    SCOPED_TRACE(header);
    NDArray a = load_made("ok.npy", make_npy(1, 0, header, data));
    EXPECT_EQ(a.dtype(), te::Int(32));
    EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  }
}

TEST_F(NpyTest, HeaderShapesAndOneByteOrders) {
  NDArray scalar = load_made("s.npy", make_npy(2, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': ()}",
                                               bytes_of(std::vector<double>{-1.25})));
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.to_vector<double>(), std::vector<double>{-1.25});
  NDArray empty =
      load_made("e.npy", make_npy(3, 0, "{'descr': '<u2', 'fortran_order': False, 'shape': (4, 0, 2)}", ""));
  EXPECT_EQ(empty.shape(), (std::vector<int64_t>{4, 0, 2}));
  EXPECT_EQ(empty.dtype(), te::UInt(16));
  // Byte order is meaningless for one-byte types; Fortran order is C order for rank 1.
  NDArray u8 = load_made("u.npy", make_npy(1, 0, "{'descr': '>u1', 'fortran_order': True, 'shape': (3,)}",
                                           std::string("\x01\x02\xff", 3)));
  EXPECT_EQ(u8.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 2, 255}));
}

TEST_F(NpyTest, BoolBytesAreNormalised) {
  NDArray b = load_made("b.npy", make_npy(1, 0, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}",
                                          std::string("\x00\x01\x02\xff", 4)));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(std::string(static_cast<const char*>(b.data()), 4), std::string("\0\1\1\1", 4));
}

TEST_F(NpyTest, FileLevelErrors) {
  const std::string missing = path("missing.npy");
  std::string msg = error_of([&] { NDArray::load_npy(missing); });
  EXPECT_CONTAINS(msg, "NDArray::load_npy: cannot read '" + missing + "': no such file");
  EXPECT_CONTAINS(error_of([&] { NDArray::load_npy(dir_.string()); }), "it is a directory");

  const std::string bad_magic = "not an .npy file (it does not start with the magic bytes";
  EXPECT_CONTAINS(load_error("empty.npy", ""), bad_magic);
  EXPECT_CONTAINS(load_error("text.npy", "hello world, this is text"), bad_magic);
  EXPECT_CONTAINS(load_error("short.npy", std::string("\x93NUM", 4)), bad_magic);
  EXPECT_CONTAINS(load_error("magic_only.npy", std::string("\x93NUMPY\x01", 7)),
                  "truncated header: the file ends inside the version bytes");
  EXPECT_CONTAINS(load_error("no_len.npy", std::string("\x93NUMPY\x02\x00\x10\x00", 10)),
                  "truncated header: the file ends inside the header length");
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_CONTAINS(load_error("v4.npy", make_npy(4, 0, header, std::string(8, '\0'))),
                  "unsupported format version 4.0 (supported: 1.0, 2.0, 3.0)");
  EXPECT_CONTAINS(load_error("v1_1.npy", make_npy(1, 1, header, std::string(8, '\0'))),
                  "unsupported format version 1.1");
  std::string cut = make_npy(1, 0, header, "");
  cut.resize(cut.size() - 5);
  EXPECT_CONTAINS(load_error("cut_header.npy", cut), "truncated header: the header claims 57 bytes but only 52 follow");
  EXPECT_CONTAINS(load_error("cut_data.npy", make_npy(1, 0, header, std::string(7, '\0'))),
                  "truncated data: a float32 array of shape (2,) needs 8 bytes but only 7 follow");
  EXPECT_CONTAINS(load_error("long_data.npy", make_npy(1, 0, header, std::string(9, '\0'))),
                  "size mismatch: a float32 array of shape (2,) needs 8 bytes but 9 follow");
  // A corrupt shape is caught by the size check before any allocation.
  EXPECT_CONTAINS(load_error("huge.npy", make_npy(1, 0,
                                                  "{'descr': '<f8', 'fortran_order': False, "
                                                  "'shape': (4294967296, 4294967296, 4294967296)}",
                                                  "")),
                  "truncated data: a float64 array of shape (4294967296, 4294967296, 4294967296) needs "
                  "18446744073709551615 bytes");
}

TEST_F(NpyTest, DtypeErrors) {
  auto with_descr = [](const std::string& descr) {
    return make_npy(1, 0, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,)}", std::string(8, '\0'));
  };
  EXPECT_CONTAINS(load_error("c8.npy", with_descr("<c8")), "unsupported dtype '<c8' (supported:");
  EXPECT_CONTAINS(load_error("f16.npy", with_descr("<f16")), "unsupported dtype '<f16'");
  EXPECT_CONTAINS(load_error("obj.npy", with_descr("|O")), "unsupported dtype '|O'");
  EXPECT_CONTAINS(load_error("empty_descr.npy", with_descr("")), "unsupported dtype ''");
  EXPECT_CONTAINS(load_error("be.npy", with_descr(">f8")), "dtype '>f8' is big-endian");
  EXPECT_CONTAINS(load_error("pipe.npy", with_descr("|f8")),
                  "dtype '|f8' has no byte order but is wider than one byte");
}

TEST_F(NpyTest, MalformedHeaders) {
  const std::string f4 = std::string(8, '\0');
  struct Case {
    std::string header;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", "expected '{' at the start of the header dictionary"},
      {"['descr']", "expected '{' at the start"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f4', 'shape': (2,)}", "missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (2,)}", "missing key 'descr'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "key 'descr' appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
       "'shape' must be a tuple; a 1-D shape is written (5,)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "expected '(' to open the 'shape' tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "'shape' has a negative extent"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}", "expected an integer in the 'shape' tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')' in the 'shape' tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "an extent in 'shape' does not fit in 64 bits"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "'fortran_order' must be True or False"},
      {"{'descr': <f4, 'fortran_order': False, 'shape': (2,)}", "expected a quoted string for the 'descr' value"},
      {"{descr: '<f4'}", "expected a quoted string for a dictionary key"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}", "expected ':' after key 'descr: '"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}' after a dictionary value"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}' after a dictionary value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "unexpected text after the closing '}'"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}", "escape sequences are not supported"},
      {"{'descr': '<f4", "unterminated string for the 'descr' value"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].header);
    const std::string msg = load_error("bad" + std::to_string(i) + ".npy", make_npy(1, 0, cases[i].header, f4));
    EXPECT_CONTAINS(msg, "malformed header at offset");
    EXPECT_CONTAINS(msg, cases[i].why);
  }
  // The message quotes the header so the user sees what was read.
  const std::string msg = load_error("quoted.npy", make_npy(1, 0, "{'descr': '<f4'}   \n", f4));
  EXPECT_CONTAINS(msg,
                  "malformed header at offset 20: missing key 'fortran_order' "
                  "(header: \"{'descr': '<f4'}\")");
}

TEST_F(NpyTest, FortranOrderOfHandMadeMatrix) {
  const std::string msg = load_error(
      "f.npy", make_npy(1, 0, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2)}", std::string(8, '\0')));
  EXPECT_CONTAINS(msg, "shape (1, 2) is in Fortran order");
}

}  // namespace
