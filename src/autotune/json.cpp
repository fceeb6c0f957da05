#include "autotune/json.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <system_error>

#include "te/error.h"

namespace te::autotune::json {

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.bool_ = b;
  return v;
}
Value Value::number(double d) {
  Value v;
  v.kind_ = Kind::Number;
  v.number_ = d;
  return v;
}
Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::String;
  v.string_ = std::move(s);
  return v;
}
Value Value::array(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::Array;
  v.items_ = std::move(items);
  return v;
}
Value Value::object(std::vector<std::pair<std::string, Value>> members) {
  Value v;
  v.kind_ = Kind::Object;
  v.members_ = std::move(members);
  return v;
}

const Value* Value::find(std::string_view key) const {
  if (kind_ != Kind::Object) return nullptr;
  for (const auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Null:
      return "null";
    case Value::Kind::Bool:
      return "boolean";
    case Value::Kind::Number:
      return "number";
    case Value::Kind::String:
      return "string";
    case Value::Kind::Array:
      return "array";
    case Value::Kind::Object:
      return "object";
  }
  return "?";
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, int max_depth) : s_(text), max_depth_(max_depth) {}

  Value parse_document() {
    skip_space();
    Value v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("JSON: {} at column {}", what, pos_ + 1));
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  void skip_space() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect_word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) fail("invalid literal");
    pos_ += w.size();
  }

  Value parse_value(int depth) {
    if (at_end()) fail("unexpected end of text");
    char c = s_[pos_];
    switch (c) {
      case '{':
        return parse_object(depth + 1);
      case '[':
        return parse_array(depth + 1);
      case '"':
        return Value::string(parse_string());
      case 't':
        expect_word("true");
        return Value::boolean(true);
      case 'f':
        expect_word("false");
        return Value::boolean(false);
      case 'n':
        expect_word("null");
        return Value();
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Value::number(parse_number());
        fail(fmt::format("unexpected character '{}'", printable(c)));
    }
  }

  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    return fmt::format("\\x{:02x}", u);
  }

  void check_depth(int depth) const {
    if (depth > max_depth_) fail(fmt::format("nesting deeper than {}", max_depth_));
  }

  Value parse_object(int depth) {
    check_depth(depth);
    ++pos_;  // '{'
    Value obj = Value::object();
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return obj;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail("expected a string key");
      std::string key = parse_string();
      if (obj.find(key)) fail(fmt::format("duplicate key \"{}\"", key));
      skip_space();
      if (peek() != ':') fail("expected ':'");
      ++pos_;
      skip_space();
      Value v = parse_value(depth);
      obj.set(std::move(key), std::move(v));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return obj;
      }
      fail("expected ',' or '}'");
    }
  }

  Value parse_array(int depth) {
    check_depth(depth);
    ++pos_;  // '['
    Value arr = Value::array();
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return arr;
    }
    for (;;) {
      skip_space();
      arr.push_back(parse_value(depth));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return arr;
      }
      fail("expected ',' or ']'");
    }
  }

  double parse_number() {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos_;
    } else {
      fail("invalid number");
    }
    if (peek() == '.') {
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digits must follow '.'");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digits must follow the exponent");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    double d = 0;
    auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, d);
    if (ec == std::errc::result_out_of_range) {
      // Underflow to zero is harmless; overflow is not a number we can hold.
      bool tiny = false;
      for (size_t i = start; i < pos_; ++i)
        if (s_[i] == 'e' || s_[i] == 'E') tiny = s_[i + 1] == '-';
      if (!tiny) {
        pos_ = start;
        fail("number out of range");
      }
      return 0.0;
    }
    if (ec != std::errc() || end != s_.data() + pos_ || !std::isfinite(d)) {
      pos_ = start;
      fail("invalid number");
    }
    return d;
  }

  unsigned parse_hex4() {
    if (s_.size() - pos_ < 4) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= unsigned(c - 'A' + 10);
      else
        fail("invalid \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = parse_hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired UTF-16 low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(pos_, 2) != "\\u") fail("unpaired UTF-16 high surrogate");
            pos_ += 2;
            unsigned lo = parse_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired UTF-16 high surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail("invalid escape");
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  int max_depth_;
};

void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
          out += c;
    }
  }
  out += '"';
}

void write_number(std::string& out, double d) {
  if (!std::isfinite(d)) throw Error("JSON: cannot write a number that is not finite");
  if (d == std::floor(d) && std::fabs(d) < 9007199254740992.0) {
    out += fmt::format("{}", static_cast<int64_t>(d));
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  TE_ICHECK(ec == std::errc(), "to_chars of a double failed");
  out.append(buf, end);
}

void write_value(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null:
      out += "null";
      return;
    case Value::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::Number:
      write_number(out, v.as_number());
      return;
    case Value::Kind::String:
      write_string(out, v.as_string());
      return;
    case Value::Kind::Array: {
      out += '[';
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out += ',';
        first = false;
        write_value(out, item);
      }
      out += ']';
      return;
    }
    case Value::Kind::Object: {
      out += '{';
      bool first = true;
      for (const auto& [k, item] : v.members()) {
        if (!first) out += ',';
        first = false;
        write_string(out, k);
        out += ':';
        write_value(out, item);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

Value parse(std::string_view text, int max_depth) { return Parser(text, max_depth).parse_document(); }

std::string write(const Value& v) {
  std::string out;
  write_value(out, v);
  return out;
}

}  // namespace te::autotune::json
