// my_ops.h: a user-defined fused operator written with te, kept in one header with its
// schedules. (te's own ops keep the compute in te/ops/<op>.h and each target's schedules
// in te/ops/<op>_cpu.h and te/ops/<op>_cuda.h, e.g. te/ops/grid_sample.h: worth doing once
// an op has several schedules.)
//
//   y[i, j] = gelu(x[i, j] + bias[j]) * scale
//
// with gelu's tanh approximation, 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), over
// an (n, m) float32 input, a bias of m values and a scalar scale. The computation has two
// stages (`<name>.biased` = x + bias, then the output); both schedules inline the first,
// so the whole op is one loop nest with no intermediate buffer.
#pragma once
#include <te/te.h>

#include <string>

namespace my_ops {

// The output tensor of shape x.shape(); `scale` is any float32 expression, e.g. a Var that
// becomes a scalar parameter of the lowered function.
inline te::Tensor bias_gelu_scale(const te::Tensor& x, const te::Tensor& bias, const te::Expr& scale,
                                  const std::string& name = "y") {
  if (x.ndim() != 2 || bias.ndim() != 1)
    throw te::Error(name + ": expects x of rank 2 and bias of rank 1, got ranks " + std::to_string(x.ndim()) + " and " +
                    std::to_string(bias.ndim()));
  te::Tensor biased = te::compute(
      x.shape(), [&](te::Expr i, te::Expr j) { return x(i, j) + bias(j); }, name + ".biased");
  const float k = 0.7978845608f;  // sqrt(2 / pi)
  return te::compute(
      x.shape(),
      [&](te::Expr i, te::Expr j) {
        te::Expr v = biased(i, j);
        te::Expr inner = k * (v + 0.044715f * v * v * v);
        return 0.5f * v * (1.0f + te::tanh(inner)) * scale;
      },
      name);
}

// Inlines the `.biased` stage of an output made by bias_gelu_scale into it. The stage is
// found through the graph (the output reads only it, and it reads x and bias), not by its
// name.
inline void inline_bias(te::Schedule& s, const te::Tensor& out) {
  const auto& inputs = out.op()->inputs;
  if (inputs.size() != 1 || inputs[0]->kind != te::OpKind::Compute || inputs[0]->inputs.size() != 2)
    throw te::Error("my_ops: " + out.name() + " was not made by bias_gelu_scale");
  s[te::Tensor(inputs[0])].compute_inline();
}

// CPU: inline the bias, rows in parallel, columns in vectors of `lanes` floats.
inline void schedule_bias_gelu_scale_cpu(te::Schedule& s, const te::Tensor& out, int lanes = 8) {
  inline_bias(s, out);
  te::IterVar row = out.axis(0), col = out.axis(1);
  auto [co, ci] = s[out].split(col, lanes);
  (void)co;
  s[out].vectorize(ci);
  s[out].parallel(row);
}

// CUDA: inline the bias, one thread per element, `threads` threads a block.
inline void schedule_bias_gelu_scale_cuda(te::Schedule& s, const te::Tensor& out, int threads = 256) {
  inline_bias(s, out);
  te::IterVar all = s[out].fuse(out.axis(0), out.axis(1));
  auto [bx, tx] = s[out].split(all, threads);
  s[out].bind(bx, te::thread_axis("blockIdx.x"));
  s[out].bind(tx, te::thread_axis("threadIdx.x"));
}

}  // namespace my_ops
