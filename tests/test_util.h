// Helpers shared by te's tests.
#pragma once
#include <gtest/gtest.h>

#include <te/error.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

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

// Whether `what` occurs in `text` (a printed loop nest or kernel).
inline bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// n floats drawn uniformly from [lo, hi) by a generator seeded with `seed`.
inline std::vector<float> uniform_floats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}
