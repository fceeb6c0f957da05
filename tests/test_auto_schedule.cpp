// auto_schedule with the rules alone (trials = 0): every kernel is built with the JIT and
// compared with interpret() of te's default schedule and with plain C++; the lowered IR
// is checked for what each rule says it does (parallel loops, vectors, inlined stages,
// register tiles, rfactor stages); the options' errors name the field.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/autodiff.h>
#include <te/ops/grid_sample.h>
#include <te/ops/normalization.h>
#include <te/te.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gridsample_reference.h"
#include "test_util.h"

using namespace te;

namespace {

std::vector<float> random_values(int64_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

AutoScheduleOptions cpu_options() {
  AutoScheduleOptions o;
  o.threads = 4;  // parallel loops whatever the machine's pool size
  return o;
}

// What one auto-scheduled kernel gave: the outputs of the JIT and the loop IR's text.
struct AutoRun {
  std::vector<std::vector<float>> outputs;
  std::string ir;
  double schedule_seconds = 0;
};

// Auto-schedules `outputs` (the last `outputs.size()` of args), builds it with the JIT
// and runs it on `inputs`; runs te's default schedule through interpret() on the same
// inputs and expects the same outputs within tol (relative to max(1, |value|)).
AutoRun run_auto(const std::vector<Tensor>& args, const std::vector<Tensor>& outputs,
                 const std::vector<NDArray>& inputs, float tol, const AutoScheduleOptions& options = cpu_options(),
                 const std::vector<Argument>& scalars = {}, const std::map<std::string, int64_t>& decisions = {}) {
  AutoRun run;
  auto t0 = std::chrono::steady_clock::now();
  Schedule s = auto_schedule_with(outputs, options, decisions);
  run.schedule_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(run.schedule_seconds, 1.0) << "the rules took " << run.schedule_seconds << " s";
  LoweredFunc f = lower(s, args, "auto_kernel");
  std::ostringstream text;
  text << f;
  run.ir = text.str();
  LoweredFunc ref = lower(create_schedule(outputs), args, "default_kernel");

  std::vector<Argument> fast_args, ref_args;
  std::vector<NDArray> fast_out, ref_out;
  for (const NDArray& a : inputs) {
    fast_args.emplace_back(a);
    ref_args.emplace_back(a);
  }
  for (size_t i = inputs.size(); i < args.size(); ++i) {
    std::vector<int64_t> shape;
    for (const Expr& e : args[i].shape()) {
      const int64_t* c = as_const_int(e);
      if (c) {
        shape.push_back(*c);
        continue;
      }
      // A symbolic extent: the scalars give (var name, value) pairs in order.
      ADD_FAILURE() << "symbolic output shapes need explicit arrays";
      return run;
    }
    fast_out.push_back(NDArray::empty(shape, args[i].dtype()));
    ref_out.push_back(NDArray::empty(shape, args[i].dtype()));
    fast_args.emplace_back(fast_out.back());
    ref_args.emplace_back(ref_out.back());
  }
  for (const Argument& a : scalars) {
    fast_args.push_back(a);
    ref_args.push_back(a);
  }
  Module m = build(f);
  m("auto_kernel").call(fast_args);
  interpret(ref, ref_args);
  for (size_t o = 0; o < fast_out.size(); ++o) {
    auto got = fast_out[o].to_vector<float>(), want = ref_out[o].to_vector<float>();
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
      float scale = std::max(1.0f, std::fabs(want[i]));
      if (!(std::fabs(got[i] - want[i]) <= tol * scale)) {
        ADD_FAILURE() << "output " << o << " element " << i << ": auto " << got[i] << ", default " << want[i] << "\n"
                      << run.ir;
        break;
      }
    }
    run.outputs.push_back(got);
  }
  return run;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    float scale = std::max(1.0f, std::fabs(want[i]));
    ASSERT_LE(std::fabs(got[i] - want[i]), tol * scale) << what << ": element " << i;
  }
}

std::vector<float> matmul_ref(const std::vector<float>& a, const std::vector<float>& b, int M, int N, int K) {
  std::vector<float> c(static_cast<size_t>(M) * N, 0.0f);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) c[size_t(i) * N + j] += a[size_t(i) * K + k] * b[size_t(k) * N + j];
  return c;
}

}  // namespace

TEST(AutoSchedule, Sgemm) {
  for (auto [M, N, K] : {std::tuple{64, 96, 40}, std::tuple{13, 37, 9}}) {
    Tensor A = placeholder({M, K}, Float(32), "A");
    Tensor B = placeholder({K, N}, Float(32), "B");
    IterVar k = reduce_axis({0, K}, "k");
    Tensor C = compute(
        {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    auto a = random_values(M * K, 1), b = random_values(K * N, 2);
    AutoRun r = run_auto({A, B, C}, {C}, {NDArray::from_vector(a, {M, K}), NDArray::from_vector(b, {K, N})}, 1e-4f);
    expect_near_all(r.outputs[0], matmul_ref(a, b, M, N, K), 1e-4f, "sgemm vs C++");
    EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
    EXPECT_TRUE(has(r.ir, "C.local")) << r.ir;  // the register tile
    EXPECT_TRUE(has(r.ir, "ramp(")) << r.ir;    // vector code
  }
}

// Column blocks (forced here: two panels each; the rules size them from the L2) copy their
// block of B into a contiguous buffer once; a last block narrower than the others (200
// columns) and row tiles that do not divide M stay exact. copy_block = 0 reads B in place.
TEST(AutoSchedule, SgemmCopiesTheReusedBlockOfB) {
  const int M = 42, N = 200, K = 37;
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  auto a = random_values(M * K, 30), b = random_values(K * N, 31);
  NDArray av = NDArray::from_vector(a, {M, K}), bv = NDArray::from_vector(b, {K, N});
  const auto want = matmul_ref(a, b, M, N, K);
  for (int threads : {1, 2})
    for (int64_t copy : {1, 0}) {
      AutoScheduleOptions o;
      o.threads = threads;
      // One work item per thread: the parallel loop is the block loop (were the row tiles
      // fused into it too, each would copy the block again, and the rule does not copy).
      Schedule s = auto_schedule_with(
          {C}, o, {{"C.column_panels", 2}, {"C.tile_rows", 4}, {"C.items_per_thread", 1}, {"C.copy_block", copy}});
      LoweredFunc f = lower(s, {A, B, C}, "gemm");
      const std::string ir = to_string(f);
      EXPECT_EQ(has(ir, "allocate B.global"), copy == 1) << ir;
      NDArray jit = NDArray::empty({M, N}, Float(32)), ref = NDArray::empty({M, N}, Float(32));
      build(f)("gemm")(av, bv, jit);
      interpret(f, {av, bv, ref});
      expect_near_all(jit.to_vector<float>(), want, 1e-4f, fmt::format("JIT, {} threads, copy {}", threads, copy));
      expect_near_all(ref.to_vector<float>(), want, 1e-4f,
                      fmt::format("interpret, {} threads, copy {}", threads, copy));
    }
}

TEST(AutoSchedule, MatmulWithBiasAndReluEpilogue) {
  const int M = 40, N = 50, K = 33;
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  Tensor bias = placeholder({N}, Float(32), "bias");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Tensor D = compute(
      {M, N}, [&](Expr i, Expr j) { return C(i, j) + bias(j); }, "D");
  Tensor E = compute(
      {M, N}, [&](Expr i, Expr j) { return max(D(i, j), 0.0f); }, "E");
  auto a = random_values(M * K, 3), b = random_values(K * N, 4), c = random_values(N, 5);
  AutoRun r =
      run_auto({A, B, bias, E}, {E},
               {NDArray::from_vector(a, {M, K}), NDArray::from_vector(b, {K, N}), NDArray::from_vector(c, {N})}, 1e-4f);
  auto want = matmul_ref(a, b, M, N, K);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = std::max(want[size_t(i) * N + j] + c[size_t(j)], 0.0f);
  expect_near_all(r.outputs[0], want, 1e-4f, "matmul + bias + relu vs C++");
  EXPECT_FALSE(has(r.ir, "allocate D")) << r.ir;  // inlined
  EXPECT_TRUE(has(r.ir, "allocate C[float32 * ")) << r.ir;
  EXPECT_TRUE(has(r.ir, "in local")) << r.ir;  // C is the output's register tile
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
}

TEST(AutoSchedule, BatchedMatmul) {
  const int Bn = 3, M = 17, N = 33, K = 19;
  Tensor A = placeholder({Bn, M, K}, Float(32), "A");
  Tensor B = placeholder({Bn, K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {Bn, M, N}, [&](Expr b, Expr i, Expr j) { return sum(A(b, i, k) * B(b, k, j), {k}); }, "C");
  auto a = random_values(Bn * M * K, 6), b = random_values(Bn * K * N, 7);
  AutoRun r =
      run_auto({A, B, C}, {C}, {NDArray::from_vector(a, {Bn, M, K}), NDArray::from_vector(b, {Bn, K, N})}, 1e-4f);
  std::vector<float> want;
  for (int q = 0; q < Bn; ++q) {
    std::vector<float> aq(a.begin() + q * M * K, a.begin() + (q + 1) * M * K);
    std::vector<float> bq(b.begin() + q * K * N, b.begin() + (q + 1) * K * N);
    auto cq = matmul_ref(aq, bq, M, N, K);
    want.insert(want.end(), cq.begin(), cq.end());
  }
  expect_near_all(r.outputs[0], want, 1e-4f, "batched matmul vs C++");
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
  EXPECT_TRUE(has(r.ir, "C.local")) << r.ir;
}

TEST(AutoSchedule, Conv2dNchwWithPadding) {
  const int N = 1, C = 5, H = 10, W = 12, F = 8, R = 3;
  Tensor data = placeholder({N, C, H, W}, Float(32), "data");
  Tensor weight = placeholder({F, C, R, R}, Float(32), "weight");
  Tensor pad = compute(
      {N, C, H + 2, W + 2},
      [&](Expr n, Expr c, Expr y, Expr x) {
        Expr inside = y >= 1 && y < H + 1 && x >= 1 && x < W + 1;
        return if_then_else(inside, data(n, c, y - 1, x - 1), 0.0f);
      },
      "pad");
  IterVar rc = reduce_axis({0, C}, "rc"), ry = reduce_axis({0, R}, "ry"), rx = reduce_axis({0, R}, "rx");
  Tensor out = compute(
      {N, F, H, W},
      [&](Expr n, Expr f, Expr y, Expr x) {
        return sum(pad(n, rc, y + ry, x + rx) * weight(f, rc, ry, rx), {rc, ry, rx});
      },
      "conv");
  auto d = random_values(N * C * H * W, 8), w = random_values(F * C * R * R, 9);
  AutoRun r = run_auto({data, weight, out}, {out},
                       {NDArray::from_vector(d, {N, C, H, W}), NDArray::from_vector(w, {F, C, R, R})}, 1e-4f);
  std::vector<float> want(size_t(N * F * H * W), 0.0f);
  for (int f = 0; f < F; ++f)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        float acc = 0;
        for (int c = 0; c < C; ++c)
          for (int i = 0; i < R; ++i)
            for (int j = 0; j < R; ++j) {
              int yy = y + i - 1, xx = x + j - 1;
              if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
              acc += d[size_t((c * H + yy) * W + xx)] * w[size_t(((f * C + c) * R + i) * R + j)];
            }
        want[size_t((f * H + y) * W + x)] = acc;
      }
  expect_near_all(r.outputs[0], want, 1e-4f, "conv2d vs C++");
  // The padding keeps its buffer: inlined, every vector load of the tile would be masked.
  EXPECT_TRUE(has(r.ir, "allocate pad")) << r.ir;
  EXPECT_TRUE(has(r.ir, "conv.local")) << r.ir;
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
}

TEST(AutoSchedule, AWideWindowIsUnrolledOnlyAsFarAsTheUopCacheHolds) {
  // A 7x7x7 window over 3 channels (the Ansor suite's C3D): unrolled rw and rc give a body
  // of 7 * 3 taps per 16-register tile; unrolling rh too would make it 7 times longer
  // than the CPU's decoded-uop cache (C3D ran 10-20% slower so).
  const int D = 8, H = 9, W = 22, CI = 3, CO = 32, K = 7;
  Tensor x = placeholder({1, D, H, W, CI}, Float(32), "x");
  Tensor w = placeholder({K, K, K, CI, CO}, Float(32), "w");
  IterVar rd = reduce_axis({0, K}, "rd"), rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"),
          rc = reduce_axis({0, CI}, "rc");
  Tensor out = compute(
      {1, D - K + 1, H - K + 1, W - K + 1, CO},
      [&](const std::vector<Var>& v) {
        return sum(x(v[0], v[1] + rd, v[2] + rh, v[3] + rw, rc) * w(rd, rh, rw, rc, v[4]), {rd, rh, rw, rc});
      },
      "c3d");
  AutoScheduleOptions o = cpu_options();
  o.target.vector_bits = 512;
  o.winograd = false;  // the direct sum's unrolling (winograd_1d would compute the width window)
  auto xv = random_values(D * H * W * CI, 30), wv = random_values(K * K * K * CI * CO, 31);
  AutoRun r =
      run_auto({x, w, out}, {out},
               {NDArray::from_vector(xv, {1, D, H, W, CI}), NDArray::from_vector(wv, {K, K, K, CI, CO})}, 1e-4f, o);
  const int OD = D - K + 1, OH = H - K + 1, OW = W - K + 1;
  std::vector<float> want;
  for (int d = 0; d < OD; ++d)
    for (int h = 0; h < OH; ++h)
      for (int ww = 0; ww < OW; ++ww)
        for (int co = 0; co < CO; ++co) {
          float acc = 0;
          for (int a = 0; a < K; ++a)
            for (int b = 0; b < K; ++b)
              for (int c = 0; c < K; ++c)
                for (int ci = 0; ci < CI; ++ci)
                  acc += xv[size_t((((d + a) * H + h + b) * W + ww + c) * CI + ci)] *
                         wv[size_t((((a * K + b) * K + c) * CI + ci) * CO + co)];
          want.push_back(acc);
        }
  expect_near_all(r.outputs[0], want, 1e-4f, "c3d vs C++");
  EXPECT_TRUE(has(r.ir, "for (rh")) << r.ir;
  EXPECT_FALSE(has(r.ir, "for (rw")) << r.ir;
  EXPECT_FALSE(has(r.ir, "for (rc")) << r.ir;
}

TEST(AutoSchedule, ShortRowIsOneTileWithoutTail) {
  // 56 columns of 16-lane vectors: one tile of 56 (3.5 vectors), not 32 and a scalar tail;
  // its vectors are pieces of 32, 16 and 8 lanes (the vectorize pass).
  const int M = 24, N = 56, K = 16;
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  AutoScheduleOptions o = cpu_options();
  o.target.vector_bits = 512;
  auto a = random_values(M * K, 20), b = random_values(K * N, 21);
  AutoRun r = run_auto({A, B, C}, {C}, {NDArray::from_vector(a, {M, K}), NDArray::from_vector(b, {K, N})}, 1e-4f, o);
  expect_near_all(r.outputs[0], matmul_ref(a, b, M, N, K), 1e-4f, "sgemm vs C++");
  EXPECT_TRUE(has(r.ir, "ramp(0, 1, 32)") && has(r.ir, "ramp(32, 1, 16)") && has(r.ir, "ramp(48, 1, 8)")) << r.ir;
  EXPECT_FALSE(has(r.ir, "for (j.c")) << r.ir;  // no scalar column loop
}

TEST(AutoSchedule, DepthwiseConv2d) {
  const int N = 2, C = 6, H = 9, W = 20, R = 3;
  const int OH = H - R + 1, OW = W - R + 1;
  Tensor data = placeholder({N, C, H, W}, Float(32), "data");
  Tensor weight = placeholder({C, R, R}, Float(32), "weight");
  IterVar ry = reduce_axis({0, R}, "ry"), rx = reduce_axis({0, R}, "rx");
  Tensor out = compute(
      {N, C, OH, OW},
      [&](Expr n, Expr c, Expr y, Expr x) {
        return sum(data(n, c, y + ry, x + rx) * weight(c, ry, rx), {ry, rx});
      },
      "dw");
  auto d = random_values(N * C * H * W, 10), w = random_values(C * R * R, 11);
  AutoRun r = run_auto({data, weight, out}, {out},
                       {NDArray::from_vector(d, {N, C, H, W}), NDArray::from_vector(w, {C, R, R})}, 1e-4f);
  std::vector<float> want(size_t(N * C * OH * OW), 0.0f);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int y = 0; y < OH; ++y)
        for (int x = 0; x < OW; ++x) {
          float acc = 0;
          for (int i = 0; i < R; ++i)
            for (int j = 0; j < R; ++j)
              acc += d[size_t(((n * C + c) * H + y + i) * W + x + j)] * w[size_t((c * R + i) * R + j)];
          want[size_t(((n * C + c) * OH + y) * OW + x)] = acc;
        }
  expect_near_all(r.outputs[0], want, 1e-4f, "depthwise conv2d vs C++");
  EXPECT_TRUE(has(r.ir, "dw.local")) << r.ir;
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
}

TEST(AutoSchedule, Softmax) {
  const int rows = 7, cols = 100;
  Tensor x = placeholder({rows, cols}, Float(32), "x");
  Tensor y = ops::softmax(x);
  auto xv = random_values(rows * cols, 12, -4, 4);
  AutoRun r = run_auto({x, y}, {y}, {NDArray::from_vector(xv, {rows, cols})}, 1e-5f);
  std::vector<float> want(xv.size());
  for (int i = 0; i < rows; ++i) {
    double m = -INFINITY, s = 0;
    for (int j = 0; j < cols; ++j) m = std::max<double>(m, xv[size_t(i * cols + j)]);
    for (int j = 0; j < cols; ++j) s += std::exp(xv[size_t(i * cols + j)] - m);
    for (int j = 0; j < cols; ++j) want[size_t(i * cols + j)] = float(std::exp(xv[size_t(i * cols + j)] - m) / s);
  }
  expect_near_all(r.outputs[0], want, 1e-5f, "softmax vs C++");
  // The row statistics are computed inside the output's parallel row loop, as vectors.
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
  EXPECT_TRUE(has(r.ir, "softmax.max.rf")) << r.ir;
  EXPECT_TRUE(has(r.ir, "softmax.expsum.rf")) << r.ir;
  size_t par = r.ir.find("parallel for"), max_at = r.ir.find("softmax.max.rf[");
  EXPECT_LT(par, max_at) << r.ir;
}

TEST(AutoSchedule, LayerNorm) {
  const int rows = 5, cols = 67;
  Tensor x = placeholder({rows, cols}, Float(32), "x");
  Tensor gamma = placeholder({cols}, Float(32), "gamma"), beta = placeholder({cols}, Float(32), "beta");
  Tensor y = ops::layer_norm(x, gamma, beta);
  auto xv = random_values(rows * cols, 13, -3, 3), gv = random_values(cols, 14), bv = random_values(cols, 15);
  AutoRun r = run_auto(
      {x, gamma, beta, y}, {y},
      {NDArray::from_vector(xv, {rows, cols}), NDArray::from_vector(gv, {cols}), NDArray::from_vector(bv, {cols})},
      1e-4f);
  std::vector<float> want(xv.size());
  for (int i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (int j = 0; j < cols; ++j) mean += xv[size_t(i * cols + j)];
    mean /= cols;
    for (int j = 0; j < cols; ++j) var += (xv[size_t(i * cols + j)] - mean) * (xv[size_t(i * cols + j)] - mean);
    var /= cols;
    for (int j = 0; j < cols; ++j)
      want[size_t(i * cols + j)] =
          float((xv[size_t(i * cols + j)] - mean) / std::sqrt(var + 1e-5) * gv[size_t(j)] + bv[size_t(j)]);
  }
  expect_near_all(r.outputs[0], want, 1e-4f, "layer norm vs C++");
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
  EXPECT_TRUE(has(r.ir, "layer_norm.mean.rf")) << r.ir;
}

TEST(AutoSchedule, GridSample) {
  const std::vector<int64_t> dshape{1, 6, 9, 11}, gshape{1, 5, 21, 2};
  Tensor data = placeholder({1, 6, 9, 11}, Float(32), "data");
  Tensor grid = placeholder({1, 5, 21, 2}, Float(32), "grid");
  Tensor out = ops::grid_sample(data, grid);
  auto dv = random_values(count(dshape), 16), gv = random_values(count(gshape), 17, -1.2f, 1.2f);
  AutoRun r =
      run_auto({data, grid, out}, {out}, {NDArray::from_vector(dv, dshape), NDArray::from_vector(gv, gshape)}, 1e-5f);
  auto want = gsref::grid_sample<float>(dv, dshape, gv, gshape, gsref::Options{});
  expect_near_all(r.outputs[0], want, 1e-5f, "grid_sample vs C++");
  // The per-pixel stages are kept (computed once per pixel, not per channel) inside the
  // parallel loop.
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
  size_t par = r.ir.find("parallel for"), coords = r.ir.find("allocate " + out.name() + ".coords");
  EXPECT_NE(coords, std::string::npos) << r.ir;
  EXPECT_LT(par, coords) << r.ir;
  // The channels run inside the loop over pixel vectors: a vector's taps and weights are
  // loaded once for every channel.
  size_t vectors = r.ir.find("for (w.outer"), channels = r.ir.find("for (c, 0, 6)");
  ASSERT_NE(channels, std::string::npos) << r.ir;
  EXPECT_LT(vectors, channels) << r.ir;
}

// More channels than the reuse block: blocks of channels outermost, each block's channels
// inside the pixel vectors; the last block shifts inwards (70 = 64 + 6).
TEST(AutoSchedule, GridSampleChannelBlocksInsidePixelVectors) {
  const std::vector<int64_t> dshape{1, 70, 5, 6}, gshape{1, 3, 20, 2};
  Tensor data = placeholder({1, 70, 5, 6}, Float(32), "data");
  Tensor grid = placeholder({1, 3, 20, 2}, Float(32), "grid");
  Tensor out = ops::grid_sample(data, grid);
  auto dv = random_values(count(dshape), 20), gv = random_values(count(gshape), 21, -1.2f, 1.2f);
  AutoRun r =
      run_auto({data, grid, out}, {out}, {NDArray::from_vector(dv, dshape), NDArray::from_vector(gv, gshape)}, 1e-5f);
  auto want = gsref::grid_sample<float>(dv, dshape, gv, gshape, gsref::Options{});
  expect_near_all(r.outputs[0], want, 1e-5f, "grid_sample vs C++");
  size_t blocks = r.ir.find("c.outer"), vectors = r.ir.find("for (w.outer"),
         channels = r.ir.find("for (c.inner, 0, 64)");
  ASSERT_NE(channels, std::string::npos) << r.ir;
  EXPECT_LT(blocks, vectors) << r.ir;
  EXPECT_LT(vectors, channels) << r.ir;
}

TEST(AutoSchedule, FusedTransposeAddRelu) {
  const int M = 37, N = 53;
  Tensor A = placeholder({N, M}, Float(32), "A");
  Tensor B = placeholder({M, N}, Float(32), "B");
  Tensor T = compute(
      {M, N}, [&](Expr i, Expr j) { return A(j, i); }, "T");
  Tensor S = compute(
      {M, N}, [&](Expr i, Expr j) { return T(i, j) + B(i, j); }, "S");
  Tensor out = compute(
      {M, N}, [&](Expr i, Expr j) { return max(S(i, j), 0.0f); }, "out");
  auto a = random_values(N * M, 18), b = random_values(M * N, 19);
  AutoRun r = run_auto({A, B, out}, {out}, {NDArray::from_vector(a, {N, M}), NDArray::from_vector(b, {M, N})}, 0);
  std::vector<float> want(size_t(M * N));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) want[size_t(i * N + j)] = std::max(a[size_t(j * M + i)] + b[size_t(i * N + j)], 0.0f);
  expect_near_all(r.outputs[0], want, 0, "transpose + add + relu vs C++");
  EXPECT_FALSE(has(r.ir, "allocate T")) << r.ir;
  EXPECT_FALSE(has(r.ir, "allocate S")) << r.ir;
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
  // The transposed read's contiguous axis runs innermost, unrolled: no gathers.
  EXPECT_FALSE(has(r.ir, "A[ramp(")) << r.ir;
  EXPECT_FALSE(has(r.ir, "for (i.inner")) << r.ir;
  EXPECT_FALSE(has(r.ir, "tensor_intrinsic")) << r.ir;  // it adds, so it is no plain transpose
}

// A copy that only transposes (an NHWC result back to NCHW) goes by blocks of lanes x
// lanes transposed in registers (intrinsics::transpose), the last ones shifted inwards;
// the search may keep the unrolled copy instead (transpose_blocks = 0).
TEST(AutoSchedule, APlainTransposeGoesByBlocksTransposedInRegisters) {
  const int H = 3, W = 21, C = 37;
  Tensor g = placeholder({1, H, W, C}, Float(32), "g");
  Tensor out = compute(
      {1, C, H, W}, [&](Expr n, Expr c, Expr h, Expr w) { return g(n, h, w, c); }, "out");
  auto gv = random_values(H * W * C, 22);
  std::vector<float> want(gv.size());
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w) want[size_t((c * H + h) * W + w)] = gv[size_t((h * W + w) * C + c)];
  AutoRun r = run_auto({g, out}, {out}, {NDArray::from_vector(gv, {1, H, W, C})}, 0);
  expect_near_all(r.outputs[0], want, 0, "NHWC -> NCHW vs C++");
  EXPECT_TRUE(has(r.ir, "tensor_intrinsic transpose_")) << r.ir;
  Schedule s = auto_schedule_with({out}, cpu_options(), {{"out.transpose_blocks", 0}});
  std::string ir = to_string(lower(s, {g, out}, "f").body);
  EXPECT_FALSE(has(ir, "tensor_intrinsic")) << ir;
  // A copy of an inlined sum adds: no plain transpose (found by the graph fuzzer).
  Tensor h = placeholder({1, H, W, C}, Float(32), "h");
  Tensor sum = compute(
      {1, H, W, C}, [&](Expr n, Expr y, Expr x, Expr c) { return g(n, y, x, c) + h(n, y, x, c); }, "sum");
  Tensor summed = compute(
      {1, C, H, W}, [&](Expr n, Expr c, Expr y, Expr x) { return sum(n, y, x, c); }, "summed");
  AutoRun added = run_auto({g, h, summed}, {summed},
                           {NDArray::from_vector(gv, {1, H, W, C}), NDArray::from_vector(gv, {1, H, W, C})}, 0);
  for (float& x : want) x *= 2;
  expect_near_all(added.outputs[0], want, 0, "NHWC sum -> NCHW vs C++");
  EXPECT_FALSE(has(added.ir, "allocate sum")) << added.ir;
  EXPECT_FALSE(has(added.ir, "tensor_intrinsic")) << added.ir;
}

// Other element types: blocks of the type's lanes (64 bytes on AVX-512), bool by the
// unrolled copy (the intrinsic takes no bool).
TEST(AutoSchedule, TransposeBlocksOfEveryElementType) {
  const int R = 70, C = 67;
  for (DataType t : {UInt(8), Int(16), Float(64), Bool()}) {
    SCOPED_TRACE(t.to_string());
    Tensor a = placeholder({C, R}, t, "a");
    Tensor out = compute(
        {R, C}, [&](Expr i, Expr j) { return a(j, i); }, "out");
    LoweredFunc f = lower(auto_schedule({out}, cpu_options()), {a, out}, "f");
    const std::string ir = to_string(f.body);
    EXPECT_EQ(has(ir, "tensor_intrinsic"), !t.is_bool()) << ir;
    NDArray in = NDArray::empty({C, R}, t), got = NDArray::empty({R, C}, t), want = NDArray::empty({R, C}, t);
    auto* bytes = static_cast<uint8_t*>(in.data());
    const size_t size = static_cast<size_t>(t.is_bool() ? 1 : t.bits() / 8);
    for (size_t k = 0; k < static_cast<size_t>(in.size()) * size; ++k)
      bytes[k] = t.is_bool() ? static_cast<uint8_t>(k % 3 == 0) : static_cast<uint8_t>(k * 7 + 1);
    build(f)("f").call({in, got});
    interpret(lower(create_schedule({out}), {a, out}, "g"), {in, want});
    EXPECT_EQ(std::memcmp(got.data(), want.data(), static_cast<size_t>(got.size()) * size), 0);
  }
}

TEST(AutoSchedule, FullVectorSumUsesRfactor) {
  for (int len : {10000, 12345}) {
    Tensor x = placeholder({len}, Float(32), "x");
    IterVar k = reduce_axis({0, len}, "k");
    Tensor total = compute(
        {1}, [&](Expr) { return sum(x(k), {k}); }, "total");
    auto xv = random_values(len, 20);
    AutoRun r = run_auto({x, total}, {total}, {NDArray::from_vector(xv, {len})}, 1e-4f);
    double want = 0;
    for (float v : xv) want += v;
    expect_near_all(r.outputs[0], {float(want)}, 1e-4f, "sum vs C++");
    EXPECT_TRUE(has(r.ir, "total.rf.rf")) << r.ir;  // parallel parts of vector partial sums
    EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
    EXPECT_TRUE(has(r.ir, "ramp(")) << r.ir;
  }
}

// A norm: a long reduction to one point, read by its square root. It stays at the root,
// split into parallel parts that walk their rows in memory order (inside the square
// root's loop it ran on one thread), with four vectors of partial sums.
TEST(AutoSchedule, ANormRunsInParallelPartsThatWalkRowsInOrder) {
  const int rows = 96, cols = 160;
  Tensor a = placeholder({1, rows, cols}, Float(32), "a");
  IterVar i = reduce_axis({0, rows}, "i"), j = reduce_axis({0, cols}, "j");
  Tensor squares = compute(
      {1},
      [&](Expr b) {
        return sum(a(b, i, j) * a(b, i, j), {i, j});
      },
      "squares");
  Tensor norm = compute(
      {1}, [&](Expr b) { return sqrt(squares(b)); }, "norm");
  auto av = random_values(rows * cols, 22);
  AutoRun r = run_auto({a, norm}, {norm}, {NDArray::from_vector(av, {1, rows, cols})}, 1e-5f);
  double want = 0;
  for (float v : av) want += double(v) * v;
  expect_near_all(r.outputs[0], {float(std::sqrt(want))}, 1e-5f, "norm vs C++");
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
  EXPECT_TRUE(has(r.ir, "squares.rf.rf")) << r.ir;
  const size_t part_rows = r.ir.find("for (i.inner"), columns = r.ir.find("for (j.outer");
  ASSERT_NE(part_rows, std::string::npos) << r.ir;
  EXPECT_LT(part_rows, columns) << r.ir;
  // The rules' count of vector accumulators: 4 for this long reduction, 1 for a short one.
  auto rule_vectors = [](const Tensor& out, const std::string& stage) {
    for (const AutoScheduleDecision& d : auto_schedule_decisions({out}, cpu_options()))
      if (d.name == stage + ".accumulator_vectors") return d.rule_value;
    return int64_t{-1};
  };
  EXPECT_EQ(rule_vectors(norm, "squares"), 4);
  Tensor x = placeholder({33, 256}, Float(32), "x");
  IterVar k = reduce_axis({0, 256}, "k");
  Tensor rowsum = compute(
      {33}, [&](Expr row) { return sum(x(row, k), {k}); }, "rowsum");
  EXPECT_EQ(rule_vectors(rowsum, "rowsum"), 1);
}

TEST(AutoSchedule, RowSumsOfManyRows) {
  const int rows = 33, cols = 70;
  Tensor x = placeholder({rows, cols}, Float(32), "x");
  IterVar k = reduce_axis({0, cols}, "k");
  Tensor s = compute(
      {rows}, [&](Expr i) { return sum(x(i, k), {k}); }, "rowsum");
  auto xv = random_values(rows * cols, 21);
  AutoRun r = run_auto({x, s}, {s}, {NDArray::from_vector(xv, {rows, cols})}, 1e-5f);
  std::vector<float> want(rows, 0.0f);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) want[size_t(i)] += xv[size_t(i * cols + j)];
  expect_near_all(r.outputs[0], want, 1e-5f, "row sums vs C++");
  EXPECT_TRUE(has(r.ir, "parallel for")) << r.ir;
  EXPECT_TRUE(has(r.ir, "rowsum.rf")) << r.ir;
}

TEST(AutoSchedule, SymbolicShapes) {
  Var M("M"), N("N"), K("K");
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Tensor D = compute(
      {M, N}, [&](Expr i, Expr j) { return C(i, j) * 2.0f + 1.0f; }, "D");
  Schedule s = auto_schedule({D}, cpu_options());
  LoweredFunc f = lower(s, {A, B, D}, "sym");
  Module m = build(f);
  for (auto [mm, nn, kk] : {std::tuple{1, 1, 1}, std::tuple{7, 45, 13}, std::tuple{40, 64, 32}}) {
    auto a = random_values(mm * kk, 22), b = random_values(kk * nn, 23);
    NDArray av = NDArray::from_vector(a, {mm, kk}), bv = NDArray::from_vector(b, {kk, nn});
    NDArray d = NDArray::empty({mm, nn}, Float(32));
    m("sym")(av, bv, d);
    auto want = matmul_ref(a, b, mm, nn, kk);
    for (float& v : want) v = v * 2 + 1;
    expect_near_all(d.to_vector<float>(), want, 1e-4f, fmt::format("symbolic {}x{}x{}", mm, nn, kk));
  }
  // An element-wise op over a symbolic length.
  Var n("n");
  Tensor X = placeholder({n}, Float(32), "X");
  Tensor Y = compute(
      {n}, [&](Expr i) { return X(i) * X(i); }, "Y");
  LoweredFunc g = lower(auto_schedule({Y}, cpu_options()), {X, Y}, "square");
  Module mg = build(g);
  for (int len : {1, 15, 16, 17, 1000}) {
    auto xv = random_values(len, 24);
    NDArray xa = NDArray::from_vector(xv, {len}), ya = NDArray::empty({len}, Float(32));
    mg("square")(xa, ya);
    std::vector<float> want(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) want[i] = xv[i] * xv[i];
    expect_near_all(ya.to_vector<float>(), want, 0, fmt::format("square n={}", len));
  }
}

TEST(AutoSchedule, OneThreadHasNoParallelLoop) {
  const int M = 32, N = 48, K = 16;
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  AutoScheduleOptions o;
  o.threads = 1;
  auto a = random_values(M * K, 25), b = random_values(K * N, 26);
  AutoRun r = run_auto({A, B, C}, {C}, {NDArray::from_vector(a, {M, K}), NDArray::from_vector(b, {K, N})}, 1e-4f, o);
  EXPECT_FALSE(has(r.ir, "parallel for")) << r.ir;
  expect_near_all(r.outputs[0], matmul_ref(a, b, M, N, K), 1e-4f, "one thread");
}

TEST(AutoSchedule, OptionErrors) {
  Tensor A = placeholder({4}, Float(32), "A");
  Tensor B = compute(
      {4}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  auto with = [&](auto edit) {
    AutoScheduleOptions o;
    edit(o);
    return [o, B] { auto_schedule({B}, o); };
  };
  expect_error([] { AutoScheduleOptions{}.target = "opencl"; },
               {"target 'opencl': unknown kind 'opencl' (expected llvm, cuda or an LLVM triple"});
  expect_error(with([](auto& o) { o.target.kind = Target::Kind::Cuda, o.target.cpu = "x86-64-v3"; }),
               {"AutoScheduleOptions::target", "a cuda target has no triple, cpu"});
  expect_error(with([](auto& o) { o.trials = -1; }), {"AutoScheduleOptions::trials", "-1"});
  expect_error(with([](auto& o) { o.threads = -2; }), {"AutoScheduleOptions::threads", "-2"});
  expect_error(with([](auto& o) { o.time_budget_s = -1; }), {"AutoScheduleOptions::time_budget_s"});
  expect_error(with([](auto& o) { o.time_budget_s = NAN; }), {"AutoScheduleOptions::time_budget_s"});
  expect_error(with([](auto& o) { o.cuda_threads_per_block = 100; }),
               {"AutoScheduleOptions::cuda_threads_per_block", "100", "multiple of 32"});
  expect_error(with([](auto& o) { o.target.vector_bits = 100; }),
               {"AutoScheduleOptions::target: target 'llvm -vector-bits=100': vector_bits is 100", "power of two"});
  expect_error([] { auto_schedule({}); }, {"auto_schedule", "no output"});
  expect_error([] { auto_schedule({Tensor()}); }, {"auto_schedule", "output 0", "undefined"});
}

TEST(AutoSchedule, LeavesTheOriginalGraphAlone) {
  // Two schedules of one graph are independent; the second still lowers and runs.
  const int M = 16, N = 32, K = 8;
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s1 = auto_schedule({C}, cpu_options());
  auto a = random_values(M * K, 27), b = random_values(K * N, 28);
  AutoRun r = run_auto({A, B, C}, {C}, {NDArray::from_vector(a, {M, K}), NDArray::from_vector(b, {K, N})}, 1e-4f);
  expect_near_all(r.outputs[0], matmul_ref(a, b, M, N, K), 1e-4f, "second schedule");
  (void)lower(s1, {A, B, C}, "first");
}

TEST(AutoSchedule, ARowOfFourVectorsIsOneTile) {
  // An NHWC convolution with 32 output channels, 8-lane vectors: the register tile is the
  // whole row of 4 vectors, so each input pixel is broadcast once for all
  // 32 channels rather than once per half row.
  const int H = 12, CI = 3, CO = 32, K = 3, R = H - K + 1;
  Tensor x = placeholder({1, H, H, CI}, Float(32), "x"), w = placeholder({K, K, CI, CO}, Float(32), "w");
  IterVar ky = reduce_axis({0, K}, "ky"), kx = reduce_axis({0, K}, "kx"), c = reduce_axis({0, CI}, "c");
  Tensor y = compute(
      {1, R, R, CO},
      [&](Expr n, Expr i, Expr j, Expr o) {
        return sum(x(n, i + ky, j + kx, c) * w(ky, kx, c, o), {ky, kx, c});
      },
      "conv");
  AutoScheduleOptions opts = cpu_options();
  opts.target.vector_bits = 256;
  std::map<std::string, int64_t> rule;
  for (const AutoScheduleDecision& d : auto_schedule_decisions({y}, opts)) rule[d.name] = d.rule_value;
  EXPECT_EQ(rule["conv.tile_vectors"], 4);
  const auto xv = random_values(H * H * CI, 51), wv = random_values(K * K * CI * CO, 52);
  AutoRun r = run_auto(
      {x, w, y}, {y}, {NDArray::from_vector(xv, {1, H, H, CI}), NDArray::from_vector(wv, {K, K, CI, CO})}, 1e-4f, opts);
  std::vector<float> want(static_cast<size_t>(R * R * CO), 0.0f);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j)
      for (int o = 0; o < CO; ++o)
        for (int a = 0; a < K; ++a)
          for (int b = 0; b < K; ++b)
            for (int cc = 0; cc < CI; ++cc)
              want[(static_cast<size_t>(i) * R + j) * CO + o] +=
                  xv[(static_cast<size_t>(i + a) * H + j + b) * CI + cc] *
                  wv[((static_cast<size_t>(a) * K + b) * CI + cc) * CO + o];
  expect_near_all(r.outputs[0], want, 1e-4f, "conv");
}

TEST(AutoSchedule, ShortImageRowsAreOneTileAndWindowGradientsVectorize) {
  // 28-wide output rows with 8-lane vectors: the register tile covers the whole row
  // (16 + 8 + 4 lanes) rather than 16 columns and a guarded scalar tail. The input
  // gradient reads the output gradient zero-padded (te::gradient moves the window's
  // condition into the data): all vector code, no masks in its inner loop.
  const int N = 2, C = 4, O = 6, H = 30, R = H - 2;
  Tensor x = placeholder({N, C, H, H}, Float(32), "x"), w = placeholder({O, C, 3, 3}, Float(32), "w"),
         h = placeholder({N, O, R, R}, Float(32), "h");
  IterVar c = reduce_axis({0, C}, "c"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 3}, "kx");
  Tensor y = compute(
      {N, O, R, R},
      [&](Expr n, Expr o, Expr i, Expr j) {
        return sum(x(n, c, i + ky, j + kx) * w(o, c, ky, kx), {c, ky, kx});
      },
      "conv");
  AutoScheduleOptions opts = cpu_options();
  opts.target.vector_bits = 256;
  const auto xv = random_values(N * C * H * H, 41), wv = random_values(O * C * 9, 42),
             hv = random_values(N * O * R * R, 43);
  AutoRun fwd = run_auto({x, w, y}, {y},
                         {NDArray::from_vector(xv, {N, C, H, H}), NDArray::from_vector(wv, {O, C, 3, 3})}, 1e-4f, opts);
  EXPECT_FALSE(has(fwd.ir, "likely(")) << fwd.ir;
  EXPECT_TRUE(has(fwd.ir, ", 1, 4)]")) << fwd.ir;  // the row's last 4-lane piece
  std::vector<float> want(static_cast<size_t>(N * O * R * R), 0.0f), want_dx(xv.size(), 0.0f), want_dw(wv.size(), 0.0f);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < O; ++o)
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < R; ++j)
          for (int cc = 0; cc < C; ++cc)
            for (int a = 0; a < 3; ++a)
              for (int b = 0; b < 3; ++b) {
                const size_t out = ((static_cast<size_t>(n) * O + o) * R + i) * R + j;
                const size_t in = ((static_cast<size_t>(n) * C + cc) * H + i + a) * H + j + b;
                const float wt = wv[((static_cast<size_t>(o) * C + cc) * 3 + a) * 3 + b];
                want[out] += xv[in] * wt;
                want_dx[in] += hv[out] * wt;
                want_dw[((static_cast<size_t>(o) * C + cc) * 3 + a) * 3 + b] += hv[out] * xv[in];
              }
  expect_near_all(fwd.outputs[0], want, 1e-4f, "conv");

  Tensor dx = gradient(y, {x}, h)[0];
  AutoRun back = run_auto(
      {w, h, dx}, {dx}, {NDArray::from_vector(wv, {O, C, 3, 3}), NDArray::from_vector(hv, {N, O, R, R})}, 1e-4f, opts);
  EXPECT_FALSE(has(back.ir, "vectorized for")) << back.ir;  // nothing left to LLVM's loop vectorizer
  EXPECT_TRUE(has(back.ir, "h_padded[ramp(")) << back.ir;
  expect_near_all(back.outputs[0], want_dx, 1e-4f, "conv input gradient");

  // The weight gradient's rows are 3 taps: its vector lanes run along the image row (a
  // reduction axis, through rfactor), and its register tile's rows are the 3 x 3 kernel
  // taps (whose loads overlap from one step to the next), 9 accumulators. The row's
  // uneven split (28 = 3 x 8 + 4, its 4 steps unrolled) guards only the last step, which
  // blends its 4 lanes: 27 plain updates and 9 blended ones.
  Tensor dw = gradient(y, {w}, h)[0];
  AutoRun wgrad = run_auto(
      {x, h, dw}, {dw}, {NDArray::from_vector(xv, {N, C, H, H}), NDArray::from_vector(hv, {N, O, R, R})}, 1e-4f, opts);
  EXPECT_TRUE(has(wgrad.ir, ".rf.local[float32 * 72]")) << wgrad.ir;
  EXPECT_TRUE(has(wgrad.ir, ".rf.local[ramp(64, 1, 8)]")) << wgrad.ir;
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = wgrad.ir.find(what); at != std::string::npos; at = wgrad.ir.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(", 1, 8)] = (w_grad_conv.rf.local["), 27u) << wgrad.ir;
  EXPECT_EQ(count(", 1, 8)] = if_then_else("), 9u) << wgrad.ir;
  EXPECT_FALSE(has(wgrad.ir, ", 1, 3)]")) << wgrad.ir;  // no 3-lane vectors along the kernel row
  expect_near_all(wgrad.outputs[0], want_dw, 1e-3f, "conv weight gradient");
}

TEST(AutoSchedule, RowsOfPiecesCountEveryPieceAsARegister) {
  // A 28-wide row of 16-lane vectors is three registers (16 + 8 + 4): the rule's tile has
  // at most 16 / 3 rows of them, where counting two vectors per row gave 8 rows, 24
  // accumulators, and spills. (24 output channels are not whole vectors, so the layout
  // rule leaves the NCHW rows as they are.)
  const int C = 8, O = 24, H = 30, R = H - 2;
  Tensor x = placeholder({1, C, H, H}, Float(32), "x"), w = placeholder({O, C, 3, 3}, Float(32), "w");
  IterVar c = reduce_axis({0, C}, "c"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 3}, "kx");
  Tensor y = compute(
      {1, O, R, R},
      [&](Expr n, Expr o, Expr i, Expr j) {
        return sum(x(n, c, i + ky, j + kx) * w(o, c, ky, kx), {c, ky, kx});
      },
      "conv28");
  AutoScheduleOptions opts = cpu_options();
  opts.target.vector_bits = 512;
  bool seen = false;
  for (const AutoScheduleDecision& d : auto_schedule_decisions({y}, opts)) {
    if (d.name != "conv28.tile_rows") continue;
    seen = true;
    EXPECT_LE(d.rule_value * 3, 16) << d.rule_value;
    EXPECT_GE(d.rule_value, 4);
  }
  EXPECT_TRUE(seen);
}

TEST(AutoSchedule, VectorBitsSetTheLanes) {
  const int M = 24, N = 64, K = 8;
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  AutoScheduleOptions o = cpu_options();
  o.target.vector_bits = 128;  // 4 float lanes: a register tile 6 rows x 2 vectors of 4
  auto a = random_values(M * K, 29), b = random_values(K * N, 30);
  AutoRun r = run_auto({A, B, C}, {C}, {NDArray::from_vector(a, {M, K}), NDArray::from_vector(b, {K, N})}, 1e-4f, o);
  expect_near_all(r.outputs[0], matmul_ref(a, b, M, N, K), 1e-4f, "128-bit vectors");
  EXPECT_TRUE(has(r.ir, "ramp(0, 1, 8)")) << r.ir;
  EXPECT_FALSE(has(r.ir, ", 1, 16)")) << r.ir;
  EXPECT_TRUE(has(r.ir, "allocate C.local[float32 * 48]")) << r.ir;
}

TEST(AutoSchedule, MoreGraphs) {
  {  // layer norm through Welford: a tuple reduction computed in the row loop
    Tensor x = placeholder({6, 70}, Float(32), "x");
    Tensor y = ops::layer_norm_welford(x);
    run_auto({x, y}, {y}, {NDArray::from_vector(random_values(6 * 70, 31), {6, 70})}, 1e-4f);
  }
  {  // a 0-d sum
    Tensor x = placeholder({300}, Float(32), "x");
    IterVar k = reduce_axis({0, 300}, "k");
    Tensor s = compute(
        std::vector<Expr>{}, [&](const std::vector<Var>&) { return sum(x(k), {k}); }, "s");
    run_auto({x, s}, {s}, {NDArray::from_vector(random_values(300, 32), {300})}, 1e-4f);
  }
  {  // column sums: the data axis is the contiguous one
    Tensor x = placeholder({100, 30}, Float(32), "x");
    IterVar k = reduce_axis({0, 100}, "k");
    Tensor s = compute(
        {30}, [&](Expr j) { return sum(x(k, j), {k}); }, "colsum");
    AutoRun r = run_auto({x, s}, {s}, {NDArray::from_vector(random_values(3000, 33), {100, 30})}, 1e-4f);
    EXPECT_TRUE(has(r.ir, "ramp(")) << r.ir;
  }
  {  // matrix-vector: no reuse to tile for, the reduction is vectorized
    Tensor A = placeholder({50, 40}, Float(32), "A"), v = placeholder({40}, Float(32), "v");
    IterVar k = reduce_axis({0, 40}, "k");
    Tensor y = compute(
        {50}, [&](Expr i) { return sum(A(i, k) * v(k), {k}); }, "gemv");
    AutoRun r = run_auto(
        {A, v, y}, {y},
        {NDArray::from_vector(random_values(2000, 34), {50, 40}), NDArray::from_vector(random_values(40, 35), {40})},
        1e-4f);
    EXPECT_TRUE(has(r.ir, "gemv.rf")) << r.ir;
  }
  {  // a costly producer with reuse stays a stage; two outputs, one reading the other
    Tensor A = placeholder({50, 40}, Float(32), "A"), W = placeholder({40, 32}, Float(32), "W");
    Tensor B = compute(
        {50, 40}, [&](Expr i, Expr j) { return exp(A(i, j)); }, "B");
    IterVar k = reduce_axis({0, 40}, "k");
    Tensor C = compute(
        {50, 32}, [&](Expr i, Expr j) { return sum(B(i, k) * W(k, j), {k}); }, "C");
    Tensor D = compute(
        {50, 32}, [&](Expr i, Expr j) { return C(i, j) + 1.0f; }, "D");
    AutoRun r = run_auto({A, W, C, D}, {C, D},
                         {NDArray::from_vector(random_values(2000, 36), {50, 40}),
                          NDArray::from_vector(random_values(1280, 37), {40, 32})},
                         1e-4f);
    EXPECT_TRUE(has(r.ir, "allocate B")) << r.ir;
  }
}

// A 3x3 convolution in NCHW / OIHW (batch 1, stride 1) of an H x W input zero-padded by
// `pad` on each side, in plain C++: out[o][i][j].
std::vector<float> conv3x3_nchw(const std::vector<float>& x, const std::vector<float>& w, int C, int O, int H, int W,
                                int pad) {
  const int R = H + 2 * pad - 2, S = W + 2 * pad - 2;
  std::vector<float> out(static_cast<size_t>(O * R * S), 0.0f);
  for (int o = 0; o < O; ++o)
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < S; ++j)
        for (int c = 0; c < C; ++c)
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
              const int y = i + a - pad, xx = j + b - pad;
              if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
              out[(static_cast<size_t>(o) * R + i) * S + j] +=
                  x[(static_cast<size_t>(c) * H + y) * W + xx] * w[((static_cast<size_t>(o) * C + c) * 3 + a) * 3 + b];
            }
  return out;
}

TEST(AutoSchedule, AProducerGoesInItsConsumersAxisOrder) {
  // An NCHW convolution computed with its channels innermost (the layout rule) reads its
  // padded input by output row: the pad stage then runs row by row too (parallel over
  // (n, y), each row's channels inside), so a thread's rows of the convolution read the
  // rows the same thread padded; plane by plane, half of them came from the other core.
  // (A pass of its own, as the search may choose: the rules pad a 3x3 window's rows per
  // work item of the convolution.)
  const int C = 16, O = 32, H = 14, R = H;
  Tensor x = placeholder({1, C, H, H}, Float(32), "x"), w = placeholder({O, C, 3, 3}, Float(32), "w");
  Tensor pad = compute(
      {1, C, H + 2, H + 2},
      [&](Expr n, Expr c, Expr y, Expr xx) {
        return if_then_else(y >= 1 && y <= H && xx >= 1 && xx <= H, x(n, c, y - 1, xx - 1), 0.0f);
      },
      "pad");
  IterVar c = reduce_axis({0, C}, "c"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 3}, "kx");
  Tensor y = compute(
      {1, O, R, R},
      [&](Expr n, Expr o, Expr i, Expr j) {
        return sum(pad(n, c, i + ky, j + kx) * w(o, c, ky, kx), {c, ky, kx});
      },
      "conv");
  AutoScheduleOptions opts = cpu_options();
  opts.target.vector_bits = 256;
  opts.winograd = false;  // the direct sum's layout
  const auto xv = random_values(C * H * H, 53), wv = random_values(O * C * 9, 54);
  const std::vector<float> want = conv3x3_nchw(xv, wv, C, O, H, H, 1);
  AutoRun r = run_auto({x, w, y}, {y}, {NDArray::from_vector(xv, {1, C, H, H}), NDArray::from_vector(wv, {O, C, 3, 3})},
                       1e-4f, opts, {}, {{"pad.work_items", 0}});
  EXPECT_TRUE(has(r.ir, "conv.global")) << r.ir;                               // computed with the channels innermost
  EXPECT_TRUE(has(r.ir, "parallel for (i.k.fused.j.fused, 0, 256)")) << r.ir;  // pad: (n, y) rows first
  EXPECT_FALSE(has(r.ir, "parallel for (i.j.fused")) << r.ir;                  // not (n, c) planes
  expect_near_all(r.outputs[0], want, 1e-4f, "NCHW convolution of a padded input");
}

TEST(AutoSchedule, ARowsLastTileShiftsInwardsRatherThanBeingGuarded) {
  // 37 output columns in tiles of 2 vectors of 8: tiles at 0, 16 and 21 (the last one
  // overlapping the one before), each a whole register tile, where a guarded tail would
  // blend every accumulator update of its 16 columns and store them lane by lane. (12
  // output channels, not a whole number of vectors: the rows stay the tile's vectors.)
  const int C = 3, O = 12, W = 39, R = W - 2;
  Tensor x = placeholder({1, C, 5, W}, Float(32), "x"), w = placeholder({O, C, 3, 3}, Float(32), "w");
  IterVar c = reduce_axis({0, C}, "c"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 3}, "kx");
  Tensor y = compute(
      {1, O, 3, R},
      [&](Expr n, Expr o, Expr i, Expr j) {
        return sum(x(n, c, i + ky, j + kx) * w(o, c, ky, kx), {c, ky, kx});
      },
      "conv37");
  AutoScheduleOptions opts = cpu_options();
  opts.target.vector_bits = 256;
  const auto xv = random_values(C * 5 * W, 55), wv = random_values(O * C * 9, 56);
  const std::vector<float> want = conv3x3_nchw(xv, wv, C, O, 5, W, 0);
  AutoRun r = run_auto({x, w, y}, {y}, {NDArray::from_vector(xv, {1, C, 5, W}), NDArray::from_vector(wv, {O, C, 3, 3})},
                       1e-4f, opts);
  EXPECT_TRUE(has(r.ir, "min((l.outer * 16), 21)")) << r.ir;
  EXPECT_FALSE(has(r.ir, "likely(")) << r.ir;
  expect_near_all(r.outputs[0], want, 1e-4f, "37 columns in tiles of 16");
}

TEST(AutoSchedule, GroupedConvolutionRowsStayInsideAGroup) {
  // Input channel (o / 16) * 4 + c: in NCHW the register tile's rows are output channels
  // (each loaded input vector serves them all) in counts that divide the group's 16, so
  // every row of a tile reads the same input channel; in NHWC the tile of 16 output
  // channels reads one input channel, a broadcast rather than a gather.
  const int CI = 16, CO = 64, G = 4, gi = CI / G, go = CO / G, H = 13, R = (H - 3) / 2 + 1;
  IterVar c = reduce_axis({0, gi}, "c"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 3}, "kx");
  AutoScheduleOptions opts = cpu_options();
  opts.target.vector_bits = 256;
  const auto xv = random_values(CI * H * H, 51), wv = random_values(CO * gi * 9, 52);
  std::vector<float> want(static_cast<size_t>(CO * R * R), 0.0f);  // NCHW order
  for (int o = 0; o < CO; ++o)
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < R; ++j)
        for (int cc = 0; cc < gi; ++cc)
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
              want[(static_cast<size_t>(o) * R + i) * R + j] +=
                  xv[(static_cast<size_t>(o / go * gi + cc) * H + i * 2 + a) * H + j * 2 + b] *
                  wv[((static_cast<size_t>(o) * gi + cc) * 3 + a) * 3 + b];

  Tensor x = placeholder({1, CI, H, H}, Float(32), "x"), w = placeholder({CO, gi, 3, 3}, Float(32), "w");
  Tensor y = compute(
      {1, CO, R, R},
      [&](Expr n, Expr o, Expr i, Expr j) {
        return sum(x(n, o / go * gi + c, i * 2 + ky, j * 2 + kx) * w(o, c, ky, kx), {c, ky, kx});
      },
      "grouped");
  for (const AutoScheduleDecision& d : auto_schedule_decisions({y}, opts)) {
    if (d.name != "grouped.tile_rows") continue;
    EXPECT_GT(d.rule_value, 1);
    for (int64_t rows : d.options) EXPECT_EQ(go % rows, 0) << rows;
  }
  AutoRun nchw = run_auto(
      {x, w, y}, {y}, {NDArray::from_vector(xv, {1, CI, H, H}), NDArray::from_vector(wv, {CO, gi, 3, 3})}, 1e-4f, opts);
  expect_near_all(nchw.outputs[0], want, 1e-4f, "grouped NCHW");

  // NHWC: x(n, y, x, c), w(ky, kx, c, o).
  std::vector<float> xt(xv.size()), wt(wv.size()), want_t(want.size());
  for (int cc = 0; cc < CI; ++cc)
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < H; ++j)
        xt[(static_cast<size_t>(i) * H + j) * CI + cc] = xv[(static_cast<size_t>(cc) * H + i) * H + j];
  for (int o = 0; o < CO; ++o)
    for (int cc = 0; cc < gi; ++cc)
      for (int k = 0; k < 9; ++k)
        wt[(static_cast<size_t>(k) * gi + cc) * CO + o] = wv[(static_cast<size_t>(o) * gi + cc) * 9 + k];
  for (int o = 0; o < CO; ++o)
    for (int p = 0; p < R * R; ++p) want_t[static_cast<size_t>(p) * CO + o] = want[static_cast<size_t>(o) * R * R + p];
  Tensor xn = placeholder({1, H, H, CI}, Float(32), "x"), wn = placeholder({3, 3, gi, CO}, Float(32), "w");
  Tensor yn = compute(
      {1, R, R, CO},
      [&](Expr n, Expr i, Expr j, Expr o) {
        return sum(xn(n, i * 2 + ky, j * 2 + kx, o / go * gi + c) * wn(ky, kx, c, o), {ky, kx, c});
      },
      "grouped_nhwc");
  AutoRun nhwc =
      run_auto({xn, wn, yn}, {yn}, {NDArray::from_vector(xt, {1, H, H, CI}), NDArray::from_vector(wt, {3, 3, gi, CO})},
               1e-4f, opts);
  EXPECT_FALSE(has(nhwc.ir, "/ broadcast(")) << nhwc.ir;  // no lane-by-lane division left
  expect_near_all(nhwc.outputs[0], want_t, 1e-4f, "grouped NHWC");
}
