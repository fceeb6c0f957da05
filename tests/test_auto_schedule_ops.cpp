// Every operator of te::ops is auto-schedulable (issue 38): auto_schedule's rules for the
// CPU, a short measured search, and the rules for CUDA (run by the CUDA emulation) each
// give a schedule that computes what the default schedule computes, through interpret(),
// the JIT and the emulation (tests/fuzz's case checker and CUDA batch). The ops include
// tuple reducers (argmax), multi-output stages (layer_norm_backward), scatter stages
// (grid_sample's backward), data-dependent reductions (bev_pool_v2), the scatter-adds
// of their gradients and row reductions (attention's online softmax).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/autodiff.h>
#include <te/ops/activation.h>
#include <te/ops/attention.h>
#include <te/ops/bev_pool.h>
#include <te/ops/gemm_int8.h>
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_backward.h>
#include <te/ops/int4.h>
#include <te/ops/matmul.h>
#include <te/ops/normalization.h>
#include <te/ops/normalization_backward.h>
#include <te/ops/rotary.h>
#include <te/te.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cuda_batch.h"
#include "fuzz_case.h"
#include "fuzz_rng.h"
#include "fuzz_test_util.h"
#include "fuzz_values.h"

namespace te::fuzz {
namespace {

// One operator: its placeholders and outputs, and the inputs whose values must be
// particular (sorted intervals, sampling grids); the others are small random integers.
struct OpCase {
  std::string name;
  std::vector<Tensor> inputs, outputs;
  std::map<std::string, NDArray> given;
};

Tensor in(std::vector<Expr> shape, const std::string& name, DataType t = Float(32)) {
  return placeholder(std::move(shape), t, name);
}

NDArray grid_values(const std::vector<int64_t>& shape, uint64_t seed) {
  NDArray a = NDArray::empty(shape, Float(32));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> u(-1.1f, 1.1f);
  for (int64_t i = 0; i < a.size(); ++i) static_cast<float*>(a.data())[i] = u(rng);
  return a;
}

OpCase grid_sample_case(const std::string& mode, const std::string& padding, bool align, bool three_d) {
  ops::GridSampleOptions o;
  o.mode = mode;
  o.padding_mode = padding;
  o.align_corners = align;
  Tensor data = three_d ? in({2, 3, 4, 5, 6}, "data") : in({2, 3, 7, 9}, "data");
  std::vector<int64_t> g = three_d ? std::vector<int64_t>{2, 3, 4, 5, 3} : std::vector<int64_t>{2, 5, 6, 2};
  Tensor grid = in(std::vector<Expr>(g.begin(), g.end()), "grid");
  OpCase c{"grid_sample " + mode + " " + padding + (align ? " align" : "") + (three_d ? " 3-D" : ""),
           {data, grid},
           {ops::grid_sample(data, grid, o)},
           {{"grid", grid_values(g, 7)}}};
  return c;
}

OpCase grid_sample_backward_case(const std::string& mode) {
  ops::GridSampleOptions o;
  o.mode = mode;
  Tensor data = in({2, 3, 7, 9}, "data"), grid = in({2, 5, 6, 2}, "grid"), head = in({2, 3, 5, 6}, "head");
  ops::GridSampleBackwardStages b = ops::grid_sample_backward_stages(data, grid, head, o);
  return {"grid_sample_backward " + mode,
          {data, grid, head},
          {b.grad_data, b.grad_grid},
          {{"grid", grid_values({2, 5, 6, 2}, 9)}}};
}

// bev_pool_v2 on the small golden case (its sorted ranks and intervals), with or
// without te::gradient's depth and feat gradients.
OpCase bev_pool_case(bool backward) {
  const std::string dir = std::string(TE_TEST_DATA_DIR) + "/bev_pool/small/";
  OpCase c;
  c.name = backward ? "bev_pool_v2 gradients" : "bev_pool_v2";
  auto exprs = [](const NDArray& a) {
    std::vector<Expr> v;
    for (int64_t e : a.shape()) v.push_back(make_const(Int(32), e));
    return v;
  };
  for (const char* f :
       {"depth", "feat", "ranks_depth", "ranks_feat", "ranks_bev", "interval_starts", "interval_lengths"}) {
    NDArray a = NDArray::load_npy(dir + f + ".npy");
    c.inputs.push_back(placeholder(exprs(a), a.dtype(), f));
    c.given[f] = a;
  }
  const std::vector<int32_t> bev = NDArray::load_npy(dir + "bev_shape.npy").to_vector<int32_t>();
  const std::vector<Tensor>& t = c.inputs;
  Tensor out = ops::bev_pool_v2(t[0], t[1], t[2], t[3], t[4], t[5], t[6], {bev[0], bev[1], bev[2], bev[3]});
  if (!backward) {
    c.outputs = {out};
    return c;
  }
  Tensor head = placeholder(out.shape(), Float(32), "head");
  c.inputs.push_back(head);
  c.outputs = gradient(out, {t[0], t[1]}, head);
  return c;
}

std::vector<OpCase> all_ops() {
  std::vector<OpCase> v;
  {
    Tensor x = in({5, 37}, "x");
    v.push_back({"gelu", {x}, {ops::gelu(x)}, {}});
    v.push_back({"gelu tanh", {x}, {ops::gelu(x, "tanh")}, {}});
    v.push_back({"softmax", {x}, {ops::softmax(x)}, {}});
    v.push_back({"reduce_rows max", {x}, {ops::reduce_rows(x, Reducer::Max)}, {}});
    v.push_back({"argmax_rows", {x}, ops::argmax_rows(x), {}});
    Tensor gamma = in({37}, "gamma"), beta = in({37}, "beta");
    v.push_back({"layer_norm", {x, gamma, beta}, {ops::layer_norm(x, gamma, beta)}, {}});
    v.push_back({"layer_norm_welford", {x, gamma, beta}, {ops::layer_norm_welford(x, gamma, beta)}, {}});
    Tensor y = in({5, 37}, "y"), dy = in({5, 37}, "dy");
    v.push_back({"softmax_backward", {y, dy}, {ops::softmax_backward(y, dy)}, {}});
    ops::LayerNormBackward b = ops::layer_norm_backward(x, gamma, dy);
    v.push_back({"layer_norm_backward", {x, gamma, dy}, {b.dx, b.dgamma, b.dbeta}, {}});
  }
  {
    Tensor a = in({17, 29}, "a"), b = in({29, 23}, "b");
    v.push_back({"matmul", {a, b}, {ops::matmul(a, b)}, {}});
    ops::GemmU8S8 g = ops::gemm_u8s8(5, 32, 12);
    v.push_back({"gemm_u8s8", {g.a, g.b_packed}, {g.c}, {}});
  }
  {
    Tensor x = in({5, 3, 16}, "x");
    v.push_back({"rotary_embedding", {x}, {ops::rotary_embedding(x)}, {}});
    Tensor packed = in({4, 8}, "packed", UInt(8)), scales = in({4, 2}, "scales"), zeros = in({4, 2}, "zeros", Int(8));
    v.push_back({"unpack_int4", {packed}, {ops::unpack_int4(packed)}, {}});
    v.push_back({"dequantize_int4", {packed, scales, zeros}, {ops::dequantize_int4(packed, scales, zeros, 8)}, {}});
  }
  {
    // Attention (a row reduction over blocks of keys): causal over grouped-query heads, and
    // with a bias; odd lengths, the last block of keys partial.
    Tensor q = in({1, 4, 7, 16}, "q"), k = in({1, 2, 11, 16}, "k"), val = in({1, 2, 11, 16}, "v");
    ops::AttentionOptions causal;
    causal.causal = true;
    causal.key_block = 4;
    v.push_back({"attention causal gqa", {q, k, val}, {ops::attention(q, k, val, causal)}, {}});
    Tensor bias = in({1, 4, 7, 11}, "bias");
    ops::AttentionOptions biased;
    biased.bias = bias;
    v.push_back({"attention bias", {q, k, val, bias}, {ops::attention(q, k, val, biased)}, {}});
  }
  v.push_back(grid_sample_case("bilinear", "zeros", false, false));
  v.push_back(grid_sample_case("nearest", "reflection", true, false));
  v.push_back(grid_sample_case("bicubic", "border", false, false));
  v.push_back(grid_sample_case("bilinear", "border", true, true));
  v.push_back(grid_sample_backward_case("bilinear"));
  v.push_back(grid_sample_backward_case("nearest"));
  v.push_back(bev_pool_case(false));
  v.push_back(bev_pool_case(true));
  return v;
}

// The op auto-scheduled with o, as a case of tests/fuzz's checker: the default schedule
// interpreted is its reference.
FuzzCase auto_case(const OpCase& op, const AutoScheduleOptions& o, uint64_t seed) {
  FuzzCase c;
  c.seed = seed;
  c.kind = "auto_schedule op";
  c.program = fmt::format("{} auto-scheduled for {}, trials {}\n", op.name, o.target.str(), o.trials);
  c.compare = Compare::Relative;
  c.rel_tol = 1e-4;
  c.abs_tol = 1e-4;  // inputs up to 8: a bicubic tap sum cancels to 0.014 with 3e-6 of rounding
  c.gpu = o.target.is_cuda();
  c.run_jit = !c.gpu;
  c.main.label = "auto-scheduled";
  std::vector<Tensor> args = op.inputs;
  args.insert(args.end(), op.outputs.begin(), op.outputs.end());
  Rng rng(seed);
  std::vector<Argument> values;
  for (const Tensor& t : args) {
    std::vector<int64_t> shape;
    for (const Expr& e : t.shape()) shape.push_back(*as_const_int(e));
    auto given = op.given.find(t.name());
    const bool output = std::find_if(op.outputs.begin(), op.outputs.end(),
                                     [&](const Tensor& u) { return u.same_as(t); }) != op.outputs.end();
    if (given != op.given.end())
      values.emplace_back(given->second.copy());
    else if (output)
      values.emplace_back(NDArray::empty(shape, t.dtype()));
    else
      values.emplace_back(random_array(rng, shape, t.dtype(), ValueProfile::SmallInt));
  }
  const std::string name = fmt::format("op{}", seed);  // one CUDA batch holds every case
  try {
    c.references.push_back({"default schedule", lower(create_schedule(op.outputs), args, name), values});
    c.main.func = lower(auto_schedule(op.outputs, o), args, name);
    c.main.args = values;
  } catch (const std::exception& e) {
    c.failure = std::string("auto_schedule or lowering failed: ") + e.what();
  }
  return c;
}

AutoScheduleOptions cpu_options(int trials) {
  AutoScheduleOptions o;
  o.threads = 2;
  o.trials = trials;
  return o;
}

TEST(AutoScheduleOps, EveryOpWithTheCpuRules) {
  RunTally tally("te::ops auto-scheduled (CPU rules)");
  uint64_t seed = 1;
  const std::vector<OpCase> ops = all_ops();
  for (const OpCase& op : ops) {
    SCOPED_TRACE(op.name);
    tally.add(check_case(auto_case(op, cpu_options(0), seed++)));
  }
  EXPECT_EQ(tally.passed(), static_cast<int>(ops.size()));
}

TEST(AutoScheduleOps, EveryOpWithAShortSearch) {
  RunTally tally("te::ops auto-scheduled (CPU, 2-trial search)");
  uint64_t seed = 100;
  const std::vector<OpCase> ops = all_ops();
  for (const OpCase& op : ops) {
    SCOPED_TRACE(op.name);
    tally.add(check_case(auto_case(op, cpu_options(2), seed++)));
  }
  EXPECT_EQ(tally.passed(), static_cast<int>(ops.size()));
}

TEST(AutoScheduleOps, EveryOpWithTheCudaRulesInTheEmulation) {
  AutoScheduleOptions o;
  o.target = "cuda";
  const std::vector<OpCase> ops = all_ops();
  std::vector<FuzzCase> cases;
  for (size_t k = 0; k < ops.size(); ++k) cases.push_back(auto_case(ops[k], o, 200 + k));
  RunTally on_cpu("te::ops auto-scheduled for CUDA, interpreted"),
      emulated("te::ops auto-scheduled for CUDA, emulated");
  CudaBatch batch;
  for (const FuzzCase& c : cases) {
    CaseResult r = check_case(c);
    on_cpu.add(r);
    if (r.status == CaseResult::Status::Pass) batch.add(c);
  }
  for (const CaseResult& r : batch.run()) emulated.add(r);
  EXPECT_EQ(emulated.passed(), static_cast<int>(ops.size()));
}

}  // namespace
}  // namespace te::fuzz
