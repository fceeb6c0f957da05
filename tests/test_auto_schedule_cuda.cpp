// auto_schedule for target "cuda" (trials = 0): each kernel's CUDA source runs on the
// CPU emulation (tests/cuda_emulation: every GPU thread a real thread, shared memory and
// barriers per block) and must equal interpret() of the same loop IR and, within
// float tolerance, interpret() of te's default schedule. The loop IR is checked for the
// rule's bindings: blocks and threads, shared memory, cross-thread reductions.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/autodiff.h>
#include <te/ops/normalization.h>
#include <te/te.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "cuda_emulation/harness.h"

#include "test_util.h"

namespace te {
namespace {

using cuda_test::EmulatedProgram;
using cuda_test::EmulatedRun;

struct Case {
  std::string name;
  std::vector<Tensor> args;  // inputs, then the outputs
  size_t inputs = 0;
  LoweredFunc fast, reference;
  std::string ir;
};

std::vector<Case> make_cases() {
  AutoScheduleOptions o;
  o.target = "cuda";
  o.cuda_threads_per_block = 64;  // fewer OS threads for the emulation
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<Tensor> args, size_t inputs,
                 const std::map<std::string, int64_t>& decisions = {}) {
    std::vector<Tensor> outs(args.begin() + static_cast<std::ptrdiff_t>(inputs), args.end());
    Case c{name,
           args,
           inputs,
           lower(auto_schedule_with(outs, o, decisions), args, name),
           lower(create_schedule(outs), args, name + "_ref"),
           ""};
    std::ostringstream text;
    text << c.fast;
    c.ir = text.str();
    cases.push_back(c);
  };
  {
    const int M = 33, N = 45, K = 20;
    Tensor A = placeholder({M, K}, Float(32), "A"), B = placeholder({K, N}, Float(32), "B");
    Tensor bias = placeholder({N}, Float(32), "bias");
    IterVar k = reduce_axis({0, K}, "k");
    Tensor C = compute(
        {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Tensor E = compute(
        {M, N}, [&](Expr i, Expr j) { return max(C(i, j) + bias(j), 0.0f); }, "E");
    add("matmul_relu", {A, B, bias, E}, 3);
  }
  {
    Tensor x = placeholder({6, 300}, Float(32), "x");
    add("softmax", {x, ops::softmax(x)}, 1);
  }
  {
    Tensor x = placeholder({3000}, Float(32), "x");
    IterVar k = reduce_axis({0, 3000}, "k");
    Tensor s = compute(
        {1}, [&](Expr) { return sum(x(k), {k}); }, "total");
    add("vector_sum", {x, s}, 1);
  }
  {
    // A whole tensor's norm: one point, 96 x 300 squares.
    Tensor x = placeholder({96, 300}, Float(32), "x");
    IterVar i = reduce_axis({0, 96}, "i"), j = reduce_axis({0, 300}, "j");
    Tensor squares = compute(
        {1},
        [&](Expr) {
          return sum(x(i, j) * x(i, j), {i, j});
        },
        "squares");
    Tensor norm = compute(
        {1}, [&](Expr b) { return sqrt(squares(b)); }, "norm");
    add("norm", {x, norm}, 1);
    add("norm_7_parts", {x, norm}, 1, {{"squares.grid_parts", 7}});
  }
  {
    // Tuple reductions over few long rows: argmax (index and value) and Welford's mean,
    // m2 and count, their parts combined by the reducers' own rules.
    Tensor x = placeholder({2, 9000}, Float(32), "x");
    IterVar k = reduce_axis({0, 9000}, "k");
    std::vector<Tensor> best = compute_tuple({2}, [&](Expr r) { return argmax(x(r, k), {k}); }, {"idx", "val"});
    add("argmax_parts", {x, best[0], best[1]}, 1);
    IterVar k2 = reduce_axis({0, 9000}, "k2");
    std::vector<Tensor> stats =
        compute_tuple({2}, [&](Expr r) { return welford(x(r, k2), {k2}); }, {"mean", "m2", "count"});
    add("welford_parts", {x, stats[0], stats[1], stats[2]}, 1);
  }
  {
    // Three long row sums.
    Tensor x = placeholder({3, 5000}, Float(32), "x");
    IterVar k = reduce_axis({0, 5000}, "k");
    Tensor sums = compute(
        {3}, [&](Expr r) { return sum(x(r, k), {k}); }, "row_sums");
    add("row_sums", {x, sums}, 1);
  }
  {
    const int M = 19, N = 23;
    Tensor A = placeholder({N, M}, Float(32), "A"), B = placeholder({M, N}, Float(32), "B");
    Tensor T = compute(
        {M, N}, [&](Expr i, Expr j) { return A(j, i); }, "T");
    Tensor out = compute(
        {M, N}, [&](Expr i, Expr j) { return max(T(i, j) + B(i, j), 0.0f); }, "out");
    add("transpose_add_relu", {A, B, out}, 2);
  }
  {
    const int C = 3, H = 8, W = 9, F = 4, R = 3;
    Tensor data = placeholder({1, C, H, W}, Float(32), "data");
    Tensor weight = placeholder({F, C, R, R}, Float(32), "weight");
    IterVar rc = reduce_axis({0, C}, "rc"), ry = reduce_axis({0, R}, "ry"), rx = reduce_axis({0, R}, "rx");
    Tensor out = compute(
        {1, F, H - 2, W - 2},
        [&](Expr n, Expr f, Expr y, Expr x) {
          return sum(data(n, rc, y + ry, x + rx) * weight(f, rc, ry, rx), {rc, ry, rx});
        },
        "conv");
    add("conv2d", {data, weight, out}, 2);
  }
  {
    Tensor x = placeholder({4, 40}, Float(32), "x");
    Tensor g = placeholder({40}, Float(32), "gamma"), b = placeholder({40}, Float(32), "beta");
    add("layer_norm", {x, g, b, ops::layer_norm(x, g, b)}, 3);
  }
  return cases;
}

class AutoScheduleCuda : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = std::make_unique<EmulatedProgram>();
    try {
      cases_ = make_cases();
      for (const Case& c : cases_) program_->add(build_cuda(c.fast));
    } catch (const Error& e) {
      log_ = std::string("auto_schedule, lower() or build_cuda() failed: ") + e.what();
      return;
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    cases_.clear();
  }
  void SetUp() override { ASSERT_TRUE(built_) << log_; }

  static const Case& get(const std::string& name) {
    for (const Case& c : cases_)
      if (c.name == name) return c;
    throw std::runtime_error("no case " + name);
  }

  // Runs the case on the emulation (against interpret() of the same IR, exactly) and
  // against interpret() of the default schedule (within tol).
  static void check(const std::string& name, float tol) {
    const Case& c = get(name);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<Argument> args, same, ref;
    for (size_t i = 0; i < c.args.size(); ++i) {
      std::vector<int64_t> shape;
      for (const Expr& e : c.args[i].shape()) shape.push_back(*as_const_int(e));
      NDArray a = NDArray::empty(shape, c.args[i].dtype());  // inputs float32; outputs float32 or int32
      if (i < c.inputs)
        for (int64_t k = 0; k < a.size(); ++k) static_cast<float*>(a.data())[k] = dist(rng);
      else
        std::memset(a.data(), 0, static_cast<size_t>(a.size()) * a.dtype().bytes());
      args.emplace_back(a);
      same.emplace_back(a.copy());
      ref.emplace_back(a.copy());
    }
    interpret(c.fast, same);
    interpret(c.reference, ref);
    EmulatedRun r = program_->run(c.name, c.fast, args);
    ASSERT_EQ(r.error, 0) << r.output;
    auto values = [](const NDArray& a) {
      std::vector<double> v(static_cast<size_t>(a.size()));
      for (size_t k = 0; k < v.size(); ++k)
        v[k] = a.dtype() == Int(32) ? static_cast<const int32_t*>(a.data())[k] : static_cast<const float*>(a.data())[k];
      return v;
    };
    for (size_t i = c.inputs; i < c.args.size(); ++i) {
      auto got = values(r.arrays[i]), want = values(same[i].array()), slow = values(ref[i].array());
      for (size_t k = 0; k < got.size(); ++k) {
        ASSERT_EQ(got[k], want[k]) << name << " element " << k << " (emulation vs interpret)";
        ASSERT_LE(std::fabs(got[k] - slow[k]), tol * std::max(1.0, std::fabs(slow[k])))
            << name << " element " << k << " (vs the default schedule)\n"
            << c.ir;
      }
    }
  }

  static std::unique_ptr<EmulatedProgram> program_;
  static std::vector<Case> cases_;
  static bool built_;
  static std::string log_;
};
std::unique_ptr<EmulatedProgram> AutoScheduleCuda::program_;
std::vector<Case> AutoScheduleCuda::cases_;
bool AutoScheduleCuda::built_ = false;
std::string AutoScheduleCuda::log_;

TEST_F(AutoScheduleCuda, MatmulUsesSharedMemoryAndThreadTiles) {
  check("matmul_relu", 1e-5f);
  const std::string& ir = get("matmul_relu").ir;
  EXPECT_TRUE(has(ir, "A.shared")) << ir;
  EXPECT_TRUE(has(ir, "B.shared")) << ir;
  EXPECT_TRUE(has(ir, "C.local")) << ir;
  EXPECT_TRUE(has(ir, "threadIdx.y")) << ir;
}

TEST_F(AutoScheduleCuda, SoftmaxRowsAreCrossThreadReductions) {
  check("softmax", 1e-5f);
  EXPECT_TRUE(has(get("softmax").ir, "thread_allreduce") || has(get("softmax").ir, "warp_shuffle"))
      << get("softmax").ir;
}

TEST_F(AutoScheduleCuda, VectorSum) { check("vector_sum", 1e-4f); }

// Few points with long sums: one block per point would leave most of a GPU idle, so the
// outermost reduction axis is cut into parts (rfactor), a block per part and point, and a
// second kernel adds the parts; at least 16 steps per thread (64 threads here) in a part.
TEST_F(AutoScheduleCuda, FewLongSumsAreCutIntoPartsOverBlocks) {
  check("norm", 1e-4f);  // 96 rows cut into 28 parts, the last shorter
  check("norm_7_parts", 1e-4f);
  check("row_sums", 1e-4f);  // 5000 steps in 4 parts
  check("argmax_parts", 0);  // 9000 steps in 8 parts: the first largest element's index
  check("welford_parts", 1e-4f);
  for (const char* name : {"norm", "row_sums", "argmax_parts", "welford_parts"})
    EXPECT_TRUE(has(get(name).ir, ".rf")) << get(name).ir;
  AutoScheduleOptions o;
  o.target = "cuda";
  o.cuda_threads_per_block = 64;
  auto parts_of = [&](const char* name, const std::string& stage) {
    const Case& c = get(name);
    std::vector<Tensor> outs(c.args.begin() + static_cast<std::ptrdiff_t>(c.inputs), c.args.end());
    for (const AutoScheduleDecision& d : auto_schedule_decisions(outs, o))
      if (d.name == stage + ".grid_parts") return std::make_pair(d.rule_value, d.options);
    return std::make_pair(int64_t{0}, std::vector<int64_t>{});
  };
  EXPECT_EQ(parts_of("norm", "squares"), std::make_pair(int64_t{28}, std::vector<int64_t>{7, 14, 28}));
  EXPECT_EQ(parts_of("row_sums", "row_sums"), std::make_pair(int64_t{4}, std::vector<int64_t>{2, 4}));
  // Enough points for a block each (and the 3000 steps of the vector sum too few for
  // parts of 16 x 256 steps): one block per point.
  o.cuda_threads_per_block = 256;
  EXPECT_EQ(parts_of("vector_sum", "total").first, 0);
  Tensor many = placeholder({200, 5000}, Float(32), "many");
  IterVar k = reduce_axis({0, 5000}, "k");
  Tensor sums = compute(
      {200}, [&](Expr r) { return sum(many(r, k), {k}); }, "sums");
  for (const AutoScheduleDecision& d : auto_schedule_decisions({sums}, o)) EXPECT_NE(d.name, "sums.grid_parts");
}
TEST_F(AutoScheduleCuda, TransposeAddRelu) {
  check("transpose_add_relu", 0);
  EXPECT_FALSE(has(get("transpose_add_relu").ir, "allocate T")) << get("transpose_add_relu").ir;
}
TEST_F(AutoScheduleCuda, Conv2d) { check("conv2d", 1e-5f); }
TEST_F(AutoScheduleCuda, LayerNorm) { check("layer_norm", 1e-4f); }

// A reduction that gathers (an index read from memory) from an input that misses an
// output axis: that input's tile spans the gathered dimension, whose size is symbolic
// here, so it stays in global memory (CUDA's __shared__ arrays need a constant size),
// while the other reused input is still staged. (Before, build_cuda refused the kernel:
// grid_sample's backward with symbolic sizes.)
TEST(AutoScheduleCudaSymbolic, GatheredInputsStayInGlobalMemory) {
  Var n("n"), m("m"), k("k"), rows("rows");
  Tensor table = placeholder({n, m}, Float(32), "table");
  Tensor idx = placeholder({k}, Int(32), "idx");
  Tensor w = placeholder({rows, k}, Float(32), "w");
  IterVar r = reduce_axis({0, k}, "r");
  Tensor out = compute(
      {rows, m}, [&](Expr i, Expr j) { return sum(table(idx(r), j) * w(i, r), {r}); }, "out");
  AutoScheduleOptions o;
  o.target = "cuda";
  LoweredFunc f = lower(auto_schedule({out}, o), {table, idx, w, out}, "gathered_matmul");
  std::ostringstream ir;
  ir << f;
  EXPECT_FALSE(has(ir.str(), "table.shared")) << ir.str();
  EXPECT_TRUE(has(ir.str(), "w.shared")) << ir.str();
  EXPECT_NO_THROW(build_cuda(f));
}

// A staged tile must fit the 48 KiB of static shared memory: a convolution's weight
// gradient reduces over whole 56 x 56 images, so its inputs' tiles (a reduction step of
// 8 images) would take 100 KB; they stay in global memory and the kernel builds.
TEST(AutoScheduleCudaSymbolic, TilesTooLargeForSharedMemoryStayInGlobalMemory) {
  const int64_t N = 32, C = 16, H = 58, R = H - 2;
  Tensor x = placeholder({N, C, H, H}, Float(32), "x"), w = placeholder({C, C, 3, 3}, Float(32), "w");
  Tensor dy = placeholder({N, C, R, R}, Float(32), "dy");
  IterVar rc = reduce_axis({0, C}, "rc"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 3}, "kx");
  Tensor y = compute(
      {N, C, R, R},
      [&](Expr n, Expr o, Expr i, Expr j) {
        return sum(x(n, rc, i + ky, j + kx) * w(o, rc, ky, kx), {rc, ky, kx});
      },
      "conv");
  Tensor dw = gradient(y, {w}, dy)[0];
  AutoScheduleOptions o;
  o.target = "cuda";
  LoweredFunc f = lower(auto_schedule({dw}, o), {x, dy, dw}, "weight_gradient");
  std::ostringstream ir;
  ir << f;
  EXPECT_FALSE(has(ir.str(), "dy.shared")) << ir.str();
  EXPECT_NO_THROW(build_cuda(f));
}

}  // namespace
}  // namespace te
