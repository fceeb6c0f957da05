// The property the tuning-records reader must have on any input, shared by the libFuzzer
// target (records_libfuzzer.cpp) and the bounded run in the test suite
// (tests/test_autotune_records_fuzz.cpp): parse_record either returns a record that is
// valid and survives a write/read round trip, or throws te::Error; read_records accounts
// for every non-blank line as a record or a warning. Anything else (another exception, a
// crash, a sanitizer report) is a failure.
#pragma once
#include <te/autotune.h>
#include <te/error.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

namespace te::fuzz {

// "" when the property holds for this line, else what broke.
inline std::string check_record_line(const std::string& line) {
  using namespace te::autotune;
  Record r;
  try {
    r = parse_record(line);
  } catch (const te::InternalError& e) {
    return std::string("internal error: ") + e.what();
  } catch (const te::Error&) {
    return "";
  } catch (const std::exception& e) {
    return std::string("an exception that is not te::Error: ") + e.what();
  }
  if (r.ok == r.times.empty()) return "ok record without times, or failed record with times";
  for (double t : r.times)
    if (!(t > 0 && std::isfinite(t))) return "a time that is not positive and finite";
  if (r.ok && !std::isfinite(r.cost())) return "ok record with an infinite cost";
  if (r.key.empty() || r.target.empty()) return "empty key or target";
  try {
    std::string again = format_record(r);
    Record back = parse_record(again);
    if (back.key != r.key || back.config != r.config || back.times != r.times || back.ok != r.ok ||
        back.error != r.error)
      return "the record changes through a write/read round trip: " + again;
    if (format_record(back) != again) return "writing is not stable: " + again;
  } catch (const std::exception& e) {
    return std::string("a parsed record does not round-trip: ") + e.what();
  }
  return "";
}

// Checks every line of the input, then the whole input as a records file.
inline std::string check_records_bytes(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t non_blank = 0, start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      ++non_blank;
      std::string why = check_record_line(line);
      if (!why.empty()) return why;
    }
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::istringstream in(text);
  te::autotune::RecordFile f;
  try {
    f = te::autotune::read_records(in, "fuzz");
  } catch (const std::exception& e) {
    return std::string("read_records threw: ") + e.what();
  }
  if (f.records.size() + f.warnings.size() != non_blank)
    return "read_records lost a line: " + std::to_string(f.records.size()) + " records + " +
           std::to_string(f.warnings.size()) + " warnings for " + std::to_string(non_blank) + " lines";
  return "";
}

}  // namespace te::fuzz
