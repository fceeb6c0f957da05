// softmax_backward and layer_norm_backward (written by hand in closed form) against their
// oracle, te::gradient of the forward, in float64 through interpret(); against PyTorch
// autograd's golden gradients with auto_schedule and the JIT; and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autodiff_check.h"
#include "te/auto_schedule.h"
#include "te/ops/normalization_backward.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;
using autodiff_check::random_array;
using autodiff_check::run;

namespace {

void expect_near(const NDArray& got, const NDArray& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << what << " element " << i;
}

const std::string kGolden = std::string(TE_TEST_DATA_DIR) + "/torch_golden/";

Tensor like(const NDArray& a, const std::string& name) {
  std::vector<Expr> shape;
  for (int64_t d : a.shape()) shape.push_back(Expr(static_cast<int>(d)));
  return placeholder(shape, a.dtype(), name);
}

std::vector<NDArray> jit(const std::vector<Tensor>& ins, const std::vector<NDArray>& values,
                         const std::vector<Tensor>& outs) {
  std::vector<Tensor> args = ins;
  args.insert(args.end(), outs.begin(), outs.end());
  std::vector<Argument> call(values.begin(), values.end());
  std::vector<NDArray> result;
  for (const Tensor& t : outs) {
    result.push_back(NDArray::empty(autodiff_check::shape_of(t), t.dtype()));
    call.emplace_back(result.back());
  }
  build(lower(auto_schedule(outs), args, "f"))("f").call(call);
  return result;
}

TEST(NormalizationBackward, SoftmaxEqualsTheDerivedGradientAndPyTorch) {
  Tensor x = placeholder({3, 4, 9}, Float(64), "x"), dy = placeholder({3, 4, 9}, Float(64), "dy");
  Tensor y = ops::softmax(x);
  NDArray xv = random_array({3, 4, 9}, 51, -4, 4), dv = random_array({3, 4, 9}, 52);
  NDArray yv = run({x}, {xv}, {y})[0];
  Tensor yp = placeholder({3, 4, 9}, Float(64), "y");
  expect_near(run({yp, dy}, {yv, dv}, {ops::softmax_backward(yp, dy)})[0],
              run({x, dy}, {xv, dv}, {gradient(y, {x}, dy)[0]})[0], 1e-12, "dx");
  // PyTorch: y from the golden x, then the closed form, auto-scheduled and JIT-built.
  NDArray gx = NDArray::load_npy(kGolden + "softmax_backward/x.npy"),
          gh = NDArray::load_npy(kGolden + "softmax_backward/head.npy"),
          gy = NDArray::load_npy(kGolden + "softmax_backward/out.npy");
  Tensor Y = like(gy, "y"), H = like(gh, "head");
  expect_near(jit({Y, H}, {gy, gh}, {ops::softmax_backward(Y, H)})[0],
              NDArray::load_npy(kGolden + "softmax_backward/grad_x.npy"), 1e-10, "dx vs PyTorch");
}

TEST(NormalizationBackward, LayerNormEqualsTheDerivedGradientAndPyTorch) {
  Tensor x = placeholder({2, 3, 10}, Float(64), "x"), g = placeholder({10}, Float(64), "gamma"),
         b = placeholder({10}, Float(64), "beta"), dy = placeholder({2, 3, 10}, Float(64), "dy");
  std::vector<NDArray> v = {random_array({2, 3, 10}, 53, -3, 3), random_array({10}, 54), random_array({10}, 55),
                            random_array({2, 3, 10}, 56)};
  ops::LayerNormBackward lb = ops::layer_norm_backward(x, g, dy);
  const std::vector<NDArray> got = run({x, g, dy}, {v[0], v[1], v[3]}, {lb.dx, lb.dgamma, lb.dbeta});
  const std::vector<NDArray> want = run({x, g, b, dy}, v, gradient(ops::layer_norm(x, g, b), {x, g, b}, dy));
  expect_near(got[0], want[0], 1e-12, "dx");
  expect_near(got[1], want[1], 1e-12, "dgamma");
  expect_near(got[2], want[2], 1e-12, "dbeta");
  // Without gamma: dx only.
  ops::LayerNormBackward plain = ops::layer_norm_backward(x, Tensor(), dy);
  EXPECT_FALSE(plain.dgamma.defined());
  expect_near(run({x, dy}, {v[0], v[3]}, {plain.dx})[0],
              run({x, dy}, {v[0], v[3]}, gradient(ops::layer_norm(x), {x}, dy))[0], 1e-12, "dx without gamma");
  const std::string f = kGolden + "layer_norm_backward/";
  NDArray gx = NDArray::load_npy(f + "x.npy"), gw = NDArray::load_npy(f + "weight.npy"),
          gh = NDArray::load_npy(f + "head.npy");
  Tensor X = like(gx, "x"), W = like(gw, "weight"), H = like(gh, "head");
  ops::LayerNormBackward t = ops::layer_norm_backward(X, W, H);
  const std::vector<NDArray> torch = jit({X, W, H}, {gx, gw, gh}, {t.dx, t.dgamma, t.dbeta});
  expect_near(torch[0], NDArray::load_npy(f + "grad_x.npy"), 1e-10, "dx vs PyTorch");
  expect_near(torch[1], NDArray::load_npy(f + "grad_weight.npy"), 1e-10, "dgamma vs PyTorch");
  expect_near(torch[2], NDArray::load_npy(f + "grad_bias.npy"), 1e-10, "dbeta vs PyTorch");
}

TEST(NormalizationBackward, Errors) {
  Tensor y = placeholder({4, 8}, Float(32), "y"), wrong = placeholder({4, 7}, Float(32), "dy");
  expect_error([&] { ops::softmax_backward(y, wrong); }, {"softmax_backward: dy must have y's shape and type"});
  expect_error([&] { ops::layer_norm_backward(y, Tensor(), wrong); },
               {"layer_norm_backward: dy must have x's shape and type"});
}

}  // namespace
