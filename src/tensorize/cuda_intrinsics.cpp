// te's built-in CUDA tensor-core intrinsics: their declarations (what interpret() runs and
// the matcher compares with) and the names of their CUDA implementations, which the CUDA
// backend's table (src/codegen_cuda_src/tensor_intrinsics.cpp) emits. Every operand is
// declared strided: a fragment is a tile of a larger warp buffer or shared-memory tile.
#include <fmt/format.h>

#include "te/error.h"
#include "te/tensorize.h"

namespace te::intrinsics {

namespace {

// "f16" / "bf16" for the 16-bit float types tensor cores multiply; te::Error otherwise.
std::string suffix(DataType t, const char* who) {
  if (t == Float(16)) return "f16";
  if (t == BFloat(16)) return "bf16";
  throw Error(fmt::format("intrinsics::{}: tensor cores multiply float16 or bfloat16, not {}", who, t.to_string()));
}

// The name (and CUDA implementation) of every cuda_tma_load_2d intrinsic starts so.
constexpr const char* kTmaLoadPrefix = "cuda_tma_load_";

TensorIntrinsic declare(const std::string& name, const Tensor& out, const std::vector<Tensor>& strided) {
  return tensor_intrinsic(name, out, {{"cuda", name}}, strided);
}

}  // namespace

TensorIntrinsic cuda_fill_16x8_f32() {
  static const TensorIntrinsic intrin = [] {
    Tensor c = compute(
        {16, 8}, [](Expr, Expr) { return Expr(0.0f); }, "C");
    return declare("cuda_fill_16x8_f32", c, {c});
  }();
  return intrin;
}

TensorIntrinsic cuda_mma_m16n8k16(DataType ab) {
  const std::string name = "cuda_mma_m16n8k16_" + suffix(ab, "cuda_mma_m16n8k16") + "f32";
  Tensor a = placeholder({16, 16}, ab, "A");
  Tensor b = placeholder({16, 8}, ab, "B");
  IterVar k = reduce_axis({0, 16}, "k");
  Tensor c = compute(
      {16, 8}, [&](Expr i, Expr j) { return sum(cast(Float(32), a(i, k)) * cast(Float(32), b(k, j)), {k}); }, "C");
  return declare(name, c, {a, b, c}).with_init(cuda_fill_16x8_f32());
}

TensorIntrinsic cuda_load_matrix_a_16x16(DataType t) {
  const std::string name = "cuda_load_matrix_a_16x16_" + suffix(t, "cuda_load_matrix_a_16x16");
  Tensor s = placeholder({16, 16}, t, "S");
  Tensor f = compute(
      {16, 16}, [&](Expr i, Expr k) { return s(i, k); }, "F");
  return declare(name, f, {s, f});
}

TensorIntrinsic cuda_load_matrix_b_16x8(DataType t) {
  const std::string name = "cuda_load_matrix_b_16x8_" + suffix(t, "cuda_load_matrix_b_16x8");
  Tensor s = placeholder({16, 8}, t, "S");
  Tensor f = compute(
      {16, 8}, [&](Expr k, Expr j) { return s(k, j); }, "F");
  return declare(name, f, {s, f});
}

TensorIntrinsic cuda_load_matrix_bt_8x16(DataType t) {
  const std::string name = "cuda_load_matrix_bt_8x16_" + suffix(t, "cuda_load_matrix_bt_8x16");
  Tensor s = placeholder({8, 16}, t, "S");
  Tensor f = compute(
      {16, 8}, [&](Expr k, Expr j) { return s(j, k); }, "F");
  return declare(name, f, {s, f});
}

TensorIntrinsic cuda_store_16x8_f32() {
  static const TensorIntrinsic intrin = [] {
    Tensor f = placeholder({16, 8}, Float(32), "F");
    Tensor d = compute(
        {16, 8}, [&](Expr i, Expr j) { return f(i, j); }, "D");
    return declare("cuda_store_16x8_f32", d, {f, d});
  }();
  return intrin;
}

namespace {

// n checked: wgmma's N is a multiple of 8 from 8 to 256.
int wgmma_n(int n, const char* who) {
  if (n < 8 || n > 256 || n % 8 != 0)
    throw Error(
        fmt::format("intrinsics::{}: n is {}; wgmma's tiles are 64 x n with n a multiple of 8 from 8 to 256", who, n));
  return n;
}

}  // namespace

TensorIntrinsic cuda_wgmma_fill_f32(int n) {
  wgmma_n(n, "cuda_wgmma_fill_f32");
  Tensor c = compute(
      {64, n}, [](Expr, Expr) { return Expr(0.0f); }, "C");
  return declare(fmt::format("cuda_wgmma_fill_64x{}_f32", n), c, {c});
}

namespace {

// `C[i, j] += sum_k float(A[i, k]) * float(B)`: B[j, k] (K-major) or B[k, j] (b_mn_major);
// A from shared memory or (registers_a) a register fragment: the CUDA implementations tell
// them apart by name.
TensorIntrinsic wgmma_mma(DataType ab, int n, bool b_mn_major, bool registers_a, const char* who) {
  const std::string type = suffix(ab, who);
  wgmma_n(n, who);
  Tensor a = placeholder({64, 16}, ab, "A");
  Tensor b = b_mn_major ? placeholder({16, n}, ab, "B") : placeholder({n, 16}, ab, "B");
  IterVar k = reduce_axis({0, 16}, "k");
  Tensor c = compute(
      {64, n},
      [&](Expr i, Expr j) {
        return sum(cast(Float(32), a(i, k)) * cast(Float(32), b_mn_major ? b(k, j) : b(j, k)), {k});
      },
      "C");
  return declare(
             fmt::format("cuda_wgmma_m64n{}k16_{}f32{}{}", n, type, registers_a ? "_rs" : "", b_mn_major ? "_kn" : ""),
             c, {a, b, c})
      .with_init(cuda_wgmma_fill_f32(n));
}

}  // namespace

TensorIntrinsic cuda_wgmma_m64nNk16(DataType ab, int n) {
  return wgmma_mma(ab, n, false, false, "cuda_wgmma_m64nNk16");
}
TensorIntrinsic cuda_wgmma_m64nNk16_kn(DataType ab, int n) {
  return wgmma_mma(ab, n, true, false, "cuda_wgmma_m64nNk16_kn");
}
TensorIntrinsic cuda_wgmma_m64nNk16_rs(DataType ab, int n) {
  return wgmma_mma(ab, n, false, true, "cuda_wgmma_m64nNk16_rs");
}
TensorIntrinsic cuda_wgmma_m64nNk16_rs_kn(DataType ab, int n) {
  return wgmma_mma(ab, n, true, true, "cuda_wgmma_m64nNk16_rs_kn");
}

TensorIntrinsic cuda_wgmma_load_a(DataType ab) {
  const std::string type = suffix(ab, "cuda_wgmma_load_a");
  Tensor s = placeholder({64, 16}, ab, "S");
  Tensor f = compute(
      {64, 16}, [&](Expr i, Expr k) { return s(i, k); }, "F");
  return declare(fmt::format("cuda_wgmma_load_a_64x16_{}", type), f, {s, f});
}

TensorIntrinsic cuda_wgmma_store_f32(int n) {
  wgmma_n(n, "cuda_wgmma_store_f32");
  Tensor f = placeholder({64, n}, Float(32), "F");
  Tensor d = compute(
      {64, n}, [&](Expr i, Expr j) { return f(i, j); }, "D");
  return declare(fmt::format("cuda_wgmma_store_64x{}_f32", n), d, {f, d});
}

TensorIntrinsic cuda_tma_load_2d(DataType t, int rows, int cols) {
  const int bytes = t.bytes();
  if (t.lanes() != 1 || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8))
    throw Error(
        fmt::format("intrinsics::cuda_tma_load_2d: TMA copies elements of 1, 2, 4 or 8 bytes, not {}", t.to_string()));
  if (rows < 1 || rows > 256 || cols < 1 || cols > 256)
    throw Error(
        fmt::format("intrinsics::cuda_tma_load_2d: the box is {} x {}; TMA's boxes have 1 to 256 rows and "
                    "columns",
                    rows, cols));
  if (cols * bytes % 16 != 0)
    throw Error(
        fmt::format("intrinsics::cuda_tma_load_2d: a box row is {} columns of {} bytes; TMA copies rows of "
                    "a multiple of 16 bytes",
                    cols, bytes));
  Tensor s = placeholder({rows, cols}, t, "S");
  Tensor d = compute(
      {rows, cols}, [&](Expr i, Expr j) { return s(i, j); }, "D");
  return declare(fmt::format("{}{}x{}_{}", kTmaLoadPrefix, rows, cols, t.to_string()), d, {s, d});
}

bool is_cuda_tma_load(const TensorIntrinsicNode& in) {
  auto it = in.implementations.find("cuda");
  return it != in.implementations.end() && it->second.rfind(kTmaLoadPrefix, 0) == 0;
}

}  // namespace te::intrinsics
