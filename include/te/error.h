/// \file
/// te::Error for user mistakes; TE_ICHECK for internal invariants.
#pragma once
#include <stdexcept>
#include <string>

#include "te/export.h"

namespace te {

/// Thrown for every user error: bad expressions, bad schedules, bad arguments.
/// The message names what is wrong and where.
class TE_API Error : public std::runtime_error {
 public:
  /// An error with message msg.
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

/// Thrown when te itself is wrong. Its message starts with "internal error".
class TE_API InternalError : public Error {
 public:
  /// An internal error with message msg.
  explicit InternalError(const std::string& msg) : Error(msg) {}
};

namespace detail {
[[noreturn]] TE_API void throw_internal_error(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace detail

}  // namespace te

/// TE_ICHECK(cond, "message"): an internal invariant; throws te::InternalError naming the
/// file, the line and the condition when it fails. Never used for user input.
#define TE_ICHECK(cond, ...)                                                                                   \
  do {                                                                                                         \
    if (!(cond)) ::te::detail::throw_internal_error(__FILE__, __LINE__, #cond, ::std::string("" __VA_ARGS__)); \
  } while (0)
