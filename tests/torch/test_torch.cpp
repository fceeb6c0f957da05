// te::torch (te/torch.h): te operators called through PyTorch's dispatcher from C++,
// checked against te's interpret() and PyTorch's own operators; autograd through the
// derived backward; every error's message.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "te/interpret.h"
#include "te/lower.h"
#include "te/ops/activation.h"
#include "te/ops/grid_sample.h"
#include "te/ops/grid_sample_cpu.h"
#include "te/ops/matmul.h"
#include "te/te.h"
#include "te/torch.h"
#include "torch_test_util.h"

namespace {

using te::Expr;
using te::Tensor;
using te::Var;

std::vector<at::Tensor> call(const std::string& name, std::vector<at::Tensor> args) {
  return te_torch_test::call_op(name, std::move(args));
}
at::Tensor call1(const std::string& name, std::vector<at::Tensor> args) { return call(name, std::move(args)).at(0); }

using te_torch_test::error_of;

// The operators of the tests, registered when the test program loads (TE_TORCH_LIBRARY).
te::Tensor gelu_x, gelu_b, gelu_y;  // bias_gelu's tensors, for the interpret() oracle

TE_TORCH_LIBRARY(te_test, m) {
  Var n("n"), k("k"), cols("m");
  {
    Tensor x = te::placeholder({n}, te::Float(32), "x"), y = te::placeholder({n}, te::Float(32), "y");
    m.def("vadd", {{x, y},
                   {te::compute(
                       {n}, [&](Expr i) { return x(i) + y(i); }, "out")}});
  }
  {
    gelu_x = te::placeholder({n, k}, te::Float(32), "x");
    gelu_b = te::placeholder({k}, te::Float(32), "bias");
    gelu_y = te::compute(
        {n, k}, [&](Expr i, Expr j) { return te::ops::gelu(gelu_x(i, j) + gelu_b(j)); }, "y");
    te::torch::OpDef def{{gelu_x, gelu_b}, {gelu_y}};
    def.schedule_cpu = [](te::Schedule& s) {
      te::Stage st = s[gelu_y];
      st.parallel(st.op()->axis[0]);
    };
    m.def("bias_gelu", def);
  }
  {
    Tensor a = te::placeholder({n, k}, te::Float(64), "a"), b = te::placeholder({k, cols}, te::Float(64), "b");
    m.def("matmul", {{a, b}, {te::ops::matmul(a, b)}});
  }
  {
    Tensor x = te::placeholder({n}, te::Float(64), "x"), y = te::placeholder({n}, te::Float(64), "y");
    Tensor p = te::compute(
        {n}, [&](Expr i) { return x(i) * y(i); }, "prod");
    Tensor s = te::compute(
        {n}, [&](Expr i) { return x(i) + te::sin(y(i)); }, "sum");
    m.def("two_outputs", {{x, y}, {p, s}});
  }
  {
    Tensor x = te::placeholder({n}, te::Float(32), "x");
    te::torch::OpDef def{{x},
                         {te::compute(
                             {n}, [&](Expr i) { return x(i) * 2; }, "out")}};
    def.differentiable = false;
    m.def("no_grad", def);
  }
  {
    // A custom reducer: te::gradient has no derivative for it.
    Tensor x = te::placeholder({n, k}, te::Float(32), "x");
    te::CommReducer sumsq = te::comm_reducer([](Expr a, Expr b) { return a * a + b * b; },
                                             [](te::DataType t) { return te::make_zero(t); }, "sumsq");
    te::IterVar r = te::reduce_axis({0, k}, "r");
    m.def("sumsq", {{x},
                    {te::compute(
                        {n}, [&](Expr i) { return sumsq(x(i, r.var()), {r}); }, "out")}});
  }
  {
    // An integer input (indices) and an output whose shape is another input's.
    Tensor x = te::placeholder({n}, te::Float(32), "x"), idx = te::placeholder({cols}, te::Int(32), "idx");
    m.def("gather", {{x, idx},
                     {te::compute(
                         {cols}, [&](Expr i) { return x(idx(i)); }, "out")}});
  }
  {
    Var c("c"), h("h"), w("w"), ho("ho"), wo("wo");
    Tensor data = te::placeholder({n, c, h, w}, te::Float(32), "data");
    Tensor grid = te::placeholder({n, ho, wo, 2}, te::Float(32), "grid");
    Tensor out = te::ops::grid_sample(data, grid);
    te::torch::OpDef def{{data, grid}, {out}};
    def.schedule_cpu = [out](te::Schedule& s) { te::ops::schedule_grid_sample_cpu(s, out); };
    m.def("grid_sample", def);
  }
}

TEST(TorchOp, SymbolicShapesServeEverySize) {
  for (int64_t n : {1, 7, 1000}) {
    at::Tensor x = at::randn({n}), y = at::randn({n});
    at::Tensor out = call1("te_test::vadd", {x, y});
    ASSERT_EQ(out.sizes(), x.sizes());
    EXPECT_TRUE(at::equal(out, x + y)) << n;
  }
}

TEST(TorchOp, InputsAreNotCopiedAndOutputsAreTorchTensors) {
  // A view's data pointer (an offset into its base) is what the kernel reads.
  at::Tensor base = at::arange(10, at::kFloat);
  at::Tensor x = base.slice(0, 2, 6), y = at::ones({4});
  at::Tensor out = call1("te_test::vadd", {x, y});
  EXPECT_TRUE(at::equal(out, at::arange(3, 7, at::kFloat)));
  EXPECT_EQ(out.dtype(), at::kFloat);
  EXPECT_TRUE(out.is_contiguous());
  out.add_(1);  // a writable tensor PyTorch owns
  EXPECT_TRUE(at::equal(out, at::arange(4, 8, at::kFloat)));
}

TEST(TorchOp, MatchesInterpretAndTorch) {
  at::Tensor x = at::randn({5, 33}), b = at::randn({33});
  at::Tensor out = call1("te_test::bias_gelu", {x, b});
  EXPECT_TRUE(at::allclose(out, at::gelu(x + b), 1e-5, 1e-6));
  // te's interpreter on the same compute (default schedule) gives the same numbers.
  te::LoweredFunc f = te::lower(te::create_schedule({gelu_y}), {gelu_x, gelu_b, gelu_y}, "bias_gelu");
  te::NDArray xs = te::NDArray::empty({5, 33}, te::Float(32)), bs = te::NDArray::empty({33}, te::Float(32)),
              ys = te::NDArray::empty({5, 33}, te::Float(32));
  std::memcpy(xs.data(), x.data_ptr(), 5 * 33 * sizeof(float));
  std::memcpy(bs.data(), b.data_ptr(), 33 * sizeof(float));
  te::interpret(f, {xs, bs, ys});
  at::Tensor interpreted = at::from_blob(ys.data(), {5, 33}, at::kFloat);
  EXPECT_TRUE(at::allclose(out, interpreted, 1e-5, 1e-6));
}

TEST(TorchOp, OutputShapesComeFromTheInputs) {
  at::Tensor a = at::randn({3, 4}, at::kDouble), b = at::randn({4, 6}, at::kDouble);
  at::Tensor c = call1("te_test::matmul", {a, b});
  ASSERT_EQ(c.sizes(), (at::IntArrayRef{3, 6}));
  EXPECT_TRUE(at::allclose(c, at::matmul(a, b)));
  at::Tensor x = at::randn({9}), idx = at::tensor({8, 0, 3}, at::kInt);
  at::Tensor g = call1("te_test::gather", {x, idx});
  EXPECT_TRUE(at::equal(g, x.index_select(0, idx)));
}

TEST(TorchOp, GridSampleMatchesTorch) {
  at::Tensor data = at::randn({2, 3, 8, 9}), grid = at::rand({2, 5, 4, 2}) * 2.4 - 1.2;
  at::Tensor out = call1("te_test::grid_sample", {data, grid});
  at::Tensor ref = at::grid_sampler_2d(data, grid, /*bilinear*/ 0, /*zeros*/ 0, /*align_corners*/ false);
  EXPECT_TRUE(at::allclose(out, ref, 1e-5, 1e-5));
}

TEST(TorchOp, AutogradMatchesTorch) {
  at::Tensor a = at::randn({3, 4}, at::kDouble).requires_grad_(), b = at::randn({4, 2}, at::kDouble).requires_grad_();
  at::Tensor head = at::randn({3, 2}, at::kDouble);
  at::Tensor c = call1("te_test::matmul", {a, b});
  EXPECT_TRUE(c.requires_grad());
  (c * head).sum().backward();
  EXPECT_TRUE(at::allclose(a.grad(), at::matmul(head, b.detach().t())));
  EXPECT_TRUE(at::allclose(b.grad(), at::matmul(a.detach().t(), head)));

  // Only one input needing a gradient; the other gets none.
  at::Tensor a2 = a.detach().clone().requires_grad_(), b2 = b.detach().clone();
  call1("te_test::matmul", {a2, b2}).sum().backward();
  EXPECT_TRUE(at::allclose(a2.grad(), at::matmul(at::ones({3, 2}, at::kDouble), b2.t())));
  EXPECT_FALSE(b2.grad().defined());
}

TEST(TorchOp, SeveralOutputsSumTheirGradients) {
  at::Tensor x = at::randn({6}, at::kDouble).requires_grad_(), y = at::randn({6}, at::kDouble).requires_grad_();
  std::vector<at::Tensor> outs = call("te_test::two_outputs", {x, y});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(at::allclose(outs[0], x * y));
  EXPECT_TRUE(at::allclose(outs[1], x + at::sin(y)));
  at::Tensor hp = at::randn({6}, at::kDouble), hs = at::randn({6}, at::kDouble);
  ((outs[0] * hp).sum() + (outs[1] * hs).sum()).backward();
  EXPECT_TRUE(at::allclose(x.grad(), hp * y.detach() + hs));
  EXPECT_TRUE(at::allclose(y.grad(), hp * x.detach() + hs * at::cos(y.detach())));
  // One output unused: its gradient is zero.
  at::Tensor x2 = x.detach().clone().requires_grad_();
  call("te_test::two_outputs", {x2, y.detach()})[1].sum().backward();
  EXPECT_TRUE(at::allclose(x2.grad(), at::ones({6}, at::kDouble)));
}

TEST(TorchOp, BackwardOperatorIsCallable) {
  at::Tensor a = at::randn({2, 3}, at::kDouble), b = at::randn({3, 4}, at::kDouble), g = at::randn({2, 4}, at::kDouble);
  std::vector<at::Tensor> d = call("te_test::matmul_backward", {g, a, b});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(at::allclose(d[0], at::matmul(g, b.t())));
  EXPECT_TRUE(at::allclose(d[1], at::matmul(a.t(), g)));
}

TEST(TorchOp, WithoutGradientBackwardSaysWhy) {
  at::Tensor x = at::randn({4}).requires_grad_();
  at::Tensor y = call1("te_test::no_grad", {x});
  EXPECT_TRUE(at::equal(y, x.detach() * 2));  // the forward runs
  EXPECT_EQ(error_of([&] { y.sum().backward(); }),
            "te_test::no_grad has no gradient: it was registered with OpDef::differentiable = false");
  at::Tensor r = call1("te_test::sumsq", {at::randn({3, 5}).requires_grad_()});
  std::string e = error_of([&] { r.sum().backward(); });
  EXPECT_EQ(e.rfind("te_test::sumsq has no gradient: te::gradient: ", 0), 0u) << e;
  EXPECT_NE(e.find("sumsq"), std::string::npos) << e;
  // Without inputs needing a gradient, nothing is recorded and nothing fails.
  EXPECT_FALSE(call1("te_test::no_grad", {at::randn({4})}).requires_grad());
}

TEST(TorchOp, DoubleBackwardIsAnError) {
  at::Tensor a = at::randn({2, 2}, at::kDouble).requires_grad_(), b = at::randn({2, 2}, at::kDouble);
  at::Tensor c = call1("te_test::matmul", {a, b});
  std::string e = error_of([&] { c.sum().backward({}, /*retain_graph=*/true, /*create_graph=*/true); });
  EXPECT_NE(e.find("te_test::matmul_backward: double backward"), std::string::npos) << e;
}

TEST(TorchOpErrors, CallsNameTheOperatorAndArgument) {
  at::Tensor x = at::randn({4, 4});
  EXPECT_EQ(error_of([&] {
              call1("te_test::vadd", {x.t().select(0, 1), x[0]});
            }),
            "te_test::vadd: argument 'x' is not contiguous (sizes [4], strides [4]); pass it as .contiguous()");
  call1("te_test::vadd", {x[0], x[0]});  // sizes (4), (4) succeed: the next call reuses their outputs' sizes
  EXPECT_EQ(error_of([&] {
              call1("te_test::vadd", {x[0], x[0].to(at::kDouble)});
            }),
            "te_test::vadd: argument 2 ('y') has dtype float64, expected float32");
  EXPECT_EQ(error_of([&] {
              call1("te_test::vadd", {x, x});
            }),
            "te_test::vadd: input 'x' has rank 2 (shape (4, 4)), expected rank 1");
  EXPECT_EQ(error_of([&] {
              call1("te_test::vadd", {at::randn({3}), at::randn({5})});
            }),
            "te_test::vadd: n is 3 (given or bound earlier) but input 'y' has 5 in dimension 0");
  EXPECT_EQ(error_of([&] {
              call1("te_test::vadd", {at::randn({3}, at::kMeta), at::randn({3})});
            }),
            "te_test::vadd: argument 'x' is on device meta, but the operator has a CPU kernel only (te's kernels "
            "run on the CPU, and on CUDA with OpDef::cuda)");
  EXPECT_EQ(error_of([&] {
              call1("te_test::vadd", {at::randn({3}).to_sparse(), at::randn({3})});
            }),
            "te_test::vadd: argument 'x' has layout Sparse; te kernels take dense (strided) tensors");
  // A gather's index outside its buffer: te's run-time check, as a c10::Error.
  std::string e = error_of([&] { call1("te_test::gather", {at::randn({3}), at::tensor({5}, at::kInt)}); });
  EXPECT_EQ(e.rfind("te_test::gather: ", 0), 0u) << e;
  EXPECT_NE(e.find("x"), std::string::npos) << e;
}

TEST(TorchOpErrors, RegistrationNamesTheProblem) {
  Var n("n");
  Tensor x = te::placeholder({n}, te::Float(32), "x");
  Tensor y = te::compute(
      {n}, [&](Expr i) { return x(i) + 1; }, "y");
  auto reg = [](const std::string& name, te::torch::OpDef def) {
    return error_of([&] { te::torch::register_op(name, std::move(def)); });
  };
  EXPECT_EQ(reg("noname", {{x}, {y}}),
            "te::torch::register_op('noname'): the name must be \"namespace::name\", both C identifiers");
  EXPECT_EQ(reg("te_err::a", {{y}, {y}}),
            "te::torch::register_op('te_err::a'): input 0 ('y') is a compute, not a placeholder: an operator's "
            "arguments are placeholders");
  EXPECT_EQ(reg("te_err::a", {{x, x}, {y}}),
            "te::torch::register_op('te_err::a'): two inputs are named 'x': the schema's arguments need distinct "
            "names");
  Tensor bad = te::placeholder({n}, te::Float(32), "x.1");
  EXPECT_EQ(reg("te_err::a", {{bad},
                              {te::compute(
                                  {n}, [&](Expr i) { return bad(i); }, "o")}}),
            "te::torch::register_op('te_err::a'): input 0 is named 'x.1', which is not a C identifier (the schema "
            "names the argument after it)");
  Var m("m");
  EXPECT_EQ(reg("te_err::a", {{x},
                              {te::compute(
                                  {m}, [&](Expr i) { return x(i); }, "o")}}),
            "te::torch::register_op('te_err::a'): the shape of output 'o' needs shape variable 'm', which no "
            "input's shape binds (a dimension that is exactly a variable binds it)");
  EXPECT_EQ(reg("te_err::a", {{x}, {}}),
            "te::torch::register_op('te_err::a'): OpDef::outputs is empty: an operator returns at least one tensor");
  te::torch::OpDef cuda{{x}, {y}};
  cuda.schedule_cuda = [](te::Schedule&) {};
  EXPECT_EQ(reg("te_err::a", cuda),
            "te::torch::register_op('te_err::a'): OpDef::cuda or OpDef::schedule_cuda asks for a CUDA kernel, but "
            "there are no compiled CUDA kernels to register: define the operator in a TE_TORCH_LIBRARY block of an "
            "extension built with te_add_torch_extension(<name> SOURCES ... CUDA) (docs/pytorch.md, \"CUDA\")");
  te::torch::OpDef failing{{x}, {y}};
  failing.schedule_cpu = [](te::Schedule&) { throw te::Error("my schedule failed"); };
  EXPECT_EQ(reg("te_err::a", failing), "te::torch::register_op('te_err::a'): the forward kernel: my schedule failed");
  te::torch::OpDef failing_backward{{x}, {y}};
  failing_backward.schedule_backward_cpu = [](te::Schedule&, const std::vector<Tensor>&) {
    throw te::Error("my backward schedule failed");
  };
  EXPECT_EQ(reg("te_err::a", failing_backward),
            "te::torch::register_op('te_err::a'): the backward kernel: my backward schedule failed");
  EXPECT_EQ(reg("te_test::vadd", {{x}, {y}}),
            "te::torch::register_op('te_test::vadd'): PyTorch already has an operator of this name; register each "
            "operator once");
  // None of the refused registrations reached PyTorch.
  EXPECT_FALSE(c10::Dispatcher::singleton().findSchema({"te_err::a", ""}).has_value());
}

TEST(TorchOpErrors, OpInfoDescribesTheRegistration) {
  Var n("n");
  Tensor x = te::placeholder({n}, te::Float(32), "x"), i = te::placeholder({n}, te::Int(32), "i");
  Tensor y = te::compute(
      {n}, [&](Expr j) { return x(j) * te::cast(te::Float(32), i(j)); }, "y");
  te::torch::OpDef def{{x, i}, {y}};
  std::vector<std::string> scheduled;  // the adjoints the backward schedule was given
  def.schedule_backward_cpu = [&](te::Schedule& s, const std::vector<Tensor>& adjoints) {
    for (const Tensor& a : adjoints) scheduled.push_back(a.name() + ":" + std::to_string(s[a].op()->axis.size()));
  };
  te::torch::OpInfo info = te::torch::register_op("te_info::scale", def);
  EXPECT_EQ(scheduled.size(), 1u);  // x's adjoint only: i is an integer input
  EXPECT_EQ(info.schema, "te_info::scale(Tensor x, Tensor i) -> Tensor");
  EXPECT_TRUE(info.has_gradient) << info.no_gradient_reason;
  EXPECT_EQ(info.backward_schema, "te_info::scale_backward(Tensor grad_y, Tensor x, Tensor i) -> Tensor");
  // The integer input gets no gradient; the float one does.
  at::Tensor xt = at::randn({5}).requires_grad_(), it = at::tensor({1, 2, 3, 4, 5}, at::kInt);
  call1("te_info::scale", {xt, it}).sum().backward();
  EXPECT_TRUE(at::equal(xt.grad(), it.to(at::kFloat)));
}

}  // namespace
