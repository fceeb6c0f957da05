// The expression fuzzer's bounded run (tests/fuzz/expr_case.h): random expression trees
// over every type, computed element-wise under random CPU schedules (and some GPU
// bindings, run here through interpret() and the JIT), must give the same bits in
// interpret(), the JIT, the unscheduled program and the program that reads its
// constants from memory. te_fuzz --expr runs the same cases for as long as you like.
#include <gtest/gtest.h>

#include "expr_case.h"
#include "fuzz_test_util.h"

namespace te::fuzz {
namespace {

TEST(FuzzExpr, SeededRunMatchesAcrossBackends) {
  const uint64_t base = fuzz_seed(1);
  const int count = 400 * fuzz_scale();
  ExprCaseOptions options;
  options.gpu_percent = 10;
  RunTally tally("expression fuzzer");
  for (int k = 0; k < count; ++k) {
    const uint64_t seed = base + static_cast<uint64_t>(k);
    if (known_bug("expr", seed)) {
      tally.skip();
      continue;
    }
    tally.add(check_case(make_expr_case(seed, options)));
  }
  EXPECT_GT(tally.passed(), count * 9 / 10);
}

}  // namespace
}  // namespace te::fuzz
