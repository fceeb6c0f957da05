// Transformer building blocks from te::ops (GELU, rotary position embedding, int4 weight
// dequantization) as lowered functions for three targets: as written (for interpret()),
// a CPU schedule (parallel rows, vectorized last axis, for the LLVM JIT) and a CUDA
// schedule (one thread per element, 128 per block). Shared by examples/llm_ops.cpp and
// tests/test_torch_golden.cpp, which checks them against PyTorch's results.
#pragma once
#include <te/ops/activation.h>
#include <te/ops/int4.h>
#include <te/ops/rotary.h>
#include <te/te.h>

#include <string>
#include <vector>

namespace te_examples {

enum class Target { AsWritten, Cpu, Cuda };

inline const char* target_name(Target t) {
  return t == Target::AsWritten ? "as written" : t == Target::Cpu ? "cpu" : "cuda";
}

// An element-wise output: on the CPU its leading axes fused into one parallel loop and its
// last axis in vectors of 8 floats (one AVX register); on a GPU every axis fused and split
// into blocks of 128 threads, consecutive threads on consecutive elements (coalesced).
inline void schedule_elementwise(te::Schedule& s, const te::Tensor& out, Target target) {
  using namespace te;
  if (target == Target::AsWritten) return;
  Stage st = s[out];
  std::vector<IterVar> axes;
  for (int d = 0; d < out.ndim(); ++d) axes.push_back(out.axis(d));
  if (target == Target::Cpu) {
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
inline te::LoweredFunc gelu_func(const std::string& approximate, Target target, const std::string& name) {
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
inline te::LoweredFunc rotary_func(Target target, const std::string& name) {
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
inline te::LoweredFunc unpack_int4_func(te::DataType packed, Target target, const std::string& name) {
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
inline te::LoweredFunc dequantize_int4_func(te::DataType packed, Target target, const std::string& name) {
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

}  // namespace te_examples
