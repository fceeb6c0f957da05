// A bounded, deterministic fuzz run of the .npy reader (the libFuzzer target
// tests/fuzz/npy_libfuzzer.cpp runs the same property without bounds): a few thousand
// files made from valid ones (every dtype, 0-D to 3-D, versions 1.0 and 2.0) by
// truncation, appended bytes, byte flips, header lengths that lie, and headers rewritten
// with shapes whose products overflow, huge or negative extents, zero extents beside
// huge ones, dtypes that do not match the payload, and malformed dictionaries. Each
// must give a te::Error or an array the file holds (tests/fuzz/npy_check.h).
#include <gtest/gtest.h>
#include <te/te.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fuzz/npy_check.h"

using namespace te;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Valid files as save_npy writes them.
std::vector<std::string> seeds(const std::string& scratch) {
  std::vector<std::string> out;
  struct Spec {
    DataType t;
    std::vector<int64_t> shape;
  };
  for (const Spec& s : std::vector<Spec>{{Float(32), {3, 4}},
                                         {Int(8), {5}},
                                         {Bool(), {2, 2, 2}},
                                         {Float(16), {}},
                                         {UInt(64), {0, 3}},
                                         {Float(64), {1, 1, 6}},
                                         {Int(16), {7}}}) {
    NDArray a = NDArray::empty(s.shape, s.t);
    auto* bytes = static_cast<uint8_t*>(a.data());
    for (size_t k = 0; k < a.nbytes(); ++k) bytes[k] = static_cast<uint8_t>(s.t.is_bool() ? k % 2 : k * 37 + 11);
    a.save_npy(scratch);
    out.push_back(read_bytes(scratch));
  }
  // Version 2.0 (4-byte header length) by hand: numpy writes it for long headers.
  std::string v1 = out[0];
  uint16_t len = static_cast<uint16_t>(static_cast<uint8_t>(v1[8]) | (static_cast<uint8_t>(v1[9]) << 8));
  std::string v2 = v1.substr(0, 6) + std::string("\x02\x00", 2);
  for (int i = 0; i < 4; ++i) v2.push_back(static_cast<char>(i < 2 ? (len >> (8 * i)) & 0xff : 0));
  v2 += v1.substr(10);
  out.push_back(v2);
  return out;
}

// A file with the given header dictionary text and payload, lengths made consistent.
std::string with_header(const std::string& dict, const std::string& payload) {
  std::string text = dict + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(text.size() & 0xff));
  out.push_back(static_cast<char>((text.size() >> 8) & 0xff));
  return out + text + payload;
}

std::vector<std::string> lying_headers() {
  const std::string payload(64, '\x01');
  std::vector<std::string> shapes = {
      "(4294967296, 4294967296)",                       // product 2^64: wraps to 0
      "(4611686018427387904, 4)",                       // bytes overflow 64 bits
      "(9223372036854775807,)",                         // INT64_MAX elements
      "(99999999999999999999,)",                        // beyond int64
      "(0, 9223372036854775807, 9223372036854775807)",  // zero elements, absurd strides
      "(3, -1)",
      "(-5,)",
      "(16,)",
      "(8,)",
      "(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)",
      "()",
      "(1,)",
      "(,)",
      "(1 2)",
      "5",
  };
  std::vector<std::string> descrs = {"<f4", "<f8", "|b1", "|u1", "<i8", ">f4", "|f4", "<c8", "O", "<f4'"};
  std::vector<std::string> out;
  for (const std::string& shape : shapes)
    for (const std::string& d : descrs)
      out.push_back(with_header("{'descr': '" + d + "', 'fortran_order': False, 'shape': " + shape + ", }", payload));
  out.push_back(with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (4, 4), }", payload));
  out.push_back(with_header("{'descr': '<f4', 'shape': (4,), }", payload));
  out.push_back(with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", payload));
  out.push_back(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", payload));
  out.push_back(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,)", payload));
  out.push_back(with_header("{'descr': '<f4\\'', 'fortran_order': False, 'shape': (4,), }", payload));
  out.push_back(with_header(std::string(70000, '{'), payload));
  out.push_back(with_header("", payload));
  return out;
}

}  // namespace

TEST(FuzzNpy, LyingHeadersEndInErrors) {
  const std::string path = te::fuzz::npy_scratch_path("lying");
  int accepted = 0;
  for (const std::string& f : lying_headers()) {
    std::string why = te::fuzz::check_npy_bytes(reinterpret_cast<const uint8_t*>(f.data()), f.size(), path);
    EXPECT_EQ(why, "") << "file: " << f.substr(0, 200);
    try {
      NDArray::load_npy(path);
      ++accepted;
    } catch (const Error&) {
    }
  }
  std::remove(path.c_str());
  // Exactly the consistent ones load (64 payload bytes): 16 float32s, 8 float64s, 8 int64s.
  EXPECT_EQ(accepted, 3);
}

TEST(FuzzNpy, MutatedFilesEndInErrorsOrArraysTheFileHolds) {
  const std::string path = te::fuzz::npy_scratch_path("mutated");
  std::vector<std::string> base = seeds(path);
  for (const std::string& s : base) {
    EXPECT_EQ(te::fuzz::check_npy_bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size(), path), "");
    EXPECT_NO_THROW(NDArray::load_npy(path)) << "a seed must load";
  }
  std::mt19937_64 rng(12345);
  auto below = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  int errors = 0, loaded = 0;
  const int kCases = 3000;
  for (int c = 0; c < kCases; ++c) {
    std::string f = base[below(base.size())];
    int mutations = 1 + static_cast<int>(below(3));
    for (int m = 0; m < mutations; ++m) {
      switch (below(7)) {
        case 0: f.resize(below(f.size() + 1)); break;                       // truncated
        case 1: f.append(1 + below(100), static_cast<char>(rng())); break;  // oversized
        case 2:                                                             // byte flips
          for (size_t k = 0, n = 1 + below(4); k < n && !f.empty(); ++k)
            f[below(f.size())] ^= static_cast<char>(1 << below(8));
          break;
        case 3:  // the header length lies
          if (f.size() > 10) f[8 + below(2)] = static_cast<char>(rng());
          break;
        case 4: {  // a digit of the shape becomes many digits (overflowing products)
          size_t at = f.find("'shape': (");
          if (at != std::string::npos) f.insert(at + 10, std::string(1 + below(25), static_cast<char>('1' + below(9))));
          break;
        }
        case 5: {  // the dtype changes, the payload does not
          size_t at = f.find("'descr': '");
          static const char* kinds[] = {"<f8", "|b1", "<u2", "<f2", "<i8", ">i4", "|O"};
          if (at != std::string::npos) f.replace(at + 10, 3, kinds[below(7)]);
          break;
        }
        default: {  // a span deleted or duplicated
          if (f.empty()) break;
          size_t at = below(f.size()), n = below(std::min<size_t>(32, f.size() - at) + 1);
          if (rng() % 2)
            f.erase(at, n);
          else
            f.insert(at, f.substr(at, n));
        }
      }
    }
    std::string why = te::fuzz::check_npy_bytes(reinterpret_cast<const uint8_t*>(f.data()), f.size(), path);
    ASSERT_EQ(why, "") << "case " << c;
    try {
      NDArray::load_npy(path);
      ++loaded;
    } catch (const Error&) {
      ++errors;
    }
  }
  std::remove(path.c_str());
  // Both outcomes occur: the mutations are neither all harmless nor all fatal.
  EXPECT_GT(errors, kCases / 2);
  EXPECT_GT(loaded, 10);
}
