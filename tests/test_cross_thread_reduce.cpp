// Cross-thread reductions (a reduction axis bound to threadIdx): the lowering's three forms
// (warp shuffles; shuffles and shared memory across warps; a shared-memory tree), every
// reducer, dtypes, `where`, rfactor, several reductions in one kernel, and the errors.
// interpret() runs the lowered IR against plain C++; tests/test_cuda_emulation.cpp runs
// the generated CUDA against interpret().
#include <gtest/gtest.h>

#include <cmath>

#include "cuda_emulation/reduction_kernels.h"
#include "cuda_emulation/tuple_reduce_kernels.h"
#include "test_lower_util.h"
#include "test_util.h"

namespace te {
namespace {

using cuda_test::RowReduceCase;
using Form = RowReduceCase::Form;
using lower_test::count_exprs;
using lower_test::count_stmts;

int barriers(const LoweredFunc& f) {
  return count_stmts(f.body, [](const Stmt& s) { return s.kind() == StmtKind::Barrier; });
}
int shuffles(const LoweredFunc& f) {
  return count_exprs(f.body, [](const Expr& e) {
    const auto* c = e.as<CallNode>();
    return c && c->op == Intrinsic::WarpShuffleDown;
  });
}
int shared_allocations(const LoweredFunc& f) {
  return count_stmts(f.body, [](const Stmt& s) {
    const auto* a = s.as<AllocateNode>();
    return a && a->buffer.scope() == MemoryScope::Shared;
  });
}

// Runs c through interpret() on a few shapes and compares with the C++ reference.
void check_case(const RowReduceCase& c, std::vector<std::pair<int64_t, int64_t>> shapes = {}) {
  LoweredFunc f = cuda_test::row_reduce_func(c);
  if (shapes.empty()) shapes = {{5, 300}, {3, c.threads}, {2, 7}, {4, 1}};
  for (auto [rows, cols] : shapes) {
    if (c.form == Form::Whole && cols != c.threads) continue;
    NDArray a = cuda_test::row_reduce_input(c.dtype, c.reducer, rows, cols, 3);
    NDArray b = NDArray::empty({rows}, c.dtype);
    interpret(f, {a, b});
    std::vector<double> want = cuda_test::row_reduce_reference(a, c.reducer, c.where);
    const double tol = c.dtype == Float(16) ? 0.5 : 0.0;  // float16 sums round on the way
    for (int64_t i = 0; i < rows; ++i)
      ASSERT_NEAR(cuda_test::element(b, i), want[static_cast<size_t>(i)], tol)
          << c.name << " " << rows << "x" << cols << " row " << i << "\n"
          << f;
  }
}

TEST(CrossThreadReduce, EveryReducerAndDtypeAcrossThreadCounts) {
  for (Reducer r : {Reducer::Sum, Reducer::Prod, Reducer::Min, Reducer::Max})
    for (DataType t : {Float(32), Float(64), Int(32), Int(64), UInt(8), Float(16)})
      for (int threads : {1, 2, 8, 32, 48, 64, 100, 256}) {
        if (t == Float(16) && r == Reducer::Sum && threads > 64) continue;  // exactness of the reference
        RowReduceCase c{"rr", r, t, threads, Form::Split};
        check_case(c, {{3, 300}, {2, threads}, {2, 5}});
      }
}

TEST(CrossThreadReduce, EveryForm) {
  for (bool where : {false, true}) {
    check_case({"whole", Reducer::Sum, Float(32), 64, Form::Whole, 1, where});
    check_case({"rfactor", Reducer::Sum, Float(32), 64, Form::Rfactor, 1, where});
    check_case({"rfactor_min", Reducer::Min, Int(32), 40, Form::Rfactor, 1, where});
    for (int threads : {4, 16, 32, 24, 48, 64})
      for (int rows : {1, 2, 3, 4}) {
        check_case({"rows_y", Reducer::Max, Float(32), threads, Form::RowsOnY, rows, where});
        check_case({"serial_rows", Reducer::Sum, Int(32), threads, Form::SerialRows, rows, where});
      }
    for (int threads : {2, 8, 33})
      for (int rows : {1, 4, 32}) check_case({"on_y", Reducer::Sum, Float(64), threads, Form::ReduceOnY, rows, where});
  }
}

TEST(CrossThreadReduce, PicksShufflesWhenWarpsAllowAndSharedMemoryOtherwise) {
  // 32 threads per row: five shuffles, no shared memory, no barrier.
  LoweredFunc warp = cuda_test::row_reduce_func({"w", Reducer::Sum, Float(32), 32, Form::Split});
  EXPECT_EQ(shuffles(warp), 5) << warp;
  EXPECT_EQ(barriers(warp), 0) << warp;
  EXPECT_EQ(shared_allocations(warp), 0) << warp;
  // 8 threads per row, 4 rows per block: groups of 8 lanes inside a warp.
  LoweredFunc groups = cuda_test::row_reduce_func({"g", Reducer::Sum, Float(32), 8, Form::RowsOnY, 4});
  EXPECT_EQ(shuffles(groups), 3) << groups;
  EXPECT_EQ(barriers(groups), 0) << groups;
  // 256 threads: shuffles in each warp, the 8 warp totals through shared memory, one barrier.
  LoweredFunc blocks = cuda_test::row_reduce_func({"b", Reducer::Max, Float(32), 256, Form::Split});
  EXPECT_EQ(shuffles(blocks), 5 + 3) << blocks;
  EXPECT_EQ(barriers(blocks), 1) << blocks;
  EXPECT_EQ(shared_allocations(blocks), 1) << blocks;
  // 24 threads per row, 3 rows per block: groups straddle warps, a tree in shared memory.
  LoweredFunc tree = cuda_test::row_reduce_func({"t", Reducer::Sum, Float(32), 24, Form::RowsOnY, 3});
  EXPECT_EQ(shuffles(tree), 0) << tree;
  EXPECT_EQ(barriers(tree), 1 + 5) << tree;
  // Rows in a serial loop around the threads: a barrier keeps the next row from
  // overwriting warp totals not yet read.
  LoweredFunc serial = cuda_test::row_reduce_func({"s", Reducer::Sum, Float(32), 256, Form::SerialRows, 2});
  EXPECT_EQ(barriers(serial), 2) << serial;
}

TEST(CrossThreadReduce, TheLoweredLoopNest) {
  LoweredFunc f = cuda_test::row_reduce_func({"row_sum", Reducer::Sum, Float(32), 64, Form::Split}, 4, 300);
  EXPECT_EQ(to_string(f.body), R"(launch_thread blockIdx.x (i, 0, 4) {
  allocate B.red.warps[float32 * 2] in shared {
    launch_thread threadIdx.x (k.inner, 0, 64) {
      allocate B.red[float32 * 1] in local {
        B.red[0] = 0.0f;
        for (k.outer, 0, 5) {
          if (likely((((k.outer * 64) + k.inner) < 300))) {
            B.red[0] = (B.red[0] + A[(((i * 300) + (k.outer * 64)) + k.inner)]);
          }
        }
        let B.red.other = warp_shuffle_down(B.red[0], 16, k.inner);
        B.red[0] = (B.red[0] + B.red.other);
        let B.red.other_1 = warp_shuffle_down(B.red[0], 8, k.inner);
        B.red[0] = (B.red[0] + B.red.other_1);
        let B.red.other_2 = warp_shuffle_down(B.red[0], 4, k.inner);
        B.red[0] = (B.red[0] + B.red.other_2);
        let B.red.other_3 = warp_shuffle_down(B.red[0], 2, k.inner);
        B.red[0] = (B.red[0] + B.red.other_3);
        let B.red.other_4 = warp_shuffle_down(B.red[0], 1, k.inner);
        B.red[0] = (B.red[0] + B.red.other_4);
        if (((k.inner % 32) == 0)) {
          B.red.warps[(k.inner / 32)] = B.red[0];
        }
        barrier();
        if ((k.inner < 32)) {
          B.red[0] = if_then_else((k.inner < 2), B.red.warps[k.inner], 0.0f);
          let B.red.other_5 = warp_shuffle_down(B.red[0], 1, k.inner);
          B.red[0] = (B.red[0] + B.red.other_5);
        }
        if ((k.inner == 0)) {
          B[i] = B.red[0];
        }
      }
    }
  }
}
)");
}

// softmax: two reductions (max, then a sum of exponentials) and the output in one kernel.
TEST(CrossThreadReduce, SoftmaxHasTwoReductionsInOneKernel) {
  for (int threads : {32, 96, 128}) {
    LoweredFunc f = cuda_test::softmax_rows_func(threads);
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{3, 500}, {2, 7}, {1, 128}}) {
      std::vector<float> x = lower_test::values(rows * cols, 4);
      NDArray xa = NDArray::from_vector(x, {rows, cols}), ya = lower_test::output({rows, cols});
      interpret(f, {xa, ya});
      std::vector<float> want;
      for (int64_t i = 0; i < rows; ++i) {
        float m = -INFINITY;
        double e = 0;
        for (int64_t j = 0; j < cols; ++j) m = std::max(m, x[static_cast<size_t>(i * cols + j)]);
        for (int64_t j = 0; j < cols; ++j) e += std::exp(x[static_cast<size_t>(i * cols + j)] - m);
        for (int64_t j = 0; j < cols; ++j)
          want.push_back(static_cast<float>(std::exp(x[static_cast<size_t>(i * cols + j)] - m) / e));
      }
      lower_test::expect_close(ya.to_vector<float>(), want, 1e-5f, "softmax " + std::to_string(threads));
    }
  }
}

// A reduction over fewer threads than its kernel runs: the extra threads add the identity.
TEST(CrossThreadReduce, ReductionWithFewerThreadsThanItsKernel) {
  Var rows("rows"), cols("cols");
  Tensor A = placeholder({rows, cols}, Float(32), "A");
  IterVar k = reduce_axis({0, cols}, "k");
  Tensor S = compute(
      {rows}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
  Tensor B = compute(
      {rows, cols}, [&](Expr i, Expr j) { return A(i, j) - S(i); }, "B");
  for (int reduce_threads : {16, 48, 64}) {
    Schedule s = create_schedule({B});
    IterVar tx = thread_axis("threadIdx.x");
    auto [jo, ji] = s[B].split(B.axis(1), 128);
    s[B].bind(B.axis(0), thread_axis("blockIdx.x"));
    s[B].bind(ji, tx);
    auto [ko, ki] = s[S].split(k, reduce_threads);
    s[S].bind(ki, tx);
    s[S].compute_at(s[B], B.axis(0));
    LoweredFunc f = lower(s, {A, B}, "centered");
    for (int64_t n : {1, 100, 300}) {
      std::vector<float> a = lower_test::values(2 * n, 1);
      NDArray aa = NDArray::from_vector(a, {2, n}), ba = lower_test::output({2, n});
      interpret(f, {aa, ba});
      std::vector<float> want;
      for (int64_t i = 0; i < 2; ++i) {
        float total = 0;
        for (int64_t j = 0; j < n; ++j) total += a[static_cast<size_t>(i * n + j)];
        for (int64_t j = 0; j < n; ++j) want.push_back(a[static_cast<size_t>(i * n + j)] - total);
      }
      lower_test::expect_close(ba.to_vector<float>(), want, 1e-4f, "reduce threads " + std::to_string(reduce_threads));
    }
    (void)jo, (void)ko;
  }
}

TEST(CrossThreadReduce, CpuBackendRefusesWithAClearError) {
  LoweredFunc f = cuda_test::row_reduce_func({"rs", Reducer::Sum, Float(32), 32, Form::Split});
  expect_error([&] { build(f); }, {"rs", "warp shuffle", "cross-thread reduction", "use build_cuda"});
  LoweredFunc tree = cuda_test::row_reduce_func({"rt", Reducer::Sum, Float(32), 24, Form::RowsOnY, 3});
  expect_error([&] { build(tree); }, {"rt", "barrier", "use build_cuda"});
}

TEST(CrossThreadReduce, ScheduleErrors) {
  Var n("n");
  Tensor A = placeholder({8, n}, Float(32), "A");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor B = compute(
      {8}, [&](Expr i) { return sum(A(i, k), {k}); }, "B");
  {  // the number of threads must be a constant
    Schedule s = create_schedule({B});
    s[B].bind(k, thread_axis("threadIdx.x"));
    expect_error(
        [&] {
          lower(s, {A, B}, "f");
        },
        {"stage 'B' reduces across threads", "axis 'k'", "threadIdx.x", "not a constant", "split the axis"});
  }
  {  // a data-parallel loop inside the reduction
    Schedule s = create_schedule({B});
    auto [ko, ki] = s[B].split(k, 32);
    s[B].bind(ki, thread_axis("threadIdx.x"));
    s[B].reorder({ko, ki, B.axis(0)});
    expect_error(
        [&] {
          lower(s, {A, B}, "f");
        },
        {"stage 'B' reduces across threads", "data-parallel axis 'i'", "reorder it outward"});
  }
  {  // the result computed inside a consumer's thread loop would be in registers
    Tensor C = compute(
        {8}, [&](Expr i) { return B(i) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    s[C].bind(C.axis(0), thread_axis("threadIdx.y"));
    auto [ko, ki] = s[B].split(k, 32);
    s[B].bind(ki, thread_axis("threadIdx.x"));
    s[B].compute_at(s[C], C.axis(0));
    expect_error(
        [&] {
          lower(s, {A, C}, "f");
        },
        {"stage 'B' reduces across threads", "shared or global memory", "local memory", "block-level"});
  }
  {  // a kernel whose other thread loops do not enclose the reduction
    Tensor C = compute(
        {8, 4}, [&](Expr i, Expr j) { return B(i) + cast(Float(32), j); }, "C");
    Schedule s = create_schedule({C});
    s[C].bind(C.axis(0), thread_axis("blockIdx.x"));
    s[C].bind(C.axis(1), thread_axis("threadIdx.y"));
    auto [ko, ki] = s[B].split(k, 32);
    s[B].bind(ki, thread_axis("threadIdx.x"));
    s[B].compute_at(s[C], C.axis(0));
    expect_error(
        [&] {
          lower(s, {A, C}, "f");
        },
        {"stage 'B' reduces across threads", "threadIdx.y loops that do not enclose the reduction"});
  }
}

// Hand-written loop IR: the interpreter checks that whole warps reach a shuffle.
TEST(CrossThreadReduce, InterpreterChecksWarpShuffles) {
  Buffer out("out", Int(32), {64});
  Var tx("tx");
  auto kernel = [&](Stmt body) {
    return LoweredFunc{"shfl",
                       {llvm_test::buffer_param(out)},
                       for_loop(Var("b"), 0, 1, ForKind::ThreadBinding,
                                for_loop(tx, 0, 64, ForKind::ThreadBinding, body, "threadIdx.x"), "blockIdx.x")};
  };
  // Every lane takes lane + 3's index; the last three lanes of each warp keep their own.
  NDArray o = NDArray::empty({64}, Int(32));
  interpret(kernel(store(out, warp_shuffle_down(tx, 3, tx), {tx})), {o});
  std::vector<int32_t> got = o.to_vector<int32_t>();
  for (int t = 0; t < 64; ++t) EXPECT_EQ(got[static_cast<size_t>(t)], t % 32 < 29 ? t + 3 : t) << t;
  expect_error([&] { interpret(kernel(if_then_else(tx < 40, store(out, warp_shuffle_down(tx, 1, tx), {tx}))), {o}); },
               {"warp shuffle in divergent control flow", "warp 1"});
  LoweredFunc outside{
      "outside", {llvm_test::buffer_param(out)}, store(out, warp_shuffle_down(make_const(Int(32), 1), 1, 0), {0})};
  expect_error([&] { interpret(outside, {o}); }, {"warp shuffle runs outside the GPU thread loops"});
  expect_error([&] { interpret(kernel(if_then_else(warp_shuffle_down(tx, 1, tx) > 0, store(out, 1, {tx}))), {o}); },
               {"warp shuffle may only appear in", "store", "let"});
  expect_error([&] { interpret(kernel(store(out, select(tx < 3, warp_shuffle_down(tx, 1, tx), tx), {tx})), {o}); },
               {"warp shuffle inside a select", "every thread must run it", "let"});
  expect_error([&] { warp_shuffle_down(tx, 1.0f, tx); }, {"warp_shuffle_down", "scalar integers", "float32"});
}

// ---- Tuple reductions across threads: several values per thread in every form ----

void check_arg_case(const cuda_test::ArgRowsCase& c) {
  LoweredFunc f = cuda_test::arg_rows_func(c);
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{5, 300}, {4, c.threads}, {4, 7}, {2, 1}}) {
    NDArray a = cuda_test::arg_rows_input(c.dtype, rows, cols, 3);
    NDArray idx = NDArray::empty({rows}, Int(32)), val = NDArray::empty({rows}, c.dtype);
    interpret(f, {a, idx, val});
    auto want = cuda_test::arg_rows_reference(a, c.largest, c.where);
    for (int64_t i = 0; i < rows; ++i) {
      SCOPED_TRACE(c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " row " + std::to_string(i));
      ASSERT_EQ(idx.at<int32_t>({i}), want[static_cast<size_t>(i)].first) << f;
      const double v = cuda_test::element(val, i), w = want[static_cast<size_t>(i)].second;
      if (std::isnan(w))
        EXPECT_TRUE(std::isnan(v));
      else
        EXPECT_EQ(v, w);
    }
  }
}

TEST(CrossThreadReduce, ArgmaxArgminAcrossThreadsInEveryForm) {
  using Form = RowReduceCase::Form;
  for (const cuda_test::ArgRowsCase& c : cuda_test::emulated_arg_rows_cases()) check_arg_case(c);
  for (int threads : {1, 2, 8, 33, 64, 256})
    for (bool where : {false, true}) {
      check_arg_case({"argmax_split", true, Float(32), threads, Form::Split, 1, where});
      check_arg_case({"argmin_rows_y", false, Int(64), threads, Form::RowsOnY, 2, where});
    }
}

TEST(CrossThreadReduce, TupleReductionUsesShufflesPerValue) {
  // 32 threads: five shuffle steps of two values each, no shared memory.
  LoweredFunc warp = cuda_test::arg_rows_func({"a", true, Float(32), 32, Form::Split});
  EXPECT_EQ(shuffles(warp), 2 * 5) << warp;
  EXPECT_EQ(shared_allocations(warp), 0) << warp;
  // 128 threads: a shared buffer of warp totals per value.
  LoweredFunc blocks = cuda_test::arg_rows_func({"b", true, Float(32), 128, Form::Split});
  EXPECT_EQ(shuffles(blocks), 2 * (5 + 2)) << blocks;
  EXPECT_EQ(shared_allocations(blocks), 2) << blocks;
}

TEST(CrossThreadReduce, WelfordAcrossThreads) {
  for (int threads : {32, 100, 256}) {
    LoweredFunc f = cuda_test::welford_rows_func(threads);
    for (int64_t cols : {768, 5}) {
      const int64_t rows = 3;
      std::vector<float> xv;
      for (int64_t i = 0; i < rows * cols; ++i) xv.push_back(std::sin(static_cast<float>(i) * 0.37f) * 3.0f + 1.0f);
      NDArray x = NDArray::from_vector(xv, {rows, cols});
      NDArray mean = NDArray::empty({rows}, Float(32)), m2 = NDArray::empty({rows}, Float(32)),
              n = NDArray::empty({rows}, Float(32));
      interpret(f, {x, mean, m2, n});
      for (int64_t i = 0; i < rows; ++i) {
        double m = 0, v = 0;
        for (int64_t j = 0; j < cols; ++j) m += xv[static_cast<size_t>(i * cols + j)];
        m /= static_cast<double>(cols);
        for (int64_t j = 0; j < cols; ++j) v += std::pow(xv[static_cast<size_t>(i * cols + j)] - m, 2);
        EXPECT_NEAR(mean.at<float>({i}), m, 1e-5) << threads << " " << cols;
        EXPECT_NEAR(m2.at<float>({i}), v, 1e-5 * v + 1e-6) << threads << " " << cols;
        EXPECT_EQ(n.at<float>({i}), static_cast<float>(cols));
      }
    }
  }
}

TEST(CrossThreadReduce, LayerNormThroughWelford) {
  LoweredFunc f = cuda_test::layer_norm_welford_op_func(768, 256);
  const int64_t rows = 3, cols = 768;
  std::vector<float> xv, gv, bv;
  for (int64_t i = 0; i < rows * cols; ++i) xv.push_back(std::cos(static_cast<float>(i) * 0.11f) * 2.0f + 0.5f);
  for (int64_t j = 0; j < cols; ++j) {
    gv.push_back(1.0f + static_cast<float>(j % 7) * 0.1f);
    bv.push_back(static_cast<float>(j % 5) * 0.01f);
  }
  NDArray y = NDArray::empty({rows, cols}, Float(32));
  interpret(f, {NDArray::from_vector(xv, {rows, cols}), NDArray::from_vector(gv, {cols}),
                NDArray::from_vector(bv, {cols}), y});
  for (int64_t i = 0; i < rows; ++i) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < cols; ++j) m += xv[static_cast<size_t>(i * cols + j)];
    m /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) v += std::pow(xv[static_cast<size_t>(i * cols + j)] - m, 2);
    v /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) {
      const double want =
          (xv[static_cast<size_t>(i * cols + j)] - m) / std::sqrt(v + 1e-5) * gv[static_cast<size_t>(j)] +
          bv[static_cast<size_t>(j)];
      ASSERT_NEAR(y.at<float>({i, j}), want, 2e-5 * (1 + std::fabs(want))) << i << " " << j;
    }
  }
}

}  // namespace
}  // namespace te
