// te::ops::schedule_attention_cuda (tensor cores): the CUDA emulation runs the generated
// kernel (the PTX instructions' emulation and the portable path, which must agree bit for
// bit) and must equal interpret() of the same function bit for bit, and both the float64
// reference within the 16-bit types' tolerance; over causal masks with seq_q != seq_k,
// grouped-query heads, a bias with a fully masked query (zeros), odd query counts and
// large scores; the Hopper form (wgmma, a warpgroup per 64 queries) at dims 16 to 128.
// nvcc compiles the kernels for sm_80 and sm_90 without spills and with mma.sync and
// ldmatrix in the PTX, the Hopper form for sm_90a with wgmma. Every refusal is pinned.
#include <gtest/gtest.h>

#include <memory>

#include "attention_reference.h"
#include "cuda_emulation/harness.h"
#include "te/auto_schedule.h"
#include "te/ops/attention_cuda.h"
#include "te/te.h"
#include "test_util.h"

namespace te {
namespace {

using namespace attention_test;

struct CudaCase {
  Case c;
  ops::AttentionCudaOptions options;
  const char* func;             // the launcher's name
  bool auto_scheduled = false;  // te::auto_schedule for CUDA, which must choose the options
};

std::vector<CudaCase> cases() {
  ops::AttentionCudaOptions one_warp;
  one_warp.warps = 1;
  ops::AttentionCudaOptions four_warps;
  four_warps.warps = 4;
  // One tile of causal queries (two thread blocks): the same keys for every query, so
  // auto_schedule splits the keys too.
  ops::AttentionCudaOptions four_warps_split = four_warps;
  four_warps_split.key_splits = 2;
  ops::AttentionCudaOptions decode;
  decode.warps = 1;
  decode.key_splits = 4;
  ops::AttentionCudaOptions decode8 = decode;  // 8 blocks of keys, 2 queries' blocks: 8 parts
  decode8.key_splits = 8;
  ops::AttentionCudaOptions decode5 = decode;
  decode5.key_splits = 5;
  ops::AttentionCudaOptions hopper;  // a warpgroup per block
  hopper.warps = 4;
  hopper.wgmma = true;
  ops::AttentionCudaOptions hopper2 = hopper;  // two
  hopper2.warps = 8;
  ops::AttentionCudaOptions hopper_plain = hopper;
  hopper_plain.double_buffer = false;
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
      {{"bfloat16 dim 128, 4 warps (dynamic shared memory)", 1, 1, 1, 64, 128, 128, true, false, 1.0f, BFloat(16), 64},
       four_warps,
       "attn_dim128"},
      {{"float16 decoding, 1 x 256 keys in 4 parts (split-K)", 2, 2, 1, 1, 256, 32, false, false, 1.0f, Float(16), 32},
       decode,
       "attn_decode"},
      {{"bfloat16 5 x 160 with a masked query, 10 blocks in 5 parts", 1, 2, 2, 5, 160, 16, false, true, 1.0f,
        BFloat(16), 16},
       decode5,
       "attn_decode_causal"},
      {{"float16 causal decoding, 5 x 256 keys in 4 parts (one tile of queries)", 1, 2, 1, 5, 256, 32, true, false,
        1.0f, Float(16), 32},
       decode,
       "attn_decode_causal_split"},
      // Hopper: wgmma from swizzled shared tiles, the probabilities as the A registers.
      {{"wgmma: float16 64 x 64, dim 32", 1, 2, 2, 64, 64, 32, false, false, 1.0f, Float(16), 32},
       hopper,
       "attn_wgmma"},
      {{"wgmma: bfloat16 causal 40 x 96, dim 64, grouped heads, 2 warpgroups", 1, 4, 2, 40, 96, 64, true, false, 1.0f,
        BFloat(16), 32},
       hopper2,
       "attn_wgmma_causal"},
      {{"wgmma: float16 bias with a masked query, 5 x 32, dim 16", 2, 2, 1, 5, 32, 16, false, true, 1.0f, Float(16),
        16},
       hopper_plain,
       "attn_wgmma_bias"},
      {{"wgmma: bfloat16 causal dim 128 (rows in two column blocks, dynamic shared memory)", 1, 1, 1, 64, 128, 128,
        true, false, 1.0f, BFloat(16), 64},
       hopper,
       "attn_wgmma_dim128"},
      {{"wgmma: float16 dim 48 (32-byte swizzle, three column blocks)", 1, 2, 2, 64, 64, 48, false, false, 1.0f,
        Float(16), 32},
       hopper,
       "attn_wgmma_dim48"},
      // auto_schedule recognises attention: tensor cores with 4 warps; split-K for decoding.
      {{"auto_schedule: float16 causal 64 x 64, dim 32", 1, 2, 2, 64, 64, 32, true, false, 1.0f, Float(16), 32},
       four_warps_split,
       "attn_auto",
       true},
      {{"auto_schedule: bfloat16 decoding 1 x 512", 1, 2, 2, 1, 512, 16, false, false, 1.0f, BFloat(16), 64},
       decode8,
       "attn_auto_decode",
       true},
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
  if (cc.auto_scheduled) {
    AutoScheduleOptions a;
    a.target = "cuda";
    return {lower(auto_schedule({out}, a), args, cc.func), args};
  }
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
    suite_ =
        std::make_unique<cuda_test::EmulatedSuite>(getenv("PTXONLY")    ? cuda_test::EmulatedProgram::Paths::Ptx
                                                   : getenv("PORTABLE") ? cuda_test::EmulatedProgram::Paths::Portable
                                                                        : cuda_test::EmulatedProgram::Paths::Both);
    for (const CudaCase& c : cases()) suite_->add([c] { return lower_case(c).func; });
    suite_->build();
  }
  static void TearDownTestSuite() { suite_.reset(); }
  static std::unique_ptr<cuda_test::EmulatedSuite> suite_;
};

std::unique_ptr<cuda_test::EmulatedSuite> AttentionCuda::suite_;

TEST_F(AttentionCuda, EmulatedEqualsInterpretAndTheReference) {
  ASSERT_TRUE(suite_->ready()) << suite_->log();
  const std::vector<CudaCase> all = cases();
  for (size_t n = 0; n < all.size(); ++n) {
    const Case& c = all[n].c;
    SCOPED_TRACE(c.name);
    const Inputs in = make_inputs(c);
    const std::vector<double> want = reference(c, in.q, in.k, in.v, in.bias);
    std::vector<Argument> call = arguments(c, in);
    const NDArray interpreted = NDArray::empty({c.batch, c.heads, c.seq_q, c.dim}, c.dtype);
    call.back() = interpreted;
    interpret(suite_->func(all[n].func), call);
    const double tol = c.dtype == Float(16) ? 3e-3 : 2e-2;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(element(interpreted, i), want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
    cuda_test::EmulatedRun r = suite_->run(all[n].func, arguments(c, in));
    ASSERT_EQ(r.error, 0) << r.output;
    // One kernel, or with split-K three: the parts, their merge, the output.
    EXPECT_EQ(r.launches.size(), all[n].options.key_splits > 1 ? 3u : 1u);
    const bool wgmma = all[n].options.wgmma;
    EXPECT_EQ(r.launches[0][3], wgmma ? 128u : 32u) << "a warp's lanes (a warpgroup's threads) on threadIdx.x";
    EXPECT_EQ(r.launches[0][4], unsigned(all[n].options.warps / (wgmma ? 4 : 1)))
        << "the warps (warpgroups) on threadIdx.y";
    EXPECT_EQ(cuda_test::compare_arrays(interpreted, r.arrays.back()), "") << "the emulated kernel against interpret()";
  }
}

// nvcc builds the kernels for sm_80 and sm_90 without spills or warnings, with the tensor
// cores' instructions in the PTX; dim 128 (70 KiB of double-buffered keys and values)
// takes dynamic shared memory. The register form keeps everything but the keys and
// values in registers (no float in shared memory), its rows' max and sum combined across
// lanes by butterfly shuffles.
TEST(AttentionCudaNvcc, CompilesWithoutSpills) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  cuda_test::TempDir dir;
  const std::vector<CudaCase> all = cases();
  for (const CudaCase& c : {all[0], all[4], all[5]}) {
    const std::string cu = dir.path() + "/" + c.func + ".cu";
    const CudaModule m = build_cuda(lower_case(c).func);
    EXPECT_EQ(m.kernels()[0].dynamic_shared, c.c.dim == 128) << c.c.name;
    const bool registers = c.options.key_splits == 1;
    EXPECT_EQ(m.source().find("__shared__ float") == std::string::npos, registers) << c.c.name;
    cuda_test::write_file(cu, m.source());
    for (const char* arch : {"sm_80", "sm_90"}) {
      SCOPED_TRACE(std::string(c.c.name) + " " + arch);
      cuda_test::CommandResult r = cuda_test::run_command(
          fmt::format("{} -std=c++17 -arch={} -cubin --resource-usage -Werror all-warnings {} -o {}/{}_{}.cubin",
                      cuda_test::quote(nvcc), arch, cuda_test::quote(cu), cuda_test::quote(dir.path()), c.func, arch));
      ASSERT_EQ(r.status, 0) << r.output;
      EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
    }
    const std::string ptx = dir.path() + "/" + c.func + ".ptx";
    cuda_test::CommandResult r =
        cuda_test::run_command(fmt::format("{} -std=c++17 -arch=sm_90 -ptx {} -o {}", cuda_test::quote(nvcc),
                                           cuda_test::quote(cu), cuda_test::quote(ptx)));
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string text = cuda_test::read_file(ptx);
    for (const char* instruction : {"mma.sync.aligned.m16n8k16.row.col.f32", "ldmatrix.sync.aligned", "cp.async"})
      EXPECT_NE(text.find(instruction), std::string::npos) << instruction;
    EXPECT_EQ(text.find("shfl.sync.bfly") != std::string::npos, registers) << c.c.name;
  }
}

// The Hopper form: nvcc builds it for sm_90a without spills, the scores and probs · v
// as wgmmas (the second's A from registers), the rows' max and sum by butterfly shuffles,
// nothing but the queries, keys and values in shared memory.
TEST(AttentionCudaNvcc, WgmmaFormCompilesForSm90aWithoutSpills) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  cuda_test::TempDir dir;
  for (const CudaCase& c : cases()) {
    if (!c.options.wgmma) continue;
    SCOPED_TRACE(c.c.name);
    const std::string cu = dir.path() + "/" + c.func + ".cu";
    const CudaModule m = build_cuda(lower_case(c).func);
    EXPECT_EQ(m.source().find("__shared__ float"), std::string::npos);
    cuda_test::write_file(cu, m.source());
    cuda_test::CommandResult r = cuda_test::nvcc_compile(
        nvcc, cu, "sm_90a", "-cubin --resource-usage -Werror all-warnings", dir.path() + "/" + c.func + ".cubin");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
    const std::string ptx = dir.path() + "/" + c.func + ".ptx";
    r = cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-ptx", ptx);
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string text = cuda_test::read_file(ptx);
    for (const char* instruction : {"wgmma.mma_async.sync.aligned.m64n", "wgmma.wait_group", "shfl.sync.bfly"})
      EXPECT_NE(text.find(instruction), std::string::npos) << instruction;
  }
}

// auto_schedule's options for CUDA attention, as its note (AutoScheduleOptions::progress)
// says: mma.sync with 8 warps (128 queries) per block where the grid still fills the GPU,
// 4 where it would not, and 4 for causal attention (a query tile smaller than 128 would
// give the 8 warps different counts of key blocks), fewer where the causal query tile is
// smaller than 4 warps' 64 queries; on
// sm_90a, wgmma (two warpgroups, one when causal) where the grid fills the GPU without
// split-K, else mma.sync's split-K (decoding). Each choice lowers and builds.
TEST(AttentionCudaRule, EightWarpsWhereTheGridStillFillsTheGpuAndWgmmaOnSm90a) {
  auto notes_for = [](int heads, int query_block, bool causal, const std::string& target = "cuda", int seq_q = 4096) {
    Tensor q = placeholder({4, heads, seq_q, 128}, Float(16), "q"),
           k = placeholder({4, heads, 4096, 128}, Float(16), "k"),
           v = placeholder({4, heads, 4096, 128}, Float(16), "v");
    ops::AttentionOptions o;
    o.causal = causal;
    o.key_block = 64;
    o.query_block = query_block;
    Tensor out = ops::attention(q, k, v, o);
    AutoScheduleOptions a;
    a.target = target;
    a.progress = true;
    testing::internal::CaptureStderr();
    Schedule s = auto_schedule({out}, a);
    const std::string notes = testing::internal::GetCapturedStderr();
    EXPECT_NO_THROW(build_cuda(lower(s, {q, k, v, out}, "attention"))) << notes;  // the choice builds
    return notes;
  };
  auto chose = [](const std::string& notes, int warps, const std::string& form = "") {
    return notes.find("'attention': attention on tensor cores (" + form + std::to_string(warps) + " warps per block") !=
           std::string::npos;
  };
  std::string notes = notes_for(32, 1, false);  // 4 x 32 x 32 blocks of 128 queries
  EXPECT_TRUE(chose(notes, 8)) << notes;
  notes = notes_for(1, 1, false);  // 4 x 1 x 32 blocks of 128 queries: too few
  EXPECT_TRUE(chose(notes, 4)) << notes;
  notes = notes_for(32, 64, true);
  EXPECT_TRUE(chose(notes, 4)) << notes;
  notes = notes_for(32, 1, false, "cuda -arch=sm_90a");
  EXPECT_TRUE(chose(notes, 8, "wgmma, ")) << notes;
  notes = notes_for(32, 64, true, "cuda -arch=sm_90a");
  EXPECT_TRUE(chose(notes, 4, "wgmma, ")) << notes;
  notes = notes_for(32, 16, false, "cuda -arch=sm_90a", 1);  // decoding: 128 blocks, split-K
  EXPECT_TRUE(chose(notes, 1)) << notes;
  EXPECT_NE(notes.find("keys in 2 parts"), std::string::npos) << notes;
}

TEST(AttentionCudaErrors, WhatTheScheduleRefuses) {
  auto schedule = [](DataType t, int dim, int seq_q, int seq_k, int key_block, int query_block,
                     ops::AttentionCudaOptions o = {}) {
    Tensor q = placeholder({1, 2, seq_q, dim}, t, "q"), k = placeholder({1, 2, seq_k, dim}, t, "k"),
           v = placeholder({1, 2, seq_k, dim}, t, "v");
    ops::AttentionOptions a;
    a.key_block = key_block;
    a.query_block = query_block;
    Tensor out = ops::attention(q, k, v, a);
    Schedule s = create_schedule({out});
    ops::schedule_attention_cuda(s, out, o);
  };
  EXPECT_NO_THROW(schedule(Float(16), 32, 40, 64, 32, 32));
  expect_error([&] { schedule(Float(32), 32, 64, 64, 32, 32); },
               {"schedule_attention_cuda: tensor cores multiply float16 or bfloat16", "float32"});
  ops::AttentionCudaOptions no_warps;
  no_warps.warps = 0;
  expect_error([&] { schedule(Float(16), 32, 64, 64, 32, 32, no_warps); },
               {"warps must be in [1, 32], pad a multiple of 8 and key_splits at least 1, got 0, 8 and 1"});
  ops::AttentionCudaOptions odd_pad;
  odd_pad.pad = 4;
  expect_error([&] { schedule(Float(16), 32, 64, 64, 32, 32, odd_pad); }, {"got 2, 4 and 1"});
  expect_error([&] { schedule(Float(16), 24, 64, 64, 32, 32); },
               {"dim (24) must be a multiple of 16 and the value dim (24) of 8"});
  expect_error([&] { schedule(Float(16), 32, 64, 70, 32, 32); },
               {"the key block (32) must be a multiple of 16 and divide seq_k (70)"});
  expect_error([&] { schedule(Float(16), 32, 64, 64, 24, 32); }, {"the key block (24)"});
  expect_error([&] { schedule(Float(16), 32, 40, 64, 32, 1); },
               {"a block's 32 queries (16 per warp) must divide the queries' extent 40 (seq_q 40)",
                "AttentionOptions::query_block = 32"});
  ops::AttentionCudaOptions split;
  split.key_splits = 2;
  expect_error(
      [&] {
        Tensor q = placeholder({1, 1, 32, 32}, Float(16), "q"), k = placeholder({1, 1, 64, 32}, Float(16), "k");
        ops::AttentionOptions a;
        a.causal = true;
        Tensor out = ops::attention(q, k, k, a);
        Schedule s = create_schedule({out});
        ops::schedule_attention_cuda(s, out, split);
      },
      {"key_splits (2) needs the same keys for every query: causal attention's differ unless its queries fit one "
       "tile (AttentionOptions::query_block = 16 * warps at least seq_q, as when decoding)"});
  // Causal with a query tile smaller than the block's queries: its warps (a warpgroup's
  // with wgmma) would visit different counts of key blocks.
  auto causal = [](int query_block, ops::AttentionCudaOptions o) {
    Tensor q = placeholder({1, 2, 64, 32}, Float(16), "q"), k = placeholder({1, 2, 128, 32}, Float(16), "k");
    ops::AttentionOptions a;
    a.causal = true;
    a.key_block = 32;
    a.query_block = query_block;
    Tensor out = ops::attention(q, k, k, a);
    Schedule s = create_schedule({out});
    ops::schedule_attention_cuda(s, out, o);
  };
  ops::AttentionCudaOptions four;
  four.warps = 4;
  expect_error([&] { causal(1, four); },
               {"causal attention's queries 0 and 63 (one thread block's 64) visit 3 and 4 blocks of keys: give "
                "attention() AttentionOptions::query_block = 64 (or a multiple), so that a tile's queries visit its "
                "last query's blocks"});
  expect_error([&] { causal(32, four); }, {"queries 0 and 63 (one thread block's 64) visit 3 and 4 blocks"});
  EXPECT_NO_THROW(causal(64, four));
  four.wgmma = true;
  expect_error([&] { causal(16, four); }, {"queries 0 and 63 (one thread block's 64) visit 3 and 4 blocks"});
  EXPECT_NO_THROW(causal(64, four));
  split.key_splits = 3;
  expect_error([&] { schedule(Float(16), 32, 32, 64, 16, 32, split); },
               {"key_splits (3) must divide the 4 blocks of 16 keys"});
  ops::AttentionCudaOptions hopper;
  hopper.wgmma = true;
  hopper.warps = 2;
  expect_error([&] { schedule(Float(16), 32, 64, 64, 32, 64, hopper); },
               {"wgmma takes a warpgroup (4 warps) per 64 queries: warps must be a multiple of 4, got 2"});
  hopper.warps = 4;
  expect_error([&] { schedule(Float(16), 272, 64, 64, 32, 64, hopper); },
               {"wgmma's n is a multiple of 8 up to 256, in column blocks of 16 elements at least: the value dim must "
                "be a multiple of 16 up to 256, got 272"});
  hopper.key_splits = 2;
  expect_error([&] { schedule(Float(16), 32, 64, 64, 32, 64, hopper); },
               {"wgmma keeps each warpgroup's running state in its registers; key_splits (2) is the mma.sync form's"});
  hopper.key_splits = 1;
  expect_error([&] { schedule(Float(16), 32, 64, 512, 512, 64, hopper); },
               {"wgmma's n is at most 256: the key block is 512"});
  Var n("n");
  Tensor q = placeholder({1, 1, n, 32}, Float(16), "q"), k = placeholder({1, 1, 64, 32}, Float(16), "k");
  Tensor out = ops::attention(q, k, k, {});
  Schedule s = create_schedule({out});
  expect_error([&] { ops::schedule_attention_cuda(s, out); }, {"seq_q is n, not a constant"});
}

}  // namespace
}  // namespace te
