// Schedule::pretransform: the function takes an input (constant weights) in another
// layout, made once by the function lower_pretransform() returns. The pretransformed
// kernel on packed weights equals the default schedule on the original ones bit for bit
// in interpret() (a layout moves values, it computes nothing new) and within the JIT's
// fused multiply-adds; the pack function is checked against a plain C++ permutation;
// auto_schedule takes AutoScheduleOptions::constant_inputs pretransformed where its
// layout rule packs weights, in the rules and in a search; every misuse is a te::Error.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <string>
#include <vector>

#include "conv3x3_cases.h"
#include "test_util.h"

using namespace te;

namespace {

// x (1, CI, H, H) or (1, H, H, CI) and its weights; the output.
using Conv = Conv3x3;
Conv conv_nchw(int CI, int CO, int H) { return conv3x3_nchw(1, CI, CO, H, H); }
Conv conv_nhwc(int CI, int CO, int H) { return conv3x3_nhwc_padded(CI, CO, H, H); }

// A transposed convolution in NCHW as TVM writes it (zeros inserted between the input's
// pixels, the flipped kernel), weights (CI, CO, 4, 4), stride 2, padding 1.
Conv conv_transpose_nchw(int CI, int CO, int H) {
  const int K = 4, S = 2, P = 1, B = K - 1 - P, DH = (H - 1) * S + 1 + 2 * B, OH = DH - K + 1;
  Conv c;
  c.x = placeholder({1, CI, H, H}, Float(32), "x");
  c.w = placeholder({CI, CO, K, K}, Float(32), "w");
  auto at = [&](Expr y) { return y >= B && y < B + (H - 1) * S + 1 && truncmod(y - B, S) == 0; };
  Tensor d = compute(
      {1, CI, DH, DH},
      [&](Expr n, Expr ci, Expr y, Expr xx) {
        return if_then_else(at(y) && at(xx), c.x(n, ci, truncdiv(y - B, S), truncdiv(xx - B, S)), 0.0f);
      },
      "dilated");
  IterVar rc = reduce_axis({0, CI}, "rc"), rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw");
  c.out = compute(
      {1, CO, OH, OH},
      [&](Expr n, Expr co, Expr h, Expr ww) {
        return sum(d(n, rc, h + rh, ww + rw) * c.w(rc, co, K - 1 - rh, K - 1 - rw), {rc, rh, rw});
      },
      "t2d");
  return c;
}

// w laid out in `order` (the packed array's dimension p is w's dimension order[p]) and,
// with block > 0, the last of them blocked ([ceil(e / block)][...][block], zeros past the
// extent e), in plain C++.
std::vector<float> permute(const std::vector<float>& w, const std::vector<int64_t>& shape,
                           const std::vector<int>& order, int64_t block = 0) {
  const size_t n = shape.size();
  std::vector<int64_t> stride(n, 1);
  for (size_t d = n - 1; d > 0; --d) stride[d - 1] = stride[d] * shape[d];
  const int64_t last = shape[static_cast<size_t>(order.back())];
  const int64_t blocks = block > 0 ? (last + block - 1) / block : 1, width = block > 0 ? block : last;
  std::vector<float> out;
  for (int64_t b = 0; b < blocks; ++b) {
    std::vector<int64_t> idx(n, 0);  // the packed array's index within the block, row-major
    for (bool more = true; more;) {
      const int64_t along = b * width + idx[n - 1];
      int64_t src = 0;
      for (size_t p = 0; p + 1 < n; ++p) src += idx[p] * stride[static_cast<size_t>(order[p])];
      src += along * stride[static_cast<size_t>(order.back())];
      out.push_back(along < last ? w[static_cast<size_t>(src)] : 0.0f);
      more = false;
      for (size_t p = n; p-- > 0;) {
        if (++idx[p] < (p + 1 == n ? width : shape[static_cast<size_t>(order[p])])) {
          more = true;
          break;
        }
        idx[p] = 0;
      }
    }
  }
  return out;
}

struct Outputs {
  std::vector<float> jit, interpreted, reference;
  std::string ir;
};

// s's function on the weights packed by its pack function (checked against `permute`),
// and the default schedule on the original weights; the JIT's only with `jit` (a
// schedule made for another CPU is interpreted).
Outputs run(const Conv& c, const Schedule& s, bool jit = true) {
  Outputs r;
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "kernel");
  r.ir = to_string(f.body);
  const std::vector<int64_t> xs = shape_of(c.x), ws = shape_of(c.w);
  int64_t nx = 1, nw = 1;
  for (int64_t d : xs) nx *= d;
  for (int64_t d : ws) nw *= d;
  NDArray x = NDArray::from_vector(uniform_floats(size_t(nx), 1), xs);
  NDArray w = NDArray::from_vector(uniform_floats(size_t(nw), 2), ws);
  NDArray taken = w;
  if (!s.pretransforms().empty()) {
    const Pretransform& p = s.pretransforms()[0];
    taken = NDArray::empty(shape_of(p.taken), Float(32));
    build(lower_pretransform(s, c.w, "pack"))("pack").call({w, taken});
    EXPECT_EQ(taken.to_vector<float>(), permute(w.to_vector<float>(), ws, p.storage_order, p.inner_block));
  }
  auto call = [&](const NDArray& weights, auto&& fn) {
    NDArray out = NDArray::empty(shape_of(c.out), Float(32));
    fn(std::vector<Argument>{x, weights, out});
    return out.to_vector<float>();
  };
  if (jit) r.jit = call(taken, [&](const std::vector<Argument>& a) { build(f)("kernel").call(a); });
  r.interpreted = call(taken, [&](const std::vector<Argument>& a) { interpret(f, a); });
  LoweredFunc plain = lower(create_schedule({c.out}), {c.x, c.w, c.out}, "plain");
  r.reference = call(w, [&](const std::vector<Argument>& a) { interpret(plain, a); });
  return r;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol, const std::string& ir) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "element " << i << "\n" << ir;
}

TEST(Pretransform, TheFunctionTakesThePackedLayout) {
  Conv c = conv_nchw(8, 16, 7);
  Schedule s = create_schedule({c.out});
  Tensor taken = s.pretransform(c.w, {2, 3, 1, 0});
  EXPECT_EQ(taken.name(), "w_2310");
  EXPECT_EQ(shape_of(taken), (std::vector<int64_t>{3, 3, 8, 16}));
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_EQ(s.pretransforms()[0].storage_order, (std::vector<int>{2, 3, 1, 0}));
  // The original listed: lower puts the taken placeholder in its place.
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "conv");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[1].name(), "w_2310");
  EXPECT_TRUE(has(to_string(f.body), "w_2310[")) << f.body;
  EXPECT_FALSE(has(to_string(f.body), " w[")) << f.body;
  // Listing the taken placeholder itself gives the same function.
  EXPECT_EQ(to_string(lower(s, {c.x, taken, c.out}, "conv").body), to_string(f.body));
  Outputs r = run(c, s);
  EXPECT_EQ(r.interpreted, r.reference);
  expect_close(r.jit, r.reference, 1e-5f, r.ir);
}

TEST(Pretransform, BlockedByColumns) {
  // OIHW as HWIO, its 20 output channels in blocks of 8 (the last one padded with zeros):
  // [3][3][3][8][8], each block's columns contiguous.
  Conv c = conv_nchw(8, 20, 7);
  Schedule s = create_schedule({c.out});
  Tensor taken = s.pretransform(c.w, {2, 3, 1, 0}, 8);
  EXPECT_EQ(taken.name(), "w_2310_b8");
  EXPECT_EQ(shape_of(taken), (std::vector<int64_t>{3, 3, 3, 8, 8}));
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_EQ(s.pretransforms()[0].inner_block, 8);
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, "w_2310_b8[")) << r.ir;
  EXPECT_EQ(r.interpreted, r.reference);
  expect_close(r.jit, r.reference, 1e-5f, r.ir);
  // The identity order with a block: the layout changes all the same.
  Conv d = conv_nhwc(4, 24, 6);
  Schedule t = create_schedule({d.out});
  EXPECT_EQ(t.pretransform(d.w, {0, 1, 2, 3}, 16).name(), "w_0123_b16");
  Outputs q = run(d, t);
  EXPECT_EQ(q.interpreted, q.reference);
  expect_close(q.jit, q.reference, 1e-5f, q.ir);
}

TEST(Pretransform, AutoScheduleBlocksConstantWeightsByTheTilesColumns) {
  // 128 output channels: more than a register tile spans (at most 4 vectors), so the
  // rules take the constant HWIO weights in blocks of 4 vectors' columns and tile them by
  // a width that divides the block (2 vectors), each tile's weights one contiguous vector
  // load; 32 channels fit one tile and stay as they are.
  for (const std::string target : {"llvm -mcpu=x86-64-v3", "llvm -mcpu=x86-64-v4", "llvm"}) {
    SCOPED_TRACE(target);
    const int64_t lanes = resolved_target(Target(target)).vector_bits / 32;
    Conv c = conv_nhwc(8, 128, 6);
    AutoScheduleOptions o;
    o.target = Target(target);
    o.constant_inputs = {c.w};
    Schedule s = auto_schedule({c.out}, o);
    ASSERT_EQ(s.pretransforms().size(), 1u);
    EXPECT_EQ(s.pretransforms()[0].storage_order, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(s.pretransforms()[0].inner_block, 4 * lanes);
    Outputs r = run(c, s, /*jit=*/target == "llvm");
    EXPECT_TRUE(has(r.ir, s.pretransforms()[0].taken.name() + "[ramp(")) << r.ir;
    expect_close(r.interpreted, r.reference, 1e-4f, r.ir);
    if (target == "llvm") expect_close(r.jit, r.reference, 1e-4f, r.ir);
    AutoScheduleOptions per_call = o;
    per_call.constant_inputs.clear();
    EXPECT_TRUE(auto_schedule({c.out}, per_call).pretransforms().empty());
    Conv narrow = conv_nhwc(8, 32, 6);
    o.constant_inputs = {narrow.w};
    EXPECT_TRUE(auto_schedule({narrow.out}, o).pretransforms().empty());
  }
}

TEST(Pretransform, WideTilesStayInsideTheWeightsBlocks) {
  // A transposed convolution's phases have 4 coarse pixels per row: the rules widen its
  // register tile to 4 vectors, the whole block of its constant weights, never to 3
  // (which would straddle two blocks and gather every weight vector lane by lane).
  const int64_t lanes = resolved_target(Target()).vector_bits / 32;
  Conv c = conv_transpose_nchw(16, static_cast<int>(8 * lanes), 4);
  AutoScheduleOptions o;
  o.constant_inputs = {c.w};
  Schedule s = auto_schedule({c.out}, o);
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_EQ(s.pretransforms()[0].inner_block, 4 * lanes);
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, fmt::format("{}[ramp(", s.pretransforms()[0].taken.name()))) << r.ir;
  EXPECT_FALSE(has(r.ir, "ramp(0, 1, " + std::to_string(4 * lanes) + ") / ")) << r.ir;
  expect_close(r.interpreted, r.reference, 1e-4f, r.ir);
  expect_close(r.jit, r.reference, 1e-4f, r.ir);
  // Every width the search may choose divides the block.
  for (const AutoScheduleDecision& d : auto_schedule_decisions({c.out}, o)) {
    if (d.name.find("tile_vectors") == std::string::npos) continue;
    for (int64_t w : d.options) EXPECT_EQ(4 % w, 0) << d.name << " offers " << w << " vectors";
  }
}

TEST(Pretransform, CopiesKeepIt) {
  Conv c = conv_nchw(4, 4, 5);
  Schedule s = create_schedule({c.out});
  s.pretransform(c.w, {1, 2, 3, 0});
  Schedule t = s.copy();
  ASSERT_EQ(t.pretransforms().size(), 1u);
  EXPECT_EQ(lower(t, {c.x, c.w, c.out}, "conv").params[1].name(), "w_1230");
}

TEST(Pretransform, WithAScheduleOnTop) {
  Conv c = conv_nchw(8, 32, 10);
  Schedule s = create_schedule({c.out});
  s.pretransform(c.w, {1, 2, 3, 0});
  Tensor inner = s.cache_write(c.out, "global", {0, 2, 3, 1});  // channels innermost
  Stage st = s[inner];
  st.vectorize(st.op()->axis[3]);
  Outputs r = run(c, s);
  EXPECT_EQ(r.interpreted, r.reference);
  expect_close(r.jit, r.reference, 1e-5f, r.ir);
}

TEST(Pretransform, AutoScheduleTakesConstantWeightsPacked) {
  Conv c = conv_nchw(16, 32, 28);
  AutoScheduleOptions o;
  o.constant_inputs = {c.w};
  o.winograd = false;  // the direct sum's packed weights (Winograd's: test_winograd.cpp)
  Schedule s = auto_schedule({c.out}, o);
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_EQ(s.pretransforms()[0].storage_order, (std::vector<int>{2, 3, 1, 0}));  // OIHW as HWIO
  Outputs r = run(c, s);
  EXPECT_EQ(r.interpreted, r.reference);
  expect_close(r.jit, r.reference, 1e-4f, r.ir);
  // Without the option the same rule packs the (small) weights per call instead.
  AutoScheduleOptions direct;
  direct.winograd = false;
  Schedule per_call = auto_schedule({c.out}, direct);
  EXPECT_TRUE(per_call.pretransforms().empty());
  EXPECT_TRUE(has(to_string(lower(per_call, {c.x, c.w, c.out}, "conv").body), "w.global")) << "packed per call";
}

TEST(Pretransform, AutoScheduleTransposedConvolutionWithConstantWeights) {
  // Weights too large to pack per call (64 multiply-adds per element or fewer): only
  // constant ones are laid out, and the output is then computed by phases of both axes.
  Conv c = conv_transpose_nchw(64, 32, 4);
  AutoScheduleOptions o;
  o.constant_inputs = {c.w};
  Schedule s = auto_schedule({c.out}, o);
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_EQ(s.pretransforms()[0].storage_order, (std::vector<int>{2, 3, 0, 1}));  // (kh, kw, in, out)
  Outputs r = run(c, s);
  expect_close(r.interpreted, r.reference, 1e-4f, r.ir);
  expect_close(r.jit, r.reference, 1e-4f, r.ir);
  EXPECT_TRUE(auto_schedule({c.out}).pretransforms().empty());
}

TEST(Pretransform, SearchWithConstantWeights) {
  Conv c = conv_nchw(16, 32, 14);
  AutoScheduleOptions o;
  o.constant_inputs = {c.w};
  o.winograd = false;  // the direct sum's packed weights (Winograd's: test_winograd.cpp)
  o.trials = 3;
  o.records = testing::TempDir() + "/pretransform_search.jsonl";
  std::remove(o.records.c_str());
  Schedule s = auto_schedule({c.out}, o);
  ASSERT_EQ(s.pretransforms().size(), 1u);
  Outputs r = run(c, s);
  expect_close(r.jit, r.reference, 1e-4f, r.ir);
  // The records say the function takes pretransformed weights: read back, the same.
  o.trials = 0;
  Schedule again = auto_schedule({c.out}, o);
  EXPECT_EQ(to_string(lower(again, {c.x, c.w, c.out}, "k").body), to_string(lower(s, {c.x, c.w, c.out}, "k").body));
  std::remove(o.records.c_str());
  // Weights taken blocked: the search's reference and arguments take them blocked too.
  Conv wide = conv_nhwc(8, 128, 6);
  o.constant_inputs = {wide.w};
  o.trials = 3;
  Schedule b = auto_schedule({wide.out}, o);
  ASSERT_EQ(b.pretransforms().size(), 1u);
  EXPECT_GT(b.pretransforms()[0].inner_block, 0);
  Outputs q = run(wide, b);
  expect_close(q.jit, q.reference, 1e-4f, q.ir);
  std::remove(o.records.c_str());
}

TEST(Pretransform, CudaTakesThePackedLayoutToo) {
  Conv c = conv_nchw(8, 32, 10);
  AutoScheduleOptions o;
  o.target = "cuda";
  Schedule s = auto_schedule({c.out}, o);  // the CUDA rules lay nothing out
  EXPECT_TRUE(s.pretransforms().empty());
  s.pretransform(c.w, {2, 3, 1, 0});
  CudaModule m = build_cuda(lower(s, {c.x, c.w, c.out}, "conv"));
  ASSERT_EQ(m.launcher_params().size(), 3u);
  EXPECT_EQ(m.launcher_params()[1].name, "w_2310");
  EXPECT_TRUE(has(m.source(), "w_2310[")) << m.source();
  // And the pack function runs on the GPU too.
  CudaModule pack = build_cuda(lower_pretransform(s, c.w, "pack_w", Target("cuda")));
  EXPECT_EQ(pack.launcher_params()[1].name, "w_2310");
  EXPECT_TRUE(has(pack.source(), "threadIdx.x")) << pack.source();
  // Blocked by columns as well (20 channels in blocks of 8, the last one padded).
  Conv d = conv_nchw(8, 20, 10);
  Schedule t = auto_schedule({d.out}, o);
  t.pretransform(d.w, {2, 3, 1, 0}, 8);
  CudaModule blocked = build_cuda(lower(t, {d.x, d.w, d.out}, "conv"));
  EXPECT_EQ(blocked.launcher_params()[1].name, "w_2310_b8");
  EXPECT_TRUE(has(blocked.source(), "w_2310_b8[")) << blocked.source();
  EXPECT_TRUE(has(build_cuda(lower_pretransform(t, d.w, "pack_w", Target("cuda"))).source(), "threadIdx.x"));
}

TEST(Pretransform, Errors) {
  Conv c = conv_nchw(4, 4, 5);
  Schedule s = create_schedule({c.out});
  expect_error([&] { s.pretransform(c.out, {0, 2, 3, 1}); }, {"pretransform", "'conv' is computed", "placeholder"});
  expect_error([&] { s.pretransform(c.w, {0, 1, 2}); }, {"pretransform", "[0, 1, 2]", "'w'", "permutation of its 4"});
  expect_error([&] { s.pretransform(c.w, {0, 1, 2, 3}); }, {"pretransform", "'w'", "its own", "nothing to transform"});
  expect_error([&] { s.pretransform(c.w, {}); }, {"pretransform", "'w'", "its own"});
  expect_error([&] { s.pretransform(c.w, {1, 2, 3, 0}, -4); }, {"pretransform", "inner block of input 'w'", "-4"});
  Tensor scalar = placeholder({}, Float(32), "scalar");
  Tensor scaled = compute(
      {4}, [&](Expr i) { return c.x(0, 0, 0, i) * scalar(); }, "scaled");
  Schedule t = create_schedule({scaled});
  expect_error([&] { t.pretransform(scalar, {}, 2); }, {"pretransform", "'scalar'", "no dimension to block"});
  expect_error(
      [&] {
        s.pretransform(c.w, {1, 2, 3, 0}, 4);
      },
      {"pretransform", "inner block 4", "'w'", "dimension 0 (extent 4)", "nothing to block"});
  Tensor other = placeholder({4}, Float(32), "other");
  expect_error([&] { s.pretransform(other, {0}); }, {"pretransform", "'other'", "not part of this schedule"});
  Tensor taken = s.pretransform(c.w, {1, 2, 3, 0});
  expect_error([&] { s.pretransform(c.w, {2, 3, 1, 0}); }, {"pretransform", "'w'", "already", "'w_1230'"});
  expect_error([&] { s.pretransform(taken, {1, 0, 2, 3}); }, {"pretransform", "'w_1230'", "already"});
  expect_error(
      [&] {
        lower(s, {c.x, c.w, taken, c.out}, "conv");
      },
      {"lower", "'w'", "pretransformed as 'w_1230'", "not both"});
  expect_error([&] { lower_pretransform(s, c.x, "pack"); }, {"lower_pretransform", "'x'", "not an input"});
  Schedule only_input = create_schedule({c.x});
  expect_error([&] { only_input.pretransform(c.x, {1, 0, 2, 3}); }, {"pretransform", "no stage reads input 'x'"});
  expect_error([&] { lower_pretransform(s, c.w, "not an identifier"); }, {"lower", "C identifier"});
}

TEST(Pretransform, ConstantInputErrors) {
  Conv c = conv_nchw(4, 4, 5);
  AutoScheduleOptions o;
  o.constant_inputs = {Tensor()};
  expect_error([&] { auto_schedule({c.out}, o); }, {"constant_inputs[0]", "undefined"});
  o.constant_inputs = {c.w, c.out};
  expect_error([&] { auto_schedule({c.out}, o); }, {"constant_inputs[1]", "'conv'", "computed"});
  o.constant_inputs = {placeholder({4}, Float(32), "elsewhere")};
  expect_error([&] { auto_schedule({c.out}, o); }, {"constant_inputs[0]", "'elsewhere'", "not an input"});
}

}  // namespace
