#include "autotune/json_io.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <vector>

#include "te/error.h"

namespace te::autotune {

namespace {

// "syntax error while parsing value - invalid literal" out of nlohmann's
// "[json.exception.parse_error.101] parse error at line 1, column 9: <reason>".
std::string reason_of(const nlohmann::json::exception& e) {
  std::string what = e.what();
  size_t column = what.find("column ");
  size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
  if (colon != std::string::npos) return what.substr(colon + 2);
  size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

void check_finite(const Json& v) {
  switch (v.type()) {
    case Json::value_t::number_float:
      if (!std::isfinite(v.get<double>())) throw Error("JSON: cannot write a number that is not finite");
      return;
    case Json::value_t::array:
    case Json::value_t::object:
      for (const Json& item : v) check_finite(item);
      return;
    default: return;
  }
}

}  // namespace

Json parse_json(std::string_view text, int max_depth) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::set<std::string>> keys;  // of each object being read
  auto check = [&](int depth, Event event, Json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (depth >= max_depth) throw Error(fmt::format("JSON: nesting deeper than {}", max_depth));
        if (event == Event::object_start) keys.emplace_back();
        break;
      case Event::object_end: keys.pop_back(); break;
      case Event::key:
        if (!keys.back().insert(parsed.get<std::string>()).second)
          throw Error(fmt::format("JSON: duplicate key \"{}\"", parsed.get<std::string>()));
        break;
      default: break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), check);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(fmt::format("JSON: {} at column {}", reason_of(e), e.byte));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("JSON: {}", reason_of(e)));
  }
}

std::string write_json(const Json& v) {
  check_finite(v);
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Json json_number(double d) {
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < kMaxExactInt) return Json(static_cast<int64_t>(d));
  return Json(d);
}

const char* kind_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "number";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "binary";
  }
}

}  // namespace te::autotune
