// A small JSON reader and writer for the tuning records and the worker protocol. The
// reader takes hostile input: it bounds the nesting depth, the text it accepts and every
// allocation by the length of its input, and throws te::Error naming the column of the
// first thing wrong; it never reads past the given text.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace te::autotune::json {

class Value {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Value() = default;
  static Value boolean(bool b);
  static Value number(double d);
  static Value string(std::string s);
  static Value array(std::vector<Value> items = {});
  static Value object(std::vector<std::pair<std::string, Value>> members = {});

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }
  const std::vector<Value>& items() const { return items_; }
  const std::vector<std::pair<std::string, Value>>& members() const { return members_; }
  // The member called key of an object (nullptr when absent or not an object).
  const Value* find(std::string_view key) const;

  void push_back(Value v) { items_.push_back(std::move(v)); }
  void set(std::string key, Value v) { members_.emplace_back(std::move(key), std::move(v)); }

 private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

// "null", "true", "false", "number", "string", "array", "object".
const char* kind_name(Value::Kind k);

// Parses one JSON text (surrounding white space allowed). te::Error on anything that is
// not exactly one JSON value: bad syntax, invalid escapes or UTF-16 surrogates, control
// characters in strings, numbers outside double's range, nesting deeper than max_depth,
// duplicate object keys.
Value parse(std::string_view text, int max_depth = 16);

// Compact JSON text: strings escaped, numbers with 17 significant digits (integers
// exactly); te::Error for a number that is not finite.
std::string write(const Value& v);

}  // namespace te::autotune::json
