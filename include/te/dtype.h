// DataType: a scalar kind (int, uint, float, bool), a bit width and a lane count.
#pragma once
#include <cstdint>
#include <string>

namespace te {

class DataType {
 public:
  enum class Code : uint8_t { Int, UInt, Float, Bool, Handle };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  constexpr Code code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  // Bytes of one lane in memory (bool is stored as one byte).
  constexpr int bytes() const { return code_ == Code::Bool ? 1 : (bits_ + 7) / 8; }

  constexpr bool is_int() const { return code_ == Code::Int; }
  constexpr bool is_uint() const { return code_ == Code::UInt; }
  constexpr bool is_float() const { return code_ == Code::Float; }
  constexpr bool is_bool() const { return code_ == Code::Bool; }
  constexpr bool is_handle() const { return code_ == Code::Handle; }
  // int or uint (not bool).
  constexpr bool is_integer() const { return is_int() || is_uint(); }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }
  constexpr bool is_void() const { return bits_ == 0; }

  constexpr DataType with_lanes(int lanes) const { return DataType(code_, bits_, lanes); }
  constexpr DataType element_of() const { return with_lanes(1); }
  constexpr DataType with_bits(int bits) const { return DataType(code_, bits, lanes_); }

  constexpr bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  constexpr bool operator!=(const DataType& o) const { return !(*this == o); }

  // "float32", "int64", "bool", "float32x8".
  std::string to_string() const;
  // Parses what to_string prints; throws te::Error on anything else.
  static DataType parse(const std::string& s);

 private:
  Code code_ = Code::Int;
  uint8_t bits_ = 0;
  uint16_t lanes_ = 1;
};

constexpr DataType Int(int bits, int lanes = 1) { return DataType(DataType::Code::Int, bits, lanes); }
constexpr DataType UInt(int bits, int lanes = 1) { return DataType(DataType::Code::UInt, bits, lanes); }
constexpr DataType Float(int bits, int lanes = 1) { return DataType(DataType::Code::Float, bits, lanes); }
constexpr DataType Bool(int lanes = 1) { return DataType(DataType::Code::Bool, 1, lanes); }
constexpr DataType Handle() { return DataType(DataType::Code::Handle, 64, 1); }
constexpr DataType Void() { return DataType(DataType::Code::Int, 0, 1); }

std::ostream& operator<<(std::ostream& os, const DataType& t);

}  // namespace te
