// The expression and simplifier fuzzers with bfloat16 among their types (opt-in, so the
// other fuzz tests keep their cases): random trees that mix bfloat16 with every other
// type must give the same bits in interpret(), the JIT (vectorized, parallel, unrolled)
// and the unscheduled and constant-folded references, and simplify() must keep their
// values. te_fuzz --expr --bfloat16 (with --gpu-percent P --cuda for the CUDA emulation)
// and te_fuzz --simplify --bfloat16 run the same for longer.
#include <gtest/gtest.h>

#include "expr_case.h"
#include "fuzz_test_util.h"
#include "simplify_check.h"

namespace te::fuzz {
namespace {

TEST(FuzzBFloat16, ExpressionsMatchAcrossBackends) {
  const uint64_t base = fuzz_seed(1);
  const int count = 300 * fuzz_scale();
  ExprCaseOptions options;
  options.gpu_percent = 10;
  options.bfloat16 = true;
  RunTally tally("expression fuzzer with bfloat16");
  for (int k = 0; k < count; ++k) tally.add(check_case(make_expr_case(base + static_cast<uint64_t>(k), options)));
  EXPECT_GT(tally.passed(), count * 9 / 10);
}

TEST(FuzzBFloat16, SimplifierKeepsValues) {
  const uint64_t base = fuzz_seed(1);
  const int count = 5000 * fuzz_scale();
  RunTally tally("simplifier fuzzer with bfloat16");
  for (int k = 0; k < count; ++k) tally.add(check_simplify_case(base + static_cast<uint64_t>(k), true));
  EXPECT_GT(tally.passed(), count * 9 / 10);
}

}  // namespace
}  // namespace te::fuzz
