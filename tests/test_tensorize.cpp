// Stage::tensorize with te's built-in x86 int8 dot intrinsic: the lowered nest, the
// results of interpret() (which runs the declaration) and of the LLVM JIT (vpdpbusd on a
// VNNI CPU, generic vector code elsewhere) against a plain C++ GEMM (edge values, int32
// wrap), the instruction in the code for a VNNI CPU and its absence for x86-64-v3, and
// every error the matcher and the backends give.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "te/ops/gemm_int8.h"
#include "te/ops/gemm_int8_cpu.h"
#include "te/te.h"
#include "test_llvm_util.h"
#include "test_util.h"

namespace te {
namespace {

// ---- The GEMM and its reference ----

struct GemmData {
  int64_t m, n, k;
  std::vector<uint8_t> a;  // M x K
  std::vector<int8_t> b;   // N x K
};

// Random bytes with the extremes (0/255, -128/127) at the start of each row.
GemmData gemm_data(int64_t m, int64_t n, int64_t k, uint32_t seed) {
  GemmData d{m, n, k, std::vector<uint8_t>(static_cast<size_t>(m * k)),
             std::vector<int8_t>(static_cast<size_t>(n * k))};
  std::mt19937 rng(seed);
  for (auto& x : d.a) x = static_cast<uint8_t>(rng());
  for (auto& x : d.b) x = static_cast<int8_t>(rng());
  for (int64_t i = 0; i < m; ++i) {
    d.a[static_cast<size_t>(i * k)] = 255;
    d.a[static_cast<size_t>(i * k + 1)] = 0;
  }
  for (int64_t j = 0; j < n; ++j) {
    d.b[static_cast<size_t>(j * k)] = -128;
    d.b[static_cast<size_t>(j * k + 1)] = 127;
  }
  return d;
}

// c[i, j] = sum over k of a[i, k] * b[j, k], wrapping as int32 (vpdpbusd does not saturate).
std::vector<int32_t> gemm_reference(const GemmData& d) {
  std::vector<int32_t> c(static_cast<size_t>(d.m * d.n));
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j) {
      uint32_t acc = 0;
      for (int64_t k = 0; k < d.k; ++k)
        acc += static_cast<uint32_t>(int32_t{d.a[static_cast<size_t>(i * d.k + k)]} *
                                     int32_t{d.b[static_cast<size_t>(j * d.k + k)]});
      c[static_cast<size_t>(i * d.n + j)] = static_cast<int32_t>(acc);
    }
  return c;
}

std::vector<Argument> gemm_args(const GemmData& d) {
  NDArray a = NDArray::empty({d.m, d.k}, UInt(8));
  std::memcpy(a.data(), d.a.data(), d.a.size());
  NDArray b = NDArray::empty({d.n / 16, d.k / 4, 16, 4}, Int(8));
  std::vector<int8_t> packed = ops::pack_b_u8s8(d.b.data(), d.n, d.k);
  std::memcpy(b.data(), packed.data(), packed.size());
  return {a, b, NDArray::empty({d.m, d.n}, Int(32))};
}

LoweredFunc gemm_func(int64_t m, int64_t n, int64_t k, const ops::GemmU8S8CpuOptions& o = {},
                      const std::string& name = "gemm_u8s8") {
  ops::GemmU8S8 g = ops::gemm_u8s8(static_cast<int>(m), n, k);
  Schedule s = create_schedule({g.c});
  ops::schedule_gemm_u8s8_cpu(s, g, o);
  return lower(s, {g.a, g.b_packed, g.c}, name);
}

std::vector<int32_t> run_interpret(const LoweredFunc& f, const GemmData& d) {
  std::vector<Argument> args = gemm_args(d);
  interpret(f, args);
  return args[2].array().to_vector<int32_t>();
}

std::vector<int32_t> run_jit(const LoweredFunc& f, const GemmData& d, const BuildOptions& options = {}) {
  std::vector<Argument> args = gemm_args(d);
  build(f, options)(f.name).call(args);
  return args[2].array().to_vector<int32_t>();
}

BuildOptions for_cpu(const std::string& cpu) {
  BuildOptions o;
  o.target.cpu = cpu;
  return o;
}

bool host_is_x86() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

// ---- The lowered nest ----

TEST(Tensorize, LowersToTheIntrinsicOnRegions) {
  const std::string text = to_string(gemm_func(8, 32, 16));
  EXPECT_NE(text.find("tensor_intrinsic x86_dot_16x4_u8s8(A["), std::string::npos) << text;
  EXPECT_NE(text.find("C.local[0:]"), std::string::npos) << text;
  EXPECT_NE(text.find("C.local[112:]"), std::string::npos) << text;  // the 8th row of the tile
  // The init stays te's: a plain loop storing the identity.
  EXPECT_NE(text.find("C.local[j.c.inner] = 0;"), std::string::npos) << text;
}

TEST(Tensorize, DumpAfterThePass) {
  LowerOptions o;
  o.dump_ir = "tensorize";
  ops::GemmU8S8 g = ops::gemm_u8s8(8, 16, 8);
  Schedule s = create_schedule({g.c});
  ops::schedule_gemm_u8s8_cpu(s, g);
  testing::internal::CaptureStderr();
  lower(s, {g.a, g.b_packed, g.c}, "f", o);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("tensor_intrinsic x86_dot_16x4_u8s8"), std::string::npos) << err;
}

// ---- Results ----

TEST(Tensorize, InterpretRunsTheDeclaration) {
  GemmData d = gemm_data(8, 32, 20, 1);
  EXPECT_EQ(run_interpret(gemm_func(8, 32, 20), d), gemm_reference(d));
}

TEST(Tensorize, JitMatchesInterpretAndCpp) {
  if (!host_is_x86()) GTEST_SKIP() << "runs x86 code";
  GemmData d = gemm_data(16, 48, 36, 2);
  LoweredFunc f = gemm_func(16, 48, 36);
  const std::vector<int32_t> expected = gemm_reference(d);
  EXPECT_EQ(run_interpret(f, d), expected);
  EXPECT_EQ(run_jit(f, d), expected);  // the host's CPU: vpdpbusd where it has VNNI
  // The generic vector code, which every x86-64 runs.
  EXPECT_EQ(run_jit(f, d, for_cpu("x86-64")), expected);
  ops::GemmU8S8CpuOptions plain;
  plain.tensorize = false;
  EXPECT_EQ(run_jit(gemm_func(16, 48, 36, plain), d), expected);
}

TEST(Tensorize, AccumulatorWrapsAsInt32) {
  // 255 * 127 * 66400 = 2150364000 > INT32_MAX: both the instruction and the fallback
  // wrap (vpdpbusd does not saturate), as the declaration's int32 sum does.
  GemmData d{8, 16, 66400, std::vector<uint8_t>(8 * 66400, 255), std::vector<int8_t>(16 * 66400, 127)};
  ops::GemmU8S8CpuOptions o;
  o.parallel = false;
  LoweredFunc f = gemm_func(8, 16, 66400, o);
  const std::vector<int32_t> expected = gemm_reference(d);
  EXPECT_LT(expected[0], 0);
  EXPECT_EQ(run_interpret(f, d), expected);
  if (!host_is_x86()) return;
  EXPECT_EQ(run_jit(f, d), expected);
  EXPECT_EQ(run_jit(f, d, for_cpu("x86-64")), expected);
}

TEST(Tensorize, WholeReductionUnderTheAxis) {
  // The stage is the declaration itself: the axis holds the init, which runs first (te's
  // loop), then the intrinsic accumulates.
  Tensor a = placeholder({4}, UInt(8), "a");
  Tensor b = placeholder({16, 4}, Int(8), "b");
  IterVar k = reduce_axis({0, 4}, "k");
  Tensor c = compute(
      {16}, [&](Expr i) { return sum(cast(Int(32), a(k)) * cast(Int(32), b(i, k)), {k}); }, "c");
  Schedule s = create_schedule({c});
  s[c].tensorize(c.axis(0), intrinsics::x86_dot_16x4_u8s8());
  LoweredFunc f = lower(s, {a, b, c}, "dot");
  const std::string text = to_string(f);
  EXPECT_NE(text.find("tensor_intrinsic"), std::string::npos) << text;
  NDArray an = NDArray::from_vector(std::vector<uint8_t>{255, 0, 7, 128}, {4});
  std::vector<int8_t> bv(64);
  for (int i = 0; i < 64; ++i) bv[static_cast<size_t>(i)] = static_cast<int8_t>(i * 37 - 128);
  NDArray bn = NDArray::from_vector(bv, {16, 4});
  std::vector<int32_t> expected(16);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 4; ++j)
      expected[static_cast<size_t>(i)] +=
          int32_t{an.to_vector<uint8_t>()[static_cast<size_t>(j)]} * bv[static_cast<size_t>(i * 4 + j)];
  std::vector<Argument> args{an, bn, NDArray::empty({16}, Int(32))};
  interpret(f, args);
  EXPECT_EQ(args[2].array().to_vector<int32_t>(), expected);
  if (!host_is_x86()) return;
  std::vector<Argument> native{an, bn, NDArray::empty({16}, Int(32))};
  build(f)(f.name).call(native);
  EXPECT_EQ(native[2].array().to_vector<int32_t>(), expected);
}

// A user's intrinsic without any implementation: interpret() runs it; the backends refuse.
TensorIntrinsic user_axpy() {
  Tensor x = placeholder({8}, Float(32), "x");
  Tensor y = compute(
      {8}, [&](Expr i) { return x(i) * 2.0f + 1.0f; }, "y");
  return tensor_intrinsic("axpy8", y, {});
}

LoweredFunc user_axpy_func() {
  Tensor x = placeholder({32}, Float(32), "X");
  Tensor y = compute(
      {32}, [&](Expr i) { return x(i) * 2.0f + 1.0f; }, "Y");
  Schedule s = create_schedule({y});
  auto [o, in] = s[y].split(y.axis(0), 8);
  (void)o;
  s[y].tensorize(in, user_axpy());
  return lower(s, {x, y}, "axpy");
}

TEST(Tensorize, UserIntrinsicRunsInInterpret) {
  LoweredFunc f = user_axpy_func();
  std::vector<float> xv(32);
  for (int i = 0; i < 32; ++i) xv[static_cast<size_t>(i)] = static_cast<float>(i) - 3.5f;
  std::vector<Argument> args{NDArray::from_vector(xv, {32}), NDArray::empty({32}, Float(32))};
  interpret(f, args);
  std::vector<float> got = args[1].array().to_vector<float>();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], xv[static_cast<size_t>(i)] * 2.0f + 1.0f);
}

// ---- The instruction in the code ----

std::string gemm_assembly(const std::string& triple, const std::string& cpu, const TensorIntrinsic& in = {}) {
  ops::GemmU8S8CpuOptions o;
  o.intrinsic = in;
  BuildOptions b;
  b.target.triple = triple;
  b.target.cpu = cpu;
  return assembly(gemm_func(8, 32, 16, o), b);
}

TEST(Tensorize, VnniInstructionForVnniCpus) {
  EXPECT_NE(gemm_assembly("x86_64-linux-gnu", "sapphirerapids").find("vpdpbusd"), std::string::npos);
  EXPECT_NE(gemm_assembly("x86_64-linux-gnu", "icelake-server").find("vpdpbusd"), std::string::npos);
  EXPECT_EQ(gemm_assembly("x86_64-linux-gnu", "x86-64-v3").find("vpdpbusd"), std::string::npos);
  EXPECT_EQ(gemm_assembly("x86_64-linux-gnu", "skylake-avx512").find("vpdpbusd"), std::string::npos);
  // The generic fallback compiles for another architecture too.
  EXPECT_NE(gemm_assembly("aarch64-linux-gnu", "").find("gemm_u8s8"), std::string::npos);
}

// ---- Errors ----

TEST(TensorizeErrors, StageWithoutTheAxis) {
  ops::GemmU8S8 g = ops::gemm_u8s8(8, 32, 16);
  Schedule s = create_schedule({g.c});
  IterVar other = reduce_axis({0, 4}, "q");
  expect_error([&] { s[g.c].tensorize(other, intrinsics::x86_dot_16x4_u8s8()); },
               {"tensorize: axis 'q' is not a loop of stage 'C'", "'i', 'j', 'k'"});
  auto [jo, ji] = s[g.c].split(g.c.axis(1), 16);
  (void)jo;
  expect_error([&] { s[g.c].tensorize(g.c.axis(1), intrinsics::x86_dot_16x4_u8s8()); },
               {"axis 'j' is not a loop of stage 'C'"});
  s[g.c].tensorize(ji, intrinsics::x86_dot_16x4_u8s8());
  expect_error([&] { s[g.c].tensorize(ji, intrinsics::x86_dot_16x4_u8s8()); }, {"already tensorized"});
  expect_error([&] { s[g.a].tensorize(ji, intrinsics::x86_dot_16x4_u8s8()); }, {"stage 'A' is a placeholder"});
}

// C = A * B_packed with the given splits of j and k, tensorized at j.inner.
Schedule split_gemm(const ops::GemmU8S8& g, int jf, int kf, bool vectorize_k = false) {
  Schedule s = create_schedule({g.c});
  auto [jo, ji] = s[g.c].split(g.c.axis(1), jf);
  auto [ko, ki] = s[g.c].split(g.k, kf);
  s[g.c].reorder({g.c.axis(0), jo, ko, ji, ki});
  if (vectorize_k) s[g.c].unroll(ki);
  s[g.c].tensorize(ji, intrinsics::x86_dot_16x4_u8s8());
  return s;
}

TEST(TensorizeErrors, ExtentsDiffer) {
  ops::GemmU8S8 g = ops::gemm_u8s8(8, 32, 16);
  Schedule s = split_gemm(g, 8, 4);
  expect_error(
      [&] {
        lower(s, {g.a, g.b_packed, g.c}, "f");
      },
      {"tensorize: stage 'C' at axis 'j.inner' does not match intrinsic 'x86_dot_16x4_u8s8': the loop "
       "'j.inner' has extent 8, the declaration's axis 'i' has 16"});
  ops::GemmU8S8 h = ops::gemm_u8s8(8, 32, 16);
  Schedule t = create_schedule({h.c});
  auto [jo, ji] = t[h.c].split(h.c.axis(1), 16);
  t[h.c].tensorize(ji, intrinsics::x86_dot_16x4_u8s8());
  expect_error(
      [&] {
        lower(t, {h.a, h.b_packed, h.c}, "f");
      },
      {"the loop 'k' has extent 16, the declaration's axis 'k' has 4"});
  Schedule u = create_schedule({h.c});
  auto [uo, ui] = u[h.c].split(h.c.axis(1), 16);
  (void)ui;
  u[h.c].tensorize(uo, intrinsics::x86_dot_16x4_u8s8());
  expect_error(
      [&] {
        lower(u, {h.a, h.b_packed, h.c}, "f");
      },
      {"the nest under the axis has 3 loops (j.outer, j.inner, k), the declaration has 2 (i, k)"});
  (void)jo;
}

TEST(TensorizeErrors, AnnotatedLoopUnderTheAxis) {
  ops::GemmU8S8 g = ops::gemm_u8s8(8, 32, 16);
  Schedule s = split_gemm(g, 16, 4, /*unroll k.inner*/ true);
  expect_error(
      [&] {
        lower(s, {g.a, g.b_packed, g.c}, "f");
      },
      {"tensorize: stage 'C': the loop 'k.inner' under the tensorized axis 'j.inner' is unrolled"});
  ops::GemmU8S8 h = ops::gemm_u8s8(8, 32, 16);
  Schedule t = create_schedule({h.c});
  auto [jo, ji] = t[h.c].split(h.c.axis(1), 16);
  auto [ko, ki] = t[h.c].split(h.k, 4);
  t[h.c].reorder({h.c.axis(0), jo, ko, ji, ki});
  t[h.c].bind(ji, thread_axis("threadIdx.x"));
  t[h.c].tensorize(ji, intrinsics::x86_dot_16x4_u8s8());
  expect_error(
      [&] {
        lower(t, {h.a, h.b_packed, h.c}, "f");
      },
      {"tensorize: stage 'C': the tensorized axis 'j.inner' is bound to 'threadIdx.x'"});
  ops::GemmU8S8 v = ops::gemm_u8s8(8, 32, 16);
  Schedule w = create_schedule({v.c});
  auto [wo, wi] = w[v.c].split(v.c.axis(1), 16);
  auto [wko, wki] = w[v.c].split(v.k, 4);
  w[v.c].reorder({v.c.axis(0), wo, wko, wi, wki});
  w[v.c].vectorize(wi);
  w[v.c].tensorize(wi, intrinsics::x86_dot_16x4_u8s8());
  expect_error([&] { lower(w, {v.a, v.b_packed, v.c}, "f"); }, {"the tensorized axis 'j.inner' is vectorized"});
  // A thread-bound loop under the axis.
  Tensor a = placeholder({4}, UInt(8), "a");
  Tensor b = placeholder({16, 4}, Int(8), "b");
  IterVar k = reduce_axis({0, 4}, "k");
  Tensor c = compute(
      {2, 16}, [&](Expr, Expr i) { return sum(cast(Int(32), a(k)) * cast(Int(32), b(i, k)), {k}); }, "c");
  Schedule t2 = create_schedule({c});
  t2[c].bind(c.axis(1), thread_axis("threadIdx.x"));
  t2[c].tensorize(c.axis(0), intrinsics::x86_dot_16x4_u8s8());
  expect_error(
      [&] {
        lower(t2, {a, b, c}, "f");
      },
      {"the loop 'j' under the tensorized axis 'i' is bound to 'threadIdx.x'"});
}

// c[j] = sum_k f(a[k], b[j, k]) over j < n, tensorized at j.inner (16) x k (4).
LoweredFunc custom_dot(int n, DataType at, DataType bt, const std::function<Expr(Expr, Expr)>& f,
                       bool unpacked_b_stride = false) {
  Tensor a = placeholder({4}, at, "a");
  Tensor b = placeholder({n, unpacked_b_stride ? 8 : 4}, bt, "b");
  IterVar k = reduce_axis({0, 4}, "k");
  Tensor c = compute(
      {n}, [&](Expr j) { return sum(f(a(k), b(j, k)), {k}); }, "c");
  Schedule s = create_schedule({c});
  auto [jo, ji] = s[c].split(c.axis(0), 16);
  (void)jo;
  s[c].tensorize(ji, intrinsics::x86_dot_16x4_u8s8());
  return lower(s, {a, b, c}, "dot");
}

Expr widen_mul(Expr x, Expr y) { return cast(Int(32), x) * cast(Int(32), y); }

TEST(TensorizeErrors, ExpressionDiffers) {
  EXPECT_NO_THROW(custom_dot(32, UInt(8), Int(8), widen_mul));
  expect_error([&] { custom_dot(32, Int(8), Int(8), widen_mul); },
               {"does not match intrinsic 'x86_dot_16x4_u8s8'", "int8", "uint8"});
  expect_error(
      [&] { custom_dot(32, UInt(8), Int(8), [](Expr x, Expr y) { return cast(Int(32), x) + cast(Int(32), y); }); },
      {"the expression differs", "another operation"});
  expect_error(
      [&] { custom_dot(32, UInt(8), Int(8), [](Expr x, Expr y) { return cast(Int(32), x) * cast(Int(32), y) * 2; }); },
      {"the expression differs"});
}

TEST(TensorizeErrors, ReducerDiffers) {
  Tensor a = placeholder({4}, UInt(8), "a");
  Tensor b = placeholder({16, 4}, Int(8), "b");
  IterVar k = reduce_axis({0, 4}, "k");
  Tensor c = compute(
      {16}, [&](Expr i) { return max(widen_mul(a(k), b(i, k)), {k}); }, "c");
  Schedule s = create_schedule({c});
  s[c].tensorize(c.axis(0), intrinsics::x86_dot_16x4_u8s8());
  expect_error([&] { lower(s, {a, b, c}, "f"); }, {"the expression differs", "another operation"});
}

TEST(TensorizeErrors, WronglyStridedOrNonAffineAccess) {
  expect_error([&] { custom_dot(32, UInt(8), Int(8), widen_mul, /*b rows of 8*/ true); },
               {"the access to 'b' (the declaration's 'B') moves by 8 elements per iteration of loop 'i.inner', the "
                "declaration's axis 'i' moves it by 4"});
  Tensor a = placeholder({4}, UInt(8), "a");
  Tensor b = placeholder({256, 4}, Int(8), "b");
  IterVar k = reduce_axis({0, 4}, "k");
  Tensor c = compute(
      {16}, [&](Expr j) { return sum(widen_mul(a(k), b(j * j, k)), {k}); }, "c");
  Schedule s = create_schedule({c});
  s[c].tensorize(c.axis(0), intrinsics::x86_dot_16x4_u8s8());
  expect_error([&] { lower(s, {a, b, c}, "f"); }, {"the index of 'b' (the declaration's 'B') is not affine"});
}

TEST(TensorizeErrors, GuardUnderTheAxis) {
  expect_error([&] { custom_dot(40, UInt(8), Int(8), widen_mul); }, {"the nest under the axis has a condition"});
}

TEST(TensorizeErrors, RowsNotDividingM) {
  expect_error([&] { gemm_func(12, 32, 16); }, {"schedule_gemm_u8s8_cpu: M (12) must be a multiple of rows (8)"});
  // M symbolic: lower() finds the guard of the partial row tile under the tensorized axis.
  Var m("m");
  ops::GemmU8S8 g = ops::gemm_u8s8(m, 32, 16);
  Schedule s = create_schedule({g.c});
  ops::schedule_gemm_u8s8_cpu(s, g);
  expect_error(
      [&] {
        lower(s, {g.a, g.b_packed, g.c}, "f");
      },
      {"tensorize: stage 'C.local' at axis 'j.c.inner' does not match intrinsic 'x86_dot_16x4_u8s8': the "
       "nest under the axis has a condition"});
}

TEST(TensorizeErrors, TargetWithoutImplementation) {
  // CUDA has no implementation of the x86 intrinsic (nor yet of any).
  ops::GemmU8S8 g = ops::gemm_u8s8(8, 32, 16);
  Schedule s = create_schedule({g.c});
  auto [io, ii] = s[g.c].split(g.c.axis(0), 4);
  auto [jo, ji] = s[g.c].split(g.c.axis(1), 16);
  auto [ko, ki] = s[g.c].split(g.k, 4);
  s[g.c].reorder({io, jo, ii, ko, ji, ki});
  s[g.c].bind(io, thread_axis("blockIdx.x"));
  s[g.c].bind(ii, thread_axis("threadIdx.x"));
  s[g.c].tensorize(ji, intrinsics::x86_dot_16x4_u8s8());
  LoweredFunc f = lower(s, {g.a, g.b_packed, g.c}, "f");
  expect_error([&] { build_cuda(f); },
               {"build_cuda: function 'f' calls tensor intrinsic 'x86_dot_16x4_u8s8', which has no implementation "
                "for target 'cuda' (it has: llvm)"});
  // A user intrinsic without an LLVM implementation.
  expect_error([&] { build(user_axpy_func()); }, {"tensor intrinsic 'axpy8' has no implementation for target 'llvm'"});
}

TEST(TensorizeErrors, CpuWithoutTheInstruction) {
  expect_error([&] { gemm_assembly("x86_64-linux-gnu", "x86-64-v3", intrinsics::x86_vnni_dot_16x4_u8s8()); },
               {"tensor intrinsic 'x86_vnni_dot_16x4_u8s8': needs the CPU feature avx512vnni",
                "which the target CPU 'x86-64-v3' lacks"});
  EXPECT_NE(gemm_assembly("x86_64-linux-gnu", "sapphirerapids", intrinsics::x86_vnni_dot_16x4_u8s8()).find("vpdpbusd"),
            std::string::npos);
}

TEST(TensorizeErrors, BadDeclarations) {
  Tensor x = placeholder({8}, Float(32), "x");
  Tensor y = compute(
      {8}, [&](Expr i) { return x(i); }, "y");
  Tensor z = compute(
      {8}, [&](Expr i) { return y(i) + 1.0f; }, "z");
  expect_error([&] { tensor_intrinsic("bad", z, {}); }, {"reads 'y', which is not a placeholder"});
  expect_error([&] { tensor_intrinsic("bad name", y, {}); }, {"must be a C identifier"});
  expect_error([&] { tensor_intrinsic("t", y, {{"opencl", "f"}}); }, {"unknown target 'opencl'"});
  expect_error([&] { tensor_intrinsic("t", x, {}); }, {"must be a compute with one output"});
}

TEST(TensorizeErrors, InlinedStage) {
  Tensor x = placeholder({8}, Float(32), "x");
  Tensor y = compute(
      {8}, [&](Expr i) { return x(i) * 2.0f + 1.0f; }, "y");
  Tensor z = compute(
      {8}, [&](Expr i) { return y(i) + 1.0f; }, "z");
  Schedule s = create_schedule({z});
  s[y].tensorize(y.axis(0), user_axpy());
  s[y].compute_inline();
  expect_error(
      [&] {
        lower(s, {x, z}, "f");
      },
      {"lower: stage 'y' is inlined (compute_inline), so it has no loops, but tensorize replaces its loop "
       "'i' by intrinsic 'axpy8'"});
}

}  // namespace
}  // namespace te

namespace te {
namespace {

// ---- The node in the IR's generic machinery ----

TEST(TensorizeIR, MutatorsVisitorsAndEquality) {
  LoweredFunc f = user_axpy_func();
  const Stmt& body = f.body;
  const auto* loop = body.as<ForNode>();
  ASSERT_NE(loop, nullptr);
  const auto* call = loop->body.as<TensorIntrinsicCallNode>();
  ASSERT_NE(call, nullptr) << body;
  EXPECT_EQ(call->intrinsic->name, "axpy8");
  ASSERT_EQ(call->buffers.size(), 2u);
  // substitute reaches the offsets and the declaration's body alike.
  Stmt at3 = substitute(loop->body, {{loop->var, make_const(Int(32), 3)}});
  const auto* c3 = at3.as<TensorIntrinsicCallNode>();
  ASSERT_NE(c3, nullptr);
  EXPECT_TRUE(equal(simplify(c3->offsets[0]), make_const(Int(32), 24)));
  EXPECT_NE(to_string(at3).find("X[24:]"), std::string::npos) << at3;
  EXPECT_NE(to_string(simplify(at3)).find("X[(i + 24)]"), std::string::npos) << simplify(at3);
  EXPECT_TRUE(equal(at3, substitute(loop->body, {{loop->var, make_const(Int(32), 3)}})));
  EXPECT_FALSE(equal(at3, loop->body));
  // A visitor sees the buffers the declaration reads and writes.
  struct Loads : IRVisitor {
    int loads = 0, stores = 0;
    void visit_load(const LoadNode* n) override {
      ++loads;
      IRVisitor::visit_load(n);
    }
    void visit_store(const StoreNode* n) override {
      ++stores;
      IRVisitor::visit_store(n);
    }
  } v;
  v.visit(body);
  EXPECT_EQ(v.loads, 1);
  EXPECT_EQ(v.stores, 1);
}

}  // namespace
}  // namespace te

namespace te {
namespace {

// ---- Free strides: tiles of larger tensors ----

// y[i, j] = x[i, j] + 1 on 2 x 4 tiles, both with free row strides.
TensorIntrinsic add1_2x4() {
  Tensor x = placeholder({2, 4}, Float(32), "x");
  Tensor y = compute(
      {2, 4}, [&](Expr i, Expr j) { return x(i, j) + 1.0f; }, "y");
  return tensor_intrinsic("add1_2x4", y, {}, {x, y});
}

TEST(TensorizeStrides, TilesOfALargerMatrix) {
  Tensor X = placeholder({8, 12}, Float(32), "X");
  Tensor Y = compute(
      {8, 12}, [&](Expr i, Expr j) { return X(i, j) + 1.0f; }, "Y");
  Schedule s = create_schedule({Y});
  auto [io, jo, ii, ji] = s[Y].tile(Y.axis(0), Y.axis(1), 2, 4);
  (void)io;
  (void)jo;
  (void)ji;
  s[Y].tensorize(ii, add1_2x4());
  LoweredFunc f = lower(s, {X, Y}, "f");
  const std::string text = to_string(f);
  EXPECT_NE(text.find("tensor_intrinsic add1_2x4(X[((i.outer * 24) + (j.outer * 4)):] strides (12, 1), "
                      "Y[((i.outer * 24) + (j.outer * 4)):] strides (12, 1))"),
            std::string::npos)
      << text;
  std::vector<float> xv(96);
  for (int i = 0; i < 96; ++i) xv[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f;
  std::vector<Argument> args{NDArray::from_vector(xv, {8, 12}), NDArray::empty({8, 12}, Float(32))};
  interpret(f, args);
  std::vector<float> got = args[1].array().to_vector<float>();
  for (int i = 0; i < 96; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], xv[static_cast<size_t>(i)] + 1.0f) << i;
  expect_error([&] { build(f); }, {"tensor intrinsic 'add1_2x4' has no implementation for target 'llvm'"});
}

TEST(TensorizeStrides, SymbolicStride) {
  Var m("m");
  Tensor X = placeholder({2, m}, Float(32), "X");
  Tensor Y = compute(
      {2, 4}, [&](Expr i, Expr j) { return X(i, j) + 1.0f; }, "Y");
  Schedule s = create_schedule({Y});
  s[Y].tensorize(Y.axis(0), add1_2x4());
  LoweredFunc f = lower(s, {X, Y}, "f");
  const std::string text = to_string(f);
  EXPECT_NE(text.find("X[0:] strides (m, 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("Y[0:] strides (4, 1)"), std::string::npos) << text;
  std::vector<float> xv(2 * 7);
  for (int i = 0; i < 14; ++i) xv[static_cast<size_t>(i)] = static_cast<float>(i);
  std::vector<Argument> args{NDArray::from_vector(xv, {2, 7}), NDArray::empty({2, 4}, Float(32))};
  interpret(f, args);
  EXPECT_EQ(args[1].array().to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 8, 9, 10, 11}));
}

TEST(TensorizeStrides, InnermostDimensionStaysContiguous) {
  Tensor X = placeholder({4, 2}, Float(32), "X");
  Tensor Y = compute(
      {2, 4}, [&](Expr i, Expr j) { return X(j, i) + 1.0f; }, "Y");
  Schedule s = create_schedule({Y});
  s[Y].tensorize(Y.axis(0), add1_2x4());
  expect_error(
      [&] {
        lower(s, {X, Y}, "f");
      },
      {"the access to 'X' (the declaration's 'x') moves by 2 elements per iteration of loop 'j', the "
       "declaration's axis 'j' moves it by 1"});
  Tensor z = placeholder({2}, Float(32), "z");
  expect_error([&] { tensor_intrinsic("t", Y, {}, {z}); },
               {"strided tensor 'z' is neither an input nor the output of the declaration"});
}

}  // namespace
}  // namespace te
