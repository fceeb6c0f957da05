// User reducers (comm_reducer), tuple reducers (argmax, argmin, welford) and computes
// with several outputs (compute_tuple): interpret() and the JIT against plain C++, with
// the schedules that touch them (rfactor, parallel, vectorized data axes, compute_at),
// and every error. The cross-thread (GPU) forms are in test_cross_thread_reduce.cpp and
// the CUDA emulation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "te/te.h"
#include "test_lower_util.h"
#include "test_util.h"

namespace te {
namespace {

using lower_test::count_stmts;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Rows with ties (small integers), a row of -inf, rows with NaNs.
std::vector<float> tricky_rows(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (float& x : v) x = static_cast<float>(d(rng));
  if (rows > 1)
    for (int64_t j = 0; j < cols; ++j) v[static_cast<size_t>(cols + j)] = -kInf;
  if (rows > 2) v[static_cast<size_t>(2 * cols + cols / 2)] = kNaN;
  if (rows > 3) {
    v[static_cast<size_t>(3 * cols + cols - 1)] = kNaN;
    v[static_cast<size_t>(3 * cols + 1)] = kNaN;
  }
  return v;
}

// PyTorch's argmax / argmin of one row: the first extreme, NaN the most extreme.
std::pair<int32_t, float> arg_reference(const float* row, int64_t n, bool largest) {
  int32_t best = 0;
  for (int64_t k = 1; k < n; ++k) {
    const float a = row[k], b = row[best];
    if (std::isnan(b)) break;
    if (std::isnan(a) || (largest ? a > b : a < b)) best = static_cast<int32_t>(k);
  }
  return {best, row[best]};
}

struct ArgSchedule {
  const char* name;
  std::function<void(Schedule&, const std::vector<Tensor>&, const IterVar& k)> apply;
};

std::vector<ArgSchedule> row_schedules() {
  return {
      {"default", [](Schedule&, const std::vector<Tensor>&, const IterVar&) {}},
      {"parallel",
       [](Schedule& s, const std::vector<Tensor>& out, const IterVar&) { s[out[0]].parallel(out[0].axis(0)); }},
      {"split_k",
       [](Schedule& s, const std::vector<Tensor>& out, const IterVar& k) {
         auto [ko, ki] = s[out[1]].split(k, 16);  // any output names the stage
         s[out[0]].reorder({ki, ko});
       }},
      {"rfactor",
       [](Schedule& s, const std::vector<Tensor>& out, const IterVar& k) {
         auto [ko, ki] = s[out[0]].split(k, 8);
         Tensor rf = s.rfactor(out[0], ki);
         s[out[0]].parallel(out[0].axis(0));
         (void)ko;
         (void)rf;
       }},
  };
}

void check_arg_rows(bool largest) {
  const int rows = 6, cols = 37;
  for (const ArgSchedule& sch : row_schedules()) {
    SCOPED_TRACE(sch.name);
    Tensor A = placeholder({rows, cols}, Float(32), "A");
    IterVar k = reduce_axis({0, cols}, "k");
    std::vector<Tensor> out = compute_tuple(
        {rows}, [&](Expr i) { return largest ? argmax(A(i, k), {k}) : argmin(A(i, k), {k}); }, {"idx", "val"});
    Schedule s = create_schedule({out[0]});
    sch.apply(s, out, k);
    LoweredFunc f = lower(s, {A, out[0], out[1]}, "arg");
    std::vector<float> av = tricky_rows(rows, cols, 5);
    NDArray a = NDArray::from_vector(av, {rows, cols});
    NDArray idx_i = NDArray::empty({rows}, Int(32)), val_i = NDArray::empty({rows}, Float(32));
    NDArray idx_j = NDArray::empty({rows}, Int(32)), val_j = NDArray::empty({rows}, Float(32));
    interpret(f, {a, idx_i, val_i});
    build(f)("arg")(a, idx_j, val_j);
    for (int64_t i = 0; i < rows; ++i) {
      auto [want_idx, want_val] = arg_reference(av.data() + i * cols, cols, largest);
      EXPECT_EQ(idx_i.at<int32_t>({i}), want_idx) << "row " << i << "\n" << f;
      EXPECT_EQ(idx_j.at<int32_t>({i}), want_idx) << "row " << i;
      if (std::isnan(want_val)) {
        EXPECT_TRUE(std::isnan(val_i.at<float>({i})) && std::isnan(val_j.at<float>({i})));
      } else {
        EXPECT_EQ(val_i.at<float>({i}), want_val);
        EXPECT_EQ(val_j.at<float>({i}), want_val);
      }
    }
  }
}

TEST(TupleReduce, ArgmaxRowsFirstIndexOnTiesNaNLargest) { check_arg_rows(true); }
TEST(TupleReduce, ArgminRowsFirstIndexOnTiesNaNSmallest) { check_arg_rows(false); }

int vectorized_loops(const LoweredFunc& f) {
  return count_stmts(f.body, [](const Stmt& st) {
    const auto* fl = st.as<ForNode>();
    return fl && fl->for_kind == ForKind::Vectorized;
  });
}

// Reductions down the columns with the data axis vectorized. A one-value custom rule
// becomes vector code; a tuple update (the second value combines the first one's old
// value after the first is stored) stays a loop for LLVM's vectorizer, and is right.
TEST(TupleReduce, VectorizedDataAxis) {
  const int rows = 29, cols = 16;
  Tensor A = placeholder({rows, cols}, Int(32), "A");
  IterVar k = reduce_axis({0, rows}, "k"), k2 = reduce_axis({0, rows}, "k2");
  CommReducer abs_max = comm_reducer([](Expr a, Expr b) { return max(abs(a), abs(b)); },
                                     [](DataType t) { return make_zero(t); }, "abs_max");
  std::vector<Tensor> out = compute_tuple({cols}, [&](Expr j) { return argmax(A(k, j), {k}); }, {"idx", "val"});
  Tensor M = compute(
      {cols}, [&](Expr j) { return abs_max(A(k2, j), {k2}); }, "M");
  Schedule s = create_schedule({out[0], M});
  for (const Tensor& t : {out[0], M}) {
    auto [jo, ji] = s[t].split(t.axis(0), 8);
    s[t].reorder({jo, t.op()->reduce_axis[0], ji});
    s[t].vectorize(ji);
  }
  LoweredFunc f = lower(s, {A, out[0], out[1], M}, "cols");
  EXPECT_EQ(vectorized_loops(f), 1) << "argmax's loop stays, abs_max's becomes vector code:\n" << f;
  std::mt19937 rng(3);
  std::vector<int32_t> av(static_cast<size_t>(rows * cols));
  for (int32_t& x : av) x = static_cast<int32_t>(rng() % 15) - 7;
  NDArray a = NDArray::from_vector(av, {rows, cols});
  for (bool jit : {false, true}) {
    NDArray idx = NDArray::empty({cols}, Int(32)), val = NDArray::empty({cols}, Int(32)),
            m = NDArray::empty({cols}, Int(32));
    if (jit)
      build(f)("cols")(a, idx, val, m);
    else
      interpret(f, {a, idx, val, m});
    for (int j = 0; j < cols; ++j) {
      int32_t best = 0, amax = 0;
      for (int r = 0; r < rows; ++r) {
        if (av[static_cast<size_t>(r * cols + j)] > av[static_cast<size_t>(best * cols + j)]) best = r;
        amax = std::max(amax, std::abs(av[static_cast<size_t>(r * cols + j)]));
      }
      EXPECT_EQ(idx.at<int32_t>({j}), best) << j << (jit ? " jit" : " interpret");
      EXPECT_EQ(val.at<int32_t>({j}), av[static_cast<size_t>(best * cols + j)]) << j;
      EXPECT_EQ(m.at<int32_t>({j}), amax) << j;
    }
  }
}

void welford_reference(const std::vector<float>& x, int64_t rows, int64_t cols, std::vector<double>* mean,
                       std::vector<double>* var) {
  for (int64_t i = 0; i < rows; ++i) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < cols; ++j) m += x[static_cast<size_t>(i * cols + j)];
    m /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) v += std::pow(x[static_cast<size_t>(i * cols + j)] - m, 2);
    mean->push_back(m);
    var->push_back(v / static_cast<double>(cols));
  }
}

TEST(TupleReduce, WelfordMeanAndVarianceInOnePass) {
  const int rows = 5, cols = 768;
  std::mt19937 rng(11);
  std::normal_distribution<float> d(3.0f, 2.0f);
  std::vector<float> xv(static_cast<size_t>(rows * cols));
  for (float& x : xv) x = d(rng);
  std::vector<double> mean, var;
  welford_reference(xv, rows, cols, &mean, &var);
  for (bool factor : {false, true}) {
    SCOPED_TRACE(factor ? "rfactor" : "serial");
    Tensor X = placeholder({rows, cols}, Float(32), "X");
    IterVar k = reduce_axis({0, cols}, "k");
    std::vector<Tensor> w =
        compute_tuple({rows}, [&](Expr i) { return welford(X(i, k), {k}); }, {"mean", "m2", "count"});
    Tensor V = compute(
        {rows}, [&](Expr i) { return w[1](i) / w[2](i); }, "var");
    Schedule s = create_schedule({w[0], V});
    if (factor) {
      auto [ko, ki] = s[w[0]].split(k, 32);
      s.rfactor(w[0], ko);
      s[V].parallel(V.axis(0));
    }
    LoweredFunc f = lower(s, {X, w[0], V}, "welford");
    NDArray x = NDArray::from_vector(xv, {rows, cols});
    NDArray m_i = NDArray::empty({rows}, Float(32)), v_i = NDArray::empty({rows}, Float(32));
    NDArray m_j = NDArray::empty({rows}, Float(32)), v_j = NDArray::empty({rows}, Float(32));
    interpret(f, {x, m_i, v_i});
    build(f)("welford")(x, m_j, v_j);
    for (int64_t i = 0; i < rows; ++i) {
      EXPECT_NEAR(m_i.at<float>({i}), mean[static_cast<size_t>(i)], 1e-5 * 4) << i;
      EXPECT_NEAR(v_i.at<float>({i}), var[static_cast<size_t>(i)], 1e-5 * var[static_cast<size_t>(i)] * 4) << i;
      // The JIT may contract a * b + c into one fma: a few ulp from interpret().
      EXPECT_NEAR(m_j.at<float>({i}), m_i.at<float>({i}), 1e-6 * std::fabs(m_i.at<float>({i}))) << i;
      EXPECT_NEAR(v_j.at<float>({i}), v_i.at<float>({i}), 1e-6 * v_i.at<float>({i})) << i;
    }
  }
}

TEST(TupleReduce, WelfordWithWhereCountsOnlyThosePoints) {
  const int cols = 10;
  Tensor X = placeholder({1, cols}, Float(64), "X");
  IterVar k = reduce_axis({0, cols}, "k");
  std::vector<Tensor> w =
      compute_tuple({1}, [&](Expr i) { return welford(X(i, k), {k}, k % 2 == 0); }, {"mean", "m2", "count"});
  LoweredFunc f = lower(create_schedule({w[0]}), {X, w[0], w[1], w[2]}, "even");
  NDArray x = NDArray::from_vector(std::vector<double>{1, 100, 2, 100, 3, 100, 4, 100, 5, 100}, {1, cols});
  NDArray m = NDArray::empty({1}, Float(64)), m2 = NDArray::empty({1}, Float(64)), n = NDArray::empty({1}, Float(64));
  build(f)("even")(x, m, m2, n);
  EXPECT_DOUBLE_EQ(m.at<double>({0}), 3.0);
  EXPECT_DOUBLE_EQ(m2.at<double>({0}), 10.0);
  EXPECT_DOUBLE_EQ(n.at<double>({0}), 5.0);
}

TEST(TupleReduce, CommReducerOverOneValue) {
  CommReducer bit_or =
      comm_reducer([](Expr a, Expr b) { return a | b; }, [](DataType t) { return make_zero(t); }, "bit_or");
  CommReducer abs_max = comm_reducer([](Expr a, Expr b) { return max(abs(a), abs(b)); },
                                     [](DataType t) { return make_zero(t); }, "abs_max");
  const int rows = 4, cols = 19;
  Tensor A = placeholder({rows, cols}, UInt(32), "A");
  Tensor F = placeholder({rows, cols}, Float(32), "F");
  IterVar k = reduce_axis({0, cols}, "k");
  Tensor O = compute(
      {rows}, [&](Expr i) { return bit_or(A(i, k), {k}, k != 3); }, "O");
  Tensor M = compute(
      {rows}, [&](Expr i) { return abs_max(F(i, k), {k}); }, "M");
  Schedule s = create_schedule({O, M});
  auto [ko, ki] = s[M].split(M.reduce_axis(0), 4);
  s.rfactor(M, ki);
  LoweredFunc f = lower(s, {A, F, O, M}, "custom");
  std::vector<uint32_t> av;
  std::vector<float> fv;
  for (int64_t i = 0; i < rows * cols; ++i) {
    av.push_back(1u << (i % 31));
    fv.push_back(static_cast<float>((i * 7) % 23) - 11.5f);
  }
  NDArray a = NDArray::from_vector(av, {rows, cols}), fa = NDArray::from_vector(fv, {rows, cols});
  for (bool jit : {false, true}) {
    NDArray o = NDArray::empty({rows}, UInt(32)), m = NDArray::empty({rows}, Float(32));
    if (jit)
      build(f)("custom")(a, fa, o, m);
    else
      interpret(f, {a, fa, o, m});
    for (int64_t i = 0; i < rows; ++i) {
      uint32_t want_or = 0;
      float want_max = 0;
      for (int64_t j = 0; j < cols; ++j) {
        if (j != 3) want_or |= av[static_cast<size_t>(i * cols + j)];
        want_max = std::max(want_max, std::fabs(fv[static_cast<size_t>(i * cols + j)]));
      }
      EXPECT_EQ(o.at<uint32_t>({i}), want_or) << i << (jit ? " jit" : " interpret");
      EXPECT_EQ(m.at<float>({i}), want_max) << i << (jit ? " jit" : " interpret");
    }
  }
}

TEST(TupleReduce, ComputeTupleIsOneLoopNest) {
  const int n = 33;
  Tensor A = placeholder({n}, Float(32), "A"), B = placeholder({n}, Float(32), "B");
  std::vector<Tensor> sd = compute_tuple({n},
                                         [&](Expr i) {
                                           return std::vector<Expr>{A(i) + B(i), A(i) - B(i)};
                                         },
                                         {"S", "D"});
  Schedule s = create_schedule({sd[0], sd[1]});
  EXPECT_EQ(s[sd[0]].name(), s[sd[1]].name());  // one stage
  EXPECT_EQ(to_string(lower(s, {A, B, sd[0], sd[1]}, "f").body), R"(for (i, 0, 33) {
  S[i] = (A[i] + B[i]);
  D[i] = (A[i] - B[i]);
}
)");
  auto [io, ii] = s[sd[1]].split(sd[1].axis(0), 8);
  s[sd[0]].vectorize(ii);
  s[sd[0]].parallel(io);
  LoweredFunc f = lower(s, {A, B, sd[0], sd[1]}, "sum_diff");
  EXPECT_EQ(vectorized_loops(f), 0) << f;
  std::vector<float> av, bv;
  for (int64_t i = 0; i < n; ++i) {
    av.push_back(static_cast<float>(i) * 0.5f);
    bv.push_back(static_cast<float>(n - i));
  }
  NDArray a = NDArray::from_vector(av, {n}), b = NDArray::from_vector(bv, {n});
  NDArray S = NDArray::empty({n}, Float(32)), D = NDArray::empty({n}, Float(32));
  build(f)("sum_diff")(a, b, S, D);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(S.at<float>({i}), av[static_cast<size_t>(i)] + bv[static_cast<size_t>(i)]);
    EXPECT_EQ(D.at<float>({i}), av[static_cast<size_t>(i)] - bv[static_cast<size_t>(i)]);
  }
}

// An argmax stage computed inside its consumer's loop, its outputs intermediate buffers.
TEST(TupleReduce, TupleStageComputedAtItsConsumer) {
  const int rows = 9, cols = 12;
  Tensor A = placeholder({rows, cols}, Float(32), "A");
  IterVar k = reduce_axis({0, cols}, "k");
  std::vector<Tensor> am = compute_tuple({rows}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"idx", "val"});
  Tensor C = compute(
      {rows}, [&](Expr i) { return cast(Float(32), am[0](i)) * 100.0f + am[1](i); }, "C");
  Schedule s = create_schedule({C});
  auto [co, ci] = s[C].split(C.axis(0), 4);
  s[am[0]].compute_at(s[C], co);
  (void)ci;
  LoweredFunc f = lower(s, {A, C}, "code");
  std::vector<float> av = tricky_rows(rows, cols, 9);
  for (float& x : av)
    if (std::isnan(x) || std::isinf(x)) x = 0;
  NDArray a = NDArray::from_vector(av, {rows, cols});
  NDArray c_i = NDArray::empty({rows}, Float(32)), c_j = NDArray::empty({rows}, Float(32));
  interpret(f, {a, c_i});
  build(f)("code")(a, c_j);
  for (int64_t i = 0; i < rows; ++i) {
    auto [idx, val] = arg_reference(av.data() + i * cols, cols, true);
    EXPECT_EQ(c_i.at<float>({i}), static_cast<float>(idx) * 100.0f + val) << i << "\n" << f;
    EXPECT_EQ(c_j.at<float>({i}), c_i.at<float>({i})) << i;
  }
}

TEST(TupleReduce, PrintsTheTupleAndTheLoweredUpdate) {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  IterVar k = reduce_axis({0, 8}, "k");
  std::vector<Tensor> am = compute_tuple({4}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"idx", "val"});
  EXPECT_EQ(to_string(am[1].op()->more_outputs[0].body), "argmax((k, A(i, k)), axis=[k]).1");
  LoweredFunc f = lower(create_schedule({am[0]}), {A, am[0], am[1]}, "argmax_rows");
  EXPECT_EQ(to_string(f.body), R"(for (i, 0, 4) {
  idx[i] = 2147483647;
  val[i] = float32(-inf);
  for (k, 0, 8) {
    let idx.old = idx[i];
    let idx.new = k;
    let val.old = val[i];
    let val.new = A[((i * 8) + k)];
    let idx_old_ok = (idx.old < idx.new);
    let val_old_ok = (((val.old > val.new) || ((val.old == val.new) && idx_old_ok)) || (isnan(val.old) && (!isnan(val.new) || idx_old_ok)));
    idx[i] = select(val_old_ok, idx.old, idx.new);
    val[i] = select(val_old_ok, val.old, val.new);
  }
}
)");
}

// ---- Errors ----

TEST(TupleReduceErrors, ATupleValueAloneIsNotACompute) {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  IterVar k = reduce_axis({0, 8}, "k");
  expect_error(
      [&] {
        compute(
            {4}, [&](Expr i) { return argmax(A(i, k), {k})[1]; }, "v");
      },
      {"compute 'v'", "value 1 of a 2-value reduction (argmax)", "compute_tuple"});
}

TEST(TupleReduceErrors, ComputeTupleChecksItsBodies) {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  IterVar k = reduce_axis({0, 8}, "k"), k2 = reduce_axis({0, 8}, "k2");
  expect_error([&] { compute_tuple({4}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"idx"}); },
               {"compute_tuple 'idx'", "returned 2 values for 1 names"});
  expect_error(
      [&] {
        compute_tuple({4}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"a", "a"});
      },
      {"two outputs are named 'a'"});
  expect_error([&] { compute_tuple({4}, [&](Expr) { return std::vector<Expr>{}; }, {}); },
               {"give one name per output"});
  expect_error(
      [&] {
        compute_tuple({4}, [&](Expr i) { return std::vector<Expr>{argmax(A(i, k), {k})[0], A(i, 0)}; }, {"a", "b"});
      },
      {"output 'b' is not a reduction but output 'a' is one"});
  expect_error(
      [&] {
        compute_tuple({4},
                      [&](Expr i) {
                        return std::vector<Expr>{argmax(A(i, k), {k})[0], argmax(A(i, k2), {k2})[1]};
                      },
                      {"a", "b"});
      },
      {"output 'b' is not the same reduction as output 'a'"});
  expect_error(
      [&] {
        compute_tuple({4},
                      [&](Expr i) {
                        std::vector<Expr> r = argmax(A(i, k), {k});
                        return std::vector<Expr>{r[1], r[0]};
                      },
                      {"a", "b"});
      },
      {"output 0 ('a') is value 1 of the reduction"});
}

TEST(TupleReduceErrors, CommReducerChecksItsRule) {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  IterVar k = reduce_axis({0, 8}, "k");
  Var n("n", Float(32));
  CommReducer free_var =
      comm_reducer([&](Expr a, Expr b) { return a + b * n; }, [](DataType t) { return make_zero(t); }, "scaled");
  expect_error([&] { free_var(A(0, k), {k}); }, {"comm_reducer 'scaled'", "variable 'n'"});
  CommReducer reads =
      comm_reducer([&](Expr a, Expr) { return a + A(0, 0); }, [](DataType t) { return make_zero(t); }, "reads");
  expect_error([&] { reads(A(0, k), {k}); }, {"comm_reducer 'reads'", "reads tensor 'A'"});
  CommReducer wrong_type = comm_reducer([](Expr a, Expr b) { return cast(Float(64), a + b); },
                                        [](DataType t) { return make_zero(t); }, "widen");
  expect_error([&] { wrong_type(A(0, k), {k}); },
               {"comm_reducer 'widen'", "value 0 is float64 but source 0 is float32"});
  CommReducer bad_identity =
      comm_reducer([](Expr a, Expr b) { return a + b; }, [](DataType) { return make_zero(Int(32)); }, "bad_id");
  expect_error([&] { bad_identity(A(0, k), {k}); }, {"identity's value 0 is int32 but source 0 is float32"});
  CommReducer pair =
      comm_reducer([](const std::vector<Expr>& a, const std::vector<Expr>&) { return std::vector<Expr>{a[0]}; },
                   [](const std::vector<DataType>& t) {
                     return std::vector<Expr>{make_zero(t[0]), make_zero(t[1])};
                   },
                   "pair");
  expect_error(
      [&] {
        pair({A(0, k), A(1, k)}, {k});
      },
      {"comm_reducer 'pair'", "the combine gives 1 values for 2 sources"});
  expect_error([&] { comm_reducer(CommReducer::Combine(), CommReducer::Identity(), "none"); },
               {"comm_reducer 'none'", "must be given"});
}

TEST(TupleReduceErrors, ArgmaxAndWelfordArguments) {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  Tensor I = placeholder({4, 8}, Int(32), "I");
  IterVar k = reduce_axis({0, 8}, "k"), k2 = reduce_axis({0, 4}, "k2");
  expect_error([&] { argmax(A(k2, k), {k, k2}); }, {"argmax: reduces over exactly one axis, got 2"});
  expect_error([&] { argmin(A(0, k), {}); }, {"argmin: reduces over exactly one axis, got 0"});
  expect_error([&] { welford(I(0, k), {k}); }, {"welford: the source must be a float, got int32"});
  expect_error([&] { argmax(A(0, k) > 0.0f, {k}); }, {"argmax: cannot reduce bool values"});
}

TEST(TupleReduceErrors, SchedulePrimitivesThatWouldSplitTheStage) {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  IterVar k = reduce_axis({0, 8}, "k");
  std::vector<Tensor> am = compute_tuple({4}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"idx", "val"});
  Tensor C = compute(
      {4}, [&](Expr i) { return am[1](i) + 1.0f; }, "C");
  Schedule s = create_schedule({C});
  expect_error([&] { s.cache_write(am[1], "local"); }, {"cache_write: stage 'idx' has 2 outputs"});
  expect_error([&] { s.cache_read(am[1], "shared", {C}); }, {"cache_read: stage 'idx' has 2 outputs"});
  std::vector<Tensor> ew = compute_tuple({4},
                                         [&](Expr i) {
                                           return std::vector<Expr>{A(i, 0) + 1.0f, A(i, 1)};
                                         },
                                         {"e0", "e1"});
  Tensor D = compute(
      {4}, [&](Expr i) { return ew[0](i) + ew[1](i); }, "D");
  Schedule s2 = create_schedule({D});
  expect_error([&] { s2[ew[0]].compute_inline(); }, {"compute_inline: stage 'e0' has 2 outputs"});
}

}  // namespace
}  // namespace te
