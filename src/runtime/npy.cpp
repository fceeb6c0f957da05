// NumPy .npy files: reading versions 1.0, 2.0 and 3.0, writing byte for byte what
// numpy.save writes (version 1.0, or 2.0 when the header outgrows 65535 bytes).
// Only little-endian, C-order, plain numeric arrays are supported. NumPy has no bfloat16:
// te writes its bits as '<u2' and reads them back when asked for BFloat(16).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "te/ndarray.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "te's .npy reader and writer assume a little-endian host"
#endif

namespace te {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;  // numpy's ARRAY_ALIGN: data starts at a multiple of it
// numpy leaves room for the growing axis' extent to reach this many digits.
constexpr size_t kGrowthAxisMaxDigits = 21;

[[noreturn]] void fail_load(const std::string& path, const std::string& why) {
  throw Error(fmt::format("NDArray::load_npy: cannot read '{}': {}", path, why));
}

struct NpyHeader {
  DataType dtype;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// The dtype of a descr string such as '<f4' or '|u1'.
DataType dtype_of_descr(const std::string& descr, const std::string& path) {
  std::string rest = descr;
  char order = '=';
  if (!rest.empty() && std::strchr("<>|=", rest[0]) != nullptr) {
    order = rest[0];
    rest = rest.substr(1);
  }
  std::optional<DataType> dtype;
  if (rest == "b1")
    dtype = Bool();
  else if (rest == "i1")
    dtype = Int(8);
  else if (rest == "i2")
    dtype = Int(16);
  else if (rest == "i4")
    dtype = Int(32);
  else if (rest == "i8")
    dtype = Int(64);
  else if (rest == "u1")
    dtype = UInt(8);
  else if (rest == "u2")
    dtype = UInt(16);
  else if (rest == "u4")
    dtype = UInt(32);
  else if (rest == "u8")
    dtype = UInt(64);
  else if (rest == "f2")
    dtype = Float(16);
  else if (rest == "f4")
    dtype = Float(32);
  else if (rest == "f8")
    dtype = Float(64);
  if (!dtype) {
    fail_load(path, fmt::format("unsupported dtype '{}' (supported: |b1, |i1, <i2, <i4, <i8, |u1, "
                                "<u2, <u4, <u8, <f2, <f4, <f8)",
                                descr));
  }
  if (dtype->bytes() > 1 && order == '>') {
    fail_load(path, fmt::format("dtype '{}' is big-endian; only little-endian data is supported", descr));
  }
  if (dtype->bytes() > 1 && order == '|') {
    fail_load(path, fmt::format("dtype '{}' has no byte order but is wider than one byte", descr));
  }
  return *dtype;
}

// A strict reader for the Python dict literal in an .npy header:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Keys may come in any order with any spacing; trailing commas are allowed.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    expect('{', "at the start of the header dictionary");
    skip_space();
    while (peek() != '}') {
      const std::string key = parse_string("a dictionary key");
      skip_space();
      expect(':', fmt::format("after key '{}'", key));
      skip_space();
      if (key == "descr") {
        mark_seen(seen_descr, key);
        header.dtype = dtype_of_descr(parse_string("the 'descr' value"), path_);
      } else if (key == "fortran_order") {
        mark_seen(seen_order, key);
        header.fortran_order = parse_bool(key);
      } else if (key == "shape") {
        mark_seen(seen_shape, key);
        header.shape = parse_shape();
      } else {
        fail(
            fmt::format("unexpected key '{}' (an .npy header has exactly 'descr', "
                        "'fortran_order' and 'shape')",
                        key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after a dictionary value");
      }
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the closing '}'");
    if (!seen_descr) fail("missing key 'descr'");
    if (!seen_order) fail("missing key 'fortran_order'");
    if (!seen_shape) fail("missing key 'shape'");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    constexpr size_t kShown = 160;
    std::string shown = text_.substr(0, kShown);
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
    fail_load(path_, fmt::format("malformed header at offset {}: {} (header: \"{}{}\")", pos_, why, shown,
                                 text_.size() > kShown ? "..." : ""));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  void expect(char c, const std::string& where) {
    if (at_end() || peek() != c) fail(fmt::format("expected '{}' {}", c, where));
    ++pos_;
  }

  void mark_seen(bool& seen, const std::string& key) {
    if (seen) fail(fmt::format("key '{}' appears twice", key));
    seen = true;
  }

  // A quoted Python string without escapes: 'abc' or "abc".
  std::string parse_string(const std::string& what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(fmt::format("expected a quoted string for {}", what));
    const size_t close = text_.find(quote, pos_ + 1);
    if (close == std::string::npos) fail(fmt::format("unterminated string for {}", what));
    std::string value = text_.substr(pos_ + 1, close - pos_ - 1);
    if (value.find('\\') != std::string::npos) fail("escape sequences are not supported in strings");
    pos_ = close + 1;
    return value;
  }

  bool parse_bool(const std::string& key) {
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail(fmt::format("'{}' must be True or False", key));
  }

  // A tuple of non-negative integers: (), (5,), (2, 3) or (2, 3,).
  std::vector<int64_t> parse_shape() {
    expect('(', "to open the 'shape' tuple");
    std::vector<int64_t> shape;
    bool trailing_comma = false;
    skip_space();
    while (peek() != ')') {
      shape.push_back(parse_extent());
      skip_space();
      trailing_comma = false;
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
        skip_space();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the 'shape' tuple");
      }
    }
    ++pos_;  // ')'
    // In Python "(5)" is the integer 5, not a tuple.
    if (shape.size() == 1 && !trailing_comma) fail("'shape' must be a tuple; a 1-D shape is written (5,)");
    return shape;
  }

  int64_t parse_extent() {
    if (peek() == '-') fail("'shape' has a negative extent");
    if (peek() < '0' || peek() > '9') fail("expected an integer in the 'shape' tuple");
    int64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(value, int64_t{10}, &value) ||
          __builtin_add_overflow(value, int64_t{peek() - '0'}, &value)) {
        fail("an extent in 'shape' does not fit in 64 bits");
      }
      ++pos_;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2's long suffix, as old numpy wrote
    return value;
  }

  const std::string& text_;
  const std::string& path_;
  size_t pos_ = 0;
};

std::string descr_of(DataType t) {
  if (t.is_bool()) return "|b1";
  if (t.is_bfloat()) return "<u2";  // the raw bits
  const char kind = t.is_float() ? 'f' : t.is_int() ? 'i' : 'u';
  return fmt::format("{}{}{}", t.bytes() == 1 ? '|' : '<', kind, t.bytes());
}

// Python's repr of a tuple of ints: (), (5,), (2, 3).
std::string python_tuple(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// The bytes that precede the data, as numpy's _write_array_header produces them.
std::string npy_preamble(DataType dtype, const std::vector<int64_t>& shape) {
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr_of(dtype), python_tuple(shape));
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  const size_t text_len = dict.size() + 1;  // + the closing '\n'
  for (int major : {1, 2}) {
    const size_t len_bytes = major == 1 ? 2 : 4;
    const size_t prefix = kMagicLen + 2 + len_bytes;
    // Like numpy, a header that is already aligned still gets a full block of padding.
    const size_t pad = kAlign - (prefix + text_len) % kAlign;
    const uint64_t header_len = text_len + pad;
    if (major == 1 && header_len > 0xffff) continue;
    std::string out(kMagic, kMagicLen);
    out.push_back(static_cast<char>(major));
    out.push_back('\0');
    for (size_t i = 0; i < len_bytes; ++i) out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
    out += dict;
    out.append(pad, ' ');
    out.push_back('\n');
    return out;
  }
  throw Error(fmt::format("NDArray::save_npy: the header for shape {} exceeds 4 GiB", python_tuple(shape)));
}

uint64_t little_endian(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

NDArray NDArray::load_npy(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) fail_load(path, "no such file");
  if (fs::is_directory(status)) fail_load(path, "it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_load(path, std::strerror(errno));
  const uintmax_t file_size = fs::file_size(path, ec);
  if (ec) fail_load(path, ec.message());

  unsigned char prefix[12] = {};
  const size_t prefix_read = static_cast<size_t>(std::min<uintmax_t>(file_size, sizeof prefix));
  in.read(reinterpret_cast<char*>(prefix), static_cast<std::streamsize>(prefix_read));
  if (!in) fail_load(path, "reading the file failed");
  if (prefix_read < kMagicLen || std::memcmp(prefix, kMagic, kMagicLen) != 0) {
    fail_load(path, "not an .npy file (it does not start with the magic bytes \\x93NUMPY)");
  }
  if (prefix_read < 8) fail_load(path, "truncated header: the file ends inside the version bytes");
  const int major = prefix[6], minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    fail_load(path, fmt::format("unsupported format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor));
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t header_start = 8 + len_bytes;
  if (file_size < header_start) {
    fail_load(path, "truncated header: the file ends inside the header length");
  }
  const uint64_t header_len = little_endian(prefix + 8, len_bytes);
  if (file_size - header_start < header_len) {
    fail_load(path, fmt::format("truncated header: the header claims {} bytes but only {} follow", header_len,
                                file_size - header_start));
  }
  std::string header_text(static_cast<size_t>(header_len), '\0');
  in.seekg(static_cast<std::streamoff>(header_start));
  in.read(header_text.data(), static_cast<std::streamsize>(header_len));
  if (!in) fail_load(path, "reading the header failed");

  const NpyHeader header = HeaderParser(header_text, path).parse();
  if (header.fortran_order && header.shape.size() > 1) {
    fail_load(path, fmt::format("the array of shape {} is in Fortran order; only C order is supported",
                                python_tuple(header.shape)));
  }
  // Check the size against the file before allocating, so a corrupt shape cannot ask for
  // absurd amounts of memory.
  uint64_t count = 1;
  for (int64_t extent : header.shape) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(extent), &count)) count = UINT64_MAX;
  }
  uint64_t data_bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(header.dtype.bytes()), &data_bytes)) {
    data_bytes = UINT64_MAX;
  }
  const uint64_t available = file_size - header_start - header_len;
  if (available < data_bytes) {
    fail_load(path, fmt::format("truncated data: a {} array of shape {} needs {} bytes but only {} "
                                "follow the header",
                                header.dtype.to_string(), python_tuple(header.shape), data_bytes, available));
  }
  if (available > data_bytes) {
    fail_load(path, fmt::format("size mismatch: a {} array of shape {} needs {} bytes but {} follow "
                                "the header",
                                header.dtype.to_string(), python_tuple(header.shape), data_bytes, available));
  }

  NDArray array = empty(header.shape, header.dtype);
  in.read(static_cast<char*>(array.data()), static_cast<std::streamsize>(data_bytes));
  if (!in) fail_load(path, "reading the data failed");
  if (header.dtype.is_bool()) {
    // numpy treats any non-zero byte as true; te's bool storage holds exactly 0 or 1.
    auto* bytes = static_cast<uint8_t*>(array.data());
    for (uint64_t i = 0; i < data_bytes; ++i) bytes[i] = bytes[i] != 0;
  }
  return array;
}

NDArray NDArray::load_npy(const std::string& path, DataType dtype) {
  NDArray array = load_npy(path);
  const DataType file = array.dtype();
  if (file == dtype) return array;
  if (dtype == BFloat(16)) {
    if (file == UInt(16) || file == Int(16)) {
      array.dtype_ = dtype;  // the same bytes, read as bfloat16 bits
      return array;
    }
    if (file == Float(16))
      fail_load(path,
                "it holds float16 values, not bfloat16 bits (load it as float16 and cast, or save "
                "the bfloat16 bits as uint16)");
    fail_load(path, fmt::format("it holds {} elements of {} bytes; bfloat16 is read from 2-byte integers "
                                "('<u2' or '<i2', the raw bits)",
                                file.to_string(), file.bytes()));
  }
  fail_load(path, fmt::format("it holds {} elements, not {}", file.to_string(), dtype.to_string()));
}

void NDArray::save_npy(const std::string& path) const {
  if (!defined()) {
    throw Error(fmt::format("NDArray::save_npy: cannot save an undefined array to '{}'", path));
  }
  const std::string preamble = npy_preamble(dtype_, shape_);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw Error(fmt::format("NDArray::save_npy: cannot open '{}' for writing: {}", path, std::strerror(errno)));
  }
  out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
  out.write(static_cast<const char*>(data()), static_cast<std::streamsize>(nbytes()));
  out.close();
  if (!out) throw Error(fmt::format("NDArray::save_npy: writing '{}' failed", path));
}

}  // namespace te
