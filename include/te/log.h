/// \file
/// Feedback while working: log messages (TE_LOG) and pass timings (TE_TIME_PASSES).
///
/// `TE_LOG=<level>` in the environment picks what te prints to stderr, each line prefixed
/// "[te <level>] ": off (0), error (1), warn (2, the default), info (3: lowering, JIT
/// compilations and cache hits, the chosen target), debug (4: more detail). A name or a
/// number; anything else prints a warning and keeps the default.
///
/// TE_TIME_PASSES=1 prints, after each lower(), the time of every lowering pass, and after
/// each compilation, the time of the LLVM stages (IR emission, optimization, machine code,
/// JIT linking). TE_TIME_PASSES=0 (or unset) turns it off; another value prints a warning
/// and keeps it off. Timings are printed whatever TE_LOG says (unless a sink takes them).
///
/// Programs can set both without the environment (set_log_level, set_time_passes) and
/// route the messages elsewhere (set_log_sink).
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "te/export.h"

namespace te {

/// How much te prints (`TE_LOG=<level>`).
enum class LogLevel : int {
  Off = 0,    ///< nothing
  Error = 1,  ///< errors
  Warn = 2,   ///< warnings (the default)
  Info = 3,   ///< lowering, JIT compilations and cache hits, the target
  Debug = 4   ///< more detail
};

/// "off", "error", "warn", "info", "debug" (any case) or "0".."4"; te::Error otherwise.
TE_API LogLevel parse_log_level(const std::string& text);
/// "off", "error", "warn", "info", "debug".
TE_API const char* log_level_name(LogLevel level);

/// The current level: set_log_level's, or TE_LOG's (read on first use).
TE_API LogLevel log_level();
/// Sets the level (overriding TE_LOG).
TE_API void set_log_level(LogLevel level);
/// True when messages of `level` are printed.
TE_API bool log_enabled(LogLevel level);

/// Whether pass timings are printed: set_time_passes's, or TE_TIME_PASSES (read on first use).
TE_API bool time_passes();
/// Turns pass timings on or off (overriding TE_TIME_PASSES).
TE_API void set_time_passes(bool on);

/// Reads TE_LOG and TE_TIME_PASSES again, dropping set_log_level and set_time_passes.
TE_API void reset_log_settings_from_environment();

/// Receives every printed message (level and text, without prefix or newline); a null
/// sink restores the default, which writes "[te <level>] text\n" to stderr. Timings
/// arrive at LogLevel::Info. Called from any thread, one message at a time.
using LogSink = std::function<void(LogLevel level, const std::string& message)>;
/// Routes every printed message to sink (null: back to stderr).
TE_API void set_log_sink(LogSink sink);

/// Hands message to the sink, whatever the level (TE_LOG checks the level first).
TE_API void log_message(LogLevel level, const std::string& message);

/// Times consecutive stages of one piece of work and prints them as one table when
/// finished, if time_passes() was on when it was made (otherwise it does nothing):
///     StageTimer t("lower 'vadd'");  ...  t.lap("inline");  ...  t.lap("attach");  t.finish();
/// Work that fails before finish() prints nothing.
class TE_API StageTimer {
 public:
  /// Starts the first stage of the work called title.
  explicit StageTimer(std::string title);
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

  /// Whether it times (time_passes() was on when it was made).
  bool active() const { return active_; }
  /// Ends the current stage (begun at construction or at the previous lap) as `stage`.
  void lap(const char* stage);
  /// Leaves out the time since the last lap (e.g. printing the IR) from the next stage.
  void restart();
  /// Prints the table: each stage's milliseconds and the total. Later calls do nothing.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool active_ = false;
  std::string title_;
  Clock::time_point last_;
  std::vector<std::pair<std::string, double>> stages_;  ///< name, seconds
};

}  // namespace te

/// TE_LOG(Info, "text"): prints the message if the level is enabled; the message
/// expression is evaluated only then.
#define TE_LOG(level, message)                                                                         \
  do {                                                                                                 \
    if (::te::log_enabled(::te::LogLevel::level)) ::te::log_message(::te::LogLevel::level, (message)); \
  } while (0)
