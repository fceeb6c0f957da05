// storage_align: padded strides of an intermediate buffer, in the loop IR and in results
// (interpret() and the LLVM JIT against plain C++; the CUDA emulation runs a shared-memory
// transpose with it, tests/test_cuda_emulation.cpp), and every misuse as a te::Error.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

// T = A * 2 (an intermediate, rows of 6), B = T transposed.
struct Transpose {
  Tensor A = placeholder({8, 6}, Float(32), "A");
  Tensor T = compute(
      {8, 6}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "T");
  Tensor B = compute(
      {6, 8}, [&](Expr i, Expr j) { return T(j, i); }, "B");
};

std::string text(const LoweredFunc& f) {
  std::ostringstream s;
  s << f;
  return s.str();
}

}  // namespace

TEST(StorageAlign, PadsTheRowStride) {
  Transpose g;
  Schedule s = create_schedule({g.B});
  s[g.T].storage_align(g.T.axis(0), 8, 3);  // stride 6 -> 11 (the next 8k + 3)
  LoweredFunc f = lower(s, {g.A, g.B}, "transpose");
  const std::string ir = text(f);
  EXPECT_NE(ir.find("T[((i * 11) + j)]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("float32 * 88"), std::string::npos) << ir;  // 8 rows of 11
  NDArray a = input({8, 6}, 1), b = output({6, 8});
  run_backends(f, {a, b});
  auto av = a.to_vector<float>();
  std::vector<float> want;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 8; ++j) want.push_back(av[size_t(j * 6 + i)] * 2.0f);
  expect_close(b.to_vector<float>(), want, 0.0f, "storage_align 8, 3");
}

TEST(StorageAlign, AStrideAlreadyAlignedStaysAndTheLastCallWins) {
  Transpose g;
  Schedule s = create_schedule({g.B});
  s[g.T].storage_align(g.T.axis(0), 4, 1);
  s[g.T].storage_align(g.T.axis(0), 3, 0);  // 6 is 0 modulo 3: unpadded
  const std::string ir = text(lower(s, {g.A, g.B}, "transpose"));
  EXPECT_NE(ir.find("T[((i * 6) + j)]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("float32 * 48"), std::string::npos) << ir;
}

TEST(StorageAlign, MisusesAreErrors) {
  Transpose g;
  Schedule s = create_schedule({g.B});
  expect_error([&] { s[g.B].storage_align(g.B.axis(0), 32, 1); },
               {"storage_align: stage 'B' is an output", "cache_write"});
  expect_error([&] { s[g.A].storage_align(IterVar(), 32, 1); }, {"storage_align: stage 'A' is a placeholder"});
  auto [io, ii] = s[g.T].split(g.T.axis(0), 2);
  expect_error([&] { s[g.T].storage_align(io, 32, 1); },
               {"storage_align: 'i.outer' is not an axis of stage 'T'", "T.axis(d)"});
  expect_error([&] { s[g.T].storage_align(g.T.axis(1), 0, 0); }, {"factor 0 and offset 0", "factor >= 1"});
  expect_error([&] { s[g.T].storage_align(g.T.axis(1), 4, 4); }, {"0 <= offset < factor"});
  Schedule t = create_schedule({g.B});
  t[g.T].storage_align(g.T.axis(0), 8, 1);
  t[g.T].compute_inline();
  expect_error(
      [&] {
        lower(t, {g.A, g.B}, "f");
      },
      {"stage 'T' is inlined (compute_inline), so it has no buffer, but storage_align pads one"});
}
