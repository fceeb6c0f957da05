// Transformer building blocks from te::ops (GELU, rotary position embedding, int4 weight
// dequantization, layer norm through Welford, argmax over rows) as lowered functions for
// three targets: as written (for interpret()),
// a CPU schedule (parallel rows, vectorized last axis, for the LLVM JIT) and a CUDA
// schedule (one thread per element, 128 per block). Shared by examples/llm_ops.cpp and
// tests/test_torch_golden.cpp, which checks them against PyTorch's results.
#pragma once
#include <te/ops/activation.h>
#include <te/ops/int4.h>
#include <te/ops/normalization.h>
#include <te/ops/normalization_cuda.h>
#include <te/ops/rotary.h>
#include <te/te.h>

#include <string>
#include <vector>

namespace te_examples {

enum class ScheduleFor { AsWritten, Cpu, Cuda };

inline const char* target_name(ScheduleFor t) {
  return t == ScheduleFor::AsWritten ? "as written" : t == ScheduleFor::Cpu ? "cpu" : "cuda";
}

// An element-wise output: on the CPU its leading axes fused into one parallel loop and its
// last axis in vectors of 8 floats (one AVX register); on a GPU every axis fused and split
// into blocks of 128 threads, consecutive threads on consecutive elements (coalesced).
inline void schedule_elementwise(te::Schedule& s, const te::Tensor& out, ScheduleFor target) {
  using namespace te;
  if (target == ScheduleFor::AsWritten) return;
  Stage st = s[out];
  std::vector<IterVar> axes;
  for (int d = 0; d < out.ndim(); ++d) axes.push_back(out.axis(d));
  if (target == ScheduleFor::Cpu) {
    auto [outer, inner] = st.split(axes.back(), 8);
    axes.pop_back();
    if (!axes.empty()) st.parallel(st.fuse(axes));
    st.vectorize(inner);
    (void)outer;
    return;
  }
  auto [bx, tx] = st.split(st.fuse(axes), 128);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
}

// gelu(X) over a (rows, cols) float32 tensor; parameters X, Y.
inline te::LoweredFunc gelu_func(const std::string& approximate, ScheduleFor target, const std::string& name) {
  using namespace te;
  Var rows("rows"), cols("cols");
  Tensor X = placeholder({rows, cols}, Float(32), "X");
  Tensor Y = ops::gelu(X, approximate, "Y");
  Schedule s = create_schedule({Y});
  schedule_elementwise(s, Y, target);
  return lower(s, {X, Y}, name);
}

// RoPE of X (seq, heads, dim) at positions offset + s, theta_i = 10000^(-2i/dim) computed
// in the kernel; parameters X, Y, offset (an int32 scalar).
inline te::LoweredFunc rotary_func(ScheduleFor target, const std::string& name) {
  using namespace te;
  Var seq("seq"), heads("heads"), dim("dim"), offset("offset");
  Tensor X = placeholder({seq, heads, dim}, Float(32), "X");
  ops::RotaryOptions o;
  o.position_offset = offset;
  o.name = "Y";
  Tensor Y = ops::rotary_embedding(X, o);
  Schedule s = create_schedule({Y});
  schedule_elementwise(s, Y, target);
  return lower(s, {X, Y}, name);
}

// The int4 values of P (rows, k / per), packed uint8 (two per byte) or int32 (eight per
// word), as int8 (rows, k); parameters P, Q.
inline te::LoweredFunc unpack_int4_func(te::DataType packed, ScheduleFor target, const std::string& name) {
  using namespace te;
  Var rows("rows"), words("words");
  Tensor P = placeholder({rows, words}, packed, "P");
  ops::Int4Options o;
  o.name = "Q";
  Tensor Q = ops::unpack_int4(P, o);
  Schedule s = create_schedule({Q});
  schedule_elementwise(s, Q, target);
  return lower(s, {P, Q}, name);
}

// W = (q - Z) * S with q the int4 values of P, groups of 32 along the last axis: scales S
// (rows, k / 32) float32 and zero points Z (rows, k / 32) int8; parameters P, S, Z, W.
inline te::LoweredFunc dequantize_int4_func(te::DataType packed, ScheduleFor target, const std::string& name) {
  using namespace te;
  Var rows("rows"), words("words"), groups("groups");
  Tensor P = placeholder({rows, words}, packed, "P");
  Tensor S = placeholder({rows, groups}, Float(32), "S");
  Tensor Z = placeholder({rows, groups}, Int(8), "Z");
  ops::Int4Options o;
  o.name = "W";
  Tensor W = ops::dequantize_int4(P, S, Z, 32, o);
  Schedule s = create_schedule({W});
  schedule_elementwise(s, W, target);
  return lower(s, {P, S, Z, W}, name);
}

// layer_norm over the last axis of X (rows, cols) with the mean and variance from one
// Welford pass; eps 1e-5. CPU: rows in parallel, the statistics computed per row inside
// the row loop, the output in vectors of 8; CUDA: a block of 256 threads per row, the
// (mean, m2, count) tuple reduced across them. Parameters X, gamma, beta, Y.
inline te::LoweredFunc layer_norm_welford_func(ScheduleFor target, const std::string& name) {
  using namespace te;
  Var rows("rows");
  Tensor X = placeholder({rows, 768}, Float(32), "X");
  Tensor G = placeholder({768}, Float(32), "gamma"), B = placeholder({768}, Float(32), "beta");
  Tensor Y = ops::layer_norm_welford(X, G, B, 1e-5, "Y");
  Schedule s = create_schedule({Y});
  if (target == ScheduleFor::Cuda) {
    ops::schedule_layer_norm_welford_cuda(s, Y, 256);
  } else if (target == ScheduleFor::Cpu) {
    Tensor stats;  // the (mean, m2, count) stage
    for (const Operation& in : Y.op()->inputs)
      if (in->num_outputs() == 3) stats = Tensor(in);
    // 32 partial Welfords per row, merged: each folds 24 values, so a row whose mean
    // dwarfs its spread keeps its precision (one float32 accumulator over all 768 stops
    // moving once (x - mean) / n is below half an ulp of the mean).
    auto [ko, ki] = s[stats].split(stats.op()->reduce_axis[0], 32);
    s.rfactor(stats, ki);
    auto [jo, ji] = s[Y].split(Y.axis(1), 8);
    s[Y].parallel(Y.axis(0));
    s[Y].vectorize(ji);
    s[stats].compute_at(s[Y], Y.axis(0));
    (void)jo, (void)ko;
  }
  return lower(s, {X, G, B, Y}, name);
}

// {index (int32), value} of the largest element of each row of X (rows, cols), first
// index on ties. CPU: rows in parallel; CUDA: a block of 256 threads per row.
// Parameters X, I, V.
inline te::LoweredFunc argmax_rows_func(ScheduleFor target, const std::string& name) {
  using namespace te;
  Tensor X = placeholder({Var("rows"), Var("cols")}, Float(32), "X");
  std::vector<Tensor> am = ops::argmax_rows(X, "I");
  Schedule s = create_schedule({am[0]});
  if (target == ScheduleFor::Cuda)
    ops::schedule_arg_rows_cuda(s, am[0], 256);
  else if (target == ScheduleFor::Cpu)
    s[am[0]].parallel(am[0].axis(0));
  return lower(s, {X, am[0], am[1]}, name);
}

}  // namespace te_examples
