// The code and the outputs shown in docs/: every snippet is run here, and
// tests/test_docs.cpp checks that each `<!-- output: NAME -->` block of the .md files is
// exactly what NAME prints now and that each `<!-- code: NAME -->` block is the code
// between `// [doc:NAME]` and `// [/doc]` below. TE_UPDATE_DOCS=1 ./test_docs rewrites
// the blocks in place after an intended change.
#pragma once
#include <te/autodiff.h>
#include <te/log.h>
#include <te/ops/attention.h>
#include <te/ops/attention_cpu.h>
#include <te/ops/attention_cuda.h>
#include <te/ops/grid_sample.h>
#include <te/ops/matmul.h>
#include <te/ops/normalization.h>
#include <te/te.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace te_docs {

using namespace te;

struct Snippet {
  std::string name;
  std::function<std::string()> run;
};

inline std::string text(const LoweredFunc& f) {
  std::ostringstream os;
  os << f;
  return os.str();
}

// Outputs of one primitive: "<name>.before" and "<name>.after".
struct BeforeAfter {
  std::string before, after;
};

// ---- The primitives, each on the smallest computation that shows it ----

inline BeforeAfter split_example() {
  // [doc:split]
  Tensor A = placeholder({32}, Float(32), "A");
  Tensor B = compute(
      {32}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  std::string before = text(lower(s, {A, B}, "f"));
  auto [outer, inner] = s[B].split(B.axis(0), 8);  // inner: 8 iterations
  // [/doc]
  (void)outer, (void)inner;
  return {before, text(lower(s, {A, B}, "f"))};
}

inline BeforeAfter split_guard_example() {
  // [doc:split_guard]
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  s[B].split(B.axis(0), 8);
  LowerOptions no_partition;
  no_partition.partition_loops = false;
  LoweredFunc guarded = lower(s, {A, B}, "f", no_partition);
  LoweredFunc partitioned = lower(s, {A, B}, "f");  // the default
  // [/doc]
  return {text(guarded), text(partitioned)};
}

inline BeforeAfter split_shift_example() {
  Tensor A = placeholder({20}, Float(32), "A");
  Tensor B = compute(
      {20}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule guard = create_schedule({B});
  auto [go, gi] = guard[B].split(B.axis(0), 8);
  guard[B].vectorize(gi);
  // [doc:split_shift]
  Schedule s = create_schedule({B});
  auto [outer, inner] = s[B].split(B.axis(0), 8, TailStrategy::ShiftInwards);
  s[B].vectorize(inner);
  // [/doc]
  (void)go, (void)outer;
  return {text(lower(guard, {A, B}, "f")), text(lower(s, {A, B}, "f"))};
}

inline BeforeAfter split_nparts_example() {
  Tensor A = placeholder({32}, Float(32), "A");
  Tensor B = compute(
      {32}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  std::string before = text(lower(s, {A, B}, "f"));
  // [doc:split_nparts]
  auto [outer, inner] = s[B].split_nparts(B.axis(0), 4);  // outer: 4 iterations
  // [/doc]
  (void)outer, (void)inner;
  return {before, text(lower(s, {A, B}, "f"))};
}

// B[i, j] = A[i, j] * 2 over 4 x 8: the 2-D computation of several primitives.
struct TwoD {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  Tensor B = compute(
      {4, 8}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  std::string now() const { return text(lower(s, {A, B}, "f")); }
};

inline BeforeAfter fuse_example() {
  TwoD t;
  auto& [A, B, s] = t;
  (void)A;
  std::string before = t.now();
  // [doc:fuse]
  IterVar ij = s[B].fuse(B.axis(0), B.axis(1));  // "i.j.fused", 32 iterations
  // [/doc]
  (void)ij;
  return {before, t.now()};
}

inline BeforeAfter reorder_example() {
  TwoD t;
  auto& [A, B, s] = t;
  (void)A;
  std::string before = t.now();
  // [doc:reorder]
  s[B].reorder({B.axis(1), B.axis(0)});  // j outermost
  // [/doc]
  return {before, t.now()};
}

inline BeforeAfter tile_example() {
  // [doc:tile]
  Tensor A = placeholder({8, 8}, Float(32), "A");
  Tensor B = compute(
      {8, 8}, [&](Expr i, Expr j) { return A(j, i); }, "B");  // transpose
  Schedule s = create_schedule({B});
  std::string before = text(lower(s, {A, B}, "f"));
  auto [io, jo, ii, ji] = s[B].tile(B.axis(0), B.axis(1), 4, 4);
  // [/doc]
  (void)io, (void)jo, (void)ii, (void)ji;
  return {before, text(lower(s, {A, B}, "f"))};
}

inline BeforeAfter bind_example() {
  // [doc:bind]
  Tensor A = placeholder({256}, Float(32), "A");
  Tensor B = compute(
      {256}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  std::string before = text(lower(s, {A, B}, "f"));
  auto [bx, tx] = s[B].split(B.axis(0), 64);
  s[B].bind(bx, thread_axis("blockIdx.x"));
  s[B].bind(tx, thread_axis("threadIdx.x"));
  // [/doc]
  return {before, text(lower(s, {A, B}, "f"))};
}

inline BeforeAfter vectorize_example() {
  Tensor A = placeholder({32}, Float(32), "A");
  Tensor B = compute(
      {32}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  std::string before = text(lower(s, {A, B}, "f"));
  // [doc:vectorize]
  auto [outer, inner] = s[B].split(B.axis(0), 8);
  s[B].vectorize(inner);  // 8 lanes: ramp(base, 1, 8) loads and stores
  // [/doc]
  (void)outer;
  return {before, text(lower(s, {A, B}, "f"))};
}

inline BeforeAfter unroll_example() {
  Tensor A = placeholder({16}, Float(32), "A");
  Tensor B = compute(
      {16}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  std::string before = text(lower(s, {A, B}, "f"));
  // [doc:unroll]
  auto [outer, inner] = s[B].split(B.axis(0), 4);
  s[B].unroll(inner);  // the 4 iterations become 4 statements
  // [/doc]
  (void)outer;
  return {before, text(lower(s, {A, B}, "f"))};
}

inline BeforeAfter parallel_example() {
  TwoD t;
  auto& [A, B, s] = t;
  (void)A;
  std::string before = t.now();
  // [doc:parallel]
  s[B].parallel(B.axis(0));  // rows run on te's thread pool
  // [/doc]
  return {before, t.now()};
}

// C[i, j] = B[i, j] + 1 where B[i, j] = A[i, j] * 2: a producer and its consumer.
struct Chain {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  Tensor B = compute(
      {4, 8}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
  Tensor C = compute(
      {4, 8}, [&](Expr i, Expr j) { return B(i, j) + 1.0f; }, "C");
  Schedule s = create_schedule({C});
  std::string now() const { return text(lower(s, {A, C}, "f")); }
};

inline BeforeAfter compute_at_example() {
  Chain c;
  auto& [A, B, C, s] = c;
  (void)A;
  std::string before = c.now();
  // [doc:compute_at]
  s[B].compute_at(s[C], C.axis(0));  // one row of B per row of C
  // [/doc]
  return {before, c.now()};
}

inline BeforeAfter compute_inline_example() {
  Chain c;
  auto& [A, B, C, s] = c;
  (void)A, (void)C;
  std::string before = c.now();
  // [doc:compute_inline]
  s[B].compute_inline();  // C[i, j] = A[i, j] * 2 + 1, no buffer for B
  // [/doc]
  return {before, c.now()};
}

inline BeforeAfter compute_root_example() {
  Chain c;
  auto& [A, B, C, s] = c;
  (void)A;
  s[B].compute_at(s[C], C.axis(0));
  std::string before = c.now();
  // [doc:compute_root]
  s[B].compute_root();  // back to its own loop nest before C's
  // [/doc]
  return {before, c.now()};
}

inline BeforeAfter cache_read_example() {
  TwoD t;
  auto& [A, B, s] = t;
  std::string before = t.now();
  // [doc:cache_read]
  Tensor AL = s.cache_read(A, "local", {B});  // "A.local", read by B instead of A
  s[AL].compute_at(s[B], B.axis(0));          // one row of A at a time
  // [/doc]
  return {before, t.now()};
}

inline BeforeAfter cache_write_example() {
  // [doc:cache_write]
  Tensor A = placeholder({4, 8}, Float(32), "A");
  IterVar k = reduce_axis({0, 8}, "k");
  Tensor S = compute(
      {4}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");  // row sums
  Schedule s = create_schedule({S});
  std::string before = text(lower(s, {A, S}, "f"));
  Tensor SL = s.cache_write(S, "local");  // "S.local" accumulates, S copies it out
  s[SL].compute_at(s[S], S.axis(0));
  // [/doc]
  return {before, text(lower(s, {A, S}, "f"))};
}

inline BeforeAfter bind_reduce_example() {
  // [doc:bind_reduce]
  Tensor A = placeholder({4, 256}, Float(32), "A");
  IterVar k = reduce_axis({0, 256}, "k");
  Tensor S = compute(
      {4}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");  // row sums
  Schedule s = create_schedule({S});
  s[S].bind(S.axis(0), thread_axis("blockIdx.x"));
  std::string before = text(lower(s, {A, S}, "f"));
  auto [ko, ki] = s[S].split(k, 64);
  s[S].bind(ki, thread_axis("threadIdx.x"));  // 64 threads share each row
  // [/doc]
  return {before, text(lower(s, {A, S}, "f"))};
}

inline BeforeAfter storage_align_example() {
  // [doc:storage_align]
  Tensor A = placeholder({8, 6}, Float(32), "A");
  Tensor T = compute(
      {8, 6}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "T");
  Tensor B = compute(
      {6, 8}, [&](Expr i, Expr j) { return T(j, i); }, "B");  // reads T's columns
  Schedule s = create_schedule({B});
  std::string before = text(lower(s, {A, B}, "f"));
  s[T].storage_align(T.axis(0), 8, 1);  // rows of 6 -> 9 elements: 9 = 8 * 1 + 1
  // [/doc]
  return {before, text(lower(s, {A, B}, "f"))};
}

inline BeforeAfter swizzle_example() {
  // [doc:swizzle]
  Tensor A = placeholder({64, 64}, Float(32), "A");
  Tensor B = compute(
      {64, 64}, [&](Expr i, Expr j) { return A(j, i); }, "B");  // a transpose
  Schedule s = create_schedule({B});
  Tensor AS = s.cache_read(A, "shared", {B});
  auto [bi, ti] = s[B].split(B.axis(0), 32);
  auto [bj, tj] = s[B].split(B.axis(1), 32);
  s[B].reorder({bi, bj, ti, tj});
  s[B].bind(bi, thread_axis("blockIdx.y"));
  s[B].bind(bj, thread_axis("blockIdx.x"));
  s[B].bind(tj, thread_axis("threadIdx.x"));
  s[AS].compute_at(s[B], bj);
  auto [co, ci] = s[AS].split(AS.op()->axis[1], 4);
  s[AS].vectorize(ci);  // float4: one 16-byte chunk
  auto [fo, fi] = s[AS].split(s[AS].fuse(AS.op()->axis[0], co), 32);
  s[AS].bind(fi, thread_axis("threadIdx.x"));
  std::string before = text(lower(s, {A, B}, "t"));
  s[AS].swizzle(128);  // rows of 32 floats = 128 bytes
  // [/doc]
  return {before, build_cuda(lower(s, {A, B}, "t")).source()};
}

inline BeforeAfter double_buffer_example() {
  // [doc:double_buffer]
  Tensor A = placeholder({4, 8}, Float(32), "A");
  IterVar k = reduce_axis({0, 8}, "k");
  Tensor S = compute(
      {4}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
  Schedule s = create_schedule({S});
  Tensor AL = s.cache_read(A, "local", {S});  // A copied 2 elements of k at a time
  auto [ko, ki] = s[S].split(k, 2);
  s[AL].compute_at(s[S], ko);
  std::string before = text(lower(s, {A, S}, "f"));
  s[AL].double_buffer();  // the copy for ko + 1 is made while ko's is read
  // [/doc]
  (void)ki;
  return {before, text(lower(s, {A, S}, "f"))};
}

// Row sums whose 128 x 32 tiles TMA copies 3 deep; warp_specialize gives the copies to a
// producer warpgroup.
inline LoweredFunc warp_specialize_func(bool specialize) {
  // [doc:warp_specialize]
  Tensor A = placeholder({256, 256}, Float(32), "A");
  IterVar k = reduce_axis({0, 256}, "k");
  Tensor C = compute(
      {256}, [&](Expr i) { return sum(A(i, k), {k}); }, "C");  // row sums
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  auto [bx, tx] = s[C].split(C.axis(0), 128);
  auto [ko, ki] = s[C].split(k, 32);
  s[C].reorder({bx, ko, tx, ki});
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));  // a warpgroup: a thread per row
  s[AS].compute_at(s[C], ko);                 // a 128 x 32 tile per step of k
  s[AS].pipeline(3);
  s[AS].tensorize(AS.axis(0), intrinsics::cuda_tma_load_2d(Float(32), 128, 32));
  if (specialize) s[AS].warp_specialize();  // a producer warpgroup issues the copies
  // [/doc]
  (void)ki;
  return lower(s, {A, C}, "row_sums");
}

inline BeforeAfter warp_specialize_example() {
  return {text(warp_specialize_func(false)), text(warp_specialize_func(true))};
}

// The warp-specialized kernel's function (the helpers before it left out).
inline std::string warp_specialize_kernel() {
  const std::string cu = build_cuda(warp_specialize_func(true)).source();
  const size_t begin = cu.find("extern \"C\" __global__");
  return cu.substr(begin, cu.find("\n}\n", begin) + 3 - begin);
}

inline BeforeAfter rfactor_example() {
  // [doc:rfactor]
  Tensor A = placeholder({16}, Float(32), "A");
  IterVar k = reduce_axis({0, 16}, "k");
  Tensor S = compute(
      {1}, [&](Expr) { return sum(A(k), {k}); }, "S");
  Schedule s = create_schedule({S});
  std::string before = text(lower(s, {A, S}, "f"));
  auto [ko, ki] = s[S].split(k, 4);
  Tensor SR = s.rfactor(S, ki);  // "S.rf"[ki]: 4 partial sums, then S adds them
  // [/doc]
  (void)ko, (void)SR;
  return {before, text(lower(s, {A, S}, "f"))};
}

// A 1-D transposed convolution as TVM writes it: x with a zero between its values and one
// around them (stride 2, padding 1), convolved with the flipped kernel.
struct TransposedConv1d {
  Tensor x, w, d, out;
};

inline TransposedConv1d transposed_conv_1d() {
  // [doc:skip_zeros.define]
  Tensor x = placeholder({4}, Float(32), "x");
  Tensor w = placeholder({3}, Float(32), "w");
  // x with a zero between its values and one around them (stride 2, padding 1)
  Tensor d = compute(
      {9}, [&](Expr y) { return if_then_else(y >= 1 && y < 8 && (y - 1) % 2 == 0, x((y - 1) / 2), 0.0f); }, "d");
  IterVar r = reduce_axis({0, 3}, "r");
  Tensor out = compute(
      {7}, [&](Expr i) { return sum(d(i + r) * w(2 - r), {r}); }, "out");
  // [/doc]
  return {x, w, d, out};
}

inline BeforeAfter skip_zeros_example() {
  auto [x, w, d, out] = transposed_conv_1d();
  // [doc:skip_zeros]
  Schedule s = create_schedule({out});
  s[d].compute_inline();
  std::string before = text(lower(s, {x, w, out}, "f"));
  s[out].skip_zeros(d);  // r = (i + 1) % 2 + 2 * r.nz: the taps where d is not zero
  // [/doc]
  return {before, text(lower(s, {x, w, out}, "f"))};
}

inline BeforeAfter skip_padding_example() {
  // [doc:skip_padding]
  Tensor x = placeholder({16}, Float(32), "x");
  Tensor w = placeholder({7}, Float(32), "w");
  // x with 3 zeros on each side (C3D's depth: 16 planes, a window of 7, stride 2)
  Tensor pad = compute(
      {22}, [&](Expr y) { return if_then_else(y >= 3 && y < 19, x(y - 3), 0.0f); }, "pad");
  IterVar r = reduce_axis({0, 7}, "r");
  Tensor out = compute(
      {8}, [&](Expr i) { return sum(pad(2 * i + r) * w(r), {r}); }, "out");
  Schedule s = create_schedule({out});
  std::string before = text(lower(s, {x, w, out}, "f"));
  s[out].skip_padding(pad);  // r from max(3 - 2i, 0) to min(19 - 2i, 7): 50 of 56 taps
  // [/doc]
  return {before, text(lower(s, {x, w, out}, "f"))};
}

inline BeforeAfter split_phases_example() {
  auto [x, w, d, out] = transposed_conv_1d();
  // [doc:split_phases]
  Schedule s = create_schedule({out});
  s[d].compute_inline();
  s[out].skip_zeros(d);
  std::string before = text(lower(s, {x, w, out}, "f"));
  Tensor p = s.split_phases(out, {out.axis(0)}, 2);  // "out.phases"[i.phase, i.coarse]
  // [/doc]
  (void)p;
  return {before, text(lower(s, {x, w, out}, "f"))};
}

inline BeforeAfter cache_read_phases_example() {
  // [doc:cache_read_phases]
  Tensor x = placeholder({18}, Float(32), "x");
  Tensor w = placeholder({3}, Float(32), "w");
  IterVar r = reduce_axis({0, 3}, "r");
  Tensor out = compute(
      {8}, [&](Expr i) { return sum(x(i * 2 + r) * w(r), {r}); }, "out");  // stride 2
  Schedule s = create_schedule({out});
  s[out].reorder({r, out.axis(0)});
  s[out].unroll(r);
  s[out].vectorize(out.axis(0));
  std::string before = text(lower(s, {x, w, out}, "f"));
  Tensor xp = s.cache_read_phases(x, "global", {out}, 0, 2);  // "x.phases"[phase, coarse]
  // [/doc]
  (void)xp;
  return {before, text(lower(s, {x, w, out}, "f"))};
}

inline std::vector<std::string> pretransform_example() {
  // [doc:pretransform]
  Tensor x = placeholder({1, 2, 4, 4}, Float(32), "x");
  Tensor w = placeholder({8, 2, 3, 3}, Float(32), "w");  // OIHW
  IterVar rc = reduce_axis({0, 2}, "rc"), rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw");
  Tensor out = compute(
      {1, 8, 2, 2},
      [&](Expr n, Expr co, Expr h, Expr ww) {
        return sum(x(n, rc, h + rh, ww + rw) * w(co, rc, rh, rw), {rc, rh, rw});
      },
      "out");
  Schedule s = create_schedule({out});
  std::string before = text(lower(s, {x, w, out}, "conv"));
  Tensor w_hwio = s.pretransform(w, {2, 3, 1, 0});        // "w_2310": the function takes w as HWIO
  LoweredFunc conv = lower(s, {x, w, out}, "conv");       // w's place: w_2310
  LoweredFunc pack = lower_pretransform(s, w, "pack_w");  // once per new w: pack_w(w, w_2310)
  // [/doc]
  (void)w_hwio;
  return {before, text(conv), text(pack)};
}

inline std::vector<std::string> pretransform_blocked_example() {
  Tensor x = placeholder({1, 2, 4, 4}, Float(32), "x");
  Tensor w = placeholder({8, 2, 3, 3}, Float(32), "w");  // OIHW
  IterVar rc = reduce_axis({0, 2}, "rc"), rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw");
  Tensor out = compute(
      {1, 8, 2, 2},
      [&](Expr n, Expr co, Expr h, Expr ww) {
        return sum(x(n, rc, h + rh, ww + rw) * w(co, rc, rh, rw), {rc, rh, rw});
      },
      "out");
  Schedule s = create_schedule({out});
  // [doc:pretransform_blocked]
  Tensor w_blocked = s.pretransform(w, {2, 3, 1, 0}, 4);  // "w_2310_b4": [2][3][3][2][4]
  LoweredFunc pack = lower_pretransform(s, w, "pack_w");
  // [/doc]
  (void)w_blocked;
  return {text(lower(s, {x, w, out}, "conv")), text(pack)};
}

inline std::vector<std::string> winograd_example() {
  // [doc:winograd]
  Tensor x = placeholder({1, 4, 4, 2}, Float(32), "x");  // NHWC
  Tensor w = placeholder({3, 3, 2, 2}, Float(32), "w");  // HWIO
  IterVar rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw"), rc = reduce_axis({0, 2}, "rc");
  Tensor out = compute(
      {1, 2, 2, 2},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(x(n, h + rh, ww + rw, rc) * w(rh, rw, rc, co), {rh, rw, rc});
      },
      "out");
  Schedule s = create_schedule({out});
  WinogradStages wg = s.winograd(out);                              // out.wino_weights, _rows, _input, _product
  Tensor u = s.precompute(wg.weights);                              // "out_wino_weights": the caller transforms w once
  LoweredFunc conv = lower(s, {x, w, out}, "conv");                 // w's place: out_wino_weights
  LoweredFunc transform = lower_pretransform(s, w, "transform_w");  // transform_w(w, out_wino_weights)
  // [/doc]
  (void)u;
  return {text(conv), text(transform)};
}

inline std::string winograd_1d_example() {
  // [doc:winograd_1d]
  Tensor x = placeholder({1, 11, 2}, Float(32), "x");  // NLC
  Tensor w = placeholder({5, 2, 3}, Float(32), "w");   // taps, in, out channels
  IterVar r = reduce_axis({0, 5}, "r"), rc = reduce_axis({0, 2}, "rc");
  Tensor out = compute(
      {1, 4, 3},
      [&](Expr n, Expr l, Expr co) {
        return sum(x(n, l * 2 + r, rc) * w(r, rc, co), {r, rc});
      },
      "out");
  Schedule s = create_schedule({out});
  // 5 taps at stride 2: 3 on the even points, 2 on the odd; F(2, 3) + F(2, 2), 7 products
  // per 2 outputs where the direct sum does 10.
  WinogradStages wg = s.winograd_1d(out, r, 2);  // out.wino_weights, _input, _product
  s.precompute(wg.weights);
  LoweredFunc conv = lower(s, {x, w, out}, "conv");
  // [/doc]
  return text(conv);
}

// ---- auto_schedule (docs/auto_schedule.md) ----

inline BeforeAfter auto_schedule_example() {
  // [doc:auto_schedule]
  Tensor A = placeholder({48, 32}, Float(32), "A");
  Tensor B = placeholder({32, 64}, Float(32), "B");
  Tensor bias = placeholder({64}, Float(32), "bias");
  IterVar k = reduce_axis({0, 32}, "k");
  Tensor C = compute(
      {48, 64}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Tensor D = compute(
      {48, 64}, [&](Expr i, Expr j) { return max(C(i, j) + bias(j), 0.0f); }, "D");
  std::string before = text(lower(create_schedule({D}), {A, B, bias, D}, "f"));
  AutoScheduleOptions o;
  o.threads = 2;                       // 0: te's thread pool size
  o.target = "llvm -vector-bits=256";  // the host, AVX2 vectors (output the same everywhere)
  Schedule s = auto_schedule({D}, o);
  // [/doc]
  return {before, text(lower(s, {A, B, bias, D}, "f"))};
}

inline std::string auto_schedule_softmax_example() {
  Tensor x = placeholder({64, 256}, Float(32), "x");
  Tensor y = ops::softmax(x);
  AutoScheduleOptions o;
  o.threads = 2;
  o.target = "llvm -vector-bits=256";
  return text(lower(auto_schedule({y}, o), {x, y}, "softmax"));
}

// ---- User and tuple reducers, several outputs (docs/reductions.md) ----

inline std::string comm_reducer_example() {
  // [doc:comm_reducer]
  CommReducer bit_or = comm_reducer([](Expr a, Expr b) { return a | b; },     // combine
                                    [](DataType t) { return make_zero(t); },  // identity
                                    "bit_or");
  Tensor A = placeholder({4, 8}, UInt(32), "A");
  IterVar k = reduce_axis({0, 8}, "k");
  Tensor O = compute(
      {4}, [&](Expr i) { return bit_or(A(i, k), {k}); }, "O");
  // [/doc]
  return text(lower(create_schedule({O}), {A, O}, "f"));
}

inline BeforeAfter argmax_example() {
  // [doc:argmax]
  Tensor A = placeholder({4, 16}, Float(32), "A");
  IterVar k = reduce_axis({0, 16}, "k");
  std::vector<Tensor> am = compute_tuple({4}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"idx", "val"});
  Schedule s = create_schedule({am[0]});  // one stage: s[am[0]] is s[am[1]]
  std::string before = text(lower(s, {A, am[0], am[1]}, "f"));
  auto [ko, ki] = s[am[0]].split(k, 4);
  Tensor rf = s.rfactor(am[0], ki);  // idx.rf and val.rf: 4 partial (index, value) pairs
  // [/doc]
  (void)ko, (void)rf;
  return {before, text(lower(s, {A, am[0], am[1]}, "f"))};
}

inline std::string argmax_threads_example() {
  // [doc:argmax_threads]
  Tensor A = placeholder({Var("rows"), 64}, Float(32), "A");
  IterVar k = reduce_axis({0, 64}, "k");
  std::vector<Tensor> am = compute_tuple({A.shape()[0]}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"idx", "val"});
  Schedule s = create_schedule({am[0]});
  auto [ko, ki] = s[am[0]].split(k, 32);
  s[am[0]].bind(am[0].axis(0), thread_axis("blockIdx.x"));
  s[am[0]].bind(ki, thread_axis("threadIdx.x"));  // a warp per row: shuffles of both values
  // [/doc]
  (void)ko;
  return text(lower(s, {A, am[0], am[1]}, "f"));
}

inline std::string online_softmax_example() {
  // [doc:online_softmax]
  Tensor S = placeholder({4, 32}, Float(32), "S");   // scores: 4 queries x 32 keys
  Tensor V = placeholder({32, 16}, Float(32), "V");  // values: 32 keys x 16 dims
  IterVar j = reduce_axis({0, 32}, "j");
  std::vector<Tensor> r = compute_rows({4}, {16},  // rows (queries), elements of a row (dims)
                                       [&](const std::vector<Var>& row, const std::vector<Var>& dim) {
                                         return online_softmax(S(row[0], j), {V(j, dim[0])}, {j});  // {max, sum, acc}
                                       },
                                       {"max", "sum", "acc"}, {"i", "d"});
  Schedule s = create_schedule({r[0]});
  s[r[0]].vectorize(r[2].axis(1));  // the element loop, inside the key loop
  // [/doc]
  return text(lower(s, {S, V, r[0], r[1], r[2]}, "f"));
}

// ---- Attention (docs/attention.md) ----

inline std::vector<Tensor> attention_inputs() {
  return {placeholder({1, 2, 16, 16}, Float(32), "q"), placeholder({1, 1, 16, 16}, Float(32), "k"),
          placeholder({1, 1, 16, 16}, Float(32), "v")};
}

inline std::string attention_default_example() {
  std::vector<Tensor> in = attention_inputs();
  const Tensor &q = in[0], &k = in[1], &v = in[2];
  // [doc:attention]
  ops::AttentionOptions o;
  o.causal = true;
  o.key_block = 8;                          // keys per block of the online softmax
  Tensor out = ops::attention(q, k, v, o);  // q (1, 2, 16, 16); k, v (1, 1, 16, 16): 2 heads share k/v
  Schedule s = create_schedule({out});
  // [/doc]
  return text(lower(s, {q, k, v, out}, "attention"));
}

inline std::string attention_cpu_example() {
  std::vector<Tensor> in = attention_inputs();
  const Tensor &q = in[0], &k = in[1], &v = in[2];
  ops::AttentionOptions o;
  o.causal = true;
  o.key_block = 8;
  Tensor out = ops::attention(q, k, v, o);
  // [doc:attention_cpu]
  Schedule s = create_schedule({out});
  ops::AttentionCpuOptions cpu;
  cpu.vector_bytes = 32;  // AVX2: 8 lanes (0: the host's widest)
  ops::schedule_attention_cpu(s, out, cpu);
  // [/doc]
  return text(lower(s, {q, k, v, out}, "attention"));
}

// The kernel attention's CUDA schedule emits, for a small causal float16 case.
inline std::string attention_cuda_example() {
  Tensor q = placeholder({1, 1, 40, 16}, Float(16), "q"), k = placeholder({1, 1, 64, 16}, Float(16), "k"),
         v = placeholder({1, 1, 64, 16}, Float(16), "v");
  // [doc:attention_cuda]
  ops::AttentionOptions o;
  o.causal = true;
  o.key_block = 32;
  o.query_block = 32;  // whole tiles of 2 warps x 16 queries (40 queries: 2 tiles)
  Tensor out = ops::attention(q, k, v, o);
  Schedule s = create_schedule({out});
  ops::schedule_attention_cuda(s, out);  // 2 warps; keys and values double-buffered
  CudaModule cu = build_cuda(lower(s, {q, k, v, out}, "attention"));
  // [/doc]
  std::string source = cu.source();
  size_t start = source.find("extern \"C\" __global__");
  size_t end = source.find("#ifndef __CUDACC_RTC__", start);
  return source.substr(start, end - start);
}

inline std::string compute_tuple_example() {
  // [doc:compute_tuple]
  Tensor A = placeholder({8}, Float(32), "A"), B = placeholder({8}, Float(32), "B");
  std::vector<Tensor> sd = compute_tuple({8},
                                         [&](Expr i) {
                                           return std::vector<Expr>{A(i) + B(i), A(i) - B(i)};
                                         },
                                         {"S", "D"});
  Schedule s = create_schedule({sd[0], sd[1]});
  s[sd[0]].vectorize(sd[0].axis(0));  // one loop nest writes both
  // [/doc]
  return text(lower(s, {A, B, sd[0], sd[1]}, "f"));
}

// ---- te::gradient (docs/autodiff.md) ----

inline std::string gradient_window_example() {
  // [doc:autodiff.window]
  Tensor X = placeholder({10}, Float(32), "X"), W = placeholder({3}, Float(32), "W");
  IterVar k = reduce_axis({0, 3}, "k");
  Tensor Y = compute(
      {8}, [&](Expr i) { return sum(X(i + k) * W(k), {k}); }, "Y");
  std::vector<Tensor> d = gradient(Y, {X, W});  // d[0]: dX, d[1]: dW (head: ones)
  // [/doc]
  return text(lower(create_schedule({d[0]}), {W, d[0]}, "dX"));
}

inline std::string gradient_gather_example() {
  // [doc:autodiff.gather]
  Tensor A = placeholder({16}, Float(32), "A"), I = placeholder({4, 64}, Int(32), "I");
  Tensor Y = compute(
      {4, 64}, [&](Expr b, Expr r) { return A(I(b, r)) * 2.0f; }, "Y");
  Tensor H = placeholder({4, 64}, Float(32), "H");
  Tensor dA = gradient(Y, {A}, H)[0];  // a scatter-add over Y's loops
  Schedule s = create_schedule({dA});
  s[dA].parallel(dA.op()->axis[1]);  // rows meet on A's elements: atomic adds
  // [/doc]
  return text(lower(s, {A, I, H, dA}, "dA"));
}

// ---- One mistake per primitive, and te's message for it ----

inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const te::Error& e) {
    return std::string(e.what()) + "\n";
  }
  return "(no error)\n";
}

// A, B = A * 2, C = B + 1 (4 x 8), S = row sums of A, T = S * 2: outputs C and T.
struct Mistakes {
  Tensor A = placeholder({4, 8}, Float(32), "A");
  Tensor B = compute(
      {4, 8}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
  Tensor C = compute(
      {4, 8}, [&](Expr i, Expr j) { return B(i, j) + 1.0f; }, "C");
  IterVar k = reduce_axis({0, 8}, "k");
  Tensor S = compute(
      {4}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
  Tensor T = compute(
      {4}, [&](Expr i) { return S(i) * 2.0f; }, "T");
  Schedule s = create_schedule({C, T});
};

inline std::vector<std::pair<std::string, std::function<void(Mistakes&)>>> mistakes() {
  return {
      {"split", [](Mistakes& m) { m.s[m.B].split(m.B.axis(0), 0); }},
      {"split_nparts", [](Mistakes& m) { m.s[m.B].split_nparts(m.C.axis(0), 2); }},
      {"fuse", [](Mistakes& m) { m.s[m.B].fuse(m.B.axis(1), m.B.axis(0)); }},
      {"reorder",
       [](Mistakes& m) {
         m.s[m.B].reorder({m.B.axis(0), m.B.axis(0)});
       }},
      {"tile", [](Mistakes& m) { m.s[m.B].tile(m.B.axis(0), m.B.axis(0), 2, 2); }},
      {"bind",
       [](Mistakes& m) {
         m.s[m.C].bind(m.C.axis(0), thread_axis("threadIdx.x"));
         m.s[m.C].bind(m.C.axis(1), thread_axis("threadIdx.x"));
       }},
      {"vectorize", [](Mistakes& m) { m.s[m.S].vectorize(m.k); }},
      {"unroll",
       [](Mistakes& m) {
         m.s[m.B].vectorize(m.B.axis(1));
         m.s[m.B].unroll(m.B.axis(1));
       }},
      {"parallel", [](Mistakes& m) { m.s[m.S].parallel(m.k); }},
      {"compute_at", [](Mistakes& m) { m.s[m.B].compute_at(m.s[m.T], m.T.axis(0)); }},
      {"compute_inline", [](Mistakes& m) { m.s[m.S].compute_inline(); }},
      {"compute_root", [](Mistakes& m) { m.s[m.A].compute_root(); }},
      {"cache_read", [](Mistakes& m) { m.s.cache_read(m.A, "local", {m.T}); }},
      {"cache_write",
       [](Mistakes& m) {
         m.s[m.S].split(m.k, 2);
         m.s.cache_write(m.S, "local");
       }},
      {"rfactor", [](Mistakes& m) { m.s.rfactor(m.B, m.B.axis(0)); }},
      {"storage_align", [](Mistakes& m) { m.s[m.B].storage_align(m.B.axis(1), 32, 32); }},
      {"double_buffer", [](Mistakes& m) { m.s[m.C].double_buffer(); }},
      {"swizzle", [](Mistakes& m) { m.s[m.A].swizzle(128); }},
      {"warp_specialize",
       [](Mistakes& m) {
         m.s[m.B].warp_specialize({40, 236});
       }},
      {"skip_zeros", [](Mistakes& m) { m.s[m.C].skip_zeros(m.B); }},
      {"skip_padding", [](Mistakes& m) { m.s[m.S].skip_padding(m.B); }},
      {"split_phases", [](Mistakes& m) { m.s.split_phases(m.B, {m.B.axis(0)}, 1); }},
      {"cache_read_phases", [](Mistakes& m) { m.s.cache_read_phases(m.B, "global", {m.C}, 2, 2); }},
      {"pretransform",
       [](Mistakes& m) {
         m.s.pretransform(m.B, {1, 0});
       }},
      {"winograd", [](Mistakes& m) { m.s.winograd(m.S); }},
      {"winograd_1d", [](Mistakes& m) { m.s.winograd_1d(m.S, m.k); }},
      {"precompute", [](Mistakes& m) { m.s.precompute(m.C); }},
  };
}

// ---- The tutorial ----

struct VectorAdd {
  Var n;
  Tensor A, B, C;
};

inline VectorAdd make_vector_add() {
  // [doc:tutorial.define]
  Var n("n");  // a symbolic int32 length
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  // [/doc]
  return {n, A, B, C};
}

inline std::string tutorial_print() {
  VectorAdd v = make_vector_add();
  auto& [n, A, B, C] = v;
  (void)n;
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  // [doc:tutorial.print]
  Schedule s = create_schedule({C});
  LoweredFunc f = lower(s, {A, B, C}, "vadd");
  std::cout << f;
  // [/doc]
  std::cout.rdbuf(old);
  return captured.str();
}

inline LoweredFunc tutorial_gpu_func() {
  VectorAdd v = make_vector_add();
  auto& [n, A, B, C] = v;
  (void)n;
  // [doc:tutorial.gpu]
  Schedule s = create_schedule({C});
  auto [bx, tx] = s[C].split(C.axis(0), 64);
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc gpu = lower(s, {A, B, C}, "vadd");
  // [/doc]
  return gpu;
}

inline LoweredFunc tutorial_cpu_func() {
  VectorAdd v = make_vector_add();
  auto& [n, A, B, C] = v;
  (void)n;
  // [doc:tutorial.cpu]
  Schedule t = create_schedule({C});
  auto [xo, xi] = t[C].split(C.axis(0), 8);
  t[C].vectorize(xi);
  t[C].parallel(xo);
  LoweredFunc cpu = lower(t, {A, B, C}, "vadd");
  // [/doc]
  return cpu;
}

inline std::string tutorial_interpret() {
  LoweredFunc gpu = tutorial_gpu_func();
  std::ostringstream out;
  // [doc:tutorial.interpret]
  NDArray a = NDArray::from_vector(std::vector<float>{1, 2, 3, 4, 5}, {5});
  NDArray b = NDArray::from_vector(std::vector<float>{10, 20, 30, 40, 50}, {5});
  NDArray c = NDArray::empty({5}, Float(32));
  interpret(gpu, {a, b, c});  // every (block, thread) of the GPU schedule, on the CPU
  for (float x : c.to_vector<float>()) out << x << " ";
  // [/doc]
  return out.str() + "\n";
}

inline std::string tutorial_jit() {
  LoweredFunc cpu = tutorial_cpu_func();
  std::ostringstream out;
  // [doc:tutorial.jit]
  Module m = build(cpu);  // LLVM, for this CPU
  NDArray a = NDArray::from_vector(std::vector<float>{1, 2, 3}, {3});
  NDArray b = NDArray::from_vector(std::vector<float>{0.5f, 0.25f, 0.125f}, {3});
  NDArray c = NDArray::empty({3}, Float(32));
  m("vadd")(a, b, c);  // n = 3, bound from the arrays
  for (float x : c.to_vector<float>()) out << x << " ";
  out << "\n" << m("vadd").signature() << "\n";
  try {
    m("vadd")(a, b, NDArray::empty({4}, Float(32)));
  } catch (const te::Error& e) {
    out << e.what() << "\n";
  }
  // [/doc]
  return out.str();
}

inline std::string tutorial_cuda_kernel() {
  LoweredFunc gpu = tutorial_gpu_func();
  // [doc:tutorial.cuda]
  CudaModule cu = build_cuda(gpu);
  std::string source = cu.source();  // write it to vadd.cu and compile with nvcc
  const CudaKernel& k = cu.kernels().at(0);
  CudaLaunchDims d = k.launch_dims({{"n", 1000}});
  // [/doc]
  std::ostringstream out;
  out << k.name << ": grid " << d.grid[0] << ", block " << d.block[0] << "\n";
  return out.str();
}

// The kernel of the .cu file, and the launcher's declaration.
inline std::string tutorial_cuda_source() {
  CudaModule cu = build_cuda(tutorial_gpu_func());
  std::string source = cu.source();
  size_t start = source.find("extern \"C\" __global__");
  size_t end = source.find("#ifndef __CUDACC_RTC__", start);
  if (start == std::string::npos || end == std::string::npos) return source;
  return source.substr(start, end - start) + cu.launcher_declaration() + "\n";
}

inline std::string tutorial_aot() {
  LoweredFunc cpu = tutorial_cpu_func();
  std::filesystem::path tmp = std::filesystem::temp_directory_path() / ("te_docs_aot_" + std::to_string(getpid()));
  std::filesystem::create_directories(tmp);
  const std::string dir = tmp.string();
  // [doc:tutorial.aot]
  export_object(cpu, dir + "/vadd.o");  // link it with libte_runtime
  export_header(cpu, dir + "/vadd.h");  // #include it from C or C++
  std::string prototype = c_prototype(cpu);
  // [/doc]
  std::filesystem::remove_all(tmp);
  return prototype + "\n";
}

// ---- DLPack ----

inline std::string dlpack_example() {
  Module m = build(tutorial_cpu_func());
  std::ostringstream out;
  // [doc:dlpack.example]
  // Memory of another library, described by DLTensors: borrowed by the call, no copy.
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, z[4] = {};
  int64_t shape[1] = {4};
  dlpack::DLTensor dx{x, {dlpack::kDLCPU, 0}, 1, {dlpack::kDLFloat, 32, 1}, shape, nullptr, 0};
  dlpack::DLTensor dy = dx, dz = dx;
  dy.data = y;
  dz.data = z;
  m("vadd")(&dx, &dy, &dz);
  out << z[0] << " " << z[1] << " " << z[2] << " " << z[3] << "\n";

  // te's array handed out and taken back: the same memory all along.
  NDArray a = NDArray::from_vector(std::vector<float>{5, 6}, {2});
  dlpack::DLManagedTensorVersioned* t = a.to_dlpack_versioned();  // what a consumer gets
  NDArray b = NDArray::from_dlpack(t);                            // b owns t: its deleter runs when b is gone
  out << "same data: " << std::boolalpha << (b.data() == a.data()) << "\n";
  // [/doc]
  return out.str();
}

// ---- grid_sample ----

inline std::string grid_sample_table() {
  std::ostringstream out;
  // [doc:grid_sample.table]
  // One row of 4 pixels, sampled at 7 x positions (y = 0) with every option.
  Tensor data = placeholder({1, 1, 1, 4}, Float(32), "data");
  Tensor grid = placeholder({1, 1, 7, 2}, Float(32), "grid");
  NDArray d = NDArray::from_vector(std::vector<float>{10, 20, 30, 40}, {1, 1, 1, 4});
  const std::vector<float> xs{-1.25f, -1.0f, -0.5f, 0.0f, 0.6f, 1.0f, 1.3f};
  std::vector<float> g;
  for (float x : xs) g.insert(g.end(), {x, 0.0f});
  NDArray gr = NDArray::from_vector(g, {1, 1, 7, 2});
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align_corners : {false, true}) {
        Tensor out_t = ops::grid_sample(data, grid, {mode, padding, align_corners});
        NDArray o = NDArray::empty({1, 1, 1, 7}, Float(32));
        interpret(lower(create_schedule({out_t}), {data, grid, out_t}, "gs"), {d, gr, o});
        out << mode << " " << padding << (align_corners ? " align:" : ":");
        for (float v : o.to_vector<float>()) out << " " << v;
        out << "\n";
      }
  // [/doc]
  return out.str();
}

// ---- TE_DUMP_IR ----

inline std::string dump_ir(const std::string& pass) {
  VectorAdd v = make_vector_add();
  auto& [n, A, B, C] = v;
  (void)n;
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 4);
  s[C].vectorize(xi);
  (void)xo;
  LowerOptions options;
  options.dump_ir = pass;  // the same as TE_DUMP_IR=<pass> in the environment
  // Only the dump: messages that TE_LOG or TE_TIME_PASSES may ask for go nowhere.
  set_log_sink([](LogLevel, const std::string&) {});
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  try {
    lower(s, {A, B, C}, "vadd", options);
  } catch (...) {
    std::cerr.rdbuf(old);
    set_log_sink(nullptr);
    throw;
  }
  std::cerr.rdbuf(old);
  set_log_sink(nullptr);
  return captured.str();
}

inline std::string pass_list() {
  std::string out;
  for (const std::string& p : lower_pass_names()) out += p + "\n";
  return out;
}

// Every snippet by name.
// ---- call_extern (docs/extern_calls.md) ----

inline LoweredFunc extern_gpu_func() {
  // [doc:extern.define]
  Var n("n");
  Tensor X = placeholder({n}, Float(32), "X");
  Tensor Y = compute(
      {n},
      [&](Expr i) {
        return call_extern(Float(32), "soft_clip", {X(i), 4.0f});  // float soft_clip(float, float)
      },
      "Y");
  Schedule s = create_schedule({Y});
  auto [bx, tx] = s[Y].split(Y.axis(0), 64);
  s[Y].bind(bx, thread_axis("blockIdx.x"));
  s[Y].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc f = lower(s, {X, Y}, "clip");
  // [/doc]
  return f;
}

inline std::string extern_ir() { return text(extern_gpu_func()); }

// From the copied-in header to the end of the kernel.
inline std::string extern_cuda() {
  LoweredFunc f = extern_gpu_func();
  // [doc:extern.cuda]
  CudaOptions options;
  options.extern_code =  // or, from a file: options.extern_headers = {"soft_clip.cuh"};
      "__device__ inline float soft_clip(float x, float limit) {\n"
      "  return limit * tanhf(x / limit);\n"
      "}\n";
  CudaModule cu = build_cuda(f, options);
  // [/doc]
  std::string source = cu.source();
  size_t start = source.find("// ---- CudaOptions::extern_code");
  size_t end = source.find("#ifndef __CUDACC_RTC__", start);
  if (start == std::string::npos || end == std::string::npos) return source;
  std::string part = source.substr(start, end - start);
  while (part.size() > 1 && part[part.size() - 2] == '\n') part.pop_back();  // one final newline
  return part;
}

inline std::string extern_interpret() {
  LoweredFunc f = extern_gpu_func();
  std::ostringstream out;
  // [doc:extern.interpret]
  register_extern("soft_clip", [](float x, float limit) { return limit * std::tanh(x / limit); });
  NDArray x = NDArray::from_vector(std::vector<float>{-100, -4, 0, 1, 100}, {5});
  NDArray y = NDArray::empty({5}, Float(32));
  interpret(f, {x, y});
  for (float v : y.to_vector<float>()) out << v << " ";
  // [/doc]
  return out.str() + "\n";
}

// A libm function te has no intrinsic for: the JIT finds it in the process, CUDA
// declares it itself.
inline std::string extern_library() {
  std::ostringstream out;
  // [doc:extern.library]
  Var n("n");
  Tensor X = placeholder({n}, Float(32), "X");
  Tensor Y = compute(
      {n}, [&](Expr i) { return call_extern(Float(32), "cbrtf", {X(i)}); }, "Y");
  Schedule s = create_schedule({Y});
  auto [xo, xi] = s[Y].split(Y.axis(0), 8);
  s[Y].vectorize(xi);  // eight calls per vector iteration
  LoweredFunc f = lower(s, {X, Y}, "cube_root");
  Module m = build(f);  // cbrtf: found in the process (libm)
  NDArray x = NDArray::from_vector(std::vector<float>{-27, 0, 1, 8, 1000}, {5});
  NDArray y = NDArray::empty({5}, Float(32));
  m("cube_root")(x, y);
  for (float v : y.to_vector<float>()) out << v << " ";
  // [/doc]
  out << "\n" << text(f);
  return out.str();
}

inline BeforeAfter tensorize_example() {
  // [doc:tensorize]
  // c[i] = sum over k of a[k] * b[i, k]: 32 outputs, 8 bytes deep, b packed in blocks of
  // 16 rows x 4 bytes (the 64 bytes one intrinsic call reads are contiguous).
  Tensor a = placeholder({8}, UInt(8), "a");
  Tensor b = placeholder({2, 2, 16, 4}, Int(8), "b");
  IterVar k = reduce_axis({0, 8}, "k");
  Tensor c = compute(
      {32}, [&](Expr i) { return sum(cast(Int(32), a(k)) * cast(Int(32), b(i / 16, k / 4, i % 16, k % 4)), {k}); },
      "c");
  Schedule s = create_schedule({c});
  auto [io, ii] = s[c].split(c.axis(0), 16);  // 16 outputs ...
  auto [ko, ki] = s[c].split(k, 4);           // ... 4 bytes deep: the intrinsic's shape
  s[c].reorder({io, ko, ii, ki});
  std::string before = text(lower(s, {a, b, c}, "f"));
  s[c].tensorize(ii, intrinsics::x86_dot_16x4_u8s8());
  // [/doc]
  (void)ki;
  return {before, text(lower(s, {a, b, c}, "f"))};
}

inline std::string tensorize_error() {
  // As tensorize_example, split by 8 instead of 16.
  Tensor a = placeholder({8}, UInt(8), "a");
  Tensor b = placeholder({2, 2, 16, 4}, Int(8), "b");
  IterVar k = reduce_axis({0, 8}, "k");
  Tensor c = compute(
      {32}, [&](Expr i) { return sum(cast(Int(32), a(k)) * cast(Int(32), b(i / 16, k / 4, i % 16, k % 4)), {k}); },
      "c");
  Schedule s = create_schedule({c});
  auto [io, ii] = s[c].split(c.axis(0), 8);
  auto [ko, ki] = s[c].split(k, 4);
  s[c].reorder({io, ko, ii, ki});
  s[c].tensorize(ii, intrinsics::x86_dot_16x4_u8s8());
  (void)ki;
  return error_of([&] { lower(s, {a, b, c}, "f"); });
}

inline std::string tensorize_declaration() {
  // [doc:tensorize.declare]
  // y[i] = 2 * x[i] + 1 over 8 floats, with an LLVM implementation named "axpy8"
  // (an emitter the LLVM backend registers) and none for CUDA.
  Tensor x = placeholder({8}, Float(32), "x");
  Tensor y = compute(
      {8}, [&](Expr i) { return x(i) * 2.0f + 1.0f; }, "y");
  TensorIntrinsic axpy8 = tensor_intrinsic("axpy8", y, {{"llvm", "axpy8"}});
  // A stage that computes the same, 8 elements at a time.
  Tensor X = placeholder({32}, Float(32), "X");
  Tensor Y = compute(
      {32}, [&](Expr i) { return X(i) * 2.0f + 1.0f; }, "Y");
  Schedule s = create_schedule({Y});
  auto [io, ii] = s[Y].split(Y.axis(0), 8);
  s[Y].tensorize(ii, axpy8);
  LoweredFunc f = lower(s, {X, Y}, "f");  // interpret(f, ...) runs; build(f) needs "axpy8"
  // [/doc]
  (void)io;
  return text(f);
}

inline LoweredFunc tensor_cores_func() {
  // [doc:tensor_cores]
  // C (32 x 8) = A (32 x 16) B (16 x 8) in float16, accumulated in float32: one warp per
  // 16 rows, fragments loaded straight from global memory.
  Tensor A = placeholder({32, 16}, Float(16), "A"), B = placeholder({16, 8}, Float(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  Tensor AF = s.cache_read(A, "warp", {C});  // the "a" fragment
  Tensor BF = s.cache_read(B, "warp", {C});  // the "b" fragment
  Tensor CF = s.cache_write(C, "warp");      // the accumulators
  auto [block, i] = s[C].split(C.axis(0), 16);
  s[C].bind(block, thread_axis("blockIdx.x"));
  s[C].tensorize(i, intrinsics::cuda_store_16x8_f32());
  for (const Tensor& t : {AF, BF, CF}) s[t].compute_at(s[C], block);
  s[AF].tensorize(AF.axis(0), intrinsics::cuda_load_matrix_a_16x16(Float(16)));
  s[BF].tensorize(BF.axis(0), intrinsics::cuda_load_matrix_b_16x8(Float(16)));
  s[CF].tensorize(CF.axis(0), intrinsics::cuda_mma_m16n8k16(Float(16)));  // and its init
  LoweredFunc f = lower(s, {A, B, C}, "mma16");
  // [/doc]
  return f;
}

// The kernel of the CUDA source (not the helpers and the launcher).
inline std::string tensor_cores_cuda() {
  const std::string src = build_cuda(tensor_cores_func()).source();
  const size_t begin = src.find("extern \"C\" __global__");
  return src.substr(begin, src.find("\n}\n", begin) + 3 - begin);
}

inline std::string tensor_cores_error() {
  // tensor_cores_func with each lane storing C's fragments itself (not tensorized), but
  // each element of D reads two columns of C, which two lanes hold.
  Tensor A = placeholder({32, 16}, Float(16), "A"), B = placeholder({16, 8}, Float(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = compute(
      {32, 8}, [&](Expr i, Expr j) { return C(i, j) - C(i, 7 - j); }, "D");
  Schedule s = create_schedule({D});
  Tensor AF = s.cache_read(A, "warp", {C}), BF = s.cache_read(B, "warp", {C});
  auto [block, i] = s[D].split(D.axis(0), 16);
  s[D].bind(block, thread_axis("blockIdx.x"));
  s[C].set_scope("warp");
  for (const Tensor& t : {AF, BF, C}) s[t].compute_at(s[D], block);
  s[AF].tensorize(AF.axis(0), intrinsics::cuda_load_matrix_a_16x16(Float(16)));
  s[BF].tensorize(BF.axis(0), intrinsics::cuda_load_matrix_b_16x8(Float(16)));
  s[C].tensorize(C.axis(0), intrinsics::cuda_mma_m16n8k16(Float(16)));
  (void)i;
  return error_of([&] { build_cuda(lower(s, {A, B, D}, "mma16")); });
}

inline LoweredFunc fragment_softmax_func() {
  // [doc:fragment_softmax]
  // Y = softmax(A B) along rows, A 16 x 16, B 16 x 32: every stage after the mma reads
  // and writes "warp" buffers element by element, so each lane runs them on the
  // accumulators it holds; the row max and sum reduce across each row's four lanes.
  Tensor A = placeholder({16, 16}, Float(16), "A"), B = placeholder({16, 32}, Float(16), "B");
  Tensor S = ops::matmul(A, B, "S");
  IterVar j1 = reduce_axis({0, 32}, "j"), j2 = reduce_axis({0, 32}, "j");
  Tensor m = compute(
      {16}, [&](Expr i) { return max(S(i, j1), {j1}); }, "row_max");
  Tensor p = compute(
      {16, 32}, [&](Expr i, Expr j) { return exp(S(i, j) - m(i)); }, "p");
  Tensor l = compute(
      {16}, [&](Expr i) { return sum(p(i, j2), {j2}); }, "row_sum");
  Tensor Y = compute(
      {16, 32}, [&](Expr i, Expr j) { return p(i, j) / l(i); }, "Y");
  Schedule s = create_schedule({Y});
  Tensor AF = s.cache_read(A, "warp", {S}), BF = s.cache_read(B, "warp", {S});
  auto [block, i] = s[Y].split(Y.axis(0), 16);
  s[Y].bind(block, thread_axis("blockIdx.x"));
  for (const Tensor& t : {AF, BF, S, m, p, l}) {
    s[t].set_scope("warp");
    s[t].compute_at(s[Y], block);
  }
  auto [jo, ji] = s[S].split(S.axis(1), 8);
  s[S].reorder({jo, S.axis(0), ji});
  s[S].tensorize(S.axis(0), intrinsics::cuda_mma_m16n8k16(Float(16)));
  auto [bo, bi] = s[BF].split(BF.axis(1), 8);
  s[BF].reorder({bo, BF.axis(0), bi});
  s[AF].tensorize(AF.axis(0), intrinsics::cuda_load_matrix_a_16x16(Float(16)));
  s[BF].tensorize(BF.axis(0), intrinsics::cuda_load_matrix_b_16x8(Float(16)));
  LoweredFunc f = lower(s, {A, B, Y}, "row_softmax");
  // [/doc]
  (void)i;
  return f;
}

// The kernel's lane nests: the row max, from its allocation to its butterfly.
inline std::string fragment_softmax_cuda() {
  const std::string src = build_cuda(fragment_softmax_func()).source();
  const size_t begin = src.find("  alignas(16) float row_max[2];");
  const size_t end = src.find("  alignas(16) float row_sum[2];", begin);
  return src.substr(begin, end - begin);
}

inline std::vector<Snippet> snippets() {
  std::vector<Snippet> out;
  auto pair = [&](const std::string& name, BeforeAfter (*fn)()) {
    // Each half runs the example again: examples are cheap and deterministic.
    out.push_back({name + ".before", [fn] { return fn().before; }});
    out.push_back({name + ".after", [fn] { return fn().after; }});
  };
  pair("split", split_example);
  pair("split_guard", split_guard_example);
  pair("split_shift", split_shift_example);
  pair("split_nparts", split_nparts_example);
  pair("fuse", fuse_example);
  pair("reorder", reorder_example);
  pair("tile", tile_example);
  pair("bind", bind_example);
  pair("vectorize", vectorize_example);
  pair("unroll", unroll_example);
  pair("parallel", parallel_example);
  pair("compute_at", compute_at_example);
  pair("compute_inline", compute_inline_example);
  pair("compute_root", compute_root_example);
  pair("cache_read", cache_read_example);
  pair("cache_write", cache_write_example);
  pair("rfactor", rfactor_example);
  pair("storage_align", storage_align_example);
  pair("double_buffer", double_buffer_example);
  pair("swizzle", swizzle_example);
  pair("warp_specialize", warp_specialize_example);
  out.push_back({"warp_specialize.kernel", warp_specialize_kernel});
  pair("skip_zeros", skip_zeros_example);
  pair("skip_padding", skip_padding_example);
  pair("split_phases", split_phases_example);
  pair("cache_read_phases", cache_read_phases_example);
  out.push_back({"pretransform.before", [] { return pretransform_example()[0]; }});
  out.push_back({"pretransform.after", [] { return pretransform_example()[1]; }});
  out.push_back({"pretransform.pack", [] { return pretransform_example()[2]; }});
  out.push_back({"pretransform.blocked_conv", [] { return pretransform_blocked_example()[0]; }});
  out.push_back({"pretransform.blocked_pack", [] { return pretransform_blocked_example()[1]; }});
  out.push_back({"winograd.conv", [] { return winograd_example()[0]; }});
  out.push_back({"winograd.transform", [] { return winograd_example()[1]; }});
  out.push_back({"winograd_1d.conv", winograd_1d_example});
  pair("tensorize", tensorize_example);
  out.push_back({"tensorize.error", tensorize_error});
  out.push_back({"tensorize.declare", tensorize_declaration});
  out.push_back({"tensor_cores.ir", [] { return text(tensor_cores_func()); }});
  out.push_back({"tensor_cores.cuda", tensor_cores_cuda});
  out.push_back({"tensor_cores.error", tensor_cores_error});
  out.push_back({"fragment_softmax.cuda", fragment_softmax_cuda});
  pair("bind_reduce", bind_reduce_example);
  pair("auto_schedule", auto_schedule_example);
  out.push_back({"auto_schedule.softmax", auto_schedule_softmax_example});
  out.push_back({"split_shift.error", [] {
                   Mistakes m;
                   return error_of([&] { m.s[m.S].split(m.S.axis(0), 3, TailStrategy::ShiftInwards); });
                 }});
  for (const auto& [name, fn] : mistakes()) {
    out.push_back({name + ".error", [fn = fn] {
                     Mistakes m;
                     return error_of([&] { fn(m); });
                   }});
  }
  out.push_back({"tutorial.print", tutorial_print});
  out.push_back({"tutorial.gpu", [] { return text(tutorial_gpu_func()); }});
  out.push_back({"tutorial.cpu", [] { return text(tutorial_cpu_func()); }});
  out.push_back({"tutorial.interpret", tutorial_interpret});
  out.push_back({"tutorial.jit", tutorial_jit});
  out.push_back({"tutorial.cuda", tutorial_cuda_kernel});
  out.push_back({"tutorial.cuda_source", tutorial_cuda_source});
  out.push_back({"tutorial.aot", tutorial_aot});
  out.push_back({"dlpack.example", dlpack_example});
  out.push_back({"reductions.comm_reducer", comm_reducer_example});
  pair("reductions.argmax", argmax_example);
  out.push_back({"reductions.argmax_threads", argmax_threads_example});
  out.push_back({"reductions.compute_tuple", compute_tuple_example});
  out.push_back({"reductions.online_softmax", online_softmax_example});
  out.push_back({"attention.default", attention_default_example});
  out.push_back({"attention.cpu", attention_cpu_example});
  out.push_back({"attention.cuda", attention_cuda_example});
  out.push_back({"extern.ir", extern_ir});
  out.push_back({"extern.cuda", extern_cuda});
  out.push_back({"extern.interpret", extern_interpret});
  out.push_back({"extern.library", extern_library});
  out.push_back({"grid_sample.table", grid_sample_table});
  out.push_back({"autodiff.window", gradient_window_example});
  out.push_back({"autodiff.gather", gradient_gather_example});
  out.push_back({"dump_ir.passes", pass_list});
  for (const char* pass :
       {"inline", "infer_bound", "build_loop_nests", "storage_flatten", "simplify", "loop_partition", "vectorize"})
    out.push_back({std::string("dump_ir.") + pass, [pass] { return dump_ir(pass); }});
  return out;
}

}  // namespace te_docs
