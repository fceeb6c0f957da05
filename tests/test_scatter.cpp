// Data-dependent reductions (reduction bounds read from tensors or computed from the
// stage's axes) and te::scatter (outputs written at computed positions): interpret()
// and the JIT against plain C++, the schedules they allow, and every refusal.
#include <gtest/gtest.h>

#include <te/te.h>

#include <numeric>
#include <string>
#include <vector>

#include "test_util.h"

namespace te {
namespace {

NDArray ints(std::vector<int32_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return NDArray::from_vector(std::move(v), {n});
}

NDArray floats(int64_t rows, int64_t cols, float scale = 1) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>((i * 7) % 23) - 5;
  return NDArray::from_vector(v, {rows, cols});
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// seg(i, c) = sum over rows starts[i] .. starts[i] + lens[i] - 1 of x(row, c).
struct SegmentSum {
  Var n{"n"}, rows{"rows"}, C{"C"};
  Tensor starts = placeholder({n}, Int(32), "starts");
  Tensor lens = placeholder({n}, Int(32), "lens");
  Tensor x = placeholder({rows, C}, Float(32), "x");
  Tensor out = compute(
      {n, C},
      [&](Expr i, Expr c) {
        IterVar j = reduce_axis({starts(i), starts(i) + lens(i)}, "j");
        return sum(x(j.var(), c), {j});
      },
      "seg");

  static std::vector<float> reference(const std::vector<int32_t>& st, const std::vector<int32_t>& ln,
                                      const NDArray& xa) {
    std::vector<float> xv = xa.to_vector<float>();
    const int64_t c = xa.shape()[1];
    std::vector<float> out(st.size() * static_cast<size_t>(c), 0.0f);
    for (size_t i = 0; i < st.size(); ++i)
      for (int64_t k = 0; k < c; ++k)
        for (int32_t r = st[i]; r < st[i] + ln[i]; ++r) out[i * c + k] += xv[r * c + k];
    return out;
  }
};

void check_segment_sum(const Schedule& s, SegmentSum& g, const std::string& expect_in_ir = "") {
  LoweredFunc f = lower(s, {g.starts, g.lens, g.x, g.out}, "segsum");
  if (!expect_in_ir.empty()) {
    EXPECT_TRUE(has(to_string(f), expect_in_ir)) << f;
  }
  const std::vector<int32_t> st{0, 2, 2, 5, 9}, ln{2, 0, 3, 4, 1};
  NDArray xa = floats(10, 19);
  std::vector<float> want = SegmentSum::reference(st, ln, xa);
  NDArray o1 = NDArray::empty({5, 19}, Float(32)), o2 = NDArray::empty({5, 19}, Float(32));
  interpret(f, {ints(st), ints(ln), xa, o1});
  build(f)("segsum")(ints(st), ints(ln), xa, o2);
  EXPECT_EQ(o1.to_vector<float>(), want);
  EXPECT_EQ(o2.to_vector<float>(), want);
}

TEST(DataDependentReduce, ExtentReadFromATensor) {
  SegmentSum g;
  Schedule s = create_schedule({g.out});
  // The loop runs lens[i] times from starts[i]: loads in the loop's extent and index.
  check_segment_sum(s, g, "for (j_1, 0, lens[i])");
}

TEST(DataDependentReduce, SplitReorderedParallelAndVectorized) {
  SegmentSum g;
  Schedule s = create_schedule({g.out});
  Stage st = s[g.out];
  IterVar i = g.out.axis(0), c = g.out.axis(1), j = g.out.reduce_axis(0);
  auto [io, ii] = st.split(i, 2);
  auto [jo, ji] = st.split(j, 2);  // a guarded tail: jo * 2 + ji < lens[i]
  auto [co, ci] = st.split(c, 8);
  st.reorder({io, ii, jo, ji, co, ci});
  st.vectorize(ci);
  st.parallel(io);
  check_segment_sum(s, g, "lens[((i.outer * 2) + i.inner)]");
}

TEST(DataDependentReduce, LocalAccumulatorThroughCacheWrite) {
  SegmentSum g;
  Schedule s = create_schedule({g.out});
  Tensor acc = s.cache_write(g.out, "local");
  s[acc].compute_at(s[g.out], g.out.axis(0));
  // The cache stage has its own reduction axis over the renamed bounds.
  EXPECT_TRUE(has(to_string(acc.op()->reduce_axis[0].dom().extent), "lens"));
  check_segment_sum(s, g);
}

TEST(DataDependentReduce, BoundsFromAComputedTensor) {
  SegmentSum g;
  Tensor lens2 = compute(
      {g.n}, [&](Expr i) { return g.lens(i) + 0; }, "lens2");
  Tensor out = compute(
      {g.n, g.C},
      [&](Expr i, Expr c) {
        IterVar j = reduce_axis({g.starts(i), g.starts(i) + lens2(i)}, "j");
        return sum(g.x(j.var(), c), {j});
      },
      "seg");
  Schedule s = create_schedule({out});
  expect_error([&] { s[lens2].compute_inline(); },
               {"compute_inline", "'lens2'", "bounds of a reduction axis of stage 'seg'"});
  LoweredFunc f = lower(s, {g.starts, g.lens, g.x, out}, "segsum");
  const std::vector<int32_t> st{1, 0}, ln{3, 1};
  NDArray xa = floats(4, 3);
  NDArray o = NDArray::empty({2, 3}, Float(32));
  build(f)("segsum")(ints(st), ints(ln), xa, o);
  EXPECT_EQ(o.to_vector<float>(), SegmentSum::reference(st, ln, xa));
}

TEST(DataDependentReduce, TriangularExtentFromTheStagesAxis) {
  Var n("n");
  Tensor a = placeholder({n}, Float(32), "a");
  Tensor prefix = compute(
      {n},
      [&](Expr i) {
        IterVar k = reduce_axis({0, i + 1}, "k");
        return sum(a(k.var()), {k});
      },
      "prefix");
  Schedule s = create_schedule({prefix});
  auto [io, ii] = s[prefix].split(prefix.axis(0), 4);
  s[prefix].parallel(io);
  (void)ii;
  LoweredFunc f = lower(s, {a, prefix}, "prefix");
  std::vector<float> av{1, 2, 3, 4, 5, 6, 7}, want(7);
  std::partial_sum(av.begin(), av.end(), want.begin());
  NDArray o = NDArray::empty({7}, Float(32));
  build(f)("prefix")(NDArray::from_vector(av, {7}), o);
  EXPECT_EQ(o.to_vector<float>(), want);
}

TEST(DataDependentReduce, Refusals) {
  SegmentSum g;
  {
    Schedule s = create_schedule({g.out});
    s[g.out].reorder({g.out.reduce_axis(0), g.out.axis(0), g.out.axis(1)});
    expect_error(
        [&] {
          lower(s, {g.starts, g.lens, g.x, g.out}, "f");
        },
        {"stage 'seg' loops over axis 'j'", "depends on axis 'i'", "reorder 'i' outside 'j'"});
  }
  {
    Schedule s = create_schedule({g.out});
    expect_error([&] { s.rfactor(g.out, g.out.reduce_axis(0)); },
                 {"rfactor", "'j'", "'seg'", "read tensors or use the stage's axes"});
  }
  {
    // A run past the end of x is caught by the JIT's checks and interpret().
    Schedule s = create_schedule({g.out});
    LoweredFunc f = lower(s, {g.starts, g.lens, g.x, g.out}, "segsum");
    NDArray xa = floats(4, 3), o = NDArray::empty({1, 3}, Float(32));
    expect_error([&] { build(f)("segsum")(ints({2}), ints({3}), xa, o); },
                 {"segsum", "out-of-bounds load from buffer 'x'"});
    expect_error([&] { interpret(f, {ints({2}), ints({3}), xa, o}); }, {"out-of-bounds load from buffer 'x'"});
  }
}

// out = base with rows perm[i] replaced by 2 * x(i, :).
struct RowScatter {
  Var n{"n"}, m{"m"}, C{"C"};
  Tensor perm = placeholder({n}, Int(32), "perm");
  Tensor x = placeholder({n, C}, Float(32), "x");
  Tensor y = placeholder({m, C}, Float(32), "y");
  Tensor base = compute(
      {m, C}, [&](Expr r, Expr c) { return y(r, c) + 1.0f; }, "base");
  Tensor out = scatter(
      base, {n, C},
      [&](Expr i, Expr c) {
        return ScatterTo{{perm(i), c}, x(i, c) * 2.0f};
      },
      "out");

  std::vector<Tensor> args() const { return {perm, x, y, out}; }
  static std::vector<float> reference(const std::vector<int32_t>& p, const NDArray& xa, const NDArray& ya) {
    std::vector<float> xv = xa.to_vector<float>(), out = ya.to_vector<float>();
    const int64_t c = xa.shape()[1];
    for (float& v : out) v += 1.0f;
    for (size_t i = 0; i < p.size(); ++i)
      for (int64_t k = 0; k < c; ++k) out[p[i] * c + k] = xv[i * c + k] * 2.0f;
    return out;
  }
};

void check_row_scatter(const Schedule& s, RowScatter& g) {
  LoweredFunc f = lower(s, g.args(), "scatter_rows");
  const std::vector<int32_t> p{4, 0, 2};
  NDArray xa = floats(3, 21), ya = floats(6, 21, 0.5f);
  std::vector<float> want = RowScatter::reference(p, xa, ya);
  NDArray o1 = NDArray::empty({6, 21}, Float(32)), o2 = NDArray::empty({6, 21}, Float(32));
  interpret(f, {ints(p), xa, ya, o1});
  build(f)("scatter_rows")(ints(p), xa, ya, o2);
  EXPECT_EQ(o1.to_vector<float>(), want);
  EXPECT_EQ(o2.to_vector<float>(), want);
}

TEST(Scatter, RowsAtPositionsReadFromATensor) {
  RowScatter g;
  EXPECT_EQ(g.out.shape().size(), 2u);
  EXPECT_TRUE(g.out.op()->is_scatter());
  Schedule s = create_schedule({g.out});
  LoweredFunc f = lower(s, g.args(), "scatter_rows");
  // The base fills the output's buffer in place (no buffer of its own), then the scatter.
  EXPECT_FALSE(has(to_string(f), "allocate base")) << f;
  EXPECT_TRUE(has(to_string(f), "out[((perm[i_1] * C) + j_1)] = (x[((i_1 * C) + j_1)] * 2.0f)")) << f;
  check_row_scatter(s, g);
}

TEST(Scatter, ScheduledLikeACompute) {
  RowScatter g;
  Schedule s = create_schedule({g.out});
  auto [co, ci] = s[g.out].split(g.out.axis(1), 8);
  s[g.out].vectorize(ci);
  s[g.out].parallel(g.out.axis(0));
  (void)co;
  auto [bo, bi] = s[g.base].split(g.base.axis(1), 8, TailStrategy::ShiftInwards);
  s[g.base].vectorize(bi);
  s[g.base].parallel(g.base.axis(0));
  (void)bo;
  check_row_scatter(s, g);
}

TEST(Scatter, ValueComputedInALocalCache) {
  RowScatter g;
  Schedule s = create_schedule({g.out});
  Tensor v = s.cache_write(g.out, "local");
  s[v].compute_at(s[g.out], g.out.axis(0));
  EXPECT_EQ(to_string(v.shape()[0]), "n");  // the cache spans the scatter's domain
  check_row_scatter(s, g);
}

TEST(Scatter, ChainOfScattersSharesOneBuffer) {
  RowScatter g;
  Tensor twice = scatter(
      g.out, {g.n},
      [&](Expr i) {
        return ScatterTo{{g.perm(i), Expr(0)}, cast(Float(32), i)};
      },
      "twice");
  Schedule s = create_schedule({twice});
  LoweredFunc f = lower(s, {g.perm, g.x, g.y, twice}, "chain");
  const std::vector<int32_t> p{1, 3};
  NDArray xa = floats(2, 4), ya = floats(5, 4);
  std::vector<float> want = RowScatter::reference(p, xa, ya);
  want[1 * 4] = 0;
  want[3 * 4] = 1;
  NDArray o = NDArray::empty({5, 4}, Float(32));
  build(f)("chain")(ints(p), xa, ya, o);
  EXPECT_EQ(o.to_vector<float>(), want);
  interpret(f, {ints(p), xa, ya, o});
  EXPECT_EQ(o.to_vector<float>(), want);
}

TEST(Scatter, ConsumersReadTheWholeOutput) {
  RowScatter g;
  Tensor total = compute(
      {Expr(1)},
      [&](Expr) {
        IterVar r = reduce_axis({0, g.m}, "r");
        IterVar c = reduce_axis({0, g.C}, "c");
        return sum(g.out(r.var(), c.var()), {r, c});
      },
      "total");
  Schedule s = create_schedule({total});
  LoweredFunc f = lower(s, {g.perm, g.x, g.y, total}, "total");
  const std::vector<int32_t> p{0};
  NDArray xa = floats(1, 3), ya = floats(2, 3);
  std::vector<float> full = RowScatter::reference(p, xa, ya);
  NDArray o = NDArray::empty({1}, Float(32));
  build(f)("total")(ints(p), xa, ya, o);
  EXPECT_FLOAT_EQ(o.to_vector<float>()[0], std::accumulate(full.begin(), full.end(), 0.0f));
}

TEST(Scatter, PositionsOutsideTheOutputAreErrors) {
  RowScatter g;
  Schedule s = create_schedule({g.out});
  LoweredFunc f = lower(s, g.args(), "scatter_rows");
  NDArray xa = floats(2, 3), ya = floats(4, 3), o = NDArray::empty({4, 3}, Float(32));
  for (int32_t bad : {-1, 4}) {
    expect_error(
        [&] {
          build(f)("scatter_rows")(ints({0, bad}), xa, ya, o);
        },
        {"scatter_rows", "out-of-bounds store to buffer 'out'", "read from memory"});
    expect_error([&] { interpret(f, {ints({0, bad}), xa, ya, o}); }, {"out-of-bounds store to buffer 'out'"});
  }
  // Unchecked code (inputs validated by the caller) computes the same for valid input.
  BuildOptions unchecked;
  unchecked.check_data_indices = false;
  NDArray o2 = NDArray::empty({4, 3}, Float(32));
  build(f)("scatter_rows")(ints({3, 1}), xa, ya, o);
  build(f, unchecked)("scatter_rows")(ints({3, 1}), xa, ya, o2);
  EXPECT_EQ(o.to_vector<float>(), o2.to_vector<float>());
  EXPECT_TRUE(has(llvm_ir(f, false), "out-of-bounds store"));
}

TEST(Scatter, ConstructionErrors) {
  RowScatter g;
  auto to_row = [&](Expr i, Expr c) { return ScatterTo{{g.perm(i), c}, g.x(i, c)}; };
  expect_error(
      [&] {
        scatter(g.y, {g.n, g.C}, to_row, "s");
      },
      {"scatter 's'", "base 'y' is an input (placeholder)", "copy the input with compute"});
  expect_error([&] { scatter(Tensor(), {g.n, g.C}, to_row, "s"); }, {"scatter 's'", "base tensor is undefined"});
  expect_error(
      [&] {
        scatter(
            g.base, {g.n, g.C},
            [&](Expr i, Expr) {
              return ScatterTo{{g.perm(i)}, g.x(i, 0)};
            },
            "s");
      },
      {"scatter 's'", "gave 1 indices", "has 2 dimensions"});
  expect_error(
      [&] {
        scatter(
            g.base, {g.n, g.C},
            [&](Expr i, Expr c) {
              return ScatterTo{{g.perm(i), c}, cast(Float(64), i)};
            },
            "s");
      },
      {"scatter 's'", "value is float64 but the base 'base' is float32"});
  expect_error(
      [&] {
        scatter(
            g.base, {g.n, g.C},
            [&](Expr i, Expr c) {
              return ScatterTo{{g.perm(i), c + 0.5f}, g.x(i, c)};
            },
            "s");
      },
      {"scatter 's'", "index 1 must be a scalar integer"});
  expect_error(
      [&] {
        scatter(
            g.base, {g.n, g.C},
            [&](Expr i, Expr c) {
              IterVar k = reduce_axis({0, 2}, "k");
              return ScatterTo{{g.perm(i) + k.var(), c}, sum(g.x(i, c), {k})};
            },
            "s");
      },
      {"scatter 's'", "uses a reduction axis", "domain's axes"});
  expect_error([&] { scatter(g.base, {g.n}, to_row, "s"); }, {"scatter", "takes 2 index arguments", "domain has 1"});
  std::vector<Tensor> pair = compute_tuple({g.m, g.C},
                                           [&](Expr r, Expr c) {
                                             return std::vector<Expr>{g.y(r, c), g.y(r, c)};
                                           },
                                           {"p0", "p1"});
  expect_error([&] { scatter(pair[0], {g.n, g.C}, to_row, "s"); }, {"scatter 's'", "compute_tuple"});
}

TEST(Scatter, ScheduleRefusals) {
  RowScatter g;
  Tensor after = compute(
      {g.m, g.C}, [&](Expr r, Expr c) { return g.out(r, c) * 3.0f; }, "after");
  Schedule s = create_schedule({after});
  expect_error([&] { s[g.out].compute_at(s[after], after.axis(0)); },
               {"compute_at", "stage 'out' is a scatter", "computed at the root"});
  expect_error([&] { s[g.base].compute_inline(); }, {"compute_inline", "'base' is the base of scatter 'out'"});
  expect_error([&] { s[g.out].compute_inline(); }, {"compute_inline", "'out' is a scatter"});
  expect_error([&] { s.cache_read(g.base, "local", {g.out}); }, {"cache_read", "'base' is the base of scatter 'out'"});
  expect_error([&] { s.cache_write(g.base, "local"); }, {"cache_write", "'base' is the base of scatter 'out'"});
  Tensor red = scatter(
      g.base, {g.n},
      [&](Expr i) {
        IterVar k = reduce_axis({0, g.C}, "k");
        return ScatterTo{{g.perm(i), Expr(0)}, sum(g.x(i, k.var()), {k})};
      },
      "red");
  Schedule r = create_schedule({red});
  expect_error([&] { r.rfactor(red, red.reduce_axis(0)); }, {"rfactor", "'red' is a scatter"});
}

TEST(Scatter, LoweringRefusesASharedBase) {
  RowScatter g;
  // The base is also read by another stage: it cannot be filled in place.
  Tensor other = compute(
      {g.m, g.C}, [&](Expr r, Expr c) { return g.base(r, c) + g.out(r, c); }, "other");
  Schedule s = create_schedule({other});
  expect_error(
      [&] {
        lower(s, {g.perm, g.x, g.y, other}, "f");
      },
      {"'base' is the base of scatter 'out'", "stage 'other' reads it too"});
  // The base listed as an argument.
  Schedule t = create_schedule({g.out});
  expect_error(
      [&] {
        lower(t, {g.perm, g.x, g.y, g.base, g.out}, "f");
      },
      {"'base' is the base of scatter 'out'", "cannot be an argument"});
}

TEST(Scatter, FlatteningAnUnravelledIndexGivesItBack) {
  Var r("r");
  Expr unravelled = ((r / 12) * 12 + ((r / 4) % 3) * 4 + r % 4) * 5 + 2;
  EXPECT_EQ(to_string(simplify(unravelled)), "((r * 5) + 2)");
  Expr nested = ((((r / 4) / 3) * 3 + (r / 4) % 3) * 4 + r % 4);
  EXPECT_EQ(to_string(simplify(nested)), "r");
}

}  // namespace
}  // namespace te
