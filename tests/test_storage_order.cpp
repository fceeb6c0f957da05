// Storage orders: cache_read and cache_write laying their stage out in another order of
// the tensor's dimensions (packed weights, an NCHW convolution computed as NHWC), and
// auto_schedule's layout rule that uses both. Each kernel's interpret() equals the
// default schedule's bit for bit (a layout moves values, it computes nothing new), its
// JIT build agrees within the fused multiply-adds it contracts, and every misuse is a
// te::Error naming the tensor.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <string>
#include <vector>

#include "test_util.h"

using namespace te;

namespace {

// A 3x3 unpadded NCHW convolution: x (1, CI, H, H), w (CO, CI, 3, 3).
struct Conv {
  Tensor x, w, out;
  std::vector<int64_t> x_shape, w_shape;
};

Conv conv_nchw(int CI, int CO, int H) {
  Conv c;
  c.x_shape = {1, CI, H, H};
  c.w_shape = {CO, CI, 3, 3};
  c.x = placeholder({1, CI, H, H}, Float(32), "x");
  c.w = placeholder({CO, CI, 3, 3}, Float(32), "w");
  IterVar rc = reduce_axis({0, CI}, "rc"), rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw");
  c.out = compute(
      {1, CO, H - 2, H - 2},
      [&](Expr n, Expr co, Expr h, Expr ww) {
        return sum(c.x(n, rc, h + rh, ww + rw) * c.w(co, rc, rh, rw), {rc, rh, rw});
      },
      "conv");
  return c;
}

struct Results {
  std::vector<float> jit, interpreted, reference;
  std::string ir;
};

Results run(const Conv& c, const Schedule& s) {
  Results r;
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "conv");
  r.ir = to_string(f.body);
  int64_t nx = 1, nw = 1;
  for (int64_t d : c.x_shape) nx *= d;
  for (int64_t d : c.w_shape) nw *= d;
  std::vector<int64_t> out_shape;
  for (const Expr& e : c.out.shape()) out_shape.push_back(*as_const_int(e));
  NDArray x = NDArray::from_vector(uniform_floats(size_t(nx), 1), c.x_shape);
  NDArray w = NDArray::from_vector(uniform_floats(size_t(nw), 2), c.w_shape);
  auto call = [&](auto&& fn) {
    NDArray out = NDArray::empty(out_shape, Float(32));
    fn(std::vector<Argument>{x, w, out});
    return out.to_vector<float>();
  };
  r.jit = call([&](const std::vector<Argument>& a) { build(f)("conv").call(a); });
  r.interpreted = call([&](const std::vector<Argument>& a) { interpret(f, a); });
  LoweredFunc plain = lower(create_schedule({c.out}), {c.x, c.w, c.out}, "plain");
  r.reference = call([&](const std::vector<Argument>& a) { interpret(plain, a); });
  return r;
}

void expect_same_values(const Results& r, float tol) {
  ASSERT_EQ(r.jit.size(), r.reference.size());
  for (size_t i = 0; i < r.reference.size(); ++i) {
    ASSERT_NEAR(r.jit[i], r.reference[i], tol) << "element " << i << "\n" << r.ir;
  }
}

}  // namespace

TEST(StorageOrder, CacheReadPacksWeightsInAnotherOrder) {
  Conv c = conv_nchw(3, 4, 6);
  Schedule s = create_schedule({c.out});
  Tensor packed = s.cache_read(c.w, "global", {c.out}, {1, 2, 3, 0});  // OIHW -> IHWO
  ASSERT_EQ(packed.ndim(), 4);
  EXPECT_EQ(to_string(packed.shape()[0]), "3");
  EXPECT_EQ(to_string(packed.shape()[3]), "4");
  Results r = run(c, s);
  // The copy walks t in the new order; the reader reads it at the permuted index.
  EXPECT_TRUE(has(
      r.ir,
      "w.global[((((ax0 * 36) + (ax1 * 12)) + (ax2 * 4)) + ax3)] = w[((((ax3 * 27) + (ax0 * 9)) + (ax1 * 3)) + ax2)]"))
      << r.ir;
  EXPECT_EQ(r.interpreted, r.reference);
  expect_same_values(r, 1e-5f);
}

TEST(StorageOrder, CacheWriteComputesInAnotherOrder) {
  Conv c = conv_nchw(3, 4, 6);
  Schedule s = create_schedule({c.out});
  Tensor nhwc = s.cache_write(c.out, "global", {0, 2, 3, 1});
  EXPECT_EQ(to_string(nhwc.shape()[3]), "4");  // the channels innermost
  EXPECT_EQ(nhwc.op()->axis[3].name(), "j.c");
  Results r = run(c, s);
  EXPECT_TRUE(has(r.ir, "conv[(((j * 16) + (k * 4)) + l)] = conv.global[(((k * 16) + (l * 4)) + j)]")) << r.ir;
  EXPECT_EQ(r.interpreted, r.reference);
  expect_same_values(r, 1e-5f);
}

TEST(StorageOrder, Errors) {
  Conv c = conv_nchw(3, 4, 6);
  auto fresh = [&] { return create_schedule({c.out}); };
  expect_error(
      [&] {
        fresh().cache_read(c.w, "global", {c.out}, {1, 2, 3});
      },
      {"cache_read: storage_order [1, 2, 3] for tensor 'w' is not a permutation of its 4 dimensions"});
  expect_error([&] { fresh().cache_read(c.w, "global", {c.out}, {0, 1, 1, 2}); }, {"[0, 1, 1, 2]", "'w'"});
  expect_error(
      [&] {
        fresh().cache_write(c.out, "local", {0, 1, 2, 4});
      },
      {"cache_write: storage_order [0, 1, 2, 4] for tensor 'conv' is not a permutation of its 4 dimensions"});
  Tensor idx = placeholder({4}, Int(32), "idx"), val = placeholder({4}, Float(32), "val");
  Tensor base = compute(
      {8}, [&](Expr i) { return make_zero(Float(32)) + cast(Float(32), i); }, "base");
  Tensor scattered = scatter(
      base, {4},
      [&](Expr i) {
        return ScatterTo{{idx(i)}, val(i)};
      },
      "scattered");
  Schedule s = create_schedule({scattered});
  expect_error([&] { s.cache_write(scattered, "local", {0}); },
               {"cache_write: stage 'scattered' is a scatter; its cache keeps the stage's own storage order"});
}

TEST(AutoSchedule, ShortNchwRowsAreComputedChannelsInnermost) {
  // Rows of 26 pixels, 32 channels: the layout rule applies on any vector width.
  for (const char* target : {"llvm", "llvm -vector-bits=256"}) {
    SCOPED_TRACE(target);
    Conv c = conv_nchw(16, 32, 28);
    AutoScheduleOptions o;
    o.target = Target(target);
    o.threads = 2;
    o.winograd = false;  // the direct sum's layout (Winograd's: test_winograd.cpp)
    Results r = run(c, auto_schedule({c.out}, o));
    EXPECT_TRUE(has(r.ir, "allocate w.global")) << r.ir;     // the weights packed
    EXPECT_TRUE(has(r.ir, "allocate conv.global")) << r.ir;  // computed as NHWC
    expect_same_values(r, 1e-4f);
  }
  // Rows a whole number of vectors, read through the window: channels innermost too.
  Conv wide = conv_nchw(4, 32, 34);
  AutoScheduleOptions o;
  o.target = Target("llvm -vector-bits=256");
  Results r = run(wide, auto_schedule({wide.out}, o));
  EXPECT_TRUE(has(r.ir, "allocate conv.global")) << r.ir;
  expect_same_values(r, 1e-4f);
}

TEST(AutoSchedule, RowsReadPlainlyKeepTheirLayout) {
  // A 1x1 convolution (a matrix product per pixel): its rows of 32 pixels are read as they
  // lie, whole vectors, with no window: left as they are.
  Tensor x = placeholder({1, 8, 4, 32}, Float(32), "x"), w = placeholder({32, 8}, Float(32), "w");
  IterVar rc = reduce_axis({0, 8}, "rc");
  Tensor y = compute(
      {1, 32, 4, 32}, [&](Expr n, Expr co, Expr h, Expr ww) { return sum(x(n, rc, h, ww) * w(co, rc), {rc}); },
      "conv1x1");
  AutoScheduleOptions o;
  o.target = Target("llvm -vector-bits=256");
  const std::string ir = to_string(lower(auto_schedule({y}, o), {x, w, y}, "conv1x1"));
  EXPECT_FALSE(has(ir, "conv1x1.global")) << ir;
  EXPECT_FALSE(has(ir, "w.global")) << ir;
}
