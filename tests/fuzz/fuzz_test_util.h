// Helpers for the bounded fuzz runs of the test suite (tests/test_fuzz_*.cpp).
//
// TE_FUZZ_SCALE=k runs k times as many cases; TE_FUZZ_SEED=s starts the runs at other
// seeds. Seeds that hit a known, not yet fixed bug are skipped: each names the DISABLED_
// test in tests/test_fuzz_regressions.cpp that holds its minimal reproducer; remove the
// seed and enable the test once the bug is fixed.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "fuzz_case.h"

namespace te::fuzz {

inline int fuzz_scale() {
  const char* s = std::getenv("TE_FUZZ_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}

inline uint64_t fuzz_seed(uint64_t fallback) {
  const char* s = std::getenv("TE_FUZZ_SEED");
  return s ? std::strtoull(s, nullptr, 10) : fallback;
}

struct KnownBug {
  const char* kind;  // "expr", "graph", "simplify"
  uint64_t seed;
  const char* test;  // the DISABLED_ reproducer in test_fuzz_regressions.cpp
};

inline const std::vector<KnownBug>& known_bugs() {
  // Empty while every bug the fuzzers found is fixed; a new one's seeds go here with the
  // name of its DISABLED_ reproducer.
  static const std::vector<KnownBug> bugs = {};
  return bugs;
}

inline const KnownBug* known_bug(const std::string& kind, uint64_t seed) {
  for (const KnownBug& b : known_bugs())
    if (kind == b.kind && seed == b.seed) return &b;
  return nullptr;
}

// Tallies the results of a bounded run: every failure and every rejection (te refusing
// a schedule the generator builds as legal) is a test failure with its full report.
class RunTally {
 public:
  explicit RunTally(std::string what) : what_(std::move(what)) {}
  ~RunTally() {
    std::cout << what_ << ": " << passed_ << " passed, " << failed_ << " failed, " << rejected_ << " rejected, "
              << skipped_ << " skipped (known bugs)\n";
  }
  void skip() { ++skipped_; }
  void add(const CaseResult& r) {
    switch (r.status) {
      case CaseResult::Status::Pass: ++passed_; break;
      case CaseResult::Status::Rejected:
        ++rejected_;
        ADD_FAILURE() << "te rejected a schedule the generator builds as legal:\n" << r.report;
        break;
      case CaseResult::Status::Fail:
        ++failed_;
        ADD_FAILURE() << r.report;
        break;
    }
  }
  int passed() const { return passed_; }

 private:
  std::string what_;
  int passed_ = 0, failed_ = 0, rejected_ = 0, skipped_ = 0;
};

}  // namespace te::fuzz
