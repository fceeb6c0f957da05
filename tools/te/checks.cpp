// The checks of the numeric and --target options, in te's words (CLI11's own say "Value 0
// not in range 0.000000 to 1.79e308"). A value that fails one is a malformed command line:
// exit status 2, as an unknown option.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "commands.h"
#include "te/error.h"
#include "te/target.h"

namespace te::cli {

CLI::Validator whole_number(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        long long v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        const bool whole = end == text.data() + text.size() && !text.empty();
        if (whole && ec == std::errc() && v >= min && v <= max) return "";
        if (whole && (ec == std::errc::result_out_of_range || v > max) && text[0] != '-')
          return fmt::format("expects at most {}, not '{}'", max, text);
        return fmt::format("expects a whole number of at least {}, not '{}'", min, text);
      },
      fmt::format("INT>={}", min));
}

CLI::Validator real_number(double min, bool inclusive, const char* unit) {
  return CLI::Validator(
      [min, inclusive, unit](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && *end == '\0' && std::isfinite(v);
        if (number && (inclusive ? v >= min : v > min)) return "";
        return fmt::format("expects a number of {} {} {}, not '{}'", unit, inclusive ? "of at least" : "above", min,
                           text);
      },
      fmt::format("{}{}{}", unit, inclusive ? ">=" : ">", min));
}

CLI::Validator target_name(bool any_target) {
  return CLI::Validator(
      [any_target](std::string& text) -> std::string {
        if (text == "llvm" || text == "cuda") return "";
        if (!any_target) return fmt::format("expects llvm (the cpu function) or cuda, not '{}'", text);
        try {
          Target::parse(text);
          return "";
        } catch (const Error& e) {
          return e.what();
        }
      },
      any_target ? "TARGET" : "llvm|cuda");
}

}  // namespace te::cli
