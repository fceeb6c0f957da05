// TE_LOG levels, the log sink, and TE_TIME_PASSES timings of lowering and LLVM stages.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <mutex>
#include <string>
#include <vector>

#include "te/log.h"
#include "te/te.h"
#include "test_util.h"

namespace te {
namespace {

// Collects what te logs; restores the default sink and the environment's settings.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("TE_LOG");
    unsetenv("TE_TIME_PASSES");
    reset_log_settings_from_environment();
    set_log_sink([this](LogLevel level, const std::string& text) {
      std::lock_guard<std::mutex> lock(mutex_);
      messages_.push_back({level, text});
    });
  }
  void TearDown() override {
    set_log_sink(nullptr);
    unsetenv("TE_LOG");
    unsetenv("TE_TIME_PASSES");
    reset_log_settings_from_environment();
  }
  // The messages logged so far, joined by newlines.
  std::string logged() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string all;
    for (const auto& m : messages_) all += m.second + "\n";
    return all;
  }
  std::vector<std::pair<LogLevel, std::string>> messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<LogLevel, std::string>> messages_;
};

LoweredFunc lower_vadd(const std::string& name = "vadd") {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 8);
  s[C].vectorize(xi);
  return lower(s, {A, B, C}, name);
}

TEST_F(LogTest, ParsesLevelNamesAndNumbers) {
  EXPECT_EQ(parse_log_level("off"), LogLevel::Off);
  EXPECT_EQ(parse_log_level("error"), LogLevel::Error);
  EXPECT_EQ(parse_log_level("WARN"), LogLevel::Warn);
  EXPECT_EQ(parse_log_level("warning"), LogLevel::Warn);
  EXPECT_EQ(parse_log_level("Info"), LogLevel::Info);
  EXPECT_EQ(parse_log_level("debug"), LogLevel::Debug);
  for (int k = 0; k <= 4; ++k) EXPECT_EQ(parse_log_level(std::to_string(k)), static_cast<LogLevel>(k));
  for (LogLevel l : {LogLevel::Off, LogLevel::Error, LogLevel::Warn, LogLevel::Info, LogLevel::Debug})
    EXPECT_EQ(parse_log_level(log_level_name(l)), l);
}

TEST_F(LogTest, RejectsUnknownLevels) {
  expect_error([] { parse_log_level("verbose"); }, {"log level 'verbose'", "off, error, warn, info, debug", "0-4"});
  expect_error([] { parse_log_level("5"); }, {"log level '5'"});
  expect_error([] { parse_log_level(""); }, {"log level ''"});
}

TEST_F(LogTest, LevelComesFromTheEnvironment) {
  EXPECT_EQ(log_level(), LogLevel::Warn);  // unset: the default
  setenv("TE_LOG", "info", 1);
  reset_log_settings_from_environment();
  EXPECT_EQ(log_level(), LogLevel::Info);
  EXPECT_TRUE(log_enabled(LogLevel::Info));
  EXPECT_FALSE(log_enabled(LogLevel::Debug));
  setenv("TE_LOG", "0", 1);
  reset_log_settings_from_environment();
  EXPECT_EQ(log_level(), LogLevel::Off);
  EXPECT_FALSE(log_enabled(LogLevel::Error));
  EXPECT_FALSE(log_enabled(LogLevel::Off));
  set_log_level(LogLevel::Debug);  // the program's choice wins over the environment
  EXPECT_EQ(log_level(), LogLevel::Debug);
  EXPECT_EQ(logged(), "");
}

TEST_F(LogTest, BadEnvironmentValuesWarnAndKeepTheDefaults) {
  setenv("TE_LOG", "loud", 1);
  setenv("TE_TIME_PASSES", "yes", 1);
  reset_log_settings_from_environment();
  EXPECT_EQ(log_level(), LogLevel::Warn);
  EXPECT_FALSE(time_passes());
  std::vector<std::pair<LogLevel, std::string>> m = messages();
  ASSERT_EQ(m.size(), 2u) << logged();
  EXPECT_EQ(m[0].first, LogLevel::Warn);
  EXPECT_NE(m[0].second.find("TE_LOG='loud' is not a log level"), std::string::npos) << m[0].second;
  EXPECT_NE(m[0].second.find("using warn"), std::string::npos) << m[0].second;
  EXPECT_NE(m[1].second.find("TE_TIME_PASSES='yes' is neither 1 nor 0"), std::string::npos) << m[1].second;
}

TEST_F(LogTest, MacroSkipsDisabledMessagesWithoutEvaluatingThem) {
  set_log_level(LogLevel::Warn);
  int evaluated = 0;
  auto message = [&] {
    ++evaluated;
    return std::string("detail");
  };
  TE_LOG(Debug, message());
  EXPECT_EQ(evaluated, 0);
  TE_LOG(Error, message());
  EXPECT_EQ(evaluated, 1);
  std::vector<std::pair<LogLevel, std::string>> m = messages();
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].first, LogLevel::Error);
  EXPECT_EQ(m[0].second, "detail");
}

TEST_F(LogTest, DefaultSinkPrefixesTheLevelOnStderr) {
  set_log_sink(nullptr);
  ::testing::internal::CaptureStderr();
  log_message(LogLevel::Warn, "something to know");
  log_message(LogLevel::Debug, "a detail");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "[te warn] something to know\n[te debug] a detail\n");
}

TEST_F(LogTest, InfoLogsLoweringJitCompilationsAndCacheHits) {
  set_log_level(LogLevel::Info);
  LoweredFunc f = lower_vadd("vadd_logged");
  Module first = build(f);
  Module second = build(f);  // `first` keeps the code alive: answered from the cache
  std::string text = logged();
  EXPECT_NE(text.find("lowered 'vadd_logged' (3 parameters)"), std::string::npos) << text;
  EXPECT_NE(text.find("JIT 'vadd_logged': compiling"), std::string::npos) << text;
  EXPECT_NE(text.find("JIT: cache hit"), std::string::npos) << text;
  EXPECT_EQ(text.find("time:"), std::string::npos) << text;  // TE_TIME_PASSES is off
}

TEST_F(LogTest, TimePassesListsEveryLoweringPass) {
  setenv("TE_TIME_PASSES", "1", 1);
  reset_log_settings_from_environment();
  EXPECT_TRUE(time_passes());
  lower_vadd("vadd_timed");
  std::vector<std::pair<LogLevel, std::string>> m = messages();
  ASSERT_EQ(m.size(), 1u) << logged();
  const std::string& table = m[0].second;
  EXPECT_EQ(table.find("time: lower 'vadd_timed': "), 0u) << table;
  size_t at = 0;
  for (const std::string& pass : lower_pass_names()) {  // every pass, in pipeline order
    size_t found = table.find("%  " + pass + "\n", at);
    if (found == std::string::npos) found = table.find("%  " + pass, at);
    EXPECT_NE(found, std::string::npos) << pass << " missing or out of order:\n" << table;
    if (found != std::string::npos) at = found;
  }
  EXPECT_NE(table.find(" ms"), std::string::npos);
}

TEST_F(LogTest, TimePassesListsTheLlvmStages) {
  set_time_passes(true);
  LoweredFunc f = lower_vadd("vadd_llvm_timed");
  BuildOptions no_cache;
  no_cache.use_cache = false;
  Module m = build(f, no_cache);
  std::string text = logged();
  size_t jit = text.find("time: JIT 'vadd_llvm_timed': ");
  ASSERT_NE(jit, std::string::npos) << text;
  std::string table = text.substr(jit);
  for (const char* stage : {"LLVM IR emission", "LLVM optimization", "LLVM machine code", "JIT linking"})
    EXPECT_NE(table.find(stage), std::string::npos) << stage << " missing:\n" << table;
}

TEST_F(LogTest, StageTimerIsSilentWhenOffOrUnfinished) {
  set_time_passes(false);
  {
    StageTimer t("off");
    EXPECT_FALSE(t.active());
    t.lap("a");
    t.finish();
  }
  set_time_passes(true);
  {
    StageTimer t("failed work");
    t.lap("a");
  }  // no finish(): nothing printed
  StageTimer t("done");
  t.lap("first");
  t.restart();
  t.lap("second");
  t.finish();
  t.finish();  // once only
  std::vector<std::pair<LogLevel, std::string>> m = messages();
  ASSERT_EQ(m.size(), 1u) << logged();
  EXPECT_EQ(m[0].first, LogLevel::Info);
  EXPECT_EQ(m[0].second.find("time: done: "), 0u) << m[0].second;
  EXPECT_NE(m[0].second.find("%  first\n"), std::string::npos) << m[0].second;
  EXPECT_NE(m[0].second.find("%  second"), std::string::npos) << m[0].second;
}

}  // namespace
}  // namespace te
