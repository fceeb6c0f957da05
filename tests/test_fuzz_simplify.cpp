// The simplifier fuzzer's bounded run (tests/fuzz/simplify_check.h): float, bool,
// mixed-type and vector expressions and statements keep their values (bit for bit,
// through interpret()) and a second simplify() changes nothing. test_simplify.cpp
// covers integer expressions with its own evaluator; te_fuzz --simplify (and the
// libFuzzer target, -DTE_LIBFUZZER=ON with clang) run the same checks for longer.
#include <gtest/gtest.h>

#include "fuzz_test_util.h"
#include "simplify_check.h"

namespace te::fuzz {
namespace {

TEST(FuzzSimplify, SeededRunKeepsValuesAndIsIdempotent) {
  const uint64_t base = fuzz_seed(1);
  const int count = 10000 * fuzz_scale();
  RunTally tally("simplifier fuzzer");
  for (int k = 0; k < count; ++k) {
    const uint64_t seed = base + static_cast<uint64_t>(k);
    if (known_bug("simplify", seed)) {
      tally.skip();
      continue;
    }
    tally.add(check_simplify_case(seed));
  }
  EXPECT_GT(tally.passed(), count * 9 / 10);
}

TEST(FuzzSimplify, ByteInputsOfAnyLengthMakeCases) {
  // The libFuzzer entry point: empty, short and arbitrary inputs all give valid cases.
  std::vector<uint8_t> bytes;
  CaseResult empty = check_simplify_bytes(bytes.data(), 0);
  EXPECT_EQ(empty.status, CaseResult::Status::Pass) << empty.report;
  Rng rng(7);
  for (int k = 0; k < 300; ++k) {
    bytes.resize(rng.below(64));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng.bits());
    CaseResult r = check_simplify_bytes(bytes.data(), bytes.size());
    EXPECT_NE(r.status, CaseResult::Status::Rejected);
    if (r.status == CaseResult::Status::Fail) ADD_FAILURE() << r.report;
  }
}

}  // namespace
}  // namespace te::fuzz
