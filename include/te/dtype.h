/// \file
/// DataType: a scalar kind (int, uint, float, bfloat, bool), a bit width and a lane count.
#pragma once
#include <cstdint>
#include <string>

#include "te/export.h"

namespace te {

/// The type of an expression or an array element: a kind (Code), a bit width and a
/// number of lanes (1 for scalars, more for vectors). Make them with Int(), UInt(),
/// Float(), BFloat(), Bool().
class TE_API DataType {
 public:
  /// The kind of scalar.
  enum class Code : uint8_t {
    Int,     ///< signed integer
    UInt,    ///< unsigned integer
    Float,   ///< IEEE floating point
    Bool,    ///< boolean (1 bit; one byte in memory)
    Handle,  ///< an opaque pointer
    BFloat   ///< bfloat16: float32's sign and 8-bit exponent with a 7-bit mantissa
  };

  /// Int with 0 bits: the type of statements (see Void()).
  constexpr DataType() = default;
  /// A type of the given code, bits and lanes.
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  /// The kind of scalar.
  constexpr Code code() const { return code_; }
  /// Bits of one lane.
  constexpr int bits() const { return bits_; }
  /// Lanes: 1 for a scalar.
  constexpr int lanes() const { return lanes_; }
  /// Bytes of one lane in memory (bool is stored as one byte).
  constexpr int bytes() const { return code_ == Code::Bool ? 1 : (bits_ + 7) / 8; }

  /// Signed integer.
  constexpr bool is_int() const { return code_ == Code::Int; }
  /// Unsigned integer.
  constexpr bool is_uint() const { return code_ == Code::UInt; }
  /// Floating point: IEEE float16/32/64 and bfloat16 alike (float arithmetic, float
  /// literals, float intrinsics). is_float16() and is_bfloat() tell the 16-bit kinds apart.
  constexpr bool is_float() const { return code_ == Code::Float || code_ == Code::BFloat; }
  /// bfloat16 (Code::BFloat).
  constexpr bool is_bfloat() const { return code_ == Code::BFloat; }
  /// IEEE binary16 (Float(16)), not bfloat16.
  constexpr bool is_float16() const { return code_ == Code::Float && bits_ == 16; }
  /// Boolean.
  constexpr bool is_bool() const { return code_ == Code::Bool; }
  /// Opaque pointer.
  constexpr bool is_handle() const { return code_ == Code::Handle; }
  /// int or uint (not bool).
  constexpr bool is_integer() const { return is_int() || is_uint(); }
  /// One lane.
  constexpr bool is_scalar() const { return lanes_ == 1; }
  /// More than one lane.
  constexpr bool is_vector() const { return lanes_ > 1; }
  /// Zero bits: the type of statements (Void()).
  constexpr bool is_void() const { return bits_ == 0; }

  /// The same kind and bits with `lanes` lanes.
  constexpr DataType with_lanes(int lanes) const { return DataType(code_, bits_, lanes); }
  /// The scalar type of one lane.
  constexpr DataType element_of() const { return with_lanes(1); }
  /// The same kind and lanes with `bits` bits.
  constexpr DataType with_bits(int bits) const { return DataType(code_, bits, lanes_); }

  /// Same code, bits and lanes.
  constexpr bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  /// Not operator==.
  constexpr bool operator!=(const DataType& o) const { return !(*this == o); }

  /// "float32", "int64", "bool", "bfloat16", "float32x8".
  std::string to_string() const;
  /// Parses what to_string prints; throws te::Error on anything else.
  static DataType parse(const std::string& s);

 private:
  Code code_ = Code::Int;
  uint8_t bits_ = 0;
  uint16_t lanes_ = 1;
};

/// Signed integer of 8, 16, 32 or 64 bits (lanes > 1: a vector).
constexpr DataType Int(int bits, int lanes = 1) { return DataType(DataType::Code::Int, bits, lanes); }
/// Unsigned integer of 8, 16, 32 or 64 bits.
constexpr DataType UInt(int bits, int lanes = 1) { return DataType(DataType::Code::UInt, bits, lanes); }
/// IEEE float of 16, 32 or 64 bits.
constexpr DataType Float(int bits, int lanes = 1) { return DataType(DataType::Code::Float, bits, lanes); }
/// Throws the te::Error of BFloat() for a width other than 16 (never returns).
[[noreturn]] TE_API DataType bfloat_width_error(int bits);
/// bfloat16: the upper half of a float32, stored as its 16 bits (te::bfloat16).
/// Arithmetic computes in float32 and rounds to nearest even after every operation; mixed
/// with float16 it promotes to float32. 16 is the only width: te::Error for another.
constexpr DataType BFloat(int bits = 16, int lanes = 1) {
  return bits == 16 ? DataType(DataType::Code::BFloat, 16, lanes) : bfloat_width_error(bits);
}
/// Boolean (stored as one byte per element).
constexpr DataType Bool(int lanes = 1) { return DataType(DataType::Code::Bool, 1, lanes); }
/// An opaque 64-bit pointer.
constexpr DataType Handle() { return DataType(DataType::Code::Handle, 64, 1); }
/// The type of statements: no value.
constexpr DataType Void() { return DataType(DataType::Code::Int, 0, 1); }

/// Writes t.to_string().
TE_API std::ostream& operator<<(std::ostream& os, const DataType& t);

}  // namespace te
