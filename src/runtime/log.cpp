// TE_LOG levels, the message sink and TE_TIME_PASSES (include/te/log.h).
#include "te/log.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "te/error.h"

namespace te {
namespace {

constexpr int kUnset = -1;
constexpr LogLevel kDefaultLevel = LogLevel::Warn;

std::atomic<int> g_level{kUnset};
std::atomic<int> g_time_passes{kUnset};

// The sink and the lock that makes messages arrive one at a time. Never destroyed, so
// logging from static destructors stays safe.
struct SinkState {
  std::mutex mutex;
  LogSink sink;
};
SinkState& sink_state() {
  static SinkState* s = new SinkState();
  return *s;
}

int level_from_environment() {
  const char* env = std::getenv("TE_LOG");
  if (env == nullptr || *env == '\0') return static_cast<int>(kDefaultLevel);
  try {
    return static_cast<int>(parse_log_level(env));
  } catch (const Error&) {
    log_message(LogLevel::Warn, fmt::format("TE_LOG='{}' is not a log level (off, error, warn, info, debug or "
                                            "0-4); using {}",
                                            env, log_level_name(kDefaultLevel)));
    return static_cast<int>(kDefaultLevel);
  }
}

int time_passes_from_environment() {
  const char* env = std::getenv("TE_TIME_PASSES");
  if (env == nullptr || *env == '\0') return 0;
  std::string value = env;
  if (value == "1") return 1;
  if (value == "0") return 0;
  log_message(LogLevel::Warn, fmt::format("TE_TIME_PASSES='{}' is neither 1 nor 0; pass timings stay off", value));
  return 0;
}

// The value of a setting, read from the environment on first use. Two threads may both
// read it; they find the same value.
template <typename Read>
int setting(std::atomic<int>& slot, Read read) {
  int v = slot.load(std::memory_order_acquire);
  if (v != kUnset) return v;
  int fresh = read();
  int expected = kUnset;
  slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel);
  return slot.load(std::memory_order_acquire);
}

}  // namespace

LogLevel parse_log_level(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const char* const names[] = {"off", "error", "warn", "info", "debug"};
  for (int k = 0; k < 5; ++k)
    if (t == names[k] || t == std::to_string(k)) return static_cast<LogLevel>(k);
  if (t == "warning") return LogLevel::Warn;
  throw Error(fmt::format("log level '{}' is not one of off, error, warn, info, debug (or 0-4)", text));
}

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Off: return "off";
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}

LogLevel log_level() { return static_cast<LogLevel>(setting(g_level, level_from_environment)); }

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool log_enabled(LogLevel level) {
  return level != LogLevel::Off && static_cast<int>(level) <= static_cast<int>(log_level());
}

bool time_passes() { return setting(g_time_passes, time_passes_from_environment) == 1; }

void set_time_passes(bool on) { g_time_passes.store(on ? 1 : 0); }

void reset_log_settings_from_environment() {
  g_level.store(kUnset);
  g_time_passes.store(kUnset);
}

void set_log_sink(LogSink sink) {
  SinkState& s = sink_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.sink = std::move(sink);
}

void log_message(LogLevel level, const std::string& message) {
  SinkState& s = sink_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.sink) {
    s.sink(level, message);
    return;
  }
  std::cerr << "[te " << log_level_name(level) << "] " << message << "\n" << std::flush;
}

StageTimer::StageTimer(std::string title) : active_(time_passes()), title_(std::move(title)), last_(Clock::now()) {}

void StageTimer::lap(const char* stage) {
  if (!active_) return;
  Clock::time_point now = Clock::now();
  stages_.emplace_back(stage, std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

void StageTimer::restart() {
  if (active_) last_ = Clock::now();
}

void StageTimer::finish() {
  if (!active_) return;
  active_ = false;
  double total = 0;
  for (const auto& s : stages_) total += s.second;
  std::string text = fmt::format("time: {}: {:.3f} ms", title_, total * 1e3);
  for (const auto& s : stages_)
    text += fmt::format("\n  {:>10.3f} ms {:>5.1f}%  {}", s.second * 1e3, total > 0 ? 100 * s.second / total : 0.0,
                        s.first);
  log_message(LogLevel::Info, text);
}

}  // namespace te
