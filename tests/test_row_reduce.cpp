// Row reductions (RowReducer, online_softmax, compute_rows): a few values per row and a
// row of elements updated with the row's step. interpret() and the JIT against plain C++
// (float64), under the schedules that touch them, and every error.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "te/auto_schedule.h"
#include "te/te.h"
#include "test_lower_util.h"
#include "test_util.h"

namespace te {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_values(size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// One head of attention: q [m, d], k and v [n, d] -> the running {max, sum, acc} of the
// online softmax and out = acc / sum (0 where no key counts).
struct Attention {
  int m, n, d;
  Tensor Q, K, V, S, Sc, mx, sm, acc, out;  // Sc: S as an element-wise stage (inlined or not)
  IterVar j;
};

Attention make_attention(int m, int n, int d, bool causal) {
  Attention a{m, n, d, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  a.Q = placeholder({m, d}, Float(32), "Q");
  a.K = placeholder({n, d}, Float(32), "K");
  a.V = placeholder({n, d}, Float(32), "V");
  IterVar c = reduce_axis({0, d}, "c");
  a.S = compute(
      {m, n}, [&](Expr i, Expr jj) { return sum(a.Q(i, c) * a.K(jj, c), {c}); }, "S");
  a.Sc = compute(
      {m, n}, [&](Expr i, Expr jj) { return a.S(i, jj) * 1.0f; }, "Sc");
  a.j = reduce_axis({0, n}, "j");
  std::vector<Tensor> r = compute_rows({m}, {d},
                                       [&](const std::vector<Var>& row, const std::vector<Var>& el) {
                                         Expr where = causal ? Expr(a.j <= row[0]) : Expr();
                                         return online_softmax(a.Sc(row[0], a.j), {a.V(a.j, el[0])}, {a.j}, where);
                                       },
                                       {"max", "sum", "acc"}, {"i", "e"});
  a.mx = r[0];
  a.sm = r[1];
  a.acc = r[2];
  a.out = compute(
      {m, d}, [&](Expr i, Expr e) { return select(a.sm(i) > 0.0f, a.acc(i, e) / a.sm(i), make_zero(Float(32))); },
      "out");
  return a;
}

// softmax(q kᵀ) v in float64, with the running max and sum.
void attention_reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int m,
                         int n, int d, bool causal, std::vector<double>* mx, std::vector<double>* sm,
                         std::vector<double>* out) {
  mx->assign(static_cast<size_t>(m), -INFINITY);
  sm->assign(static_cast<size_t>(m), 0.0);
  out->assign(static_cast<size_t>(m * d), 0.0);
  for (int i = 0; i < m; ++i) {
    std::vector<double> s(static_cast<size_t>(n), -INFINITY);
    for (int jj = 0; jj < n && (!causal || jj <= i); ++jj) {
      double dot = 0;
      for (int c = 0; c < d; ++c) dot += double(q[size_t(i * d + c)]) * k[size_t(jj * d + c)];
      s[size_t(jj)] = dot;
      (*mx)[size_t(i)] = std::max((*mx)[size_t(i)], dot);
    }
    for (int jj = 0; jj < n; ++jj) {
      if (s[size_t(jj)] == -INFINITY) continue;
      const double p = std::exp(s[size_t(jj)] - (*mx)[size_t(i)]);
      (*sm)[size_t(i)] += p;
      for (int c = 0; c < d; ++c) (*out)[size_t(i * d + c)] += p * v[size_t(jj * d + c)];
    }
    for (int c = 0; c < d; ++c)
      if ((*sm)[size_t(i)] > 0) (*out)[size_t(i * d + c)] /= (*sm)[size_t(i)];
  }
}

struct RowSchedule {
  const char* name;
  std::function<void(Schedule&, const Attention&)> apply;
};

std::vector<RowSchedule> attention_schedules() {
  return {
      {"default", [](Schedule&, const Attention&) {}},
      {"fused: scores of a block of keys at the key loop, rows at the output's row",
       [](Schedule& s, const Attention& a) {
         auto [jo, ji] = s[a.acc].split(a.j, 8);
         s[a.Sc].compute_inline();
         s[a.S].compute_at(s[a.acc], jo);
         s[a.acc].compute_at(s[a.out], a.out.axis(0));
         s[a.out].parallel(a.out.axis(0));
       }},
      {"vectorized elements, uneven split of the keys",
       [](Schedule& s, const Attention& a) {
         auto [jo, ji] = s[a.acc].split(a.j, 5);
         auto [eo, ei] = s[a.acc].split(a.acc.axis(1), 4);
         s[a.acc].vectorize(ei);
         s[a.Sc].compute_inline();
         s[a.S].compute_at(s[a.acc], ji);
       }},
      {"scores inlined into the row reduction (which is rebuilt, rows kept)",
       [](Schedule& s, const Attention& a) { s[a.Sc].compute_inline(); }},
      {"split-K: the keys in 3 parts, each part's partial state a row of a factored stage, merged after",
       [](Schedule& s, const Attention& a) {
         auto [jo, ji] = s[a.acc].split_nparts(a.j, 3);
         Tensor part = s.rfactor(a.acc, jo, 1);  // max.rf (i, part), acc.rf (i, part, e)
         s[part].parallel(part.axis(0));
       }},
      {"row axis inside the key loop",
       [](Schedule& s, const Attention& a) {
         s[a.acc].reorder({a.j, a.acc.axis(0), a.acc.axis(1)});
       }},
  };
}

void check_attention(int m, int n, int d, bool causal) {
  const std::vector<float> qv = random_values(size_t(m * d), 1, 2.0f), kv = random_values(size_t(n * d), 2, 2.0f),
                           vv = random_values(size_t(n * d), 3);
  std::vector<double> want_max, want_sum, want_out;
  attention_reference(qv, kv, vv, m, n, d, causal, &want_max, &want_sum, &want_out);
  for (const RowSchedule& rs : attention_schedules()) {
    SCOPED_TRACE(rs.name);
    Attention a = make_attention(m, n, d, causal);
    Schedule s = create_schedule({a.out});
    rs.apply(s, a);
    LoweredFunc f = lower(s, {a.Q, a.K, a.V, a.mx, a.sm, a.out}, "attention");
    NDArray q = NDArray::from_vector(qv, {m, d}), k = NDArray::from_vector(kv, {n, d}),
            v = NDArray::from_vector(vv, {n, d});
    for (bool jit : {false, true}) {
      SCOPED_TRACE(jit ? "jit" : "interpret");
      NDArray mx = NDArray::empty({m}, Float(32)), sm = NDArray::empty({m}, Float(32)),
              out = NDArray::empty({m, d}, Float(32));
      if (jit) {
        build(f)("attention")(q, k, v, mx, sm, out);
      } else {
        interpret(f, {q, k, v, mx, sm, out});
      }
      for (int i = 0; i < m; ++i) {
        EXPECT_NEAR(mx.at<float>({i}), want_max[size_t(i)], 1e-4) << i;
        EXPECT_NEAR(sm.at<float>({i}), want_sum[size_t(i)], 1e-4 * want_sum[size_t(i)]) << i;
        for (int c = 0; c < d; ++c)
          EXPECT_NEAR(out.at<float>({i, c}), want_out[size_t(i * d + c)], 1e-4) << i << "," << c;
      }
    }
  }
}

TEST(RowReduce, OnlineSoftmaxIsAttention) { check_attention(6, 13, 8, false); }
TEST(RowReduce, OnlineSoftmaxCausal) { check_attention(7, 7, 4, true); }

// Another row reducer: the feature row of the highest-scoring key (the row values pick
// the winner once per step; each element follows the pick).
// One exp per step folds both sides (the side holding the new max weighs exp(0) = 1), and
// a NaN score, wherever it comes, still makes its row NaN.
TEST(RowReduce, OnlineSoftmaxTakesOneExpPerStepAndKeepsNaN) {
  Tensor S = placeholder({3, 4}, Float(32), "S"), V = placeholder({4, 2}, Float(32), "V");
  IterVar j = reduce_axis({0, 4}, "j");
  std::vector<Tensor> r = compute_rows({3}, {2},
                                       [&](const std::vector<Var>& row, const std::vector<Var>& el) {
                                         return online_softmax(S(row[0], j), {V(j, el[0])}, {j});
                                       },
                                       {"max", "sum", "acc"}, {"i", "e"});
  LoweredFunc f = lower(create_schedule({r[0]}), {S, V, r[0], r[1], r[2]}, "softmax_rows");
  EXPECT_EQ(lower_test::count_exprs(f.body,
                                    [](const Expr& e) {
                                      const auto* c = e.as<CallNode>();
                                      return c && c->op == Intrinsic::Exp;
                                    }),
            1)
      << f;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0: NaN last (after the running max); row 1: NaN first; row 2: plain.
  NDArray s = NDArray::from_vector(std::vector<float>{0.5f, 2, 1, nan, nan, 1, 3, 0, 1, 2, 3, 4}, {3, 4}),
          v = NDArray::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  for (bool jit : {false, true}) {
    SCOPED_TRACE(jit ? "jit" : "interpret");
    NDArray mx = NDArray::empty({3}, Float(32)), sm = NDArray::empty({3}, Float(32)),
            acc = NDArray::empty({3, 2}, Float(32));
    if (jit)
      build(f)("softmax_rows")(s, v, mx, sm, acc);
    else
      interpret(f, {s, v, mx, sm, acc});
    EXPECT_TRUE(std::isnan(sm.at<float>({0}))) << sm.at<float>({0});
    EXPECT_TRUE(std::isnan(sm.at<float>({1}))) << sm.at<float>({1});
    double want_sum = 0, want_acc = 0;
    for (int k = 0; k < 4; ++k) {
      want_sum += std::exp(double(k + 1) - 4.0);
      want_acc += std::exp(double(k + 1) - 4.0) * (2 * k + 1);
    }
    EXPECT_EQ(mx.at<float>({2}), 4.0f);
    EXPECT_NEAR(sm.at<float>({2}), want_sum, 1e-6);
    EXPECT_NEAR(acc.at<float>({2, 0}), want_acc, 1e-5);
  }
}

TEST(RowReduce, RowOfTheBestKey) {
  RowReducer best_row(
      "best_row",
      [](const std::vector<Expr>& a, const std::vector<Expr>& b) {
        Expr keep = a[0] >= b[0];
        return RowReducer::RowStep{{select(keep, a[0], b[0])}, {keep}, {"keep_old"}};
      },
      [](const std::vector<Expr>& a, const std::vector<Expr>& b, const std::vector<Expr>& f) {
        return std::vector<Expr>{select(f[0], a[0], b[0])};
      },
      [](const std::vector<DataType>& t) { return std::vector<Expr>{min_value(t[0])}; },
      [](const std::vector<DataType>& t) { return std::vector<Expr>{make_zero(t[0])}; });
  const int m = 5, n = 17, d = 6;
  Tensor score = placeholder({m, n}, Float(32), "score"), feat = placeholder({n, d}, Float(32), "feat");
  IterVar j = reduce_axis({0, n}, "j");
  std::vector<Tensor> r = compute_rows({m}, {d},
                                       [&](const std::vector<Var>& row, const std::vector<Var>& el) {
                                         return best_row({score(row[0], j)}, {feat(j, el[0])}, {j});
                                       },
                                       {"best", "row"});
  EXPECT_EQ(r[0].ndim(), 1);
  EXPECT_EQ(r[1].ndim(), 2);
  const std::vector<float> sv = random_values(m * n, 5), fv = random_values(n * d, 6);
  Schedule s = create_schedule({r[0]});
  auto [jo, ji] = s[r[0]].split(j, 4);
  s[r[0]].parallel(r[0].axis(0));
  LoweredFunc f = lower(s, {score, feat, r[0], r[1]}, "best_row");
  for (bool jit : {false, true}) {
    NDArray best = NDArray::empty({m}, Float(32)), row = NDArray::empty({m, d}, Float(32));
    std::vector<Argument> args{NDArray::from_vector(sv, {m, n}), NDArray::from_vector(fv, {n, d}), best, row};
    if (jit) {
      build(f)("best_row").call(args);
    } else {
      interpret(f, args);
    }
    for (int i = 0; i < m; ++i) {
      int arg = 0;
      for (int jj = 1; jj < n; ++jj)
        if (sv[size_t(i * n + jj)] > sv[size_t(i * n + arg)]) arg = jj;
      EXPECT_EQ(best.at<float>({i}), sv[size_t(i * n + arg)]) << i;
      for (int c = 0; c < d; ++c) EXPECT_EQ(row.at<float>({i, c}), fv[size_t(arg * d + c)]) << i << "," << c;
    }
  }
}

// A row reduction at the root, auto-scheduled for the CPU (parallel rows, vector
// elements) and for CUDA (a thread per row): the same results as the default schedule.
TEST(RowReduce, AutoScheduled) {
  const int m = 33, n = 40, d = 20;
  Tensor score = placeholder({m, n}, Float(32), "score"), feat = placeholder({n, d}, Float(32), "feat");
  IterVar j = reduce_axis({0, n}, "j");
  std::vector<Tensor> r = compute_rows({m}, {d},
                                       [&](const std::vector<Var>& row, const std::vector<Var>& el) {
                                         return online_softmax(score(row[0], j), {feat(j, el[0])}, {j}, j % 3 != 1);
                                       },
                                       {"max", "sum", "acc"}, {"i", "e"});
  const std::vector<Tensor> args{score, feat, r[0], r[1], r[2]};
  const std::vector<float> sv = random_values(m * n, 7, 3.0f), fv = random_values(n * d, 8);
  auto run = [&](const LoweredFunc& f, bool jit) {
    std::vector<NDArray> outs{NDArray::empty({m}, Float(32)), NDArray::empty({m}, Float(32)),
                              NDArray::empty({m, d}, Float(32))};
    std::vector<Argument> a{NDArray::from_vector(sv, {m, n}), NDArray::from_vector(fv, {n, d}), outs[0], outs[1],
                            outs[2]};
    if (jit) {
      build(f)(f.name).call(a);
    } else {
      interpret(f, a);
    }
    return outs;
  };
  const std::vector<NDArray> want = run(lower(create_schedule({r[0]}), args, "rows"), false);
  for (const char* target : {"llvm", "cuda"}) {
    SCOPED_TRACE(target);
    AutoScheduleOptions o;
    o.target = target;
    LoweredFunc f = lower(auto_schedule({r[0]}, o), args, "rows");
    const std::string ir = to_string(f);
    EXPECT_NE(ir.find(std::string(target) == "llvm" ? "parallel for" : "threadIdx.x"), std::string::npos) << ir;
    const std::vector<NDArray> got = run(f, std::string(target) == "llvm");
    for (size_t k = 0; k < got.size(); ++k) {
      const std::vector<float> g = got[k].to_vector<float>(), w = want[k].to_vector<float>();
      for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-5f * (1 + std::fabs(w[i]))) << k << ":" << i;
    }
  }
}

TEST(RowReduce, Errors) {
  Tensor S = placeholder({4, 8}, Float(32), "S"), V = placeholder({8, 3}, Float(32), "V");
  IterVar j = reduce_axis({0, 8}, "j");
  auto rows = [&](const std::function<std::vector<Expr>(const Var&, const Var&)>& fn) {
    return compute_rows({4}, {3}, [&](const std::vector<Var>& r, const std::vector<Var>& e) { return fn(r[0], e[0]); },
                        {"max", "sum", "acc"}, {"i", "e"});
  };
  expect_error(
      [&] { rows([&](const Var& i, const Var& e) { return online_softmax(S(i, j) + V(j, e), {V(j, e)}, {j}); }); },
      {"compute_rows 'max': row value 'max' uses element axis 'e'; the row values and the condition are one "
       "per row"});
  expect_error(
      [&] { rows([&](const Var& i, const Var& e) { return online_softmax(S(i, j), {V(j, e)}, {j}, e < 2); }); },
      {"compute_rows 'max': the condition uses element axis 'e'"});
  expect_error(
      [&] {
        compute_rows({4}, {3},
                     [&](const std::vector<Var>& r, const std::vector<Var>&) { return argmax(S(r[0], j), {j}); },
                     {"idx", "val"});
      },
      {"compute_rows 'idx': the values must be those of a row reducer (online_softmax, a RowReducer), in order"});
  expect_error(
      [&] {
        compute_rows({4}, {},
                     [&](const std::vector<Var>& r, const std::vector<Var>&) {
                       return online_softmax(S(r[0], j), {S(r[0], j)}, {j});
                     },
                     {"max", "sum", "acc"});
      },
      {"compute_rows 'max': give at least one element dimension"});
  expect_error(
      [&] {
        compute_tuple({4, 3}, [&](const std::vector<Var>& v) { return online_softmax(S(v[0], j), {V(j, v[1])}, {j}); },
                      {"max", "sum", "acc"});
      },
      {"compute_tuple 'max': 'online_softmax' reduces rows; make its values with compute_rows"});
  expect_error([&] { online_softmax(cast(Int(32), S(0, j)), {V(j, 0)}, {j}); },
               {"online_softmax: the score must be a float, got int32 (cast it)"});
  expect_error([&] { online_softmax_merge(S(0, j), cast(Float(64), S(0, j)), {V(j, 0)}, {j}); },
               {"online_softmax_merge: the max and sum must be floats of one type, got float32 and float64"});
  RowReducer uses_row_value(
      "bad",
      [](const std::vector<Expr>& a, const std::vector<Expr>& b) {
        return RowReducer::RowStep{{a[0] + b[0]}, {}, {}};
      },
      [&](const std::vector<Expr>& a, const std::vector<Expr>& b, const std::vector<Expr>&) {
        return std::vector<Expr>{a[0] + b[0] + S(0, 0)};
      },
      [](const std::vector<DataType>& t) { return std::vector<Expr>{make_zero(t[0])}; },
      [](const std::vector<DataType>& t) { return std::vector<Expr>{make_zero(t[0])}; });
  expect_error([&] { uses_row_value({S(0, j)}, {V(j, 0)}, {j}); },
               {"comm_reducer 'bad': the element rule reads tensor 'S'; it may use only its arguments"});

  // Schedules the row reduction cannot take.
  std::vector<Tensor> r = rows([&](const Var& i, const Var& e) { return online_softmax(S(i, j), {V(j, e)}, {j}); });
  {
    Schedule s = create_schedule({r[0]});
    s[r[0]].reorder({r[0].axis(0), r[2].axis(1), j});
    expect_error(
        [&] {
          lower(s, {S, V, r[0], r[1], r[2]}, "f");
        },
        {"lower: stage 'max' is a row reduction (compute_rows): its element loops must be inside its row and "
         "reduction loops, but loop 'j' is inside element loop 'e'; reorder 'e' inward"});
  }
  {
    Schedule s = create_schedule({r[0]});
    s[r[0]].reorder({j, r[0].axis(0), r[2].axis(1)});
    s[r[0]].fuse(r[0].axis(0), r[2].axis(1));
    expect_error(
        [&] {
          lower(s, {S, V, r[0], r[1], r[2]}, "f");
        },
        {"lower: stage 'max' is a row reduction (compute_rows), and loop 'i.e.fused' fuses an element axis "
         "with a row or reduction axis"});
  }
  {
    Schedule s = create_schedule({r[0]});
    expect_error([&] { s.rfactor(r[0], j, 2); },
                 {"rfactor: factor_axis 2 for stage 'max' must be between 0 and 1 (a row reduction's factored "
                  "dimension is a row axis)"});
    expect_error([&] { s.rfactor(r[0], j); },
                 {"rfactor: stage 'max' is a row reduction, and rfactor over 'j' would leave its factored stage no "
                  "reduction: split 'j' and rfactor over the outer part"});
  }
  {
    Schedule s = create_schedule({r[0]});
    s[r[0]].bind(r[0].axis(0), thread_axis("blockIdx.x"));
    s[r[0]].bind(j, thread_axis("threadIdx.x"));
    expect_error(
        [&] {
          lower(s, {S, V, r[0], r[1], r[2]}, "f");
        },
        {"lower: stage 'max' is a row reduction (compute_rows), which te does not reduce across threads"});
  }
}

}  // namespace
}  // namespace te
