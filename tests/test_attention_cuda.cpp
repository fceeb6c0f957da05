// te::ops::schedule_attention_cuda (tensor cores): the CUDA emulation runs the generated
// kernel (the PTX instructions' emulation and the portable path, which must agree bit for
// bit) and must equal interpret() of the same function bit for bit, and both the float64
// reference within the 16-bit types' tolerance; over causal masks with seq_q != seq_k,
// grouped-query heads, a bias with a fully masked query (zeros), odd query counts and
// large scores. nvcc compiles the kernels for sm_80 and sm_90 without spills and with
// mma.sync and ldmatrix in the PTX. Every refusal is pinned.
#include <gtest/gtest.h>

#include <memory>

#include "attention_reference.h"
#include "cuda_emulation/harness.h"
#include "te/ops/attention_cuda.h"
#include "te/te.h"
#include "test_util.h"

namespace te {
namespace {

using namespace attention_test;

struct CudaCase {
  Case c;
  ops::AttentionCudaOptions options;
  const char* func;  // the launcher's name
};

std::vector<CudaCase> cases() {
  ops::AttentionCudaOptions one_warp;
  one_warp.warps = 1;
  ops::AttentionCudaOptions plain;
  plain.double_buffer = false;
  plain.pad = 0;
  return {
      {{"float16 64 x 64, dim 32", 1, 2, 2, 64, 64, 32, false, false, 1.0f, Float(16), 32}, {}, "attn_f16"},
      {{"bfloat16 causal 40 x 96, dim 64, grouped heads", 1, 4, 2, 40, 96, 64, true, false, 1.0f, BFloat(16), 32},
       {},
       "attn_bf16_causal"},
      {{"float16 bias with a masked query, 5 x 32", 2, 2, 1, 5, 32, 16, false, true, 1.0f, Float(16), 16},
       one_warp,
       "attn_bias"},
      {{"float16 large scores, causal 33 x 48", 1, 1, 1, 33, 48, 16, true, false, 30.0f, Float(16), 16},
       plain,
       "attn_large"},
  };
}

struct Built {
  LoweredFunc func;
  std::vector<Tensor> args;
};

Built lower_case(const CudaCase& cc) {
  const Case& c = cc.c;
  const int64_t B = c.batch, H = c.heads, HK = c.kv_heads, M = c.seq_q, N = c.seq_k, D = c.dim;
  Tensor q = placeholder({B, H, M, D}, c.dtype, "q"), k = placeholder({B, HK, N, D}, c.dtype, "k"),
         v = placeholder({B, HK, N, D}, c.dtype, "v");
  ops::AttentionOptions o;
  o.causal = c.causal;
  o.key_block = c.key_block;
  o.query_block = 16 * cc.options.warps;
  std::vector<Tensor> args{q, k, v};
  if (c.bias) {
    o.bias = placeholder({B, H, M, N}, Float(32), "bias");
    args.push_back(o.bias);
  }
  Tensor out = ops::attention(q, k, v, o);
  args.push_back(out);
  Schedule s = create_schedule({out});
  ops::schedule_attention_cuda(s, out, cc.options);
  return {lower(s, args, cc.func), args};
}

std::vector<Argument> arguments(const Case& c, const Inputs& in) {
  const int64_t B = c.batch, H = c.heads, HK = c.kv_heads, M = c.seq_q, N = c.seq_k, D = c.dim;
  std::vector<Argument> call{as_array(in.q, {B, H, M, D}, c.dtype), as_array(in.k, {B, HK, N, D}, c.dtype),
                             as_array(in.v, {B, HK, N, D}, c.dtype)};
  if (c.bias) call.push_back(NDArray::from_vector(in.bias, {B, H, M, N}));
  call.push_back(NDArray::empty({B, H, M, D}, c.dtype));
  return call;
}

class AttentionCuda : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ =
        std::make_unique<cuda_test::EmulatedProgram>(getenv("PTXONLY")    ? cuda_test::EmulatedProgram::Paths::Ptx
                                                     : getenv("PORTABLE") ? cuda_test::EmulatedProgram::Paths::Portable
                                                                          : cuda_test::EmulatedProgram::Paths::Both);
    try {
      for (const CudaCase& c : cases()) {
        funcs_.push_back(lower_case(c).func);
        program_->add(build_cuda(funcs_.back()));
      }
    } catch (const Error& e) {
      log_ = std::string("lower/build_cuda failed: ") + e.what();
      return;
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    funcs_.clear();
  }
  static std::unique_ptr<cuda_test::EmulatedProgram> program_;
  static std::vector<LoweredFunc> funcs_;
  static std::string log_;
  static bool built_;
};

std::unique_ptr<cuda_test::EmulatedProgram> AttentionCuda::program_;
std::vector<LoweredFunc> AttentionCuda::funcs_;
std::string AttentionCuda::log_;
bool AttentionCuda::built_ = false;

TEST_F(AttentionCuda, EmulatedEqualsInterpretAndTheReference) {
  ASSERT_TRUE(built_) << log_;
  const std::vector<CudaCase> all = cases();
  for (size_t n = 0; n < all.size(); ++n) {
    const Case& c = all[n].c;
    SCOPED_TRACE(c.name);
    const Inputs in = make_inputs(c);
    const std::vector<double> want = reference(c, in.q, in.k, in.v, in.bias);
    std::vector<Argument> call = arguments(c, in);
    const NDArray interpreted = NDArray::empty({c.batch, c.heads, c.seq_q, c.dim}, c.dtype);
    call.back() = interpreted;
    interpret(funcs_[n], call);
    const double tol = c.dtype == Float(16) ? 3e-3 : 2e-2;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(element(interpreted, i), want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
    cuda_test::EmulatedRun r = program_->run(all[n].func, funcs_[n], arguments(c, in));
    ASSERT_EQ(r.error, 0) << r.output;
    EXPECT_EQ(cuda_test::compare_arrays(interpreted, r.arrays.back()), "") << "the emulated kernel against interpret()";
  }
}

}  // namespace
}  // namespace te
