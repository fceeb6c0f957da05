#include "te/dtype.h"

#include <fmt/format.h>

#include <ostream>

#include "te/error.h"

namespace te {

std::string DataType::to_string() const {
  if (is_void()) return "void";
  std::string base;
  switch (code_) {
    case Code::Int: base = fmt::format("int{}", bits()); break;
    case Code::UInt: base = fmt::format("uint{}", bits()); break;
    case Code::Float: base = fmt::format("float{}", bits()); break;
    case Code::BFloat: base = fmt::format("bfloat{}", bits()); break;
    case Code::Bool: base = "bool"; break;
    case Code::Handle: base = "handle"; break;
  }
  return lanes() > 1 ? fmt::format("{}x{}", base, lanes()) : base;
}

DataType DataType::parse(const std::string& s) {
  std::string base = s;
  int lanes = 1;
  if (auto x = s.rfind('x'); x != std::string::npos && x + 1 < s.size()) {
    try {
      size_t used = 0;
      lanes = std::stoi(s.substr(x + 1), &used);
      if (used != s.size() - x - 1 || lanes < 1) throw Error("");
    } catch (...) {
      throw Error(fmt::format("unknown data type '{}'", s));
    }
    base = s.substr(0, x);
  }
  auto bits_after = [&](size_t prefix) -> int {
    std::string digits = base.substr(prefix);
    if (digits == "8") return 8;
    if (digits == "16") return 16;
    if (digits == "32") return 32;
    if (digits == "64") return 64;
    return 0;
  };
  DataType t;
  if (base == "bool")
    t = Bool();
  else if (base == "bfloat16")
    t = BFloat(16);
  else if (base.rfind("uint", 0) == 0 && bits_after(4))
    t = UInt(bits_after(4));
  else if (base.rfind("int", 0) == 0 && bits_after(3))
    t = Int(bits_after(3));
  else if (base.rfind("float", 0) == 0 && bits_after(5) >= 16)
    t = Float(bits_after(5));
  else
    throw Error(fmt::format("unknown data type '{}'", s));
  return t.with_lanes(lanes);
}

DataType bfloat_width_error(int bits) {
  throw Error(fmt::format("BFloat({}): bfloat16 is the only bfloat type (BFloat(16))", bits));
}

std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.to_string(); }

}  // namespace te
