// Accumulating scatters (ScatterTo::accumulate, index_put_ with accumulate=True): every
// point's value adds up. Serial loops add plainly; loops that run at once and may meet on
// one element add atomically (the loop IR says `+= ...;  // atomic`); a loop over an axis
// that indexes the output directly needs no atomics. interpret() and the JIT against plain
// C++, and every refusal's message.
#include <gtest/gtest.h>

#include <te/te.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace te {
namespace {

// hist[b, bins[b, i]] += w[b, i]: batch b indexes the output itself, i does not.
struct Histogram {
  Tensor bins = placeholder({4, 300}, Int(32), "bins");
  Tensor w = placeholder({4, 300}, Float(32), "w");
  Tensor zeros = compute(
      {4, 16}, [](Expr, Expr) { return make_zero(Float(32)); }, "zeros");
  Tensor hist = scatter(
      zeros, {4, 300},
      [&](Expr b, Expr i) {
        return ScatterTo{{b, bins(b, i)}, w(b, i), true};
      },
      "hist");

  NDArray bins_value() const {
    std::vector<int32_t> v(4 * 300);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>((i * 7 + i / 5) % 16);
    return NDArray::from_vector(v, {4, 300});
  }
  NDArray w_value() const {
    std::vector<float> v(4 * 300);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 11) - 5);
    return NDArray::from_vector(v, {4, 300});
  }
  std::vector<float> reference() const {
    std::vector<int32_t> b = bins_value().to_vector<int32_t>();
    std::vector<float> w = w_value().to_vector<float>(), out(4 * 16, 0.0f);
    for (size_t k = 0; k < b.size(); ++k) out[(k / 300) * 16 + static_cast<size_t>(b[k])] += w[k];
    return out;
  }
  // Lowers s, checks whether the IR adds atomically, and runs interpret() and the JIT.
  void check(const Schedule& s, bool atomic) const {
    LoweredFunc f = lower(s, {bins, w, hist}, "hist");
    const std::string ir = to_string(f);
    EXPECT_EQ(ir.find("// atomic") != std::string::npos, atomic) << ir;
    // Plainly: hist[e] = (hist[e] + value); atomically: hist[e] += value;  // atomic
    EXPECT_EQ(ir.find(" += ") != std::string::npos, atomic) << ir;
    NDArray a = NDArray::empty({4, 16}, Float(32)), b = NDArray::empty({4, 16}, Float(32));
    interpret(f, {bins_value(), w_value(), a});
    build(f)("hist")(bins_value(), w_value(), b);
    EXPECT_EQ(a.to_vector<float>(), reference());
    EXPECT_EQ(b.to_vector<float>(), reference());
  }
};

TEST(ScatterAdd, SerialLoopsAddPlainly) {
  Histogram h;
  h.check(create_schedule({h.hist}), false);
}

TEST(ScatterAdd, ParallelOverAnOutputAxisNeedsNoAtomics) {
  Histogram h;
  Schedule s = create_schedule({h.hist});
  s[h.hist].parallel(h.hist.op()->axis[0]);
  h.check(s, false);
}

TEST(ScatterAdd, ParallelOrVectorizedOverOtherAxesAddsAtomically) {
  Histogram h;
  Schedule s = create_schedule({h.hist});
  auto [o, i] = s[h.hist].split(h.hist.op()->axis[1], 8);
  s[h.hist].parallel(o);
  h.check(s, true);
  Histogram v;
  Schedule t = create_schedule({v.hist});
  auto [vo, vi] = t[v.hist].split(v.hist.op()->axis[1], 4);
  t[v.hist].vectorize(vi);
  (void)vo;
  v.check(t, true);
  // Fused with the batch axis, the fused loop still meets itself.
  Histogram f;
  Schedule u = create_schedule({f.hist});
  IterVar fused = u[f.hist].fuse(f.hist.op()->axis[0], f.hist.op()->axis[1]);
  u[f.hist].parallel(fused);
  f.check(u, true);
}

// A sum as the value: each term adds at its own position, over ranges read from tensors
// (segments [start, start + len) of points, each point adding w at bin idx).
TEST(ScatterAdd, SumOverDataDependentRangesAddsEveryTerm) {
  Tensor start = placeholder({5}, Int(32), "start"), len = placeholder({5}, Int(32), "len");
  Tensor idx = placeholder({20}, Int(32), "idx"), w = placeholder({20, 3}, Float(32), "w");
  Tensor zeros = compute(
      {7, 3}, [](Expr, Expr) { return make_zero(Float(32)); }, "zeros");
  Tensor S = scatter(
      zeros, {5, 3},
      [&](Expr i, Expr c) {
        IterVar k = reduce_axis({start(i), start(i) + len(i)}, "k");
        return ScatterTo{{idx(k.var()), c}, sum(w(k.var(), c), {k}), true};
      },
      "S");
  const std::vector<int32_t> st{0, 4, 4, 9, 15}, ln{4, 0, 5, 6, 5};
  std::vector<int32_t> ix(20);
  std::vector<float> wv(60);
  for (size_t i = 0; i < ix.size(); ++i) ix[i] = static_cast<int32_t>((i * 5) % 7);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(static_cast<int>(i % 13) - 6);
  std::vector<float> want(21, 0.0f);
  for (size_t i = 0; i < st.size(); ++i)
    for (int32_t k = st[i]; k < st[i] + ln[i]; ++k)
      for (size_t c = 0; c < 3; ++c)
        want[static_cast<size_t>(ix[static_cast<size_t>(k)]) * 3 + c] += wv[static_cast<size_t>(k) * 3 + c];
  for (bool parallel : {false, true}) {
    Schedule s = create_schedule({S});
    if (parallel) s[S].parallel(S.op()->axis[0]);
    LoweredFunc f = lower(s, {start, len, idx, w, S}, "segments");
    EXPECT_EQ(to_string(f).find("// atomic") != std::string::npos, parallel) << f;
    NDArray a = NDArray::empty({7, 3}, Float(32)), b = NDArray::empty({7, 3}, Float(32));
    NDArray sa = NDArray::from_vector(st, {5}), la = NDArray::from_vector(ln, {5}), ia = NDArray::from_vector(ix, {20}),
            wa = NDArray::from_vector(wv, {20, 3});
    interpret(f, {sa, la, ia, wa, a});
    build(f)("segments")(sa, la, ia, wa, b);
    EXPECT_EQ(a.to_vector<float>(), want);
    EXPECT_EQ(b.to_vector<float>(), want);
  }
}

// deterministic: the schedules that need no atomics lower; the others are refused.
TEST(ScatterAdd, DeterministicRefusesSchedulesThatNeedAtomics) {
  Tensor bins = placeholder({4, 300}, Int(32), "bins"), w = placeholder({4, 300}, Float(32), "w");
  Tensor zeros = compute(
      {4, 16}, [](Expr, Expr) { return make_zero(Float(32)); }, "zeros");
  Tensor hist = scatter(
      zeros, {4, 300},
      [&](Expr b, Expr i) {
        ScatterTo t{{b, bins(b, i)}, w(b, i), true};
        t.deterministic = true;
        return t;
      },
      "hist");
  Schedule ok = create_schedule({hist});
  ok[hist].parallel(hist.op()->axis[0]);
  EXPECT_EQ(to_string(lower(ok, {bins, w, hist}, "f")).find("atomic"), std::string::npos);
  Schedule bad = create_schedule({hist});
  bad[hist].parallel(hist.op()->axis[1]);
  expect_error(
      [&] {
        lower(bad, {bins, w, hist}, "f");
      },
      {"lower: scatter-add 'hist' is deterministic, but runs loop 'j' in parallel, whose iterations may add "
       "to one element in an order that varies between runs"});
  expect_error(
      [&] {
        scatter(
            zeros, {4, 300},
            [&](Expr b, Expr i) {
              ScatterTo t{{b, bins(b, i)}, w(b, i)};
              t.deterministic = true;
              return t;
            },
            "plain");
      },
      {"scatter 'plain': deterministic is an option of accumulating scatters (accumulate = true)"});
}

TEST(ScatterAdd, Refusals) {
  Tensor x = placeholder({8}, Float(32), "x"), idx = placeholder({8}, Int(32), "idx");
  Tensor zeros = compute(
      {4}, [](Expr) { return make_zero(Float(32)); }, "zeros");
  IterVar k = reduce_axis({0, 8}, "k");
  expect_error(
      [&] {
        scatter(
            zeros, {8},
            [&](Expr i) {
              return ScatterTo{{idx(i)}, max(x(k), {k}), true};
            },
            "S");
      },
      {"scatter 'S': an accumulating scatter adds plain values or a sum (each term at its own position), not a max "
       "reduction"});
  Tensor S = scatter(
      zeros, {8},
      [&](Expr i) {
        return ScatterTo{{idx(i)}, x(i), true};
      },
      "S");
  Schedule s = create_schedule({S});
  expect_error([&] { s[S].split(S.op()->axis[0], 3, TailStrategy::ShiftInwards); },
               {"split: ShiftInwards on axis 'i' of stage 'S': the stage is a scatter-add, and the overlapping last "
                "iteration would add some points twice; use GuardWithIf"});
  // 16-bit floats have no atomic add: refused where one is needed, fine serially.
  Tensor xh = placeholder({8}, Float(16), "xh");
  Tensor zh = compute(
      {4}, [](Expr) { return make_zero(Float(16)); }, "zh");
  Tensor Sh = scatter(
      zh, {8},
      [&](Expr i) {
        return ScatterTo{{idx(i)}, xh(i), true};
      },
      "Sh");
  Schedule sh = create_schedule({Sh});
  EXPECT_NO_THROW(lower(sh, {idx, xh, Sh}, "ok"));
  sh[Sh].parallel(Sh.op()->axis[0]);
  expect_error(
      [&] {
        lower(sh, {idx, xh, Sh}, "f");
      },
      {"lower: scatter-add 'Sh' runs loop 'i' in parallel, whose iterations may add to one element, so the "
       "adds must be atomic: te adds float32, float64, int32 and int64 atomically, not float16"});
  expect_error([&] { atomic_add(Buffer("b", Int(16), {4}), make_const(Int(16), 1), {0}); },
               {"atomic_add to 'b': te adds float32, float64, int32 and int64 atomically, not int16"});
}

}  // namespace
}  // namespace te
