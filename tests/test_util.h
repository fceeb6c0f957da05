// Helpers shared by te's tests.
#pragma once
#include <gtest/gtest.h>

#include <te/error.h>

#include <unistd.h>

#include <cstdio>
#include <initializer_list>
#include <string>

// Runs fn, expecting a te::Error (not an internal error) whose message contains every
// one of the substrings.
template <typename F>
void expect_error(F&& fn, std::initializer_list<const char*> substrings) {
  try {
    fn();
    ADD_FAILURE() << "expected a te::Error";
  } catch (const te::InternalError& e) {
    ADD_FAILURE() << "got an internal error instead of a user error: " << e.what();
  } catch (const te::Error& e) {
    for (const char* s : substrings)
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << "message '" << e.what() << "' lacks '" << s << "'";
  }
}

// A path in the test temp directory, removed first; the process id in its name, so two
// suites running at once on one machine never share a file.
inline std::string temp_path(const std::string& name) {
  std::string p = ::testing::TempDir() + std::to_string(::getpid()) + "_" + name;
  std::remove(p.c_str());
  return p;
}
