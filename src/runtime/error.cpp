#include "te/error.h"

#include <fmt/format.h>

namespace te::detail {

void throw_internal_error(const char* file, int line, const char* cond, const std::string& msg) {
  throw InternalError(
      fmt::format("internal error at {}:{}: check '{}' failed{}{}", file, line, cond, msg.empty() ? "" : ": ", msg));
}

}  // namespace te::detail
