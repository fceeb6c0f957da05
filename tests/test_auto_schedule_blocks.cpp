// auto_schedule's column blocks on the CPU (src/auto_schedule/cpu_tiling.cpp): a row's
// tiles in blocks of equal size, the block loop outside the axes its block is reused
// across when the search asks (decision `<stage>.blocks_outside`), and a block copied
// only where its rows lie a page apart in the input (`<stage>.copy_block`'s rule value).
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/build.h>
#include <te/te.h>

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "test_util.h"

using namespace te;

namespace {

std::map<std::string, int64_t> rule_values(const Tensor& out, const AutoScheduleOptions& o) {
  std::map<std::string, int64_t> values;
  for (const AutoScheduleDecision& d : auto_schedule_decisions({out}, o)) values[d.name] = d.rule_value;
  return values;
}

AutoScheduleOptions threads(int n) {
  AutoScheduleOptions o;
  o.threads = n;
  return o;
}

// A linear layer over a batch of sequences: Y[b, i, j] = sum_k X[b, i, k] * W[k, j]; W's
// blocks of columns serve every sequence.
struct Linear {
  int batch, rows, in, out;
  Tensor X, W, Y;
};

Linear linear(int batch, int rows, int in, int out) {
  Linear l{batch, rows, in, out, {}, {}, {}};
  l.X = placeholder({batch, rows, in}, Float(32), "X");
  l.W = placeholder({in, out}, Float(32), "W");
  IterVar k = reduce_axis({0, in}, "k");
  l.Y = compute({batch, rows, out}, [&](Expr b, Expr i, Expr j) { return sum(l.X(b, i, k) * l.W(k, j), {k}); }, "Y",
                {"b", "i", "j"});
  return l;
}

std::vector<float> linear_reference(const Linear& l, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(static_cast<size_t>(l.batch) * l.rows * l.out);
  for (int b = 0; b < l.batch; ++b)
    for (int i = 0; i < l.rows; ++i)
      for (int j = 0; j < l.out; ++j) {
        double s = 0;
        for (int k = 0; k < l.in; ++k)
          s += double(x[(static_cast<size_t>(b) * l.rows + i) * l.in + k]) * w[static_cast<size_t>(k) * l.out + j];
        y[(static_cast<size_t>(b) * l.rows + i) * l.out + j] = static_cast<float>(s);
      }
  return y;
}

}  // namespace

// However long the reduction (and so however many tiles fit a block in the L2), the rule's
// block is the smallest that gives its number of blocks: 4 tiles where 3 fit make two
// blocks of 2, not one of 3 and one of 1.
TEST(AutoScheduleBlocks, ColumnBlocksAreEven) {
  const int lanes = std::max(4, resolved_target(Target()).vector_bits / 32);
  for (int in : {256, 768, 1536, 3072, 6144, 12288})
    for (int tiles_wanted : {4, 5, 7, 13}) {
      Linear l = linear(1, 64, in, tiles_wanted * 2 * lanes);
      std::map<std::string, int64_t> rule = rule_values(l.Y, threads(1));
      ASSERT_TRUE(rule.count("Y.column_panels") && rule.count("Y.tile_vectors"));
      const int64_t width = std::min<int64_t>(rule["Y.tile_vectors"] * lanes, l.out);
      const int64_t tiles = (l.out + width - 1) / width, panels = rule["Y.column_panels"];
      const int64_t blocks = (tiles + panels - 1) / panels;
      EXPECT_EQ(panels, blocks > 1 ? (tiles + blocks - 1) / blocks : panels)
          << fmt::format("reduction {}, {} tiles: blocks of {} tiles", in, tiles, panels);
    }
}

// A blocked linear layer over 3 sequences: with blocks_outside (asked because W's block
// is the same for every sequence; the rules' value is 0) the block loop encloses the
// sequence loop; without it, each sequence runs over every block. Both give the reference's
// values, on one thread and two, in the JIT and in interpret().
TEST(AutoScheduleBlocks, BlockLoopGoesOutsideTheAxesItsBlockServes) {
  Linear l = linear(3, 20, 37, 200);
  const std::vector<float> x = uniform_floats(static_cast<size_t>(3) * 20 * 37, 5);
  const std::vector<float> w = uniform_floats(static_cast<size_t>(37) * 200, 6);
  const std::vector<float> want = linear_reference(l, x, w);
  NDArray xv = NDArray::from_vector(x, {3, 20, 37}), wv = NDArray::from_vector(w, {37, 200});
  for (int n : {1, 2})
    for (int64_t outside : {1, 0}) {
      const std::map<std::string, int64_t> forced = {{"Y.column_panels", 1}, {"Y.tile_vectors", 1},
                                                     {"Y.tile_rows", 4},     {"Y.items_per_thread", 1},
                                                     {"Y.copy_block", 0},    {"Y.blocks_outside", outside}};
      AutoScheduleOptions o = threads(n);
      // Asked of the rules' own config too, unblocked as it is (200 columns fit a block):
      // the search may block them.
      bool asked = false;
      for (const AutoScheduleDecision& d : auto_schedule_decisions({l.Y}, o))
        if (d.name == "Y.blocks_outside") asked = d.rule_value == 0 && d.options == std::vector<int64_t>{0, 1};
      EXPECT_TRUE(asked);
      LoweredFunc f = lower(auto_schedule_with({l.Y}, o, forced), {l.X, l.W, l.Y}, "linear");
      const std::string ir = to_string(f);
      if (n == 1) {
        const size_t block = ir.find("for (j.outer.outer"), batch = ir.find("for (b,");
        ASSERT_NE(block, std::string::npos) << ir;
        ASSERT_NE(batch, std::string::npos) << ir;
        EXPECT_EQ(block < batch, outside == 1) << ir;
      }
      NDArray jit = NDArray::empty({3, 20, 200}, Float(32)), ref = NDArray::empty({3, 20, 200}, Float(32));
      build(f)("linear")(xv, wv, jit);
      interpret(f, {xv, wv, ref});
      const std::vector<float> got = jit.to_vector<float>(), interpreted = ref.to_vector<float>();
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "JIT, " << n << " threads, at " << i;
        ASSERT_NEAR(interpreted[i], want[i], 1e-4f * (1 + std::abs(want[i])))
            << "interpret, " << n << " threads, at " << i;
      }
    }
}

// The rule copies a block of B only when B's rows are 4 KB or more apart (1024 floats);
// rows of 128 floats stream from the caches as they lie.
TEST(AutoScheduleBlocks, BlockCopiedOnlyWhereItsRowsArePagesApart) {
  for (int width : {1024, 2048, 128, 512}) {
    Linear l = linear(1, 64, 64, width);
    std::map<std::string, int64_t> rule = rule_values(l.Y, threads(1));
    ASSERT_TRUE(rule.count("Y.copy_block")) << width;
    EXPECT_EQ(rule["Y.copy_block"], width * 4 >= 4096 ? 1 : 0) << "B rows of " << width << " floats";
  }
}
