// The user-defined fused op of examples/custom_op_header/my_ops.h, tested the way a user
// tests their own op: against a plain C++ reference through interpret() and the LLVM
// JIT, with both of its schedules, and through an exported shared library.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "../examples/custom_op_header/my_ops.h"
#include "test_util.h"

using namespace te;

namespace {

float reference(float x, float bias, float scale) {
  double v = static_cast<double>(x) + bias;
  return static_cast<float>(0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))) * scale);
}

struct Op {
  Var n{"n"}, m{"m"};
  Var scale{"scale", Float(32)};
  Tensor x = placeholder({n, m}, Float(32), "x");
  Tensor bias = placeholder({m}, Float(32), "bias");
  Tensor y = my_ops::bias_gelu_scale(x, bias, scale);

  LoweredFunc lowered(bool cuda) const {
    Schedule s = create_schedule({y});
    if (cuda)
      my_ops::schedule_bias_gelu_scale_cuda(s, y);
    else
      my_ops::schedule_bias_gelu_scale_cpu(s, y);
    return lower(s, {x, bias, y}, "bias_gelu_scale");
  }
};

struct Data {
  int64_t rows, cols;
  std::vector<float> x, bias;
  float scale;
  Data(int64_t r, int64_t c, float s) : rows(r), cols(c), x(r * c), bias(c), scale(s) {
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k * 7 % 101) - 50) / 12.0f;
    for (size_t k = 0; k < bias.size(); ++k) bias[k] = static_cast<float>(static_cast<int>(k % 9) - 4) / 3.0f;
  }
  void expect_matches(const std::vector<float>& y, const std::string& what) const {
    ASSERT_EQ(y.size(), x.size()) << what;
    for (size_t k = 0; k < y.size(); ++k) {
      float want = reference(x[k], bias[k % static_cast<size_t>(cols)], scale);
      ASSERT_NEAR(y[k], want, 1e-5f * std::max(1.0f, std::fabs(want)))
          << what << ": element " << k << " of " << rows << "x" << cols;
    }
  }
};

const std::vector<std::pair<int64_t, int64_t>> kShapes = {{1, 1}, {3, 8}, {5, 17}, {16, 64}, {7, 3}};

TEST(CustomOp, InterpretMatchesTheReferenceWithBothSchedules) {
  Op op;
  for (bool cuda : {false, true}) {
    LoweredFunc f = op.lowered(cuda);
    for (auto [r, c] : kShapes) {
      Data d(r, c, cuda ? -0.5f : 2.0f);
      NDArray y = NDArray::empty({r, c}, Float(32));
      interpret(f, {NDArray::from_vector(d.x, {r, c}), NDArray::from_vector(d.bias, {c}), y, d.scale});
      d.expect_matches(y.to_vector<float>(), cuda ? "interpret, CUDA schedule" : "interpret, CPU schedule");
    }
  }
}

TEST(CustomOp, JitMatchesTheReference) {
  Op op;
  Function f = build(op.lowered(false))("bias_gelu_scale");
  EXPECT_EQ(f.signature(), "bias_gelu_scale(x: float32[n, m], bias: float32[m], y: float32[n, m], scale: float32)");
  for (auto [r, c] : kShapes) {
    Data d(r, c, 1.25f);
    NDArray y = NDArray::empty({r, c}, Float(32));
    f(NDArray::from_vector(d.x, {r, c}), NDArray::from_vector(d.bias, {c}), y, d.scale);
    d.expect_matches(y.to_vector<float>(), "JIT");
  }
}

TEST(CustomOp, SchedulesInlineTheBiasStage) {
  Op op;
  for (bool cuda : {false, true}) {
    std::string text = to_string(op.lowered(cuda).body);
    EXPECT_EQ(text.find("y.biased"), std::string::npos) << text;  // no intermediate buffer
    EXPECT_NE(text.find(cuda ? "launch_thread blockIdx.x" : "parallel for"), std::string::npos) << text;
  }
  EXPECT_NE(build_cuda(op.lowered(true)).source().find("__global__"), std::string::npos);
}

TEST(CustomOp, BadInputsAndSchedulesAreErrors) {
  Tensor x3 = placeholder({2, 3, 4}, Float(32), "x3");
  Tensor b = placeholder({4}, Float(32), "b");
  expect_error([&] { my_ops::bias_gelu_scale(x3, b, 1.0f); }, {"y", "rank 2", "ranks 3 and 1"});
  Tensor other = compute(
      {4}, [&](Expr i) { return b(i) * 2.0f; }, "other");
  Schedule s = create_schedule({other});
  expect_error([&] { my_ops::schedule_bias_gelu_scale_cpu(s, other); }, {"other was not made by bias_gelu_scale"});
}

TEST(CustomOp, ExportedSharedLibraryMatchesTheReference) {
  Op op;
  LoweredFunc f = op.lowered(false);
  EXPECT_EQ(c_prototype(f),
            "int32_t bias_gelu_scale(float* x, float* bias, float* y, int32_t n, int32_t m, float scale)");
  char tmpl[] = "/tmp/te_custom_op_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  export_library(f, dir + "/libmy_ops.so");
  export_header(f, dir + "/my_ops_kernels.h");
  EXPECT_TRUE(std::filesystem::exists(dir + "/my_ops_kernels.h"));

  void* lib = dlopen((dir + "/libmy_ops.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Fn = int32_t (*)(float*, float*, float*, int32_t, int32_t, float);
  auto fn = reinterpret_cast<Fn>(dlsym(lib, "bias_gelu_scale"));
  ASSERT_NE(fn, nullptr);
  Data d(9, 21, 0.8f);
  std::vector<float> y(d.x.size(), -1.0f);
  EXPECT_EQ(fn(d.x.data(), d.bias.data(), y.data(), 9, 21, d.scale), 0);
  d.expect_matches(y, "exported .so");
  dlclose(lib);
  std::filesystem::remove_all(dir);
}

}  // namespace
