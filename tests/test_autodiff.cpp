// te::gradient against central finite differences in float64 (every input element
// perturbed), on element-wise math, broadcasts, matmul, a softmax built from stages
// (an intermediate with two consumers), conditional sums and a given head; and every
// refusal's te::Error message.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "te/autodiff.h"
#include "te/te.h"
#include "autodiff_check.h"
#include "test_util.h"

using namespace te;

namespace {

using autodiff_check::element;
using autodiff_check::expect_gradient_matches;
using autodiff_check::random_array;
using autodiff_check::run;
using autodiff_check::shape_of;

TEST(Autodiff, ElementwiseMath) {
  Tensor A = placeholder({3, 4}, Float(64), "A"), B = placeholder({3, 4}, Float(64), "B");
  Tensor Y = compute(
      {3, 4},
      [&](Expr i, Expr j) {
        Expr a = A(i, j), b = B(i, j);
        return exp(a) * b + tanh(a) / (b * b + 1.0) + sigmoid(a) - log(b * b + 1.0) + sqrt(a * a + 2.0) +
               sin(a) * cos(b) + pow(b * b + 1.0, a) + abs(a - b) + max(a, b) - min(a * 2.0, b) + erf(a) +
               atan2(a, b + 3.0) + select(a > b, a * b, a - b) + if_then_else(b > 0.0, rsqrt(b + 2.0), a * a * a) +
               floor(a) * b + let(Var("t", Float(64)), a * b, a);
      },
      "Y");
  expect_gradient_matches(Y, {A, B}, {random_array({3, 4}, 1), random_array({3, 4}, 2)});
}

TEST(Autodiff, BroadcastAndTransposeSumOverTheMissingAxes) {
  Tensor A = placeholder({3, 4}, Float(64), "A"), b = placeholder({4}, Float(64), "b");
  Tensor Y = compute(
      {4, 3}, [&](Expr i, Expr j) { return A(j, i) * b(i) + b(i) * b(i); }, "Y");
  expect_gradient_matches(Y, {A, b}, {random_array({3, 4}, 3), random_array({4}, 4)});
}

TEST(Autodiff, MatmulGivesTheTransposedProducts) {
  Tensor A = placeholder({3, 5}, Float(64), "A"), B = placeholder({5, 2}, Float(64), "B");
  IterVar k = reduce_axis({0, 5}, "k");
  Tensor C = compute(
      {3, 2}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Tensor H = placeholder({3, 2}, Float(64), "H");
  expect_gradient_matches(C, {A, B}, {random_array({3, 5}, 5), random_array({5, 2}, 6)}, H, random_array({3, 2}, 7));
  // dA = H . B^T: a reduction over C's j; dB = A^T . H: over C's i.
  const std::vector<Tensor> d = gradient(C, {A, B}, H);
  EXPECT_EQ(d[0].op()->reduce_axis.size(), 1u);
  EXPECT_EQ(d[0].op()->reduce_axis[0]->dom.extent.as<IntImmNode>()->value, 2);
  EXPECT_EQ(d[1].op()->reduce_axis[0]->dom.extent.as<IntImmNode>()->value, 3);
}

TEST(Autodiff, SoftmaxThroughAnIntermediateWithTwoConsumers) {
  Tensor X = placeholder({2, 5}, Float(64), "X");
  Tensor E = compute(
      {2, 5}, [&](Expr i, Expr j) { return exp(X(i, j)); }, "E");
  IterVar k = reduce_axis({0, 5}, "k");
  Tensor S = compute(
      {2}, [&](Expr i) { return sum(E(i, k), {k}); }, "S");
  Tensor Y = compute(
      {2, 5}, [&](Expr i, Expr j) { return E(i, j) / S(i); }, "Y");
  Tensor H = placeholder({2, 5}, Float(64), "H");
  expect_gradient_matches(Y, {X}, {random_array({2, 5}, 8)}, H, random_array({2, 5}, 9));
}

TEST(Autodiff, ConditionalSumsAndPartialRanges) {
  Tensor A = placeholder({4, 6}, Float(64), "A");
  IterVar k = reduce_axis({1, 5}, "k");  // columns 1..4 only: 0 and 5 get no gradient
  Tensor S = compute(
      {4}, [&](Expr i) { return sum(A(i, k) * A(i, k), {k}, k <= i + 1); }, "S");
  expect_gradient_matches(S, {A}, {random_array({4, 6}, 10)});
  // A compute over part of its input: rows 3 and 4 of B get zeros.
  Tensor B = placeholder({5}, Float(64), "B");
  Tensor T = compute(
      {3}, [&](Expr i) { return B(i) * 3.0; }, "T");
  expect_gradient_matches(T, {B}, {random_array({5}, 11)});
}

// max/min: the gradient goes to the chosen element; ties share it evenly (PyTorch's amax).
TEST(Autodiff, MaxAndMinReductionsGoToTheChosenElements) {
  Tensor A = placeholder({3, 5}, Float(64), "A");
  IterVar k = reduce_axis({0, 5}, "k"), l = reduce_axis({0, 5}, "l");
  Tensor M = compute(
      {3}, [&](Expr i) { return max(A(i, k) * A(i, k), {k}); }, "M");
  Tensor Mn = compute(
      {3}, [&](Expr i) { return min(A(i, l), {l}); }, "Mn");
  Tensor N = compute(
      {3}, [&](Expr i) { return Mn(i) * M(i); }, "N");
  expect_gradient_matches(N, {A}, {random_array({3, 5}, 14)});
  Tensor B = placeholder({1, 3}, Float(64), "B");
  IterVar m = reduce_axis({0, 3}, "m");
  Tensor T = compute(
      {1}, [&](Expr i) { return max(B(i, m), {m}); }, "T");
  NDArray g = run({B}, {NDArray::from_vector(std::vector<double>{1, 3, 3}, {1, 3})}, gradient(T, {B}))[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0.5, 0.5}));
}

// prod: the product of the other factors, with no zero, one zero and two zeros in a row.
TEST(Autodiff, ProdReductionsGiveTheOtherFactorsProduct) {
  Tensor A = placeholder({3, 4}, Float(64), "A");
  IterVar k = reduce_axis({0, 4}, "k");
  Tensor P = compute(
      {3}, [&](Expr i) { return prod(A(i, k) * 2.0, {k}); }, "P");
  expect_gradient_matches(P, {A}, {random_array({3, 4}, 15)});
  NDArray a = NDArray::from_vector(std::vector<double>{1, 2, 3, 4, 1, 0, 3, 4, 0, 2, 0, 4}, {3, 4});
  NDArray g = run({A}, {a}, gradient(P, {A}))[0];
  // d/da_j of prod(2 a_k) = 2 * prod_{k != j} 2 a_k.
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{384, 192, 128, 96, 0, 192, 0, 0, 0, 0, 0, 0}));
}

// argmax's value output: the gradient goes to the chosen element (the first of ties);
// a tuple of element-wise outputs: each output's adjoint through its own body.
TEST(Autodiff, ArgmaxAndElementwiseTupleComputes) {
  Tensor A = placeholder({3, 5}, Float(64), "A");
  IterVar k = reduce_axis({0, 5}, "k");
  std::vector<Tensor> am = compute_tuple({3}, [&](Expr i) { return argmax(A(i, k) * A(i, k), {k}); }, {"idx", "val"});
  expect_gradient_matches(am[1], {A}, {random_array({3, 5}, 16)});
  Tensor B = placeholder({1, 3}, Float(64), "B");
  IterVar m = reduce_axis({0, 3}, "m");
  std::vector<Tensor> tie = compute_tuple({1}, [&](Expr i) { return argmax(B(i, m), {m}); }, {"idx", "val"});
  NDArray g = run({B}, {NDArray::from_vector(std::vector<double>{1, 3, 3}, {1, 3})}, gradient(tie[1], {B}))[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 1, 0}));
  std::vector<Tensor> sd = compute_tuple({3, 5},
                                         [&](Expr i, Expr j) {
                                           return std::vector<Expr>{A(i, j) * A(i, j), sin(A(i, j))};
                                         },
                                         {"sq", "sn"});
  Tensor T = compute(
      {3, 5}, [&](Expr i, Expr j) { return sd[0](i, j) + sd[1](i, j) * 3.0; }, "T");
  expect_gradient_matches(T, {A}, {random_array({3, 5}, 17)});
}

// Casts pass the gradient through, in the input's type: a float32 input read as float64.
TEST(Autodiff, CastsCarryTheGradientInTheInputsType) {
  Tensor A = placeholder({3}, Float(32), "A");
  Tensor Y = compute(
      {3}, [&](Expr i) { return cast(Float(64), A(i)) * 3.0; }, "Y");
  const std::vector<Tensor> d = gradient(Y, {A});
  EXPECT_EQ(d[0].dtype(), Float(32));
  NDArray a = NDArray::from_vector(std::vector<float>{1, 2, 3}, {3});
  NDArray g = run({A}, {a}, d)[0];
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{3, 3, 3}));
}

TEST(Autodiff, InputsTheOutputDoesNotReadGetZeros) {
  Tensor A = placeholder({3}, Float(64), "A"), B = placeholder({3}, Float(64), "B");
  Tensor Y = compute(
      {3}, [&](Expr i) { return A(i) * 2.0; }, "Y");
  const std::vector<NDArray> g = run({A, B}, {random_array({3}, 12), random_array({3}, 13)}, gradient(Y, {A, B}));
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(element(g[0], i), 2.0);
    EXPECT_EQ(element(g[1], i), 0.0);
  }
}

// The adjoints are plain computes: auto_schedule schedules them and the JIT runs them,
// equal to interpret() of the default schedule.
TEST(Autodiff, AdjointsAreSchedulableComputes) {
  Tensor A = placeholder({64, 48}, Float(32), "A"), B = placeholder({48, 32}, Float(32), "B");
  Tensor H = placeholder({64, 32}, Float(32), "H");
  IterVar k = reduce_axis({0, 48}, "k");
  Tensor C = compute(
      {64, 32}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  const std::vector<Tensor> d = gradient(C, {A, B}, H);
  std::vector<NDArray> in;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-3, 3);  // exact sums in any order
  for (const Tensor& t : {A, B, H}) {
    std::vector<float> v(static_cast<size_t>(shape_of(t)[0] * shape_of(t)[1]));
    for (float& x : v) x = float(small(rng));
    in.push_back(NDArray::from_vector(v, shape_of(t)));
  }
  const std::vector<NDArray> want = run({A, B, H}, in, d);
  LoweredFunc f = lower(auto_schedule(d), {A, B, H, d[0], d[1]}, "grads");
  std::vector<NDArray> got = {NDArray::empty({64, 48}, Float(32)), NDArray::empty({48, 32}, Float(32))};
  build(f)("grads")(in[0], in[1], in[2], got[0], got[1]);
  EXPECT_EQ(got[0].to_vector<float>(), want[0].to_vector<float>());
  EXPECT_EQ(got[1].to_vector<float>(), want[1].to_vector<float>());
}

TEST(AutodiffErrors, NameWhatCannotBeDifferentiated) {
  Tensor A = placeholder({4}, Float(32), "A"), I = placeholder({4}, Int(32), "I");
  Tensor Y = compute(
      {4}, [&](Expr i) { return A(i) * 2.0f; }, "Y");
  expect_error([&] { gradient(Tensor(), {A}); }, {"gradient: the output is an undefined tensor"});
  expect_error([&] { gradient(Y, {Tensor()}); }, {"gradient: input 0 is an undefined tensor"});
  expect_error([&] { gradient(Y, {A, A}); }, {"gradient: input 'A' is given twice"});
  expect_error([&] { gradient(Y, {I}); }, {"gradient: input 'I' is int32: integer and bool tensors have no gradient"});
  Tensor J = compute(
      {4}, [&](Expr i) { return I(i) + 1; }, "J");
  expect_error([&] { gradient(J, {A}); },
               {"gradient: the output 'J' is int32: only floating-point outputs have a gradient"});
  Tensor H = placeholder({5}, Float(32), "H");
  expect_error([&] { gradient(Y, {A}, H); },
               {"gradient: the head 'H' (float32, 1 dimensions) must have the output 'Y''s shape and type (float32, 1 "
                "dimensions)"});
  IterVar k = reduce_axis({0, 4}, "k");
  IterVar w = reduce_axis({0, 4}, "w");
  std::vector<Tensor> wf = compute_tuple({1}, [&](Expr) { return welford(A(w), {w}); }, {"mean", "m2", "n"});
  expect_error([&] { gradient(wf[0], {A}); },
               {"gradient: compute 'mean' is a welford tuple reduction: te differentiates the argmax and argmin tuple "
                "reductions"});
  CommReducer abs_max = comm_reducer([](Expr a, Expr b) { return max(abs(a), abs(b)); },
                                     [](DataType t) { return make_zero(t); }, "abs_max");
  Tensor P = compute(
      {1}, [&](Expr) { return abs_max(A(k), {k}); }, "P");
  expect_error([&] { gradient(P, {A}); },
               {"gradient: compute 'P' is a abs_max reduction: te differentiates sum, prod, max and min reductions"});
  Tensor F = compute(
      {4}, [&](Expr i) { return call_extern(Float(32), "my_fn", {A(i)}); }, "F");
  expect_error([&] { gradient(F, {A}); }, {"gradient: compute 'F': call_extern 'my_fn' has no derivative"});
}

}  // namespace
