// intrinsics::transpose: a 2-D transpose tensorized by n x n blocks (both extents odd, so
// the last blocks shift inwards), for each element size and several n, through the JIT
// and interpret() against plain C++; the loop IR it prints; and its errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "te/te.h"
#include "test_util.h"

namespace te {
namespace {

// out[i, j] = in[j, i] over rows x cols, split into n x n blocks (last ones shifted
// inwards) and each block tensorized with intrinsics::transpose(t, n).
LoweredFunc blocked_transpose(DataType t, int n, int rows, int cols) {
  Tensor in = placeholder({cols, rows}, t, "in");
  Tensor out = compute(
      {rows, cols}, [&](Expr i, Expr j) { return in(j, i); }, "out");
  Schedule s = create_schedule({out});
  auto [io, ii] = s[out].split(out.axis(0), n, TailStrategy::ShiftInwards);
  auto [jo, ji] = s[out].split(out.axis(1), n, TailStrategy::ShiftInwards);
  s[out].reorder({io, jo, ii, ji});
  s[out].tensorize(ii, intrinsics::transpose(t, n));
  return lower(s, {in, out}, "transpose");
}

// The JIT's and interpret()'s outputs against the transpose in C++, on distinct values.
template <typename T>
void expect_transposes(DataType t, int n, int rows, int cols) {
  SCOPED_TRACE(t.to_string() + " blocks of " + std::to_string(n));
  LoweredFunc f = blocked_transpose(t, n, rows, cols);
  NDArray in = NDArray::empty({cols, rows}, t);
  auto* src = static_cast<T*>(in.data());
  for (int64_t k = 0; k < in.size(); ++k) src[k] = static_cast<T>(k * 7 + 3);
  std::vector<T> want(static_cast<size_t>(rows * cols));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) want[static_cast<size_t>(i * cols + j)] = src[j * rows + i];
  NDArray jit_out = NDArray::empty({rows, cols}, t), interpreted = NDArray::empty({rows, cols}, t);
  build(f)("transpose").call({in, jit_out});
  interpret(f, {in, interpreted});
  for (const NDArray* got : {&jit_out, &interpreted}) {
    const auto* g = static_cast<const T*>(got->data());
    for (size_t k = 0; k < want.size(); ++k)
      ASSERT_EQ(g[k], want[k]) << (got == &jit_out ? "JIT" : "interpret()") << ", element " << k;
  }
}

TEST(TensorizeTranspose, EveryElementSizeMatchesInterpretAndCpp) {
  expect_transposes<float>(Float(32), 16, 37, 21);
  expect_transposes<float>(Float(32), 8, 9, 30);
  expect_transposes<double>(Float(64), 4, 7, 5);
  expect_transposes<int64_t>(Int(64), 2, 3, 5);
  expect_transposes<int16_t>(Int(16), 32, 33, 40);
  expect_transposes<uint8_t>(UInt(8), 64, 70, 65);
  expect_transposes<uint8_t>(UInt(8), 16, 16, 16);  // one block, no tail
}

TEST(TensorizeTranspose, TheLoopIrNamesTheBlocksAndTheirStrides) {
  std::string ir = to_string(blocked_transpose(Float(32), 16, 37, 21).body);
  EXPECT_NE(ir.find("tensor_intrinsic transpose_16x16_float32(in["), std::string::npos) << ir;
  EXPECT_NE(ir.find("strides (37, 1)"), std::string::npos) << ir;  // a row of `in`
  EXPECT_NE(ir.find("strides (21, 1)"), std::string::npos) << ir;  // a row of `out`
}

TEST(TensorizeTranspose, Errors) {
  expect_error([] { intrinsics::transpose(Float(32), 12); },
               {"intrinsics::transpose: the block must be n x n with n a power of two from 2 to 64, not 12"});
  expect_error([] { intrinsics::transpose(Float(32), 128); }, {"not 128"});
  expect_error([] { intrinsics::transpose(Float(32), 1); }, {"not 1"});
  expect_error([] { intrinsics::transpose(Float(32).with_lanes(4), 8); },
               {"intrinsics::transpose: the elements must be scalars of 8, 16, 32 or 64 bits, not float32x4"});
  expect_error([] { intrinsics::transpose(Bool(), 8); }, {"not bool"});
  // A copy that does not transpose does not match the declaration.
  Tensor in = placeholder({16, 16}, Float(32), "in");
  Tensor copy = compute(
      {16, 16}, [&](Expr i, Expr j) { return in(i, j); }, "copy");
  Schedule s = create_schedule({copy});
  s[copy].tensorize(copy.axis(0), intrinsics::transpose(Float(32), 16));
  expect_error([&] { lower(s, {in, copy}, "f"); }, {"transpose_16x16_float32"});
  // CUDA has no implementation.
  expect_error([] { build_cuda(blocked_transpose(Float(32), 16, 16, 16)); },
               {"calls tensor intrinsic 'transpose_16x16_float32', which has no implementation for target 'cuda'"});
}

}  // namespace
}  // namespace te
