// The JIT's index checks made once for many loads: a load stepping with a loop's
// variable is checked at the loop's first and last iterations before the loop, and the
// row loads of one sequence at one gathered position share one range check. Results
// against plain C++ and interpret(), errors for every way out, none where the original
// program would not have read out of bounds.
#include <gtest/gtest.h>

#include <te/te.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace te {
namespace {

NDArray ints(std::vector<int32_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return NDArray::from_vector(std::move(v), {n});
}

NDArray ramp_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 5) % 17) - 3;
  return NDArray::from_vector(v, {n});
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// out[i] = sum of x[starts[i] + j] for j < lens[i]: x's index steps with j from a start
// read from memory.
struct Runs {
  Var n{"n"}, m{"m"};
  Tensor starts = placeholder({n}, Int(32), "starts");
  Tensor lens = placeholder({n}, Int(32), "lens");
  Tensor x = placeholder({m}, Float(32), "x");
  Tensor out = compute(
      {n},
      [&](Expr i) {
        IterVar j = reduce_axis({0, lens(i)}, "j");
        return sum(x(starts(i) + j.var()), {j});
      },
      "runs");
  LoweredFunc func() {
    Schedule s = create_schedule({out});
    return lower(s, {starts, lens, x, out}, "runs");
  }
};

TEST(HoistedChecks, LoopLoadCheckedOnceBeforeTheLoop) {
  Runs g;
  LoweredFunc f = g.func();
  // The check sits in the block before the loop, not in its body.
  const std::string ir = llvm_ir(f, false);
  EXPECT_TRUE(has(ir, "for.j.checks")) << ir;
  const std::vector<int32_t> st{0, 3, 7, 2}, ln{3, 4, 0, 5};
  NDArray xa = ramp_floats(10);
  std::vector<float> xv = xa.to_vector<float>(), want(st.size(), 0.0f);
  for (size_t i = 0; i < st.size(); ++i)
    for (int32_t j = 0; j < ln[i]; ++j) want[i] += xv[static_cast<size_t>(st[i] + j)];
  NDArray o1 = NDArray::empty({4}, Float(32)), o2 = NDArray::empty({4}, Float(32));
  build(f)("runs")(ints(st), ints(ln), xa, o1);
  interpret(f, {ints(st), ints(ln), xa, o2});
  EXPECT_EQ(o1.to_vector<float>(), want);
  EXPECT_EQ(o2.to_vector<float>(), want);
}

TEST(HoistedChecks, EveryWayOutIsAnError) {
  Runs g;
  Function k = build(g.func())("runs");
  NDArray xa = ramp_floats(10), o = NDArray::empty({2}, Float(32));
  // The last iteration past the end, the first before the start, both past the end.
  for (auto [start, len] : std::vector<std::pair<int32_t, int32_t>>{{8, 3}, {-1, 2}, {10, 1}, {-5, 20}}) {
    SCOPED_TRACE(std::to_string(start) + " " + std::to_string(len));
    expect_error(
        [&] {
          k(ints({0, start}), ints({1, len}), xa, o);
        },
        {"runs", "out-of-bounds load from buffer 'x'", "starts[i] + j"});
  }
}

TEST(HoistedChecks, ALoopThatDoesNotRunChecksNothing) {
  // starts[1] is far outside x, but its run is empty: the program reads nothing there.
  Runs g;
  Function k = build(g.func())("runs");
  NDArray xa = ramp_floats(10), o = NDArray::empty({2}, Float(32));
  k(ints({1, 1000000}), ints({2, 0}), xa, o);
  std::vector<float> xv = xa.to_vector<float>();
  EXPECT_EQ(o.to_vector<float>(), (std::vector<float>{xv[1] + xv[2], 0.0f}));
}

// out[i, c] = 2 * table[rows[i] * W + c]: a row gathered at rows[i], read as W / 8
// vectors of 8 (the channel loop split, its outer part unrolled).
struct RowGather {
  Var n{"n"};
  int64_t W = 24;
  Tensor rows = placeholder({n}, Int(32), "rows");
  Tensor table;
  Tensor out;
  explicit RowGather(Expr table_size) {
    table = placeholder({table_size}, Float(32), "table");
    out = compute(
        {n, make_const(Int(32), W)},
        [&](Expr i, Expr c) { return table(rows(i) * static_cast<int32_t>(W) + c) * 2.0f; }, "gather");
  }
  LoweredFunc func() {
    Schedule s = create_schedule({out});
    auto [co, ci] = s[out].split(out.op()->axis[1], 8);
    s[out].unroll(co);
    s[out].vectorize(ci);
    return lower(s, {rows, table, out}, "gather");
  }
  std::vector<float> reference(const std::vector<int32_t>& r, const NDArray& t) const {
    std::vector<float> tv = t.to_vector<float>(), want;
    for (int32_t row : r)
      for (int64_t c = 0; c < W; ++c) want.push_back(2.0f * tv[static_cast<size_t>(row * W + c)]);
    return want;
  }
};

TEST(GroupedChecks, RowVectorsShareOneCheck) {
  RowGather g(make_const(Int(32), 5 * 24));
  LoweredFunc f = g.func();
  // Three vector loads, one unsigned compare of the whole row as te emits it: its first
  // element below 120 - 23 (each vector's own check would compare with 120 - 7).
  const std::string raw = llvm_ir(f, false);
  size_t compares = 0;
  for (size_t at = raw.find("icmp ult"); at != std::string::npos; at = raw.find("icmp ult", at + 1)) ++compares;
  EXPECT_EQ(compares, 1u) << raw;
  EXPECT_TRUE(has(raw, ", 97\n")) << raw;
  // Plain vector loads from one clamped position, no masks: one select per copy of the
  // loop body (LLVM unrolls it twice), whose value the three loads offset; a select per
  // load would keep three positions live per row.
  const std::string ir = llvm_ir(f, true);
  EXPECT_FALSE(has(ir, "masked.load")) << ir;
  size_t selects = 0;
  for (size_t at = ir.find(" select "); at != std::string::npos; at = ir.find(" select ", at + 1)) ++selects;
  EXPECT_LE(selects, 2u) << ir;
  const std::vector<int32_t> r{4, 0, 2, 4};
  NDArray t = ramp_floats(120), o1 = NDArray::empty({4, 24}, Float(32)), o2 = NDArray::empty({4, 24}, Float(32));
  build(f)("gather")(ints(r), t, o1);
  interpret(f, {ints(r), t, o2});
  EXPECT_EQ(o1.to_vector<float>(), g.reference(r, t));
  EXPECT_EQ(o2.to_vector<float>(), g.reference(r, t));
  NDArray o = NDArray::empty({2, 24}, Float(32));
  for (int32_t bad : {5, -1, 1 << 20}) {
    SCOPED_TRACE(bad);
    expect_error(
        [&] {
          build(f)("gather")(ints({0, bad}), t, o);
        },
        {"gather", "out-of-bounds load from buffer 'table'", "rows[i] * 24"});
  }
}

TEST(GroupedChecks, TableOfUnknownSizeKeepsItsLanesMasked) {
  // The table's size is only known at run time: where the row is outside, no lane loads
  // (a table smaller than one vector stays untouched).
  Var m("m");
  RowGather g(m);
  LoweredFunc f = g.func();
  NDArray t = ramp_floats(48), o = NDArray::empty({2, 24}, Float(32));
  const std::vector<int32_t> r{1, 0};
  build(f)("gather")(ints(r), t, o);
  EXPECT_EQ(o.to_vector<float>(), g.reference(r, t));
  expect_error([&] { build(f)("gather")(ints({2, 0}), t, o); }, {"out-of-bounds load from buffer 'table'"});
  NDArray tiny = ramp_floats(3), o1 = NDArray::empty({1, 24}, Float(32));
  expect_error([&] { build(f)("gather")(ints({0}), tiny, o1); }, {"out-of-bounds load from buffer 'table'"});
}

TEST(GroupedChecks, UncheckedBuildsHaveNoChecks) {
  RowGather g(make_const(Int(32), 5 * 24));
  BuildOptions o;
  o.check_data_indices = false;
  EXPECT_FALSE(has(llvm_ir(g.func(), false, o), "out-of-bounds")) << llvm_ir(g.func(), false, o);
  Runs r;
  EXPECT_FALSE(has(llvm_ir(r.func(), false, o), "for.j.checks"));
}

}  // namespace
}  // namespace te
