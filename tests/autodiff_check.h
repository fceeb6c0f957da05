// Checks of te::gradient for the autodiff tests: adjoints run with interpret() against
// central finite differences in float64 of sum(head * output), every input element.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "te/autodiff.h"
#include "te/te.h"

namespace autodiff_check {

using namespace te;

inline NDArray random_array(const std::vector<int64_t>& shape, unsigned seed, double lo = -1.5, double hi = 1.5) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return NDArray::from_vector(v, shape);
}

inline std::vector<int64_t> shape_of(const Tensor& t) {
  std::vector<int64_t> s;
  for (const Expr& e : t.shape()) s.push_back(*as_const_int(e));
  return s;
}

// Runs the computation of `outputs` from `inputs` (placeholders) with interpret().
inline std::vector<NDArray> run(const std::vector<Tensor>& inputs, const std::vector<NDArray>& values,
                                const std::vector<Tensor>& outputs) {
  std::vector<Tensor> args = inputs;
  args.insert(args.end(), outputs.begin(), outputs.end());
  LoweredFunc f = lower(create_schedule(outputs), args, "f");
  std::vector<Argument> call(values.begin(), values.end());
  std::vector<NDArray> out;
  for (const Tensor& t : outputs) {
    out.push_back(NDArray::empty(shape_of(t), t.dtype()));
    call.emplace_back(out.back());
  }
  interpret(f, call);
  return out;
}

inline double element(const NDArray& a, int64_t i) { return static_cast<const double*>(a.data())[i]; }

// Checks gradient(output, inputs, head) against central differences of sum(head * output).
// `fixed` are inputs held constant (e.g. integer indices), with their values.
inline void expect_gradient_matches(const Tensor& output, const std::vector<Tensor>& inputs,
                                    std::vector<NDArray> values, const Tensor& head = Tensor(),
                                    const NDArray& head_value = NDArray(), const std::vector<Tensor>& fixed = {},
                                    const std::vector<NDArray>& fixed_values = {}) {
  std::vector<Tensor> placeholders = inputs;
  std::vector<NDArray> all_values = values;
  placeholders.insert(placeholders.end(), fixed.begin(), fixed.end());
  all_values.insert(all_values.end(), fixed_values.begin(), fixed_values.end());
  if (head.defined()) {
    placeholders.push_back(head);
    all_values.push_back(head_value);
  }
  const std::vector<Tensor> grads = gradient(output, inputs, head);
  ASSERT_EQ(grads.size(), inputs.size());
  const std::vector<NDArray> got = run(placeholders, all_values, grads);
  std::vector<Tensor> forward_args = inputs;
  forward_args.insert(forward_args.end(), fixed.begin(), fixed.end());
  forward_args.push_back(output);
  // Lowered once, interpreted per perturbation.
  const LoweredFunc forward = lower(create_schedule({output}), forward_args, "forward");
  NDArray y = NDArray::empty(shape_of(output), output.dtype());
  auto loss = [&]() {
    std::vector<Argument> call(values.begin(), values.end());
    call.insert(call.end(), fixed_values.begin(), fixed_values.end());
    call.emplace_back(y);
    interpret(forward, call);
    double l = 0;
    for (int64_t i = 0; i < y.size(); ++i) l += element(y, i) * (head.defined() ? element(head_value, i) : 1.0);
    return l;
  };
  const double eps = 1e-6;
  for (size_t k = 0; k < inputs.size(); ++k) {
    SCOPED_TRACE("input " + inputs[k].name());
    ASSERT_EQ(got[k].shape(), values[k].shape());
    for (int64_t i = 0; i < values[k].size(); ++i) {
      double* x = static_cast<double*>(values[k].data()) + i;
      const double saved = *x;
      *x = saved + eps;
      const double up = loss();
      *x = saved - eps;
      const double down = loss();
      *x = saved;
      const double want = (up - down) / (2 * eps);
      EXPECT_NEAR(element(got[k], i), want, 1e-6 * (1 + std::fabs(want))) << "element " << i;
    }
  }
}

}  // namespace autodiff_check
