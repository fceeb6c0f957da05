// te::ops::attention (the online-softmax row reduction) against plain C++ in float64:
// interpret() of the definition as written, and the JIT with the default and the CPU
// schedule, over odd lengths, causal masks with seq_q != seq_k, grouped-query heads, a
// bias with fully masked rows, large-magnitude scores, decoding (one query against a long
// cache), float16 and bfloat16; the same kinds of case against PyTorch's results
// (tests/data/torch_golden/attention, scripts/gen_torch_golden.py); and every error.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "te/ops/attention.h"
#include "te/auto_schedule.h"
#include "te/ops/attention_cpu.h"
#include "te/te.h"
#include "attention_reference.h"
#include "test_util.h"

namespace te {
namespace {

using namespace attention_test;

void check_case(const Case& c) {
  SCOPED_TRACE(c.name);
  const int64_t B = c.batch, H = c.heads, HK = c.kv_heads, M = c.seq_q, N = c.seq_k, D = c.dim;
  const Inputs in = make_inputs(c);
  const std::vector<float>&q = in.q, &k = in.k, &v = in.v, &bias = in.bias;
  const std::vector<double> want = reference(c, q, k, v, bias);

  // float32 scores, probabilities and accumulation; half-precision outputs round once more.
  const double tol = c.dtype == Float(32) ? 2e-5 : c.dtype == Float(16) ? 2e-3 : 1.6e-2;
  // The CPU schedule also as for AVX2 (8 lanes) and 128-bit vectors (4 lanes), with
  // blocks of queries that are not a power of two.
  const char* schedules[] = {"interpret, default", "jit, default", "jit, cpu schedule",
                             "jit, cpu schedule, 8 lanes, blocks of 24 queries",
                             "jit, cpu schedule, 4 lanes, blocks of 6 queries"};
  for (int schedule = 0; schedule < 5; ++schedule) {
    SCOPED_TRACE(schedules[schedule]);
    Tensor Q = placeholder({B, H, M, D}, c.dtype, "q"), K = placeholder({B, HK, N, D}, c.dtype, "k"),
           V = placeholder({B, HK, N, D}, c.dtype, "v");
    ops::AttentionOptions o;
    o.causal = c.causal;
    o.key_block = c.key_block;
    std::vector<Tensor> args{Q, K, V};
    if (c.bias) {
      o.bias = placeholder({B, H, M, N}, Float(32), "bias");
      args.push_back(o.bias);
    }
    Tensor out = ops::attention(Q, K, V, o);
    args.push_back(out);
    Schedule s = create_schedule({out});
    if (schedule >= 2) {
      ops::AttentionCpuOptions co;
      if (schedule == 3) co = {24, 32};
      if (schedule == 4) co = {6, 16};
      ops::schedule_attention_cpu(s, out, co);
    }
    LoweredFunc f = lower(s, args, "attention");
    std::vector<Argument> call{as_array(q, {B, H, M, D}, c.dtype), as_array(k, {B, HK, N, D}, c.dtype),
                               as_array(v, {B, HK, N, D}, c.dtype)};
    if (c.bias) call.push_back(NDArray::from_vector(bias, {B, H, M, N}));
    NDArray result = NDArray::empty({B, H, M, D}, c.dtype);
    call.push_back(result);
    if (schedule == 0) {
      interpret(f, call);
    } else {
      build(f)("attention").call(call);
    }
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(element(result, i), want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
  }
}

TEST(Attention, OddLengths) { check_case({"odd lengths", 1, 2, 2, 13, 29, 12}); }
TEST(Attention, CausalWithFewerQueriesThanKeys) { check_case({"causal 5 x 19", 2, 2, 2, 5, 19, 16, true}); }
TEST(Attention, CausalSquare) { check_case({"causal 17 x 17", 1, 1, 1, 17, 17, 8, true}); }
TEST(Attention, GroupedQueryHeads) { check_case({"4 q heads over 2 kv heads", 1, 4, 2, 9, 21, 16}); }
TEST(Attention, BiasWithMaskedRows) { check_case({"bias, -inf", 1, 2, 1, 6, 11, 8, false, true}); }
TEST(Attention, LargeScoresDoNotOverflow) { check_case({"scores ~1e3", 1, 1, 1, 7, 33, 16, false, false, 30.0f}); }
TEST(Attention, Decoding) {
  check_case({"one query, 200 keys", 2, 4, 1, 1, 200, 32, true, false, 1.0f, Float(32), 64});
}
TEST(Attention, DecodingWithoutTransposingKeys) {
  check_case({"one query per k/v head, 150 keys", 1, 2, 2, 1, 150, 32, true, false, 1.0f, Float(32), 64});
}
// The CPU schedule's blocks of 32 queries: the second overlaps the first (45 queries).
TEST(Attention, CpuScheduleOverlappingQueryBlocks) { check_case({"45 queries, 300 keys", 1, 2, 1, 45, 300, 16, true}); }
TEST(Attention, OneKeyPerBlock) { check_case({"blocks of 1", 1, 2, 1, 5, 6, 8, true, true, 1.0f, Float(32), 1}); }
TEST(Attention, Float16) { check_case({"float16", 1, 2, 2, 8, 24, 16, true, false, 1.0f, Float(16)}); }
TEST(Attention, BFloat16) { check_case({"bfloat16", 1, 2, 2, 8, 24, 16, false, false, 1.0f, BFloat(16)}); }

// The loop nest of the CPU schedule: per block of keys, one row step (scalars) around the
// vector update of the query's accumulator, after the block's scores and exps.
// The loop IR of the default CPU schedule of float32 attention, q (1, heads, seq_q, dim)
// against k and v (1, kv_heads, seq_k, dim).
std::string cpu_schedule_ir(int heads, int kv_heads, int seq_q, int seq_k, int dim, bool causal = false) {
  Tensor Q = placeholder({1, heads, seq_q, dim}, Float(32), "q"),
         K = placeholder({1, kv_heads, seq_k, dim}, Float(32), "k"),
         V = placeholder({1, kv_heads, seq_k, dim}, Float(32), "v");
  ops::AttentionOptions o;
  o.causal = causal;
  Tensor out = ops::attention(Q, K, V, o);
  Schedule s = create_schedule({out});
  ops::schedule_attention_cpu(s, out);
  return to_string(lower(s, {Q, K, V, out}, "attention"));
}

TEST(Attention, CpuScheduleUpdatesEachRowOncePerBlock) {
  const std::string ir = cpu_schedule_ir(2, 2, 64, 128, 64);
  EXPECT_NE(ir.find("let scale_old = "), std::string::npos) << ir;
  EXPECT_NE(ir.find("attention.acc[ramp("), std::string::npos) << ir;
  // The exps are vectors of queries, not one per element of the accumulator.
  EXPECT_NE(ir.find("attention.probs.global[ramp("), std::string::npos) << ir;
  EXPECT_EQ(ir.find("broadcast(exp("), std::string::npos) << ir;
}

TEST(Attention, CpuScheduleLaysScoresOutKeyByKey) {
  const std::string ir = cpu_schedule_ir(2, 1, 45, 300, 16);
  // 2 heads x 2 blocks of 32 queries, the second starting at query 13.
  EXPECT_NE(ir.find("parallel for (b.h.fused.i.outer.fused, 0, 4)"), std::string::npos) << ir;
  // The block's queries transposed once per work item; k read as it is, not transposed.
  EXPECT_NE(ir.find("allocate q.global[float32 * 512]"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("attention.key_t"), std::string::npos) << ir;
  // Each query's block max and sum: vectors of queries over the keys, no lanes to add;
  // 4 running vectors per vector of queries (independent chains), then their total.
  EXPECT_NE(ir.find("allocate attention.block_max.rf[float32 * 128]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("allocate attention.block_sum.rf[float32 * 128]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("attention.block_max[ramp("), std::string::npos) << ir;
  EXPECT_NE(ir.find("attention.block_sum[ramp("), std::string::npos) << ir;
  EXPECT_EQ(ir.find("attention.block_max.rf[(("), std::string::npos) << ir;  // no scalar partials
}

// Causal: the blocks of keys a tile of queries sees wholly below its diagonal run without
// the mask (loop partitioning on the mask's likely()); only the diagonal block keeps it.
TEST(Attention, CpuScheduleMasksOnlyTheDiagonalBlock) {
  const std::string ir = cpu_schedule_ir(1, 1, 256, 256, 16, true);
  // Tiles of 32 queries, blocks of 64 keys: tile t sees blocks 0 .. t / 2, the last masked.
  const size_t unmasked = ir.find("for (jb, 0, (b.h.fused.i.outer.fused / 2))");
  const size_t masked = ir.find("for (jb, (b.h.fused.i.outer.fused / 2), 1)");
  ASSERT_NE(unmasked, std::string::npos) << ir;
  ASSERT_NE(masked, std::string::npos) << ir;
  EXPECT_LT(unmasked, masked) << ir;
  const size_t first_mask = ir.find("select(likely(");
  EXPECT_GT(first_mask, masked) << ir;
}

// PyTorch's float64 matmul, softmax, matmul of the stored inputs (rounded to dtype); where
// PyTorch gives NaN (a query with every key masked) te gives zeros.
void check_golden(const std::string& name, bool causal, DataType dtype = Float(32)) {
  SCOPED_TRACE(name);
  const std::string dir = std::string(TE_TEST_DATA_DIR) + "/torch_golden/attention/" + name + "/";
  const NDArray q32 = NDArray::load_npy(dir + "q.npy"), k32 = NDArray::load_npy(dir + "k.npy"),
                v32 = NDArray::load_npy(dir + "v.npy"), want = NDArray::load_npy(dir + "out.npy");
  const bool has_bias = std::ifstream(dir + "bias.npy").good();
  auto in = [&](const NDArray& a) { return as_array(a.to_vector<float>(), a.shape(), dtype); };
  auto dims = [](const NDArray& a) {
    std::vector<Expr> d;
    for (int64_t x : a.shape()) d.push_back(make_const(Int(32), x));
    return d;
  };
  const double tol = dtype == Float(32) ? 2e-5 : dtype == Float(16) ? 2e-3 : 1.6e-2;
  for (bool scheduled : {false, true}) {
    SCOPED_TRACE(scheduled ? "jit, cpu schedule" : "interpret, default");
    Tensor Q = placeholder(dims(q32), dtype, "q"), K = placeholder(dims(k32), dtype, "k"),
           V = placeholder(dims(v32), dtype, "v");
    ops::AttentionOptions o;
    o.causal = causal;
    o.key_block = 8;
    std::vector<Tensor> args{Q, K, V};
    std::vector<Argument> call{in(q32), in(k32), in(v32)};
    if (has_bias) {
      NDArray b = NDArray::load_npy(dir + "bias.npy");
      o.bias = placeholder(dims(b), Float(32), "bias");
      args.push_back(o.bias);
      call.push_back(b);
    }
    Tensor out = ops::attention(Q, K, V, o);
    args.push_back(out);
    Schedule s = create_schedule({out});
    if (scheduled) ops::schedule_attention_cpu(s, out);
    LoweredFunc f = lower(s, args, "attention");
    NDArray result = NDArray::empty(want.shape(), dtype);
    call.push_back(result);
    if (scheduled) {
      build(f)("attention").call(call);
    } else {
      interpret(f, call);
    }
    const std::vector<double> w = want.to_vector<double>();
    for (size_t i = 0; i < w.size(); ++i) {
      const double expect = std::isnan(w[i]) ? 0.0 : w[i];
      ASSERT_NEAR(element(result, i), expect, tol * (1 + std::fabs(expect))) << "element " << i;
    }
  }
}

TEST(AttentionGolden, CausalWithFewerQueriesThanKeys) { check_golden("causal_5x19", true); }
TEST(AttentionGolden, GroupedQueryOddLengths) { check_golden("gqa_odd", false); }
TEST(AttentionGolden, BiasWithAFullyMaskedQueryGivesZeros) { check_golden("bias_masked_rows", false); }
TEST(AttentionGolden, LargeScores) { check_golden("large_scores", false); }
TEST(AttentionGolden, Decoding) { check_golden("decoding", true); }
TEST(AttentionGolden, Float16) { check_golden("float16", true, Float(16)); }
TEST(AttentionGolden, BFloat16) { check_golden("bfloat16", false, BFloat(16)); }

// Decoding (fewer queries per key than a block of queries): no transposed copy of k; each
// score a vector dot product along dim, the lanes of 16 keys' partials transposed in
// registers and added as vectors; v read in one pass per block (dim's 4 vectors held).
TEST(Attention, CpuScheduleForDecodingReadsKeysInRows) {
  Tensor Q = placeholder({1, 8, 1, 64}, Float(32), "q"), K = placeholder({1, 8, 512, 64}, Float(32), "k"),
         V = placeholder({1, 8, 512, 64}, Float(32), "v");
  Tensor out = ops::attention(Q, K, V);
  Schedule s = create_schedule({out});
  ops::schedule_attention_cpu(s, out, {0, 64});
  const std::string ir = to_string(lower(s, {Q, K, V, out}, "attention"));
  EXPECT_EQ(ir.find("attention.key_t"), std::string::npos) << ir;
  EXPECT_NE(ir.find("attention.scores.rf[ramp("), std::string::npos) << ir;
  EXPECT_NE(ir.find("tensor_intrinsic transpose_16x16_float32(attention.scores.rf["), std::string::npos) << ir;
  EXPECT_NE(ir.find("attention.scores[ramp("), std::string::npos) << ir;
  const size_t pv = ir.find("for (jj, 0, 64)");
  ASSERT_NE(pv, std::string::npos) << ir;
  EXPECT_EQ(ir.find("for (jj, 0, 64)", pv + 1), std::string::npos) << ir;
  EXPECT_EQ(ir.find("e.outer.outer"), std::string::npos) << ir;
}
// Decoding where the blocks of keys are whole (the lanes' sums by transposed blocks) and
// where they are not (seq_k 200: the last block partial, the lanes added one by one).
TEST(Attention, DecodingInWholeBlocks) {
  check_case({"one query per k/v head, 256 keys", 1, 4, 2, 1, 256, 48, true, false, 1.0f, Float(32), 32});
}

// auto_schedule recognises te::ops::attention and gives it its fused CPU schedule.
TEST(Attention, AutoScheduleGivesTheFusedForm) {
  Tensor Q = placeholder({1, 2, 40, 32}, Float(32), "q"), K = placeholder({1, 2, 70, 32}, Float(32), "k"),
         V = placeholder({1, 2, 70, 32}, Float(32), "v");
  ops::AttentionOptions o;
  o.causal = true;
  Tensor out = ops::attention(Q, K, V, o);
  LoweredFunc f = lower(auto_schedule({out}), {Q, K, V, out}, "attention");
  const std::string ir = to_string(f);
  EXPECT_NE(ir.find("parallel for"), std::string::npos) << ir;
  EXPECT_NE(ir.find("let scale_old = "), std::string::npos) << ir;
  EXPECT_NE(ir.find("attention.probs.global[ramp("), std::string::npos) << ir;
  const std::vector<float> qv = random_values(1 * 2 * 40 * 32, 7, 1.0f), kv = random_values(1 * 2 * 70 * 32, 8, 1.0f),
                           vv = random_values(1 * 2 * 70 * 32, 9, 1.0f);
  const Case c{"auto", 1, 2, 2, 40, 70, 32, true};
  const std::vector<double> want = reference(c, qv, kv, vv, {});
  NDArray result = NDArray::empty({1, 2, 40, 32}, Float(32));
  build(f)("attention")(NDArray::from_vector(qv, {1, 2, 40, 32}), NDArray::from_vector(kv, {1, 2, 70, 32}),
                        NDArray::from_vector(vv, {1, 2, 70, 32}), result);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(element(result, i), want[i], 2e-5 * (1 + std::fabs(want[i])));
}

// The recognised pattern inside a larger graph: a projection of q before it and a
// residual add after it; auto_schedule schedules attention whole and the rest with its
// rules.
TEST(Attention, AutoScheduleInsideALargerGraph) {
  const int B = 1, H = 2, M = 24, N = 40, D = 16;
  Tensor X = placeholder({B, H, M, D}, Float(32), "x"), K = placeholder({B, H, N, D}, Float(32), "k"),
         V = placeholder({B, H, N, D}, Float(32), "v");
  Tensor Q = compute(
      {B, H, M, D}, [&](Expr b, Expr h, Expr i, Expr c) { return X(b, h, i, c) * 0.5f + 1.0f; }, "q");
  ops::AttentionOptions o;
  o.causal = true;
  o.key_block = 16;
  Tensor att = ops::attention(Q, K, V, o);
  Tensor Y = compute(
      {B, H, M, D}, [&](Expr b, Expr h, Expr i, Expr c) { return att(b, h, i, c) + X(b, h, i, c); }, "y");
  const std::vector<Tensor> args{X, K, V, Y};
  LoweredFunc fast = lower(auto_schedule({Y}), args, "f");
  const std::string ir = to_string(fast);
  EXPECT_NE(ir.find("attention.probs.global[ramp("), std::string::npos) << ir;
  LoweredFunc ref = lower(create_schedule({Y}), args, "f");
  const std::vector<float> xv = random_values(B * H * M * D, 11, 1.0f), kv = random_values(B * H * N * D, 12, 1.0f),
                           vv = random_values(B * H * N * D, 13, 1.0f);
  std::vector<NDArray> outs;
  for (const LoweredFunc* f : {&ref, &fast}) {
    outs.push_back(NDArray::empty({B, H, M, D}, Float(32)));
    std::vector<Argument> call{NDArray::from_vector(xv, {B, H, M, D}), NDArray::from_vector(kv, {B, H, N, D}),
                               NDArray::from_vector(vv, {B, H, N, D}), outs.back()};
    if (f == &ref) {
      interpret(*f, call);
    } else {
      build (*f)("f").call(call);
    }
  }
  const std::vector<float> want = outs[0].to_vector<float>(), got = outs[1].to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5f * (1 + std::fabs(want[i]))) << i;
}

TEST(Attention, Errors) {
  Tensor q = placeholder({1, 4, 8, 16}, Float(32), "q"), k = placeholder({1, 2, 10, 16}, Float(32), "k"),
         v = placeholder({1, 2, 10, 16}, Float(32), "v");
  expect_error(
      [&] {
        ops::attention(placeholder({4, 8, 16}, Float(32), "q3"), k, v);
      },
      {"attention: q must be (batch, heads, seq, dim), got 3 axes"});
  expect_error(
      [&] {
        ops::attention(q, k, placeholder({1, 2, 10, 16}, Float(16), "vh"));
      },
      {"attention: v is float16 but q is float32: give all three one type"});
  expect_error(
      [&] {
        ops::attention(placeholder({1, 4, 8, 16}, Int(32), "qi"), k, v);
      },
      {"attention: q must be float32, float16 or bfloat16, got int32"});
  expect_error(
      [&] {
        ops::attention(q, placeholder({1, 3, 10, 16}, Float(32), "k3"), placeholder({1, 3, 10, 16}, Float(32), "v3"));
      },
      {"attention: k and v's 3 heads must divide q's 4 (grouped-query attention)"});
  expect_error(
      [&] {
        ops::attention(q, k, placeholder({1, 2, 11, 16}, Float(32), "v11"));
      },
      {"attention: k (1, 2, 10, 16) and v (1, 2, 11, 16) differ in heads or length"});
  expect_error(
      [&] {
        ops::attention(q, placeholder({1, 2, 10, 8}, Float(32), "k8"), v);
      },
      {"attention: q (1, 4, 8, 16) and k (1, 2, 10, 8) differ in dim"});
  ops::AttentionOptions o;
  o.bias = placeholder({1, 4, 8, 9}, Float(32), "bias");
  expect_error([&] { ops::attention(q, k, v, o); },
               {"attention: the bias (1, 4, 8, 9) does not match (batch, heads, seq_q, seq_k) = (1, 4, 8, 10) in "
                "dimension 3 (an extent of 1 broadcasts)"});
  expect_error([&] { ops::attention_stages_of(q); },
               {"attention_stages_of: tensor 'q' is not an output of te::ops::attention"});
  Schedule s = create_schedule({ops::attention(q, k, v)});
  ops::AttentionCpuOptions bad;
  bad.query_block = -1;
  expect_error(
      [&] { ops::schedule_attention_cpu(s, ops::attention(q, k, v), bad); },
      {"schedule_attention_cpu: query_block must be >= 0 (0: default) and vector_bytes 0 (the host's) or >= 4, "
       "got -1 and 0"});
}

}  // namespace
}  // namespace te
