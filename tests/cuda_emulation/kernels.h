// Hand-written GPU loop IR for the CUDA backend's tests: each function exercises one part
// of the mapping (thread bindings, shared memory and barriers, several kernels, float16,
// te's integer and float semantics, vectors, lets, host code).
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cuda_emulation/extern_kernels.h"
#include "cuda_emulation/fragment_kernels.h"
#include "cuda_emulation/loop_builders.h"
#include "cuda_emulation/math_bitwise_kernels.h"
#include "cuda_emulation/reduction_kernels.h"
#include "cuda_emulation/tuple_reduce_kernels.h"
#include "te/ops/grid_sample.h"
#include "te/ops/grid_sample_backward_cuda.h"
#include "te/ops/grid_sample_cuda.h"
#include "te/ops/matmul.h"
#include "te/ops/matmul_cuda.h"
#include "te/te.h"

namespace te::cuda_test {

// C[i] = A[i] + B[i] with 64 threads per block.
inline LoweredFunc vadd_func(const std::string& name = "vadd") {
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), C("C", Float(32), {n});
  Stmt body = grid_1d(n, 64, [&](Expr i) { return store(C, load(A, {i}) + load(B, {i}), {i}); });
  return LoweredFunc{name, {buffer_param(A), buffer_param(B), buffer_param(C)}, body};
}

// C = A (M x K) * B (K x N), 8 x 8 tiles staged through shared memory, guarded edges.
inline LoweredFunc matmul_shared_func(int M, int N, int K) {
  const int T = 8;
  Buffer A("A", Float(32), {M, K}), B("B", Float(32), {K, N}), C("C", Float(32), {M, N});
  Buffer As("A_shared", Float(32), {T * T}, MemoryScope::Shared);
  Buffer Bs("B_shared", Float(32), {T * T}, MemoryScope::Shared);
  Buffer acc("acc", Float(32), {1}, MemoryScope::Local);
  Var by("by"), bx("bx"), ty("ty"), tx("tx"), ko("ko"), ki("ki");
  Expr row = by * T + ty, col = bx * T + tx;
  Expr ka = ko * T + tx, kb = ko * T + ty;
  Stmt fetch = seq({
      store(As, if_then_else(row < M && ka < K, load(A, {row * K + ka}), 0.0f), {ty * T + tx}),
      store(Bs, if_then_else(kb < K && col < N, load(B, {kb * N + col}), 0.0f), {ty * T + tx}),
  });
  Stmt accumulate = for_loop(ki, 0, T, ForKind::Serial,
                             store(acc, load(acc, {0}) + load(As, {ty * T + ki}) * load(Bs, {ki * T + tx}), {0}));
  Stmt k_loop = for_loop(ko, 0, (K + T - 1) / T, ForKind::Serial, seq({fetch, barrier(), accumulate, barrier()}));
  Stmt thread_body = allocate(acc, seq({store(acc, 0.0f, {0}), k_loop,
                                        if_then_else(row < M && col < N, store(C, load(acc, {0}), {row * N + col}))}));
  Stmt kernel = block_loop(
      by, (M + T - 1) / T,
      block_loop(bx, (N + T - 1) / T,
                 allocate(As, allocate(Bs, thread_loop(ty, T, thread_loop(tx, T, thread_body), "threadIdx.y")))),
      "blockIdx.y");
  return LoweredFunc{"matmul_shared", {buffer_param(A), buffer_param(B), buffer_param(C)}, kernel};
}

// C = A (M x K) * B (K x N) scheduled as TVM's GEMM tutorial: 16 x 16 block tiles, 2 x 2
// virtual threads of 4 x 4 threads, each computing 2 x 2 elements per virtual thread in
// registers (cache_write "local"): the vthreads interleave strided register tiles.
inline LoweredFunc matmul_vthread_func(int M, int N, int K) {
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor CL = s.cache_write(C, "local");
  ops::MatmulCudaOptions o;
  o.block_m = o.block_n = 16;
  o.threads_y = o.threads_x = 4;
  const IterVar tx = ops::matmul_detail::tile_output(s, C, o).tx;  // the reference GEMM's tiling
  s[CL].compute_at(s[C], tx);
  LoweredFunc f = lower(s, {A, B, C}, "matmul_vthread");
  return f;
}

// te::ops::matmul with the reference CUDA schedule (double-buffered shared tiles,
// vthreads, vector loads).
inline LoweredFunc matmul_reference_func(int M, int N, int K, const ops::MatmulCudaOptions& o,
                                         const std::string& name) {
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::schedule_matmul_cuda(s, C, o);
  return lower(s, {A, B, C}, name);
}

// te::ops::matmul of 16-bit matrices (linear: ops::linear, B N x K) with the tensor-core
// schedule (float32 out).
inline LoweredFunc matmul_tensorcore_func(int M, int N, int K, DataType t, const ops::MatmulTensorCoreOptions& o,
                                          const std::string& name, bool linear = false) {
  Tensor A = placeholder({M, K}, t, "A"), B = linear ? placeholder({N, K}, t, "B") : placeholder({K, N}, t, "B");
  Tensor C = linear ? ops::linear(A, B, "C") : ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::schedule_matmul_tensorcore_cuda(s, C, o);
  return lower(s, {A, B, C}, name);
}

// Small tiles for the emulation: 32 x 32 per block, 8 x 8 threads of 2 x 2 vthreads of
// 2 x 2 elements (float2 rows).
inline ops::MatmulCudaOptions small_matmul_tiles() {
  ops::MatmulCudaOptions o;
  o.block_m = o.block_n = 32;
  o.threads_y = o.threads_x = 8;
  return o;
}

// B = A transposed through a 32 x 32 shared tile per block, its rows padded to 33
// elements (storage_align) so a warp's column read hits 32 banks.
inline LoweredFunc transpose_shared_func(int M, int N) {
  Tensor A = placeholder({M, N}, Float(32), "A");
  Tensor B = compute(
      {N, M}, [&](Expr i, Expr j) { return A(j, i); }, "B");
  Schedule s = create_schedule({B});
  Tensor S = s.cache_read(A, "shared", {B});
  auto [bi, bj, ii, ij] = s[B].tile(B.axis(0), B.axis(1), 32, 32);
  auto [io, ty] = s[B].split(ii, 8);
  s[B].reorder({bi, bj, io, ty, ij});
  s[B].bind(bi, thread_axis("blockIdx.y"));
  s[B].bind(bj, thread_axis("blockIdx.x"));
  s[B].bind(ty, thread_axis("threadIdx.y"));
  s[B].bind(ij, thread_axis("threadIdx.x"));
  s[S].compute_at(s[B], bj);
  auto [so, sty] = s[S].split(S.axis(0), 8);
  s[S].bind(sty, thread_axis("threadIdx.y"));
  s[S].bind(S.axis(1), thread_axis("threadIdx.x"));
  s[S].storage_align(S.axis(0), 32, 1);
  (void)io, (void)so;
  return lower(s, {A, B}, "transpose_shared");
}

// B[r] = sum of row r of A (rows x cols): 32 threads per row, then a shared-memory tree.
inline LoweredFunc row_sum_func() {
  Var rows("rows"), cols("cols");
  Buffer A("A", Float(32), {rows, cols}), B("B", Float(32), {rows});
  Buffer partial("partial", Float(32), {32}, MemoryScope::Shared);
  Buffer s("s", Float(32), {1}, MemoryScope::Local);
  Var bx("bx"), tx("tx"), j("j");
  Expr col = j * 32 + tx;
  Stmt local_sum =
      allocate(s, seq({store(s, 0.0f, {0}),
                       for_loop(j, 0, (cols + 31) / 32, ForKind::Serial,
                                if_then_else(col < cols, store(s, load(s, {0}) + load(A, {bx * cols + col}), {0}))),
                       store(partial, load(s, {0}), {tx})}));
  std::vector<Stmt> steps = {local_sum, barrier()};
  for (int half = 16; half >= 1; half /= 2) {
    steps.push_back(if_then_else(tx < half, store(partial, load(partial, {tx}) + load(partial, {tx + half}), {tx})));
    steps.push_back(barrier());
  }
  steps.push_back(if_then_else(tx == 0, store(B, load(partial, {0}), {bx})));
  Stmt kernel = block_loop(bx, rows, allocate(partial, thread_loop(tx, 32, seq(steps))));
  return LoweredFunc{"row_sum", {buffer_param(A), buffer_param(B)}, kernel};
}

// Two kernels through a global scratch buffer: T = exp(A) * 2, then C = T + A.
inline LoweredFunc pipeline_func() {
  Var n("n");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Buffer T("T", Float(32), {n}, MemoryScope::Global);
  Stmt first = grid_1d(
      n, 32, [&](Expr i) { return store(T, exp(load(A, {i})) * 2.0f, {i}); }, "0");
  Stmt second = grid_1d(
      n, 16, [&](Expr i) { return store(C, load(T, {i}) + load(A, {i}), {i}); }, "1");
  return LoweredFunc{"pipeline", {buffer_param(A), buffer_param(C)}, allocate(T, seq({first, second}))};
}

// float16 storage and arithmetic, rounding after every operation.
inline LoweredFunc half_func() {
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(16), {n});
  Buffer H("H", Float(16), {n}), S("S", Float(16), {n}), M("M", Float(16), {n}), E("E", Float(32), {n});
  Buffer I("I", Int(8), {n}), D("D", Float(16), {n}), Q("Q", Float(16), {n});
  Stmt body = grid_1d(n, 32, [&](Expr i) {
    Expr a = cast(Float(16), load(A, {i})), b = load(B, {i});
    return seq({
        store(H, a, {i}),
        store(S, a * a + b - make_const(Float(16), 0.1), {i}),
        store(M, max(a, b), {i}),
        store(E, cast(Float(32), exp(a / make_const(Float(16), 8.0)) + sqrt(abs(b))), {i}),
        store(I, cast(Int(8), a), {i}),
        store(D, cast(Float(16), cast(Float(64), load(A, {i})) * 3.0), {i}),
        store(Q, floor(a * b) + make_const(Float(16), 0.5) * fma(a, b, a), {i}),
    });
  });
  return LoweredFunc{"half_ops",
                     {buffer_param(A), buffer_param(B), buffer_param(H), buffer_param(S), buffer_param(M),
                      buffer_param(E), buffer_param(I), buffer_param(D), buffer_param(Q)},
                     body};
}

// te's integer semantics: floor / and %, x / 0 == 0, MIN / -1, wrapping narrow types,
// saturating float -> int casts.
inline LoweredFunc int_semantics_func() {
  Var n("n");
  Buffer X("X", Int(32), {n}), Y("Y", Int(32), {n}), F("F", Float(32), {n}), G("G", Float(64), {n});
  std::vector<Buffer> outs;
  std::vector<std::pair<DataType, std::function<Expr(Expr, Expr, Expr, Expr)>>> ops = {
      {Int(32), [](Expr x, Expr y, Expr, Expr) { return x / y; }},
      {Int(32), [](Expr x, Expr y, Expr, Expr) { return x % y; }},
      {Int(32), [](Expr x, Expr y, Expr, Expr) { return truncdiv(x, y); }},
      {Int(32), [](Expr x, Expr y, Expr, Expr) { return truncmod(x, y); }},
      {Int(32), [](Expr x, Expr, Expr, Expr) { return x / 7 + x % 7; }},
      {Int(32), [](Expr x, Expr, Expr, Expr) { return abs(x); }},
      {Int(32), [](Expr x, Expr y, Expr, Expr) { return min(x, y); }},
      {Int(32), [](Expr x, Expr y, Expr, Expr) { return max(x, y); }},
      {Int(64), [](Expr x, Expr y, Expr, Expr) { return cast(Int(64), x) / cast(Int(64), y) + cast(Int(64), x) % 5; }},
      {Int(8), [](Expr x, Expr y, Expr, Expr) { return cast(Int(8), x) + cast(Int(8), y) * cast(Int(8), 3); }},
      {Int(8), [](Expr x, Expr y, Expr, Expr) { return cast(Int(8), x) / cast(Int(8), y); }},
      {UInt(16), [](Expr x, Expr y, Expr, Expr) { return cast(UInt(16), x) * cast(UInt(16), y); }},
      {UInt(32),
       [](Expr x, Expr y, Expr, Expr) {
         return cast(UInt(32), x) / cast(UInt(32), y) + cast(UInt(32), x) % make_const(UInt(32), 3);
       }},
      {Int(32), [](Expr, Expr, Expr f, Expr) { return cast(Int(32), f); }},
      {UInt(8), [](Expr, Expr, Expr f, Expr) { return cast(UInt(8), f); }},
      {Int(8), [](Expr, Expr, Expr f, Expr) { return cast(Int(8), f); }},
      {Int(64), [](Expr, Expr, Expr f, Expr) { return cast(Int(64), f); }},
      {UInt(32), [](Expr, Expr, Expr, Expr g) { return cast(UInt(32), g); }},
      {Int(16), [](Expr, Expr, Expr, Expr g) { return cast(Int(16), g); }},
      {UInt(64), [](Expr, Expr, Expr, Expr g) { return cast(UInt(64), g); }},
      {Bool(), [](Expr x, Expr, Expr f, Expr) { return cast(Bool(), f) && cast(Bool(), x); }},
      {Float(32), [](Expr x, Expr, Expr, Expr) { return cast(Float(32), x); }},
  };
  for (size_t k = 0; k < ops.size(); ++k)
    outs.emplace_back("O" + std::to_string(k), ops[k].first, std::vector<Expr>{n});
  Stmt body = grid_1d(n, 32, [&](Expr i) {
    std::vector<Stmt> stores;
    Expr x = load(X, {i}), y = load(Y, {i}), f = load(F, {i}), g = load(G, {i});
    for (size_t k = 0; k < ops.size(); ++k) stores.push_back(store(outs[k], ops[k].second(x, y, f, g), {i}));
    return seq(stores);
  });
  std::vector<Param> params = {buffer_param(X), buffer_param(Y), buffer_param(F), buffer_param(G)};
  for (const Buffer& b : outs) params.push_back(buffer_param(b));
  return LoweredFunc{"int_semantics", params, body};
}

// A float Binary node the builders do not offer (te's `%` rejects floats; lowering and
// the interpreter still define float Mod and TruncMod).
inline Expr float_binary(BinOp op, Expr a, Expr b) {
  return Expr(std::make_shared<const BinaryNode>(a.dtype(), op, a, b));
}

// te's float semantics: floor modulo, NaN-aware min/max, the math functions, in float32
// and float64.
inline LoweredFunc float_semantics_func() {
  Var n("n");
  Buffer F("F", Float(32), {n}), G("G", Float(32), {n}), D("D", Float(64), {n});
  std::vector<std::function<Expr(Expr, Expr)>> ops = {
      [](Expr f, Expr g) { return float_binary(BinOp::Mod, f, g) + float_binary(BinOp::TruncMod, f, g); },
      [](Expr f, Expr g) { return min(f, g) + max(f, g) * 0.5f; },
      [](Expr f, Expr) { return floor(f) + ceil(f) * 3.0f; },
      [](Expr f, Expr) { return round(f) + nearbyint(f) * 3.0f + trunc(f) * 9.0f; },
      [](Expr f, Expr g) { return exp(g) + log(abs(f)); },
      [](Expr f, Expr g) { return sqrt(abs(f)) + pow(abs(g), f) + tanh(f); },
      [](Expr f, Expr g) { return fma(f, g, f) - f / g; },
      [](Expr f, Expr g) { return select(f < g, f - g, g * 2.0f); },
      [](Expr f, Expr) { return cast(f.dtype(), f != f) + cast(f.dtype(), f > 1.0f || f < -1.0f); },
  };
  std::vector<Buffer> outs, outs64;
  for (size_t k = 0; k < ops.size(); ++k) {
    outs.emplace_back("O" + std::to_string(k), Float(32), std::vector<Expr>{n});
    outs64.emplace_back("P" + std::to_string(k), Float(64), std::vector<Expr>{n});
  }
  Stmt body = grid_1d(n, 32, [&](Expr i) {
    std::vector<Stmt> stores;
    Expr f = load(F, {i}), g = load(G, {i}), d = load(D, {i});
    for (size_t k = 0; k < ops.size(); ++k) {
      stores.push_back(store(outs[k], ops[k](f, g), {i}));
      stores.push_back(store(outs64[k], ops[k](d, cast(Float(64), g)), {i}));
    }
    return seq(stores);
  });
  std::vector<Param> params = {buffer_param(F), buffer_param(G), buffer_param(D)};
  for (const Buffer& b : outs) params.push_back(buffer_param(b));
  for (const Buffer& b : outs64) params.push_back(buffer_param(b));
  return LoweredFunc{"float_semantics", params, body};
}

// Vector statements (Ramp/Broadcast, predicated loads and stores), lets, if_then_else
// guarding a load, a 3-D block, a scalar parameter.
inline LoweredFunc vector_and_let_func() {
  Var n("n"), scale("scale", Float(32));
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n}), L("L", Float(32), {n});
  Var bx("bx"), tx("tx"), x("x", Float(32)), y("y", Float(32));
  Expr base = (bx * 8 + tx) * 4;
  Expr idx = ramp(base, 1, 4);
  Expr pred = idx < broadcast(n, 4);
  Stmt vec = store(C, load(A, {idx}, pred) * broadcast(scale, 4) + cast(Float(32, 4), idx), {idx}, pred);
  Expr i = bx * 8 + tx;
  // The guarded side reads A[i + 1] only where it exists; its let must stay guarded.
  Expr guarded = if_then_else(i + 1 < n, let(x, load(A, {i + 1}), x * x), -1.0f);
  Expr hoisted = let(y, load(A, {i}) * scale, y + y);
  Stmt lets = if_then_else(i < n, store(L, guarded + hoisted, {i}));
  Stmt kernel = block_loop(bx, (n + 31) / 32, thread_loop(tx, 8, seq({vec, lets})));
  return LoweredFunc{"vector_let", {buffer_param(A), buffer_param(C), buffer_param(L), scalar_param(scale)}, kernel};
}

// A 2-D grid of 3-D blocks: O[(y * W) + x] = y * 1000 + x.
inline LoweredFunc grid_2d_func() {
  Var h("h"), w("w");
  Buffer O("O", Int(32), {h, w});
  Var by("by"), bx("bx"), tz("tz"), ty("ty"), tx("tx");
  Expr y = by * 4 + ty * 2 + tz, x = bx * 8 + tx;
  Stmt body = if_then_else(y < h && x < w, store(O, y * 1000 + x, {y * w + x}));
  Stmt kernel = block_loop(
      by, (h + 3) / 4,
      block_loop(bx, (w + 7) / 8,
                 thread_loop(tz, 2, thread_loop(ty, 2, thread_loop(tx, 8, body), "threadIdx.y"), "threadIdx.z")),
      "blockIdx.y");
  return LoweredFunc{"grid_2d", {buffer_param(O)}, kernel};
}

// Host code around the kernels: an assert, a let used by a kernel and by its grid, and a
// serial loop that launches a kernel three times.
inline LoweredFunc host_code_func() {
  Var n("n"), half_n("half_n"), rep("rep");
  Buffer C("C", Int(32), {n});
  Stmt init = grid_1d(
      n, 16, [&](Expr i) { return store(C, i, {i}); }, "0");
  Stmt bump = grid_1d(
      half_n, 16, [&](Expr i) { return store(C, load(C, {i}) + rep * half_n, {i}); }, "1");
  // The message ends in a backslash, which must not continue its comment in the source.
  Stmt body = assert_stmt(n >= 4, "n must be at least 4\\",
                          seq({init, let_stmt(half_n, n / 2, for_loop(rep, 0, 3, ForKind::Serial, bump))}));
  return LoweredFunc{"host_code", {buffer_param(C)}, body};
}

// One block of 4 threads reverses 4 elements through shared memory; the two thread
// loops bind threadIdx.x with variables of the same name.
inline LoweredFunc reverse4_func() {
  Buffer A("A", Float(32), {4}), B("B", Float(32), {4});
  Buffer S("S", Float(32), {4}, MemoryScope::Shared);
  Var bx("bx"), tx("tx"), tx2("tx");
  Stmt body = block_loop(bx, 1,
                         allocate(S, seq({thread_loop(tx, 4, store(S, load(A, {tx}), {tx})), barrier(),
                                          thread_loop(tx2, 4, store(B, load(S, {3 - tx2}), {tx2}))})));
  return LoweredFunc{"reverse4", {buffer_param(A), buffer_param(B)}, body};
}

// Every float32 function that has a fast CUDA intrinsic.
inline LoweredFunc math_func(const std::string& name = "math") {
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  Stmt body = grid_1d(n, 32, [&](Expr i) {
    Expr a = load(A, {i});
    return store(B, exp(a) + log(a) + pow(a, a) + tanh(a) + a / (a + 1.0f) + sqrt(a), {i});
  });
  return LoweredFunc{name, {buffer_param(A), buffer_param(B)}, body};
}

// Divisions C can do plainly (non-negative by a positive constant) and ones it cannot.
inline LoweredFunc divisions_func() {
  Var n("n"), s("s");
  Buffer A("A", Int(32), {n}), B("B", Int(32), {n});
  Stmt body = grid_1d(n, 32, [&](Expr i) { return store(B, i / 4 + i % 4 + load(A, {i}) / 4 + i / s, {i}); });
  return LoweredFunc{"divs", {buffer_param(A), buffer_param(B), scalar_param(s)}, body};
}

// B = 2 * A over an n x m matrix: n * m may exceed 2^31 - 1, so indices are 64-bit.
inline LoweredFunc scale2d_func() {
  Var n("n"), m("m");
  Buffer A("A", Float(32), {n, m}), B("B", Float(32), {n, m});
  Var bx("bx"), tx("tx"), j("j");
  Expr row = bx * 64 + tx;
  Stmt body =
      block_loop(bx, (n + 63) / 64,
                 thread_loop(tx, 64,
                             if_then_else(row < n, for_loop(j, 0, m, ForKind::Serial,
                                                            store(B, load(A, {row * m + j}) * 2.0f, {row * m + j})))));
  return LoweredFunc{"scale2d", {buffer_param(A), buffer_param(B)}, body};
}

// Names that are not C identifiers or that C reserves.
inline LoweredFunc odd_names_func() {
  Var n("n");
  Buffer A("int", Float(32), {n}), B("out.buf", Float(32), {n});
  Stmt body = grid_1d(n, 32, [&](Expr i) { return store(B, load(A, {i}), {i}); });
  return LoweredFunc{"my-kernel", {buffer_param(A), buffer_param(B)}, body};
}

// Bilinear grid_sample with channels split over threads (schedule_grid_sample_cuda's
// channels_per_thread; 0 picks it: 80 channels -> groups of 32, 32, 16).
inline Tensor grid_sample_output(Tensor* data, Tensor* grid, int channels) {
  *data = placeholder({2, channels, 9, 11}, Float(32), "data");
  *grid = placeholder({2, 7, 5, 2}, Float(32), "grid");
  return ops::grid_sample(*data, *grid, ops::GridSampleOptions{});
}
inline LoweredFunc grid_sample_split_func(int channels, int channels_per_thread, const std::string& name) {
  Tensor data, grid;
  Tensor out = grid_sample_output(&data, &grid, channels);
  Schedule s = create_schedule({out});
  ops::schedule_grid_sample_cuda(s, out, 64, channels_per_thread);
  return lower(s, {data, grid, out}, name);
}

// C = A * 2 + B[i + offset] with a vectorized inner loop of 4: float4 loads and stores
// where the addresses are 16-byte aligned at run time (never for B when offset is odd),
// lane by lane otherwise.
inline LoweredFunc vector_access_func(int offset, const std::string& name, DataType t = Float(32), int lanes = 4) {
  Var n("n");
  Tensor A = placeholder({n}, t, "A"), B = placeholder({n + offset}, t, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) * make_const(t, 2.0) + B(i + offset); }, "C");
  Schedule s = create_schedule({C});
  auto [o, v] = s[C].split(C.axis(0), lanes);
  auto [bx, tx] = s[C].split(o, 64);
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  s[C].vectorize(v);
  return lower(s, {A, B, C}, name);
}

// out(c, j) = A(j, c + offset), a transposing copy: each thread reads 4 consecutive
// elements of a row of A (one float4 load where the address is 16-byte aligned: never
// when offset is 1) and stores them down a column of out, one by one.
inline LoweredFunc transpose_vector_read_func(int offset, const std::string& name) {
  Var n("n");
  const int64_t cols = 12;
  Tensor A = placeholder({n, cols + offset}, Float(32), "A");
  Tensor out = compute(
      {cols, n}, [&](Expr c, Expr j) { return A(j, c + offset) * 2.0f; }, "out");
  Schedule s = create_schedule({out});
  auto [co, ci] = s[out].split(out.axis(0), 4);
  s[out].reorder({co, out.axis(1), ci});
  s[out].vectorize(ci);
  auto [bx, tx] = s[out].split(s[out].fuse(co, out.axis(1)), 64);
  s[out].bind(bx, thread_axis("blockIdx.x"));
  s[out].bind(tx, thread_axis("threadIdx.x"));
  return lower(s, {A, out}, name);
}

// out[idx[i]] += x[i] from 64 threads a block, indices repeating: atomicAdd (small
// integer values: the sums are exact in any order).
inline LoweredFunc scatter_add_func() {
  Tensor idx = placeholder({1000}, Int(32), "idx"), x = placeholder({1000}, Float(32), "x");
  Tensor zeros = compute(
      {37}, [](Expr) { return make_zero(Float(32)); }, "zeros");
  Tensor out = scatter(
      zeros, {1000},
      [&](Expr i) {
        return ScatterTo{{idx(i)}, x(i), true};
      },
      "hist");
  Schedule s = create_schedule({out});
  auto [bx, tx] = s[out].split(out.axis(0), 64);
  s[out].bind(bx, thread_axis("blockIdx.x"));
  s[out].bind(tx, thread_axis("threadIdx.x"));
  auto [zb, zt] = s[zeros].split(zeros.axis(0), 64);
  s[zeros].bind(zb, thread_axis("blockIdx.x"));
  s[zeros].bind(zt, thread_axis("threadIdx.x"));
  return lower(s, {idx, x, out}, "scatter_add");
}

// grid_sample's hand-written backward (bilinear, align_corners, 2 x 3 x 5 x 6 data, a
// 4 x 3 grid): both gradients, the scatter-add with atomicAdd over pixels or, deterministic,
// a thread per (batch, channel) plane.
inline LoweredFunc grid_sample_backward_func(bool deterministic) {
  Tensor data = placeholder({2, 3, 5, 6}, Float(32), "data"), grid = placeholder({2, 4, 3, 2}, Float(32), "grid");
  Tensor head = placeholder({2, 3, 4, 3}, Float(32), "head");
  ops::GridSampleOptions o;
  o.align_corners = true;
  ops::GridSampleBackwardStages b = ops::grid_sample_backward_stages(data, grid, head, o);
  Schedule s = create_schedule({b.grad_data, b.grad_grid});
  ops::schedule_grid_sample_backward_cuda(s, b, deterministic, 64);
  return lower(s, {data, grid, head, b.grad_data, b.grad_grid},
               deterministic ? "grid_sample_backward_det" : "grid_sample_backward");
}

struct TestModule {
  LoweredFunc func;
  CudaOptions options;
  // The GPU kit draws its float inputs from small integers: a tensor core's summation
  // order then cannot change a sum, so a 16-bit intermediate rounds as interpret()'s does
  // and the GPU's result must equal interpret()'s bit for bit.
  bool integer_inputs = false;
};
// gtest names a parameter by this (instead of dumping its bytes).
inline void PrintTo(const TestModule& m, std::ostream* os) { *os << m.func.name; }

inline LoweredFunc renamed(LoweredFunc f, const std::string& name) {
  f.name = name;
  return f;
}

// Every function above once, two again with 64-bit index arithmetic, math with fast math.
inline std::vector<TestModule> all_test_modules() {
  CudaOptions wide, fast;
  wide.index_width = CudaOptions::IndexWidth::Int64;
  fast.fast_math = true;
  std::vector<TestModule> modules = {
      {vadd_func(), {}},
      {vadd_func("vadd64"), wide},
      {matmul_shared_func(20, 13, 17), {}},
      {matmul_vthread_func(37, 29, 11), {}},
      {matmul_reference_func(64, 96, 48, small_matmul_tiles(), "matmul_tiled"), {}},
      {matmul_reference_func(50, 40, 20, small_matmul_tiles(), "matmul_tiled_edges"), {}},
      {matmul_reference_func(256, 128, 32, {}, "matmul_tiled_default"), {}},
      {transpose_shared_func(45, 70), {}},
      {row_sum_func(), {}},
      {pipeline_func(), {}},
      {half_func(), {}},
      {int_semantics_func(), {}},
      {renamed(int_semantics_func(), "int_semantics64"), wide},
      {float_semantics_func(), {}},
      {vector_and_let_func(), {}},
      {grid_2d_func(), {}},
      {host_code_func(), {}},
      {reverse4_func(), {}},
      {math_func(), {}},
      {math_func("math_fast"), fast},
      {math_library_func(), {}},
      {math_library_func("math_library_fast"), fast},
      {bitwise_func(), {}},
      {bitwise_func("bitwise64"), wide},
      {extern_calls_func(), extern_options()},
      {extern_calls_func("extern_calls64"), extern_options(CudaOptions::IndexWidth::Int64)},
      {extern_vector_func(), extern_options()},
      {divisions_func(), {}},
      {scale2d_func(), {}},
      {odd_names_func(), {}},
      {softmax_rows_func(128), {}},
      {softmax_rows_func(96, "softmax_rows_fast"), fast},
      {softmax_op_func(768, 256), {}},
      {layer_norm_op_func(768, 256), {}},
      {reduce_rows_op_func(1000, 512), {}},
      {grid_sample_split_func(80, 0, "grid_sample_c80"), {}},
      {grid_sample_split_func(5, 2, "grid_sample_c5_by2"), {}},
      {scatter_add_func(), {}},
      {grid_sample_backward_func(false), {}},
      {grid_sample_backward_func(true), {}},
      {vector_access_func(0, "vector_access"), {}},
      {vector_access_func(1, "vector_access_offset"), {}},
      {vector_access_func(0, "vector_access_half2", Float(16), 2), {}},
      {vector_access_func(1, "vector_access_half2_offset", Float(16), 2), {}},
      {transpose_vector_read_func(0, "transpose_vector_read"), {}},
      {transpose_vector_read_func(1, "transpose_vector_read_offset"), {}},
      {mma_epilogue_func(64, 32, 32, Float(16), "mma_epilogue"), {}, true},
      {back_to_back_gemm_func(32, 32, 32, 16, BFloat(16), "back_to_back_bf16"), {}, true},
      {gemm_softmax_func(32, 32, 16, Float(16), "gemm_softmax"), {}},
      {tail_epilogue_func(11, 16, 12, Float(16), "tail_epilogue"), {}},
      {wgmma_epilogue_func(128, 32, 32, BFloat(16), "wgmma_epilogue"), {}, true},
      {wgmma_softmax_func(64, 32, 16, Float(16), "wgmma_softmax"), {}},
      {wgmma_back_to_back_func(128, 32, 32, 16, Float(16), "wgmma_back_to_back"), {}, true},
  };
  for (const RowReduceCase& c : emulated_row_reduce_cases()) modules.push_back({row_reduce_func(c), {}});
  for (const ArgRowsCase& c : emulated_arg_rows_cases()) modules.push_back({arg_rows_func(c), {}});
  modules.push_back({welford_rows_func(128), {}});
  modules.push_back({layer_norm_welford_op_func(768, 256), {}});
  modules.push_back({argmax_rows_op_func(256), {}});
  return modules;
}

}  // namespace te::cuda_test
