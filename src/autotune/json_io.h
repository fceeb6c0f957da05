// JSON for the tuning records and the worker protocol, through nlohmann-json (private to
// libte: no public header includes this). The reader takes hostile input: it bounds the
// nesting depth, refuses duplicate object keys (nlohmann would keep the last silently)
// and turns every parse failure into a te::Error naming the column.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace te::autotune {

// Objects keep their members in the order written, so records read as they always did.
using Json = nlohmann::ordered_json;

// Parses one JSON text (surrounding white space allowed). te::Error "JSON: ..." on
// anything that is not exactly one JSON value: bad syntax, invalid escapes or UTF-16
// surrogates, control characters in strings, numbers outside double's range, nesting
// deeper than max_depth, duplicate object keys.
Json parse_json(std::string_view text, int max_depth);

// Compact JSON text (invalid UTF-8 in strings replaced by U+FFFD); te::Error for a number
// that is not finite.
std::string write_json(const Json& v);

// Magnitudes below 2^53 are integers that a double holds exactly.
inline constexpr double kMaxExactInt = 9007199254740992.0;

// A number as the records write it: integers below 2^53 without a fraction ("32", not
// "32.0"), everything else as the shortest text that reads back the same double.
Json json_number(double d);

// "null", "boolean", "number", "string", "array", "object".
const char* kind_name(const Json& v);

}  // namespace te::autotune
