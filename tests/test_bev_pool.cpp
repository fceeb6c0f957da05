// te::ops::bev_pool_v2 against PyTorch's results (tests/data/bev_pool, made by
// scripts/gen_bev_pool_golden.py with index_add_): as written through interpret(), the CPU
// schedule through the JIT (checked and unchecked) on both cases, the CUDA schedule on the
// emulation on the small case (bit for bit against interpret() of the same function);
// invalid inputs.
// Tolerance: the kernels and index_add_ add each cell's points in the same order, but
// FMA contraction (JIT) rounds differently: 2^-20 * (1 + sum of |terms|) per element
// bounds it (the largest cell has 528 points).
#include <gtest/gtest.h>

#include <te/ops/bev_pool.h>
#include <te/ops/bev_pool_cpu.h>
#include <te/ops/bev_pool_cuda.h>
#include <te/te.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda_emulation/harness.h"
#include "test_util.h"

namespace te {
namespace {

const std::string kDir = std::string(TE_TEST_DATA_DIR) + "/bev_pool/";

struct Case {
  NDArray depth, feat, ranks_depth, ranks_feat, ranks_bev, starts, lengths, want;
  std::vector<int32_t> bev;
  explicit Case(const std::string& name) {
    auto load = [&](const char* f) { return NDArray::load_npy(kDir + name + "/" + f + ".npy"); };
    depth = load("depth");
    feat = load("feat");
    ranks_depth = load("ranks_depth");
    ranks_feat = load("ranks_feat");
    ranks_bev = load("ranks_bev");
    starts = load("interval_starts");
    lengths = load("interval_lengths");
    want = load("out");
    bev = load("bev_shape").to_vector<int32_t>();
  }
  std::vector<Argument> args(const NDArray& out) const {
    return {depth, feat, ranks_depth, ranks_feat, ranks_bev, starts, lengths, out};
  }
};

enum class Target { AsWritten, Cpu, Cuda };

// bev_pool_v2 over symbolic shapes (one kernel for every case).
LoweredFunc bev_pool_func(Target target, const std::string& name) {
  Var B("B"), N("N"), D("D"), H("fH"), W("fW"), C("C"), Dz("Dz"), Dy("Dy"), Dx("Dx"), P("n_points"), I("n_intervals");
  Tensor depth = placeholder({B, N, D, H, W}, Float(32), "depth");
  Tensor feat = placeholder({B, N, H, W, C}, Float(32), "feat");
  Tensor rd = placeholder({P}, Int(32), "ranks_depth"), rf = placeholder({P}, Int(32), "ranks_feat"),
         rb = placeholder({P}, Int(32), "ranks_bev");
  Tensor st = placeholder({I}, Int(32), "interval_starts"), len = placeholder({I}, Int(32), "interval_lengths");
  Tensor out = ops::bev_pool_v2(depth, feat, rd, rf, rb, st, len, {B, Dz, Dy, Dx});
  Schedule s = create_schedule({out});
  if (target == Target::Cpu) ops::schedule_bev_pool_cpu(s, out);
  if (target == Target::Cuda) ops::schedule_bev_pool_cuda(s, out);
  return lower(s, {depth, feat, rd, rf, rb, st, len, out}, name);
}

void expect_matches(const NDArray& got, const Case& c, const std::string& what) {
  ASSERT_EQ(got.shape(), c.want.shape()) << what;
  std::vector<float> g = got.to_vector<float>(), w = c.want.to_vector<float>();
  // sum |depth * feat| per cell bounds the rounding of either order.
  std::vector<double> mag(w.size(), 0.0);
  std::vector<float> dv = c.depth.to_vector<float>(), fv = c.feat.to_vector<float>();
  std::vector<int32_t> rd = c.ranks_depth.to_vector<int32_t>(), rf = c.ranks_feat.to_vector<int32_t>(),
                       rb = c.ranks_bev.to_vector<int32_t>();
  const size_t ch = static_cast<size_t>(c.feat.shape()[4]);
  for (size_t p = 0; p < rd.size(); ++p)
    for (size_t k = 0; k < ch; ++k) mag[rb[p] * ch + k] += std::fabs(double(dv[rd[p]]) * fv[rf[p] * ch + k]);
  double worst = 0;
  int bad = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double err = std::fabs(double(g[i]) - w[i]), bound = std::ldexp(1.0, -20) * (1 + mag[i]);
    worst = std::max(worst, err);
    if (!(err <= bound) && bad++ < 8)
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", PyTorch's " << w[i];
  }
  std::printf("[ measured ] %-28s max |error| %.3g\n", what.c_str(), worst);
}

class BevPool : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    program_ = std::make_unique<cuda_test::EmulatedProgram>();
    cuda_ = bev_pool_func(Target::Cuda, "bev_pool_cuda");
    program_->add(build_cuda(cuda_));
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() { program_.reset(); }

 protected:
  static std::unique_ptr<cuda_test::EmulatedProgram> program_;
  static LoweredFunc cuda_;
  static bool built_;
  static std::string log_;
};
std::unique_ptr<cuda_test::EmulatedProgram> BevPool::program_;
LoweredFunc BevPool::cuda_;
bool BevPool::built_ = false;
std::string BevPool::log_;

NDArray output_for(const Case& c) { return NDArray::empty(c.want.shape(), Float(32)); }

TEST_F(BevPool, AsWrittenThroughInterpret) {
  Case c("small");
  NDArray out = output_for(c);
  interpret(bev_pool_func(Target::AsWritten, "bev_pool"), c.args(out));
  expect_matches(out, c, "small interpret");
}

TEST_F(BevPool, CpuScheduleThroughTheJit) {
  for (const char* name : {"small", "realistic"}) {
    Case c(name);
    LoweredFunc f = bev_pool_func(Target::Cpu, "bev_pool");
    for (bool checked : {true, false}) {
      BuildOptions o;
      o.check_data_indices = checked;
      NDArray out = output_for(c);
      build(f, o)("bev_pool").call(c.args(out));
      expect_matches(out, c, std::string(name) + (checked ? " JIT" : " JIT unchecked"));
    }
  }
}

TEST_F(BevPool, ConstantShapesFoldTheFlatIndices) {
  // With constant extents, unravelling a flat rank and flattening it again is the rank.
  Tensor depth = placeholder({1, 6, 59, 16, 44}, Float(32), "depth");
  Tensor feat = placeholder({1, 6, 16, 44, 80}, Float(32), "feat");
  Var P("n_points"), I("n_intervals");
  Tensor rd = placeholder({P}, Int(32), "ranks_depth"), rf = placeholder({P}, Int(32), "ranks_feat"),
         rb = placeholder({P}, Int(32), "ranks_bev");
  Tensor st = placeholder({I}, Int(32), "interval_starts"), len = placeholder({I}, Int(32), "interval_lengths");
  Tensor out = ops::bev_pool_v2(depth, feat, rd, rf, rb, st, len, {1, 1, 128, 128});
  LowerOptions no_cse;  // the folded indices whole, not shared through locals
  no_cse.eliminate_common_subexpressions = false;
  std::string text = to_string(lower(create_schedule({out}), {depth, feat, rd, rf, rb, st, len, out}, "bp", no_cse));
  EXPECT_NE(text.find("depth[ranks_depth[(interval_starts[interval] + p)]]"), std::string::npos) << text;
  EXPECT_NE(text.find("bev_pool[(c + (ranks_bev[interval_starts[interval]] * 80))]"), std::string::npos) << text;
  EXPECT_NE(text.find("for (p, 0, interval_lengths[interval])"), std::string::npos) << text;
}

TEST_F(BevPool, CudaScheduleOnTheEmulation) {
  ASSERT_TRUE(built_) << log_;
  EXPECT_NE(build_cuda(cuda_).source().find("__trap()"), std::string::npos);  // the gathers are checked
  // The small case only: the emulation runs the realistic one's 900k threads in about
  // 100 s (the JIT test covers that case).
  for (const char* name : {"small"}) {
    Case c(name);
    NDArray out = output_for(c);
    cuda_test::EmulatedRun r = program_->run("bev_pool_cuda", cuda_, c.args(out));
    ASSERT_EQ(r.error, 0) << r.output;
    expect_matches(r.arrays[7], c, std::string(name) + " CUDA emulation");
    if (std::string(name) == "small") {
      NDArray expected = output_for(c);
      interpret(cuda_, c.args(expected));
      EXPECT_EQ(cuda_test::compare_arrays(expected, r.arrays[7]), "");
    }
  }
}

// Each invalid input: the JIT and interpret() fail naming the buffer, the CUDA kernel
// traps, check_bev_pool_inputs names the violation.
TEST_F(BevPool, InvalidInputs) {
  ASSERT_TRUE(built_) << log_;
  Case c("small");
  LoweredFunc f = bev_pool_func(Target::Cpu, "bev_pool");
  const int64_t depth_size = int64_t(c.depth.to_vector<float>().size());
  const int64_t feat_rows = depth_size / c.depth.shape()[2];
  const int64_t cells = int64_t(c.want.to_vector<float>().size()) / c.feat.shape()[4];
  auto validate = [&](const Case& k) {
    ops::check_bev_pool_inputs(k.ranks_depth, k.ranks_feat, k.ranks_bev, k.starts, k.lengths, depth_size, feat_rows,
                               cells);
  };
  validate(c);  // the golden inputs pass
  auto edit = [](NDArray& a, size_t i, int32_t v) {
    std::vector<int32_t> x = a.to_vector<int32_t>();
    x[i] = v;
    a = NDArray::from_vector(x, a.shape());
  };
  struct Bad {
    const char* what;
    std::function<void(Case&)> make;
    const char* runtime;  // the buffer the kernels' checks name
    const char* check;    // check_bev_pool_inputs' message
  };
  const int32_t n = int32_t(c.ranks_bev.shape()[0]);
  const std::vector<Bad> bads = {
      {"negative BEV rank",
       [&](Case& k) {
         for (int32_t p = 0; p < n; ++p) edit(k.ranks_bev, size_t(p), -1);
       },
       "store to buffer 'bev_pool'", "ranks_bev[0] = -1 is outside"},
      {"depth rank past the end", [&](Case& k) { edit(k.ranks_depth, 3, int32_t(depth_size)); },
       "load from buffer 'depth'", "ranks_depth[3]"},
      {"negative feat rank", [&](Case& k) { edit(k.ranks_feat, 0, -5); }, "load from buffer 'feat'",
       "ranks_feat[0] = -5"},
      {"length running past the end",
       [&](Case& k) {
         const size_t last = size_t(k.lengths.shape()[0] - 1);
         edit(k.lengths, last, k.lengths.to_vector<int32_t>()[last] + 1);
       },
       "load from buffer 'ranks_depth'", "runs past the last point"},
  };
  for (const Bad& b : bads) {
    SCOPED_TRACE(b.what);
    Case k("small");
    b.make(k);
    NDArray out = output_for(k);
    expect_error([&] { build(f)("bev_pool").call(k.args(out)); }, {"bev_pool", b.runtime, "read from memory"});
    expect_error([&] { interpret(f, k.args(out)); }, {b.runtime});
    cuda_test::EmulatedRun r = program_->run("bev_pool_cuda", cuda_, k.args(out));
    EXPECT_NE(r.output.find("__trap()"), std::string::npos) << r.output;
    expect_error([&] { validate(k); }, {"bev_pool_v2", b.check});
  }
  // Unsorted ranks: within bounds, so the kernel runs (and trusts the intervals);
  // the host check names it.
  Case k("small");
  std::vector<int32_t> rb = k.ranks_bev.to_vector<int32_t>();
  std::swap(rb[0], rb.back());
  k.ranks_bev = NDArray::from_vector(rb, k.ranks_bev.shape());
  expect_error([&] { validate(k); }, {"bev_pool_v2", "ranks_bev is not sorted"});
  Case gap("small");
  edit(gap.starts, 1, gap.starts.to_vector<int32_t>()[1] + 1);
  expect_error([&] { validate(gap); }, {"interval 1", "does not start where the previous one ends"});
  Case mixed("small");
  std::vector<int32_t> len = mixed.lengths.to_vector<int32_t>(), st = mixed.starts.to_vector<int32_t>();
  len[0] += len[1];  // swallow the next cell's run
  st.erase(st.begin() + 1);
  len.erase(len.begin() + 1);
  mixed.lengths = NDArray::from_vector(len, {int64_t(len.size())});
  mixed.starts = NDArray::from_vector(st, {int64_t(st.size())});
  expect_error([&] { validate(mixed); }, {"interval 0", "holds points of different BEV cells"});
}

TEST(BevPoolOp, ConstructionErrors) {
  Tensor depth = placeholder({1, 2, 3, 4, 5}, Float(32), "depth");
  Tensor feat = placeholder({1, 2, 4, 5, 8}, Float(32), "feat");
  Var P("P"), I("I");
  Tensor r = placeholder({P}, Int(32), "r"), s = placeholder({I}, Int(32), "s");
  Tensor l = placeholder({I}, Int(32), "l");
  std::vector<Expr> bev{1, 1, 4, 4};
  EXPECT_NO_THROW(ops::bev_pool_v2(depth, feat, r, r, r, s, l, bev));
  expect_error(
      [&] {
        ops::bev_pool_v2(depth, placeholder({1, 2, 4, 5, 8}, Float(64), "f64"), r, r, r, s, l, bev);
      },
      {"bev_pool_v2", "depth is float32 but feat is float64"});
  expect_error(
      [&] {
        ops::bev_pool_v2(placeholder({1, 2, 3, 4}, Float(32), "d4"), feat, r, r, r, s, l, bev);
      },
      {"bev_pool_v2", "depth 'd4' must have 5 dimensions"});
  expect_error(
      [&] {
        ops::bev_pool_v2(depth, placeholder({1, 3, 4, 5, 8}, Float(32), "f"), r, r, r, s, l, bev);
      },
      {"bev_pool_v2", "disagree on N"});
  expect_error([&] { ops::bev_pool_v2(depth, feat, placeholder({P}, Float(32), "rf"), r, r, s, l, bev); },
               {"bev_pool_v2", "ranks_depth 'rf' must be int32"});
  expect_error(
      [&] {
        ops::bev_pool_v2(depth, feat, r, r, placeholder({4}, Int(32), "r4"), placeholder({3}, Int(32), "s3"),
                         placeholder({2}, Int(32), "l2"), bev);
      },
      {"bev_pool_v2", "one entry per interval"});
  expect_error(
      [&] {
        ops::bev_pool_v2(depth, feat, r, r, r, s, l, {1, 4, 4});
      },
      {"bev_pool_v2", "bev_shape must be (B, Dz, Dy, Dx)"});
  expect_error([&] { ops::bev_pool_v2(depth, feat, r, r, r, s, l, {2, 1, 4, 4}); }, {"bev_pool_v2", "bev_shape's B"});
}

}  // namespace
}  // namespace te
