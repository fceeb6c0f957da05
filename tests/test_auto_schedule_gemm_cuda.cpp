// auto_schedule's GEMM rule on CUDA (src/auto_schedule/gemm_rule.cpp): a float16 or
// bfloat16 matmul or linear layer runs on tensor cores, wgmma for sm_90a (the fastest
// measured options, an element-wise reader fused as the epilogue), mma.sync for sm_80 and
// any GPU, the generic rules for older GPUs and for what is neither. And the GEMM
// schedules on linear()'s N x K B directly. Each kernel runs in the CUDA emulation and
// must equal, bit for bit (small integers: every sum is exact), interpret() of te's
// default schedule and a plain C++ product.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/ops/matmul.h>
#include <te/ops/matmul_cuda.h>
#include <te/ops/matmul_wgmma_cuda.h>
#include <te/te.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/reduction_kernels.h"
#include "test_util.h"

namespace te {
namespace {

struct Case {
  std::string name;
  std::vector<Tensor> args;  // inputs, then the output
  LoweredFunc fast, reference;
  std::string cuda;
};

// The case's kernel: auto_schedule's for `target`, or `schedule`'s when given.
Case make_case(const std::string& name, const std::string& target, std::vector<Tensor> args,
               const std::function<void(Schedule&, const Tensor&)>& schedule = {}) {
  Case c{name, args, {}, {}, ""};
  Schedule s = create_schedule({args.back()});
  if (schedule) {
    schedule(s, args.back());
  } else {
    AutoScheduleOptions o;
    o.target = target;
    s = auto_schedule({args.back()}, o);
  }
  c.fast = lower(s, args, name);
  c.reference = lower(create_schedule({args.back()}), args, name + "_ref");
  c.cuda = build_cuda(c.fast).source();
  return c;
}

// Element e of an input: (7 e + seed) % 9 - 4.
float small_integer(int64_t e, int seed) { return float(int((e * 7 + seed) % 9) - 4); }

// What plain C++ computes for a case: nothing (an epilogue's), A B, or A Bᵀ (linear()).
enum class Cxx { None, AB, ABTrans };

// The float32 product of two row-major small-integer matrices (seeds 1 and 5), B K x N or
// (b_transposed) N x K.
std::vector<float> cxx_product(int64_t M, int64_t N, int64_t K, bool b_transposed) {
  std::vector<float> c(static_cast<size_t>(M * N), 0.0f);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        c[size_t(i * N + j)] += small_integer(i * K + k, 1) * small_integer(b_transposed ? j * K + k : k * N + j, 5);
  return c;
}

class AutoScheduleGemmCuda : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      cases_ = make_cases();
    } catch (const Error& e) {
      log_ = std::string("auto_schedule, lower() or build_cuda() failed: ") + e.what();
      return;
    }
    // The PTX path: warp-specialized wgmma kernels have no other.
    program_ = std::make_unique<cuda_test::EmulatedProgram>(cuda_test::EmulatedProgram::Paths::Ptx);
    for (const Case& c : cases_) program_->add(build_cuda(c.fast));
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    cases_.clear();
  }
  void SetUp() override { ASSERT_TRUE(built_) << log_; }

  static std::vector<Case> make_cases();

  static const Case& get(const std::string& name) {
    for (const Case& c : cases_)
      if (c.name == name) return c;
    throw std::runtime_error("no case " + name);
  }

  // "" when the emulated kernel equals interpret() of the default schedule bit for bit
  // (and, for a plain matmul, the C++ product).
  static std::string difference(const std::string& name, Cxx cxx_form) {
    const Case& c = get(name);
    std::vector<Argument> args, ref;
    for (size_t i = 0; i < c.args.size(); ++i) {
      std::vector<int64_t> shape;
      for (const Expr& e : c.args[i].shape()) shape.push_back(*as_const_int(e));
      NDArray a = NDArray::empty(shape, c.args[i].dtype());
      const bool input = i + 1 < c.args.size();
      for (int64_t e = 0; e < a.size(); ++e)
        cuda_test::set_element(a, e, input ? double(small_integer(e, i == 0 ? 1 : i == 1 ? 5 : 3)) : 0.0);
      args.emplace_back(a);
      ref.emplace_back(a.copy());
    }
    interpret(c.reference, ref);
    const NDArray want = ref.back().array();
    if (cxx_form != Cxx::None) {
      const int64_t M = want.shape()[0], N = want.shape()[1], K = c.args[0].shape()[1].as<IntImmNode>()->value;
      const std::vector<float> cxx = cxx_product(M, N, K, cxx_form == Cxx::ABTrans);
      const std::vector<float> interpreted = want.to_vector<float>();
      for (size_t e = 0; e < cxx.size(); ++e)
        if (cxx[e] != interpreted[e])
          return fmt::format("interpret() gives {} at {}, C++ {}", interpreted[e], e, cxx[e]);
    }
    cuda_test::EmulatedRun r = program_->run(c.name, c.fast, args);
    if (r.error != 0) return "error " + std::to_string(r.error) + ": " + r.output;
    return cuda_test::compare_arrays(want, r.arrays.back());
  }

  static std::unique_ptr<cuda_test::EmulatedProgram> program_;
  static std::vector<Case> cases_;
  static bool built_;
  static std::string log_;
};
std::unique_ptr<cuda_test::EmulatedProgram> AutoScheduleGemmCuda::program_;
std::vector<Case> AutoScheduleGemmCuda::cases_;
bool AutoScheduleGemmCuda::built_ = false;
std::string AutoScheduleGemmCuda::log_;

int kernels(const std::string& cuda) {
  int n = 0;
  for (size_t at = cuda.find("__global__"); at != std::string::npos; at = cuda.find("__global__", at + 1)) ++n;
  return n;
}

std::vector<Case> AutoScheduleGemmCuda::make_cases() {
  std::vector<Case> cases;
  {  // Not tile multiples: 2 x 2 tiles of 128 x 256 shifted inward, K's last tile half zeros.
    Tensor A = placeholder({200, 96}, BFloat(16), "A"), B = placeholder({96, 272}, BFloat(16), "B");
    cases.push_back(make_case("wgmma", "cuda -arch=sm_90a", {A, B, ops::matmul(A, B, "C")}));
  }
  {  // A bias, relu and a cast to float16 read C at its own element: the kernel's epilogue.
    Tensor A = placeholder({128, 64}, Float(16), "A"), B = placeholder({64, 128}, Float(16), "B");
    Tensor bias = placeholder({128}, Float(32), "bias");
    Tensor C = ops::matmul(A, B, "C");
    Tensor D = compute(
        {128, 128}, [&](Expr i, Expr j) { return cast(Float(16), max(C(i, j) + bias(j), 0.0f)); }, "D");
    cases.push_back(make_case("wgmma_epilogue", "cuda -arch=sm_90a", {A, B, bias, D}));
  }
  {  // An epilogue reading C transposed cannot be fused: C is stored, then read.
    Tensor A = placeholder({128, 64}, BFloat(16), "A"), B = placeholder({64, 128}, BFloat(16), "B");
    Tensor C = ops::matmul(A, B, "C");
    Tensor D = compute(
        {128, 128}, [&](Expr i, Expr j) { return C(j, i) * 2.0f; }, "D");
    cases.push_back(make_case("wgmma_transposed_reader", "cuda -arch=sm_90a", {A, B, D}));
  }
  for (const std::string arch : {"sm_80", "", "sm_75"}) {  // mma.sync, then none
    Tensor A = placeholder({96, 48}, Float(16), "A"), B = placeholder({48, 80}, Float(16), "B");
    cases.push_back(make_case("mma_" + (arch.empty() ? std::string("any") : arch),
                              arch.empty() ? "cuda" : "cuda -arch=" + arch, {A, B, ops::matmul(A, B, "C")}));
  }
  {  // A read transposed: neither form (the tensor-core schedules take A as M x K).
    Tensor A = placeholder({32, 64}, BFloat(16), "A"), B = placeholder({32, 64}, BFloat(16), "B");
    IterVar k = reduce_axis({0, 32}, "k");
    Tensor C = compute(
        {64, 64}, [&](Expr i, Expr j) { return sum(cast(Float(32), A(k, i)) * cast(Float(32), B(k, j)), {k}); }, "C");
    cases.push_back(make_case("a_transposed", "cuda -arch=sm_90a", {A, B, C}));
  }
  // Linear layers: x (M x K) times w (N x K) transposed. On sm_90a K = 80 leaves the last
  // k tile 16 columns of x and of w, the rest TMA's zeros; 144 columns: one 144-wide tile.
  for (const std::string arch : {"sm_90a", "sm_80"}) {
    Tensor x = placeholder({130, 80}, BFloat(16), "x"), w = placeholder({144, 80}, BFloat(16), "w");
    cases.push_back(make_case("linear_" + arch, "cuda -arch=" + arch, {x, w, ops::linear(x, w, "y")}));
  }
  {  // The threads' copies of w's K-major tiles (no TMA), 3 stages.
    Tensor x = placeholder({128, 128}, Float(16), "x"), w = placeholder({64, 128}, Float(16), "w");
    cases.push_back(
        make_case("linear_threads", "cuda", {x, w, ops::linear(x, w, "y")}, [](Schedule& s, const Tensor& y) {
          ops::MatmulWgmmaOptions o;
          o.block_n = 64;
          o.tma = false;
          ops::schedule_matmul_wgmma_cuda(s, y, o);
        }));
  }
  return cases;
}

TEST_F(AutoScheduleGemmCuda, Sm90aTakesTheFastestWarpSpecializedWgmmaGemm) {
  const std::string& cu = get("wgmma").cuda;
  EXPECT_TRUE(has(cu, "te_wgmma_m64n256k16_")) << cu;
  EXPECT_TRUE(has(cu, "te_ptx_setmaxnreg_inc<232>();")) << cu;   // warp-specialized, 2 consumers
  EXPECT_TRUE(has(cu, "dim3(4, 1, 1), dim3(128, 3, 1)")) << cu;  // 4 persistent blocks
  EXPECT_EQ(difference("wgmma", Cxx::AB), "");
}

TEST_F(AutoScheduleGemmCuda, AnElementWiseReaderIsTheWgmmaKernelsEpilogue) {
  const std::string& cu = get("wgmma_epilogue").cuda;
  EXPECT_TRUE(has(cu, "te_wgmma_m64n128k16_")) << cu;
  EXPECT_EQ(kernels(cu), 1) << cu;  // C never reaches global memory
  EXPECT_EQ(difference("wgmma_epilogue", Cxx::None), "");
}

TEST_F(AutoScheduleGemmCuda, AReaderOfAnotherElementIsItsOwnKernel) {
  const std::string& cu = get("wgmma_transposed_reader").cuda;
  EXPECT_TRUE(has(cu, "te_wgmma_m64n128k16_")) << cu;
  EXPECT_EQ(kernels(cu), 2) << cu;
  EXPECT_EQ(difference("wgmma_transposed_reader", Cxx::None), "");
}

TEST_F(AutoScheduleGemmCuda, Sm80AndAnyGpuTakeMmaSyncOlderOnesTheGenericRules) {
  for (const char* name : {"mma_sm_80", "mma_any"}) {
    SCOPED_TRACE(name);
    const std::string& cu = get(name).cuda;
    EXPECT_TRUE(has(cu, "mma.sync.aligned.m16n8k16")) << cu;
    EXPECT_FALSE(has(cu, "wgmma")) << cu;
    EXPECT_EQ(difference(name, Cxx::AB), "");
  }
  const std::string& old = get("mma_sm_75").cuda;
  EXPECT_FALSE(has(old, "mma.sync")) << old;
  EXPECT_EQ(difference("mma_sm_75", Cxx::AB), "");
}

TEST_F(AutoScheduleGemmCuda, WhatIsNotAMatmulKeepsTheGenericRules) {
  const std::string& cu = get("a_transposed").cuda;
  EXPECT_FALSE(has(cu, "mma")) << cu;
  EXPECT_EQ(difference("a_transposed", Cxx::None), "");
}

TEST_F(AutoScheduleGemmCuda, LinearLayersRunOnTensorCoresWithTheirWeightsAsTheyLie) {
  const std::string& hopper = get("linear_sm_90a").cuda;
  EXPECT_TRUE(has(hopper, "te_wgmma_m64n144k16_")) << hopper;
  EXPECT_FALSE(has(hopper, "te_wgmma_m64n144k16_kn")) << hopper;  // w's rows are K-major
  EXPECT_EQ(difference("linear_sm_90a", Cxx::ABTrans), "");
  const std::string& ampere = get("linear_sm_80").cuda;
  EXPECT_TRUE(has(ampere, "mma.sync.aligned.m16n8k16")) << ampere;
  EXPECT_EQ(difference("linear_sm_80", Cxx::ABTrans), "");
  const std::string& threads = get("linear_threads").cuda;
  EXPECT_TRUE(has(threads, "te_cp_async_16(")) << threads;  // w's rows in 16-byte pieces
  EXPECT_EQ(difference("linear_threads", Cxx::ABTrans), "");
}

TEST(IsMatmul, TakesExactlyMatmulsForm) {
  Tensor A = placeholder({8, 4}, BFloat(16), "A"), B = placeholder({4, 6}, BFloat(16), "B");
  Tensor F = placeholder({8, 4}, Float(32), "F"), G = placeholder({4, 6}, Float(32), "G");
  EXPECT_TRUE(ops::is_matmul(ops::matmul(A, B)));
  EXPECT_TRUE(ops::is_matmul(ops::matmul(F, G)));
  IterVar k = reduce_axis({0, 4}, "k");
  auto write = [&](auto body) { return compute({8, 6}, body, "C"); };
  EXPECT_TRUE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(F(i, k) * G(k, j), {k}); })));
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(G(k, j) * F(i, k), {k}); })));
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(F(i, k) * G(k, j) * 2.0f, {k}); })));
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(F(i, k) + G(k, j), {k}); })));
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return max(F(i, k) * G(k, j), {k}); })));
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(F(i, k) * G(k, j), {k}, k < 3); })));
  IterVar partial = reduce_axis({0, 3}, "k");
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(F(i, partial) * G(partial, j), {partial}); })));
  Tensor H = placeholder({6, 4}, Float(32), "H");
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(F(i, k) * H(j, k), {k}); })));
  EXPECT_EQ(ops::matmul_form(write([&](Expr i, Expr j) { return sum(F(i, k) * H(j, k), {k}); })),
            ops::MatmulForm::ABTrans);
  EXPECT_EQ(ops::matmul_form(ops::linear(A, placeholder({6, 4}, BFloat(16), "W"))), ops::MatmulForm::ABTrans);
  EXPECT_EQ(ops::matmul_form(ops::matmul(A, B)), ops::MatmulForm::AB);
  Tensor T = placeholder({4, 8}, Float(32), "T");
  EXPECT_EQ(ops::matmul_form(write([&](Expr i, Expr j) { return sum(T(k, i) * G(k, j), {k}); })),
            ops::MatmulForm::None);
  // 16-bit factors multiplied in 16 bits: no widening to the float32 sums tensor cores make.
  EXPECT_FALSE(ops::is_matmul(write([&](Expr i, Expr j) { return sum(cast(Float(32), A(i, k) * B(k, j)), {k}); })));
}

// The rule says what it chose (AutoScheduleOptions::progress), and leaves what its
// schedules cannot take (a symbolic extent, a C smaller than any tile) to the generic rules.
TEST(AutoScheduleGemmRule, SaysWhatItChoseAndLeavesWhatItCannotTake) {
  AutoScheduleOptions o;
  o.target = "cuda -arch=sm_90a";
  o.progress = true;
  Tensor A = placeholder({256, 64}, BFloat(16), "A"), B = placeholder({64, 512}, BFloat(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  testing::internal::CaptureStderr();
  auto_schedule({C}, o);
  const std::string notes = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(notes,
                  "[auto_schedule] 'C': wgmma GEMM, 128 x 256 tiles, 3 stages, warp-specialized, 4 "
                  "persistent blocks"))
      << notes;
  o.progress = false;
  Var m("m");
  Tensor X = placeholder({m, Expr(64)}, BFloat(16), "X");
  Tensor tiny = placeholder({8, 64}, BFloat(16), "tiny");
  for (const auto& [name, left] : {std::pair{"symbolic", ops::matmul(X, B, "C")},
                                   std::pair{"tiny", ops::matmul(tiny, placeholder({64, 8}, BFloat(16), "B8"), "C")}}) {
    SCOPED_TRACE(name);
    std::vector<Tensor> args{Tensor(left.op()->inputs[0]), Tensor(left.op()->inputs[1]), left};
    const std::string ir = to_string(lower(auto_schedule({left}, o), args, "left"));
    EXPECT_FALSE(has(ir, "tensor_intrinsic")) << ir;
    EXPECT_TRUE(has(ir, "threadIdx")) << ir;
  }
}

TEST(Linear, MisuseIsAnErrorNamingWhatIsWrong) {
  Tensor x = placeholder({128, 64}, BFloat(16), "x");
  expect_error(
      [&] {
        ops::linear(x, placeholder({64, 32}, BFloat(16), "w"));
      },
      {"linear: x's columns (64) and w's columns (32) differ"});
  expect_error(
      [&] {
        ops::linear(x, placeholder({64, 64}, Float(16), "w"));
      },
      {"linear: x and w must have the same float dtype, got bfloat16 and float16"});
  expect_error([&] { ops::linear(x, placeholder({64}, BFloat(16), "w")); },
               {"linear: x and w must be matrices, got 2 and 1 axes"});
  IterVar k = reduce_axis({0, 128}, "k");
  Tensor xt = compute(  // x read transposed: neither form
      {64, 64}, [&](Expr i, Expr j) { return sum(cast(Float(32), x(k, i)) * cast(Float(32), x(k, j)), {k}); }, "xt");
  Schedule st = create_schedule({xt});
  expect_error([&] { ops::schedule_matmul_wgmma_cuda(st, xt); },
               {"schedule_matmul_wgmma_cuda: 'xt' is not a matmul: C[i, j] = sum over k of A[i, k] * B[k, j] "
                "(te::ops::matmul) or A[i, k] * B[j, k] (te::ops::linear), each factor as read or widened to C's "
                "type"});
  Tensor y = ops::linear(x, placeholder({128, 64}, BFloat(16), "w"), "y");
  Schedule s = create_schedule({y});
  ops::MatmulWgmmaOptions o;
  o.b_mn_major = false;
  expect_error([&] { ops::schedule_matmul_wgmma_cuda(s, y, o); },
               {"schedule_matmul_wgmma_cuda: b_mn_major is false, which has the threads transpose a K x N B into "
                "K-major tiles; linear()'s B is N x K, K-major as it lies: leave it true"});
}

}  // namespace
}  // namespace te
