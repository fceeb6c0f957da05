// Stage::swizzle: a CUDA shared buffer laid out by Hopper's XOR swizzle. A tiled transpose
// through swizzled shared tiles runs in the CUDA emulation (both paths) as interpret()
// and plain C++ do; vector accesses stay whole within a 16-byte chunk and fall back to
// lane-by-lane ones across chunks; the kernel's shared memory is dynamic and 1024-byte
// aligned; every misuse is a te::Error naming the stage.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_emulation/harness.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;

namespace {

constexpr int kN = 64;

// B = A transposed, through a 32 x tile shared copy of A (rows of `tile` floats) that is
// swizzled by `swizzle` bytes and written `lanes` elements at a time.
LoweredFunc transpose(int tile, int lanes, int swizzle, const std::string& name) {
  Tensor A = placeholder({kN, kN}, Float(32), "A");
  Tensor B = compute(
      {kN, kN}, [&](Expr i, Expr j) { return A(j, i); }, "B");
  Schedule s = create_schedule({B});
  Tensor AS = s.cache_read(A, "shared", {B});
  auto [bi, ti] = s[B].split(B.axis(0), tile);
  auto [bj, tj] = s[B].split(B.axis(1), 32);
  s[B].reorder({bi, bj, ti, tj});
  s[B].bind(bi, thread_axis("blockIdx.y"));
  s[B].bind(bj, thread_axis("blockIdx.x"));
  s[B].bind(tj, thread_axis("threadIdx.x"));
  s[AS].compute_at(s[B], bj);
  if (swizzle) s[AS].swizzle(swizzle);
  // AS holds rows j of A (32 of them), columns i (tile of them): threads copy rows.
  auto [r, c] = std::pair{AS.op()->axis[0], AS.op()->axis[1]};
  auto [co, ci] = s[AS].split(c, lanes);
  s[AS].vectorize(ci);
  IterVar fused = s[AS].fuse(r, co);
  auto [fo, fi] = s[AS].split(fused, 32);
  s[AS].bind(fi, thread_axis("threadIdx.x"));
  return lower(s, {A, B}, name);
}

NDArray input() {
  std::vector<float> a(kN * kN);
  for (int i = 0; i < kN * kN; ++i) a[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 0.5f;
  return NDArray::from_vector(a, {kN, kN});
}

std::vector<float> transposed(const NDArray& a) {
  std::vector<float> in = a.to_vector<float>(), out(in.size());
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) out[static_cast<size_t>(i * kN + j)] = in[static_cast<size_t>(j * kN + i)];
  return out;
}

// The emulated result ("" when it equals interpret()'s and C++'s) through both paths.
std::string emulated_difference(const LoweredFunc& f) {
  cuda_test::EmulatedProgram program(cuda_test::EmulatedProgram::Paths::Both);
  program.add(build_cuda(f));
  std::string log;
  if (!program.build(&log)) return "build failed: " + log;
  NDArray a = input(), want = NDArray::empty({kN, kN}, Float(32));
  interpret(f, {a, want});
  if (want.to_vector<float>() != transposed(a)) return "interpret() is not the transpose";
  cuda_test::EmulatedRun r = program.run(f.name, f, {a, NDArray::empty({kN, kN}, Float(32))});
  if (r.error != 0) return "error " + std::to_string(r.error) + ": " + r.output;
  return cuda_test::compare_arrays(want, r.arrays[1]);
}

TEST(Swizzle, SwizzledTilesTransposeAsInterpretAndCxxDo) {
  struct Case {
    int tile, lanes, swizzle;
  };
  // 32 floats = 128-byte rows; 16 floats = 64; 8 floats = 32. float4 fills a chunk;
  // float2 half of one; 8 lanes (32 bytes) cross chunks and go lane by lane.
  // 32 floats swizzled by 64 or 32 bytes: rows of 2 or 4 column blocks.
  for (Case c : {Case{32, 4, 128}, Case{16, 4, 64}, Case{8, 2, 32}, Case{32, 8, 128}, Case{32, 4, 0}, Case{32, 4, 64},
                 Case{32, 2, 32}}) {
    SCOPED_TRACE(fmt::format("tile {} lanes {} swizzle {}", c.tile, c.lanes, c.swizzle));
    const LoweredFunc f = transpose(c.tile, c.lanes, c.swizzle, fmt::format("transpose_{}_{}", c.lanes, c.swizzle));
    EXPECT_EQ(emulated_difference(f), "");
    const std::string cu = build_cuda(f).source();
    const std::string helper = fmt::format("te_swizzle_{}_4(", c.swizzle);
    EXPECT_EQ(cu.find(helper) != std::string::npos, c.swizzle != 0) << cu;
    const bool blocks = c.swizzle != 0 && c.tile * 4 > c.swizzle;
    EXPECT_EQ(cu.find(fmt::format("te_swizzle_{}_4_blocks_32x{}(", c.swizzle, c.tile)) != std::string::npos, blocks)
        << cu;
    if (c.swizzle == 0) continue;
    EXPECT_NE(cu.find(fmt::format("swizzled by {} bytes", c.swizzle)), std::string::npos) << cu;
    EXPECT_NE(cu.find("__align__(1024)"), std::string::npos) << cu;
    // A vector that fits a chunk moves whole; 8 floats go lane by lane.
    EXPECT_EQ(cu.find("te_lane < 8") != std::string::npos, c.lanes == 8) << cu;
  }
}

TEST(Swizzle, TheHelperMovesChunksAsHopperDoes) {
  const std::string cu = build_cuda(transpose(32, 4, 128, "t128")).source();
  // float elements: byte bits 4-6 are element bits 2-4, byte bits 7-9 element bits 5-7.
  EXPECT_NE(cu.find("return e ^ (((e >> 5) & 7) << 2);"), std::string::npos) << cu;
  const std::string cu64 = build_cuda(transpose(16, 4, 64, "t64")).source();
  EXPECT_NE(cu64.find("return e ^ (((e >> 5) & 3) << 2);"), std::string::npos) << cu64;
}

TEST(Swizzle, NvccBuildsASwizzledKernel) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  cuda_test::TempDir dir;
  const std::string cu = dir.path() + "/t.cu";
  cuda_test::write_file(cu, build_cuda(transpose(32, 4, 128, "t128")).source());
  for (const char* arch : {"sm_80", "sm_90"}) {
    cuda_test::CommandResult r = cuda_test::nvcc_compile(nvcc, cu, arch, "-cubin", dir.path() + "/t.cubin");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output, "") << arch;
  }
}

TEST(Swizzle, MisuseIsAnErrorNamingTheStage) {
  Tensor A = placeholder({kN, kN}, Float(32), "A");
  Tensor B = compute(
      {kN, kN}, [&](Expr i, Expr j) { return A(j, i) + 1.0f; }, "B");
  Schedule s = create_schedule({B});
  expect_error([&] { s[A].swizzle(128); }, {"swizzle: stage 'A' is a placeholder; its layout is the caller's array"});
  expect_error([&] { s[B].swizzle(128); }, {"swizzle: stage 'B' is an output", "swizzle a shared copy instead"});
  Tensor AS = s.cache_read(A, "shared", {B});
  expect_error([&] { s[AS].swizzle(48); },
               {"swizzle: stage 'A.shared': a swizzle is 32, 64 or 128 bytes wide, not 48"});
  // In global memory: nothing to swizzle.
  Schedule g = create_schedule({B});
  Tensor AG = g.cache_read(A, "global", {B});
  g[AG].swizzle(64);
  expect_error(
      [&] {
        lower(g, {A, B}, "g");
      },
      {"lower: stage 'A.global' is swizzled (64 bytes), but its buffer is in global memory",
       "a swizzle lays out CUDA shared memory"});
  // Inlined: no buffer.
  Schedule in = create_schedule({B});
  Tensor AI = in.cache_read(A, "shared", {B});
  in[AI].swizzle(32);
  in[AI].compute_inline();
  expect_error(
      [&] {
        lower(in, {A, B}, "in");
      },
      {"lower: stage 'A.shared' is inlined (compute_inline), so it has no buffer, but swizzle lays one out"});
  // A tile of 8 x 8 floats (256 bytes) is not a whole 1024-byte pattern of 128-byte rows.
  Schedule small = create_schedule({B});
  Tensor AT = small.cache_read(A, "shared", {B});
  auto [bi, ti] = small[B].split(B.axis(0), 8);
  auto [bj, tj] = small[B].split(B.axis(1), 8);
  small[B].reorder({bi, bj, ti, tj});
  small[AT].compute_at(small[B], bj);
  small[AT].swizzle(128);
  expect_error(
      [&] {
        lower(small, {A, B}, "small");
      },
      {"lower: buffer 'A.shared' is swizzled (128 bytes) but holds 64 elements of 4 bytes",
       "a whole number of 1024-byte patterns (8 rows of 128 bytes)"});
  expect_error([&] { Buffer("b", Float(32), {16}, MemoryScope::Shared, 100); },
               {"Buffer 'b': a swizzle is 32, 64 or 128 bytes wide, not 100"});
  expect_error([&] { Buffer("b", Float(32), {256}, MemoryScope::Shared, 64, 24); },
               {"Buffer 'b': rows of 24 elements are column blocks of a 64-byte swizzle only when they are a multiple "
                "of it, and wider"});
}

// Rows wider than the swizzle are column blocks: rows of a multiple of its width, and a
// multiple of 8 of them (whole patterns in each block).
TEST(Swizzle, WideRowsMustBeWholeColumnBlocks) {
  auto lowered = [](int rows, int cols, int swizzle) {
    Tensor A = placeholder({64, cols}, Float(32), "A");
    Tensor B = compute(
        {64, cols}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    Tensor AS = s.cache_read(A, "shared", {B});
    auto [bi, ti] = s[B].split(B.axis(0), rows);
    s[B].bind(bi, thread_axis("blockIdx.x"));
    s[B].bind(B.axis(1), thread_axis("threadIdx.x"));
    s[AS].compute_at(s[B], bi);
    s[AS].swizzle(swizzle);
    return lower(s, {A, B}, "wide");
  };
  expect_error([&] { lowered(16, 48, 128); },
               {"lower: buffer 'A.shared' is swizzled (128 bytes) with rows of 192 bytes, wider than the swizzle: such "
                "a buffer is kept in column blocks of 128 bytes, so its rows must be a multiple of 128 bytes and its "
                "row count (16) a multiple of 8"});
  expect_error([&] { lowered(4, 64, 128); }, {"with rows of 256 bytes", "its row count (4) a multiple of 8"});
  const std::string ir = to_string(lowered(8, 64, 128));
  EXPECT_NE(ir.find("allocate A.shared[float32 * 512] in shared, swizzled 128 bytes in blocks of 32 columns"),
            std::string::npos)
      << ir;
}

}  // namespace
