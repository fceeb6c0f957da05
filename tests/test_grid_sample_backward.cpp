// te::ops::grid_sample_backward: the hand-written bilinear path against its oracle
// (te::gradient of grid_sample) in float64 through interpret(), 2-D and 3-D, every
// padding and align_corners, paired and unpaired taps; against PyTorch autograd's golden
// gradients with schedule_grid_sample_backward_cpu and the JIT; float16 data; the derived
// path for the other modes; and the error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autodiff_check.h"
#include "te/ops/grid_sample_backward_cpu.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;
using autodiff_check::random_array;

namespace {

std::vector<Expr> exprs(const std::vector<int64_t>& v) {
  std::vector<Expr> e;
  for (int64_t x : v) e.push_back(Expr(static_cast<int>(x)));
  return e;
}

void expect_near(const NDArray& got, const NDArray& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << what << " element " << i;
}

// Runs {grad_data, grad_grid} from (data, grid, head) with interpret() of the default schedule.
std::vector<NDArray> interpret_grads(const std::vector<Tensor>& ins, const std::vector<NDArray>& values,
                                     const std::vector<Tensor>& grads) {
  std::vector<Tensor> args = ins;
  args.insert(args.end(), grads.begin(), grads.end());
  std::vector<Argument> call(values.begin(), values.end());
  std::vector<NDArray> out;
  for (const Tensor& g : grads) {
    std::vector<int64_t> shape;
    for (const Expr& e : g.shape()) shape.push_back(*as_const_int(e));
    out.push_back(NDArray::empty(shape, g.dtype()));
    call.emplace_back(out.back());
  }
  interpret(lower(create_schedule(grads), args, "grads"), call);
  return out;
}

TEST(GridSampleBackward, HandWrittenBilinearEqualsTheDerivedGradient) {
  struct Case {
    std::vector<int64_t> data, grid;
  };
  // 2-D paired (every extent >= 2), 2-D unpaired (a width of 1), 3-D.
  for (const Case& c :
       {Case{{2, 3, 5, 6}, {2, 4, 3, 2}}, Case{{1, 2, 4, 1}, {1, 3, 2, 2}}, Case{{1, 2, 3, 4, 5}, {1, 2, 3, 2, 3}}})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        SCOPED_TRACE(std::string(padding) + (align ? " align_corners " : " ") + std::to_string(c.data.size()) + "-D");
        Tensor data = placeholder(exprs(c.data), Float(64), "data"),
               grid = placeholder(exprs(c.grid), Float(64), "grid");
        ops::GridSampleOptions o;
        o.padding_mode = padding;
        o.align_corners = align;
        std::vector<int64_t> out_shape{c.data[0], c.data[1]};
        out_shape.insert(out_shape.end(), c.grid.begin() + 1, c.grid.end() - 1);
        Tensor head = placeholder(exprs(out_shape), Float(64), "head");
        ops::GridSampleBackwardStages b = ops::grid_sample_backward_stages(data, grid, head, o);
        ASSERT_FALSE(b.derived);
        ASSERT_TRUE(b.grad_scatter.op()->is_scatter());
        std::vector<NDArray> values = {random_array(c.data, 31), random_array(c.grid, 32, -1.3, 1.3),
                                       random_array(out_shape, 33)};
        const std::vector<NDArray> got = interpret_grads({data, grid, head}, values, {b.grad_data, b.grad_grid});
        const std::vector<NDArray> want =
            interpret_grads({data, grid, head}, values, gradient(ops::grid_sample(data, grid, o), {data, grid}, head));
        expect_near(got[0], want[0], 1e-12, "grad_data");
        expect_near(got[1], want[1], 1e-12, "grad_grid");
      }
}

// The schedule, JIT-built, against PyTorch's gradients (tests/data/torch_golden, float64).
TEST(GridSampleBackward, ScheduledOnTheCpuMatchesPyTorch) {
  const std::string dir = std::string(TE_TEST_DATA_DIR) + "/torch_golden/grid_sample_backward/";
  for (const char* dims : {"2d", "3d"})
    for (const char* mode : {"bilinear", "nearest"})
      for (const char* padding : {"zeros", "border", "reflection"})
        for (bool align : {false, true}) {
          const std::string folder = dir + dims + "/";
          const std::string c = folder + mode + "_" + padding + (align ? "_align" : "");
          SCOPED_TRACE(c);
          NDArray dv = NDArray::load_npy(folder + "data.npy"), gv = NDArray::load_npy(folder + "grid.npy"),
                  hv = NDArray::load_npy(folder + "head.npy");
          Tensor data = placeholder(exprs(dv.shape()), Float(64), "data"),
                 grid = placeholder(exprs(gv.shape()), Float(64), "grid"),
                 head = placeholder(exprs(hv.shape()), Float(64), "head");
          ops::GridSampleOptions o;
          o.mode = mode;
          o.padding_mode = padding;
          o.align_corners = align;
          ops::GridSampleBackwardStages b = ops::grid_sample_backward_stages(data, grid, head, o);
          EXPECT_EQ(b.derived, std::string(mode) != "bilinear");
          Schedule s = create_schedule({b.grad_data, b.grad_grid});
          ops::schedule_grid_sample_backward_cpu(s, b, 32);
          NDArray gd = NDArray::empty(dv.shape(), Float(64)), gg = NDArray::empty(gv.shape(), Float(64));
          build(lower(s, {data, grid, head, b.grad_data, b.grad_grid}, "bwd"))("bwd")(dv, gv, hv, gd, gg);
          expect_near(gd, NDArray::load_npy(c + "/grad_data.npy"), 1e-10, "grad_data");
          expect_near(gg, NDArray::load_npy(c + "/grad_grid.npy"), 1e-10, "grad_grid");
        }
}

// float16 data: accumulated in float32, returned as float16.
TEST(GridSampleBackward, HalfDataAccumulatesInFloat32) {
  Tensor data = placeholder({1, 2, 4, 5}, Float(16), "data"), grid = placeholder({1, 3, 3, 2}, Float(32), "grid");
  Tensor head = placeholder({1, 2, 3, 3}, Float(16), "head");
  ops::GridSampleBackwardStages b = ops::grid_sample_backward_stages(data, grid, head);
  EXPECT_EQ(b.grad_data.dtype(), Float(16));
  EXPECT_EQ(b.grad_grid.dtype(), Float(32));
  EXPECT_EQ(b.grad_scatter.dtype(), Float(32));
  EXPECT_NE(b.grad_data.op(), b.grad_scatter.op());
}

TEST(GridSampleBackward, Errors) {
  Tensor data = placeholder({1, 2, 4, 5}, Float(32), "data"), grid = placeholder({1, 3, 3, 2}, Float(32), "grid");
  Tensor wrong = placeholder({1, 2, 3, 4}, Float(32), "g");
  expect_error([&] { ops::grid_sample_backward(data, grid, wrong); },
               {"grid_sample: grad_out must have the output's shape (1, 2, 3, 3) and type float32, got (1, 2, 3, 4) "
                "float32"});
  expect_error([&] { ops::grid_sample_backward(data, grid, Tensor()); },
               {"grid_sample: grad_out must have the output's shape (1, 2, 3, 3) and type float32, got an undefined "
                "tensor"});
  Schedule s = create_schedule({data});
  expect_error([&] { ops::schedule_grid_sample_backward_cpu(s, ops::GridSampleBackwardStages{}); },
               {"schedule_grid_sample_backward_cpu: the GridSampleBackwardStages are incomplete"});
}

}  // namespace
