// Hopper's warpgroup MMA as te tensor intrinsics (intrinsics::cuda_wgmma_*): a GEMM whose
// accumulators live in "warpgroup" buffers and whose operands are K-major tiles of
// swizzled shared buffers runs in the CUDA emulation through both paths of its helpers
// (the emulated wgmma.mma_async on sm_90a's path, each thread's own sums on the portable
// one) exactly as interpret() and plain C++ do, for every swizzle width and both 16-bit
// types; nvcc builds it for sm_90a (wgmma in its PTX, no spills) and for sm_80; every
// misuse is a te::Error naming what is wrong.
#include <array>
#include <functional>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/reduction_kernels.h"
#include "te/ops/matmul_wgmma_cuda.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;

namespace {

struct Gemm {
  int M = 128, N = 64, K = 128;
  int block_m = 128, block_n = 64, tile_k = 64;  // tile_k * 2 bytes: the swizzle
  DataType t = Float(16);
  // For the error tests: the swizzles of A's and B's tiles (-1: tile_k * 2; 0: none),
  // the accumulators' scope, the threads along x that copy the tiles.
  int swizzle_a = -1, swizzle_b = -1;
  std::string accumulators = "warpgroup";
  bool registers_a = false;  // A from registers (cuda_wgmma_m64nNk16_rs) with A's operand left in shared
  int copy_threads = 128;
};

// C = A B (float32 sums) with a warpgroup per 64 rows of a block_m x block_n block: A's
// tile and B's tile (K-major, [N][K]) in shared memory swizzled by their rows' bytes,
// k in tiles of tile_k, wgmma per 16. `change` edits the schedule before lowering.
LoweredFunc wgmma_gemm(const Gemm& g, const std::string& name) {
  Tensor A = placeholder({g.M, g.K}, g.t, "A");
  Tensor B = placeholder({g.K, g.N}, g.t, "B");
  IterVar k = reduce_axis({0, g.K}, "k");
  Tensor C = compute(
      {g.M, g.N}, [&](Expr i, Expr j) { return sum(cast(Float(32), A(i, k)) * cast(Float(32), B(k, j)), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  Tensor BS = s.cache_read(B, "shared", {C}, {1, 0});  // K-major: [N][K]
  Tensor CF = s.cache_write(C, g.accumulators);
  auto [by, yi] = s[C].split(C.axis(0), g.block_m);
  auto [bx, xi] = s[C].split(C.axis(1), g.block_n);
  auto [wg, y64] = s[C].split(yi, 64);
  s[C].reorder({by, bx, wg, y64, xi});
  s[C].bind(by, thread_axis("blockIdx.y"));
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(wg, thread_axis("threadIdx.y"));
  s[C].tensorize(y64, intrinsics::cuda_wgmma_store_f32(g.block_n));
  s[CF].compute_at(s[C], wg);
  auto [ko, ki] = s[CF].split(CF.op()->reduce_axis[0], g.tile_k);
  auto [kk, k16] = s[CF].split(ki, 16);
  s[CF].reorder({ko, kk, CF.axis(0), CF.axis(1), k16});
  s[CF].unroll(kk);
  s[CF].tensorize(CF.axis(0), g.registers_a ? intrinsics::cuda_wgmma_m64nNk16_rs(g.t, g.block_n)
                                            : intrinsics::cuda_wgmma_m64nNk16(g.t, g.block_n));
  for (const auto& [S, swizzle] : {std::pair{AS, g.swizzle_a}, std::pair{BS, g.swizzle_b}}) {
    s[S].compute_at(s[CF], ko);
    if (swizzle != 0) s[S].swizzle(swizzle < 0 ? g.tile_k * 2 : swizzle);
    auto [pieces, lanes] = s[S].split(S.axis(1), 8);  // 16-byte chunks
    auto [pass, thread] = s[S].split(s[S].fuse(S.axis(0), pieces), int64_t{g.copy_threads} * (g.block_m / 64));
    auto [group, place] = s[S].split(thread, g.copy_threads);
    s[S].bind(group, thread_axis("threadIdx.y"));
    s[S].bind(place, thread_axis("threadIdx.x"));
    s[S].vectorize(lanes);
  }
  return lower(s, {A, B, C}, name);
}

// Element e of small_integers(..., seed): (7 e + seed) % 9 - 4, so every product and sum
// of the GEMM is exact in float32 whatever the order.
float small_integer(int e, unsigned seed) { return float(int((unsigned(e) * 7 + seed) % 9) - 4); }

NDArray small_integers(int rows, int cols, DataType t, unsigned seed) {
  NDArray a = NDArray::empty({rows, cols}, t);
  for (int i = 0; i < rows * cols; ++i) cuda_test::set_element(a, i, double(small_integer(i, seed)));
  return a;
}

// "" when the emulated result through both paths equals interpret()'s and plain C++'s.
std::string difference(const Gemm& g, const LoweredFunc& f,
                       cuda_test::EmulatedProgram::Paths paths = cuda_test::EmulatedProgram::Paths::Both) {
  cuda_test::EmulatedProgram program(paths);
  program.add(build_cuda(f));
  std::string log;
  if (!program.build(&log)) return "build failed: " + log;
  NDArray a = small_integers(g.M, g.K, g.t, 1), b = small_integers(g.K, g.N, g.t, 5);
  NDArray want = NDArray::empty({g.M, g.N}, Float(32));
  interpret(f, {a, b, want});
  const std::vector<float> interpreted = want.to_vector<float>();
  for (int i = 0; i < g.M; ++i)
    for (int j = 0; j < g.N; ++j) {
      float acc = 0;
      for (int k = 0; k < g.K; ++k) acc += small_integer(i * g.K + k, 1) * small_integer(k * g.N + j, 5);
      if (interpreted[static_cast<size_t>(i * g.N + j)] != acc)
        return fmt::format("interpret() gives {} at ({}, {}), C++ {}", interpreted[size_t(i * g.N + j)], i, j, acc);
    }
  cuda_test::EmulatedRun r = program.run(f.name, f, {a, b, NDArray::empty({g.M, g.N}, Float(32))});
  if (r.error != 0) return "error " + std::to_string(r.error) + ": " + r.output;
  return cuda_test::compare_arrays(want, r.arrays[2]);
}

TEST(Wgmma, GemmEqualsInterpretAndCxxThroughBothPaths) {
  struct Case {
    int tile_k, block_n;
    DataType t;
  };
  for (Case c :
       {Case{64, 64, Float(16)}, Case{64, 32, BFloat(16)}, Case{32, 64, Float(16)}, Case{16, 128, BFloat(16)}}) {
    Gemm g;
    g.tile_k = c.tile_k;
    g.block_n = c.block_n;
    g.N = 2 * c.block_n;
    g.t = c.t;
    SCOPED_TRACE(fmt::format("swizzle {} n {} {}", 2 * c.tile_k, c.block_n, c.t.to_string()));
    const LoweredFunc f = wgmma_gemm(g, fmt::format("wgmma_{}_{}", c.tile_k, c.block_n));
    const std::string cu = build_cuda(f).source();
    EXPECT_NE(cu.find(fmt::format("te_wgmma_m64n{}k16_", c.block_n)), std::string::npos) << cu;
    EXPECT_NE(cu.find("// this thread's part of a warpgroup's"), std::string::npos) << cu;
    // A's rows are copied 16 bytes at a time (cp.async); B's tile is a transposing copy,
    // whose 8 elements come from 8 rows of B: never one 16-byte copy.
    size_t copies = 0;
    for (size_t at = cu.find("te_cp_async_16(("); at != std::string::npos; at = cu.find("te_cp_async_16((", at + 1))
      ++copies;
    EXPECT_EQ(copies, 1u) << cu;
    EXPECT_EQ(difference(g, f), "");
  }
}

// The reference schedule (te/ops/matmul_wgmma_cuda.h): double-buffered swizzled tiles,
// an odd number of k tiles, the tiles by TMA or by cp.async, B MN-major (in column blocks
// of 128, 64 and 32-byte swizzles) or transposed by the threads, through both paths.
TEST(Wgmma, ReferenceScheduleEqualsInterpretThroughBothPaths) {
  struct Case {
    int M, N, K;
    ops::MatmulWgmmaOptions o;
    DataType t;
  };
  ops::MatmulWgmmaOptions small, n32, n16, transposed;
  small.block_m = small.block_n = 64;
  small.tile_k = 32;
  small.tma = false;  // the tiles by the threads' cp.async
  n32.block_n = 32;   // B's tiles swizzled by 64 bytes (one column block)
  n16.block_m = 64;
  n16.block_n = 16;  // by 32 bytes
  n16.tile_k = 16;
  transposed.b_mn_major = false;               // B transposed by the threads into K-major tiles
  ops::MatmulWgmmaOptions persistent = small;  // 4 tiles over 2 blocks: each takes two
  persistent.tma = true;
  persistent.persistent_blocks = 2;
  ops::MatmulWgmmaOptions registers, registers_transposed = transposed;  // A from registers
  registers.a_from_registers = registers_transposed.a_from_registers = true;
  for (const Case& c :
       {Case{128, 128, 192, {}, Float(16)}, Case{128, 128, 96, small, BFloat(16)}, Case{128, 64, 64, n32, Float(16)},
        Case{64, 48, 48, n16, BFloat(16)}, Case{128, 128, 128, transposed, BFloat(16)},
        Case{128, 128, 96, persistent, Float(16)}, Case{128, 128, 192, registers, BFloat(16)},
        Case{128, 128, 128, registers_transposed, Float(16)}}) {
    SCOPED_TRACE(fmt::format("{} x {} x {} {}", c.M, c.N, c.K, c.t.to_string()));
    Gemm g;
    g.M = c.M;
    g.N = c.N;
    g.K = c.K;
    g.t = c.t;
    Tensor A = placeholder({c.M, c.K}, c.t, "A"), B = placeholder({c.K, c.N}, c.t, "B");
    Tensor C = ops::matmul(A, B, "C");
    Schedule s = create_schedule({C});
    ops::schedule_matmul_wgmma_cuda(s, C, c.o);
    const LoweredFunc f = lower(s, {A, B, C}, fmt::format("wgmma_reference_{}", c.K));
    const std::string ir = to_string(f);
    EXPECT_NE(ir.find("swizzled"), std::string::npos) << ir;
    EXPECT_NE(ir.find(".db"), std::string::npos) << ir;  // double-buffered
    const std::string cu = build_cuda(f).source();
    EXPECT_EQ(cu.find("te_tma_load_") != std::string::npos, c.o.tma) << cu;
    EXPECT_EQ(cu.find("te_cp_async_16((A_shared") != std::string::npos, !c.o.tma) << cu;
    EXPECT_EQ(cu.find("_kn(A_shared") != std::string::npos, c.o.b_mn_major) << cu;
    if (c.o.persistent_blocks) {  // a grid of 2 blocks, each looping over its tiles
      EXPECT_NE(cu.find("// Kernel wgmma_reference_96_kernel0: grid (2, 1, 1)"), std::string::npos) << cu;
    }
    EXPECT_EQ(cu.find("te_cp_async_16((B_shared") != std::string::npos, c.o.b_mn_major && !c.o.tma) << cu;
    EXPECT_EQ(cu.find("te_wgmma_load_a_") != std::string::npos, c.o.a_from_registers) << cu;
    EXPECT_EQ(cu.find("te_wgmma_wait_all();  // the wgmmas reading A.shared.warpgroup as A") != std::string::npos,
              c.o.a_from_registers)
        << cu;
    EXPECT_EQ(difference(g, f), "");
  }
}

// An epilogue fused into the kernel: D = cast(max(C + bias, 0)) in bfloat16 (and the
// same in float32, minus the bias), C's tile in shared memory between the warpgroups'
// stores and the threads' epilogue, through both paths, equal to interpret() and C++.
// Warp-specialized (the PTX path only), with a persistent block over two tiles: the
// consumers' named barrier guards C's shared tile.
TEST(Wgmma, EpilogueEqualsInterpretAndCxxThroughBothPaths) {
  const int N = 128, K = 128;
  struct Case {
    DataType out_type;
    bool warp_specialized;
  };
  for (const Case c : {Case{BFloat(16), false}, Case{Float(32), false}, Case{Float(32), true}}) {
    const DataType out_type = c.out_type;
    const int M = c.warp_specialized ? 256 : 128;
    SCOPED_TRACE(out_type.to_string() + (c.warp_specialized ? ", warp-specialized" : ""));
    Tensor A = placeholder({M, K}, BFloat(16), "A"), B = placeholder({K, N}, BFloat(16), "B");
    Tensor bias = placeholder({N}, Float(32), "bias");
    Tensor C = ops::matmul(A, B, "C");
    Tensor D = compute(
        {M, N},
        [&](Expr i, Expr j) {
          Expr v = out_type == Float(32) ? C(i, j) - bias(j) : max(C(i, j) + bias(j), make_const(Float(32), 0));
          return cast(out_type, v);
        },
        "D");
    Schedule s = create_schedule({D});
    ops::MatmulWgmmaOptions o;
    o.block_n = 64;
    o.warp_specialized = c.warp_specialized;
    o.persistent_blocks = c.warp_specialized ? 1 : 0;
    ops::schedule_matmul_wgmma_cuda(s, D, o);
    const LoweredFunc f = lower(s, {A, B, bias, D}, "epilogue_" + out_type.to_string());
    const std::string ir = to_string(f);
    EXPECT_NE(ir.find("allocate C[float32 * 8192] in shared"), std::string::npos) << ir;
    const CudaModule m = build_cuda(f);
    EXPECT_NE(m.source().find("te_wgmma_store_64x64(C_warpgroup + 0, C + "), std::string::npos) << m.source();
    EXPECT_EQ(m.kernels().size(), 1u);
    EXPECT_EQ(m.source().find("te_ptx_bar_sync(1, 256);  // the consumer warpgroups' barrier") != std::string::npos,
              c.warp_specialized)
        << m.source();

    cuda_test::EmulatedProgram program(c.warp_specialized ? cuda_test::EmulatedProgram::Paths::Ptx
                                                          : cuda_test::EmulatedProgram::Paths::Both);
    program.add(m);
    std::string log;
    ASSERT_TRUE(program.build(&log)) << log;
    NDArray a = small_integers(M, K, BFloat(16), 1), b = small_integers(K, N, BFloat(16), 5);
    NDArray bias_values = NDArray::empty({N}, Float(32));
    for (int j = 0; j < N; ++j) cuda_test::set_element(bias_values, j, double(j % 7) - 3);
    NDArray want = NDArray::empty({M, N}, out_type);
    interpret(f, {a, b, bias_values, want});
    for (int i = 0; i < M; i += 7)
      for (int j = 0; j < N; j += 5) {
        float acc = 0;
        for (int k = 0; k < K; ++k) acc += small_integer(i * K + k, 1) * small_integer(k * N + j, 5);
        const float bias_j = float(j % 7) - 3;
        const float expected = out_type == Float(32) ? acc - bias_j : std::max(acc + bias_j, 0.0f);
        // bfloat16 rounds the sums past 256; the C++ value rounded the same way.
        ASSERT_EQ(cuda_test::element(want, i * N + j),
                  out_type == Float(32) ? double(expected) : double(float(bfloat16(expected))))
            << i << ", " << j;
      }
    cuda_test::EmulatedRun r = program.run(f.name, f, {a, b, bias_values, NDArray::empty({M, N}, out_type)});
    ASSERT_EQ(r.error, 0) << r.output;
    EXPECT_EQ(cuda_test::compare_arrays(want, r.arrays[3]), "");
  }
}

TEST(Wgmma, ReferenceScheduleOptionsAreChecked) {
  auto schedule = [](int M, int N, int K, DataType t, const ops::MatmulWgmmaOptions& o) {
    Tensor A = placeholder({M, K}, t, "A"), B = placeholder({K, N}, t, "B");
    Tensor C = ops::matmul(A, B, "C");
    Schedule s = create_schedule({C});
    ops::schedule_matmul_wgmma_cuda(s, C, o);
  };
  ops::MatmulWgmmaOptions o;
  expect_error([&] { schedule(128, 128, 64, Float(32), o); },
               {"schedule_matmul_wgmma_cuda: wgmma multiplies float16 or bfloat16 matrices; A and B are float32"});
  expect_error([&] { schedule(100, 128, 64, Float(16), o); },
               {"schedule_matmul_wgmma_cuda: C is 100 x 128, smaller than a block_m x block_n = 128 x 128 tile (the "
                "last tiles shift inward to stay whole); take smaller tiles"});
  expect_error([&] { schedule(128, 132, 64, Float(16), o); },
               {"schedule_matmul_wgmma_cuda: N is 132; B's rows are copied in 16-byte pieces (TMA's strides), so N "
                "is a multiple of 8"});
  expect_error([&] { schedule(128, 128, 100, Float(16), o); },
               {"schedule_matmul_wgmma_cuda: K is 100; A's rows are copied in 16-byte pieces (TMA's strides), so K "
                "is a multiple of 8"});
  for (int option = 0; option < 2; ++option) {  // K tails need TMA's zeros on both operands
    ops::MatmulWgmmaOptions no_zeros = o;
    (option == 0 ? no_zeros.tma : no_zeros.b_mn_major) = false;
    expect_error([&] { schedule(128, 128, 96, Float(16), no_zeros); },
                 {"schedule_matmul_wgmma_cuda: K is 96, not a multiple of tile_k = 64; the last k tile's zeros past "
                  "K come from TMA copies of A and of B as it lies (tma and b_mn_major true), so take those or a "
                  "tile_k that divides K"});
  }
  ops::MatmulWgmmaOptions bad_m = o, bad_n = o, bad_k = o, big = o;
  bad_m.block_m = 96;
  bad_n.block_n = 12;
  bad_k.tile_k = 48;
  big.block_n = 256;
  big.block_m = 256;
  expect_error([&] { schedule(192, 128, 64, Float(16), bad_m); },
               {"block_m is 96; a warpgroup computes 64 rows, so block_m is 64, 128, 192 or 256"});
  expect_error([&] { schedule(128, 96, 64, Float(16), bad_n); },
               {"block_n is 12; wgmma's n is a multiple of 8 from 8 to 256"});
  expect_error([&] { schedule(128, 128, 96, Float(16), bad_k); },
               {"tile_k is 48; rows of 16, 32 or 64 16-bit elements fill a 32, 64 or 128-byte swizzle"});
  schedule(256, 256, 64, Float(16), big);  // 192 KiB of tiles (3 stages): within sm_90's 227 KiB
  ops::MatmulWgmmaOptions n8 = o;
  n8.block_n = 8;
  expect_error([&] { schedule(128, 64, 64, Float(16), n8); },
               {"block_n is 8; B's MN-major tiles are whole column blocks of a 32, 64 or 128-byte swizzle, so block_n "
                "is a multiple of 16 (or set b_mn_major to false)"});
  n8.b_mn_major = false;
  schedule(128, 64, 64, Float(16), n8);
  ops::MatmulWgmmaOptions grid = o;
  grid.persistent_blocks = -1;
  expect_error([&] { schedule(128, 128, 64, Float(16), grid); },
               {"persistent_blocks is -1; 0 (a block per tile) or a grid of 1 to 65535"});
  grid.persistent_blocks = 132;
  expect_error([&] { schedule(4096, 4096, 64, Float(16), grid); },
               {"persistent_blocks is 132, which does not divide C's 1024 tiles (every block runs whole tiles); take "
                "a divisor, e.g. 128"});
  // Epilogues: what they read and how much shared memory their tile of C takes.
  Tensor A = placeholder({256, 64}, Float(16), "A"), B = placeholder({64, 256}, Float(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  auto epilogue = [&](const Tensor& D, const ops::MatmulWgmmaOptions& options) {
    Schedule s = create_schedule({D});
    ops::schedule_matmul_wgmma_cuda(s, D, options);
  };
  Tensor relu = compute(
      {256, 256}, [&](Expr i, Expr j) { return max(C(i, j), 0.0f); }, "relu");
  ops::MatmulWgmmaOptions wide = o;
  wide.block_m = wide.block_n = 256;
  wide.stages = 2;
  expect_error([&] { epilogue(relu, wide); },
               {"the shared tiles need 131072 bytes and the epilogue's float32 tile of C 262144, above the 227 KiB of "
                "a block (sm_90)"});
  Tensor sum2 = compute(
      {256, 256}, [&](Expr i, Expr j) { return C(i, j) + C(j, i); }, "sum2");
  expect_error([&] { epilogue(sum2, o); },  // the block holds its own tile of C, not C(j, i)
               {"schedule_matmul_wgmma_cuda: epilogue 'sum2' reads C(j, i), not C(i, j): an epilogue reads C at its "
                "own element, which the block computed"});
  Tensor twice = compute(
      {256, 256}, [&](Expr i, Expr j) { return C(i, j) * C(i, j); }, "twice");
  epilogue(twice, o);  // reads its own element twice: one matmul still
  Tensor C2 = ops::matmul(A, B, "C2");
  Tensor two = compute(
      {256, 256}, [&](Expr i, Expr j) { return C(i, j) + C2(i, j); }, "two");
  expect_error([&] { epilogue(two, o); },
               {"schedule_matmul_wgmma_cuda: epilogue 'two' reads two reductions, 'C' and 'C2'; it applies to one "
                "matmul"});
  Tensor none = compute(
      {256, 256}, [&](Expr i, Expr j) { return cast(Float(32), A(i, j % 64)); }, "none");
  expect_error([&] { epilogue(none, o); }, {"schedule_matmul_wgmma_cuda: epilogue 'none' reads no matmul"});
  Tensor half = compute(
      {128, 256}, [&](Expr i, Expr j) { return C(i, j); }, "half");
  expect_error([&] { epilogue(half, o); },
               {"epilogue 'half' is 128 x 256 but its matmul 'C' is 256 x 256; an epilogue maps each element of C to "
                "one of its own"});
}

// On sm_90a's path a k tile's wgmmas stay in flight until the barrier before its tiles
// are refilled (te_wgmma_wait_all): the emulation completes a wgmma only at its wait,
// reading its operands then, so a kernel without that wait reads refilled tiles.
TEST(Wgmma, InFlightWgmmasAreWaitedForBeforeEachBarrier) {
  Gemm g;
  g.K = 192;  // three k tiles
  const LoweredFunc f = wgmma_gemm(g, "wgmma_waits");
  const CudaModule m = build_cuda(f);
  const std::string& cu = m.source();
  EXPECT_NE(cu.find("te_wgmma_wait_all();\n    __syncthreads();"), std::string::npos) << cu;
  EXPECT_EQ(difference(g, f), "");
  // The same module with the waits before barriers gone (the store's own wait stays).
  std::string planted = cu;
  for (size_t at = planted.find("te_wgmma_wait_all();\n    __syncthreads();"); at != std::string::npos;
       at = planted.find("te_wgmma_wait_all();\n    __syncthreads();", at))
    planted.replace(at, std::string("te_wgmma_wait_all();\n    ").size(), "");
  ASSERT_NE(planted, cu);
  cuda_test::EmulatedProgram program(cuda_test::EmulatedProgram::Paths::Ptx);
  program.add(CudaModule(m.name(), planted, m.launcher_params(), m.kernels(), true, false));
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;
  NDArray a = small_integers(g.M, g.K, g.t, 1), b = small_integers(g.K, g.N, g.t, 5);
  NDArray want = NDArray::empty({g.M, g.N}, Float(32));
  interpret(f, {a, b, want});
  cuda_test::EmulatedRun r = program.run(f.name, f, {a, b, NDArray::empty({g.M, g.N}, Float(32))});
  ASSERT_EQ(r.error, 0) << r.output;
  EXPECT_NE(cuda_test::compare_arrays(want, r.arrays[2]), "") << "a missing wait went unseen";
}

// A from registers: the kernel waits for the wgmmas reading a register fragment before it
// loads the next k tile into it; without that wait the emulation (which checks, when a
// wgmma completes, that its A registers still hold what it was issued with) fails.
TEST(Wgmma, RegisterFragmentsAreNotRewrittenUnderInFlightWgmmas) {
  Tensor A = placeholder({128, 192}, BFloat(16), "A"), B = placeholder({192, 128}, BFloat(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::MatmulWgmmaOptions o;
  o.a_from_registers = true;
  ops::schedule_matmul_wgmma_cuda(s, C, o);
  const LoweredFunc f = lower(s, {A, B, C}, "wgmma_registers");
  const CudaModule m = build_cuda(f);
  const std::string wait = "te_wgmma_wait_all();  // the wgmmas reading A.shared.warpgroup as A\n";
  std::string planted = m.source();
  for (size_t at = planted.find(wait); at != std::string::npos; at = planted.find(wait, at))
    planted.replace(at, wait.size(), "\n");
  ASSERT_NE(planted, m.source());
  cuda_test::EmulatedProgram program(cuda_test::EmulatedProgram::Paths::Ptx);
  program.add(CudaModule(m.name(), planted, m.launcher_params(), m.kernels(), true, false));
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;
  NDArray a = small_integers(128, 192, BFloat(16), 1), b = small_integers(192, 128, BFloat(16), 5);
  cuda_test::EmulatedRun r = program.run(f.name, f, {a, b, NDArray::empty({128, 128}, Float(32))});
  EXPECT_NE(r.output.find("A's registers changed before the wgmma completed"), std::string::npos) << r.output;
}

TEST(Wgmma, NvccBuildsItForSm90aWithWgmmaAndForSm80) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  cuda_test::TempDir dir;
  const std::string cu = dir.path() + "/w.cu";
  cuda_test::write_file(cu, build_cuda(wgmma_gemm(Gemm(), "wgmma_nvcc")).source());
  cuda_test::CommandResult r =
      cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-cubin --resource-usage", dir.path() + "/a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
  cuda_test::CommandResult ptx = cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-ptx", dir.path() + "/w.ptx");
  ASSERT_EQ(ptx.status, 0) << ptx.output;
  const std::string text = cuda_test::read_file(dir.path() + "/w.ptx");
  EXPECT_NE(text.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), std::string::npos);
  EXPECT_NE(text.find("wgmma.wait_group.sync.aligned"), std::string::npos);
  for (const char* arch : {"sm_80", "sm_90"}) {
    cuda_test::CommandResult plain = cuda_test::nvcc_compile(nvcc, cu, arch, "-cubin", dir.path() + "/p");
    EXPECT_EQ(plain.status, 0) << arch << ": " << plain.output;
    EXPECT_EQ(plain.output, "") << arch;
  }
}

// The reference schedule as the GPU kit builds it (TMA, MN-major B, 3 stages) and with an
// epilogue: sm_90a without spills, TMA and the transposed-B wgmma in the PTX.
TEST(Wgmma, NvccBuildsTheReferenceScheduleAndAnEpilogueForSm90a) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  Tensor A = placeholder({512, 512}, BFloat(16), "A"), B = placeholder({512, 512}, BFloat(16), "B");
  Tensor bias = placeholder({512}, Float(32), "bias");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = compute(
      {512, 512}, [&](Expr i, Expr j) { return cast(BFloat(16), max(C(i, j) + bias(j), 0.0f)); }, "D");
  Schedule plain = create_schedule({C}), fused = create_schedule({D}), specialized = create_schedule({D});
  ops::schedule_matmul_wgmma_cuda(plain, C);
  ops::schedule_matmul_wgmma_cuda(fused, D);
  ops::MatmulWgmmaOptions ws;
  ws.warp_specialized = true;
  ws.persistent_blocks = 8;
  ops::schedule_matmul_wgmma_cuda(specialized, D, ws);
  Schedule registers = create_schedule({C});
  ops::MatmulWgmmaOptions rs;
  rs.a_from_registers = true;
  ops::schedule_matmul_wgmma_cuda(registers, C, rs);
  for (const auto& [name, source] :
       {std::pair{"plain", build_cuda(lower(plain, {A, B, C}, "plain")).source()},
        std::pair{"fused", build_cuda(lower(fused, {A, B, bias, D}, "fused")).source()},
        std::pair{"specialized", build_cuda(lower(specialized, {A, B, bias, D}, "specialized")).source()},
        std::pair{"registers", build_cuda(lower(registers, {A, B, C}, "registers")).source()}}) {
    SCOPED_TRACE(name);
    cuda_test::TempDir dir;
    const std::string cu = dir.path() + "/g.cu";
    cuda_test::write_file(cu, source);
    cuda_test::CommandResult r =
        cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-cubin --resource-usage", dir.path() + "/a");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
    // With the host pass too, as the GPU kit builds it: every helper the kernel calls exists
    // there. (sm_90a's code only: -arch=sm_90a alone would also compile compute_90's
    // portable path, for half a minute.)
    cuda_test::CommandResult object =
        cuda_test::nvcc_compile(nvcc, cu, "compute_90a -code=sm_90a", "-c", dir.path() + "/g.o");
    EXPECT_EQ(object.status, 0) << object.output;
    cuda_test::CommandResult ptx = cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-ptx", dir.path() + "/g.ptx");
    ASSERT_EQ(ptx.status, 0) << ptx.output;
    const std::string text = cuda_test::read_file(dir.path() + "/g.ptx");
    EXPECT_NE(text.find("cp.async.bulk.tensor.2d"), std::string::npos);
    // The two-argument schedule takes fastest_wgmma_options: 128 x 256, warp-specialized.
    const bool fastest = std::string(name) == "plain" || std::string(name) == "fused";
    EXPECT_NE(text.find(fmt::format("wgmma.mma_async.sync.aligned.m64n{}k16.f32.bf16.bf16", fastest ? 256 : 128)),
              std::string::npos);
    // imm-trans-b: B MN-major (after imm-trans-a 0, which A from registers does not take).
    const bool registers_a = std::string(name) == "registers";
    EXPECT_NE(text.find(registers_a ? "p, 1, 1, 1;" : "p, 1, 1, 0, 1;"), std::string::npos);
    EXPECT_EQ(text.find("p, 1, 1, 0, 1;") != std::string::npos, !registers_a);
    if (fastest || std::string(name) == "specialized") {
      EXPECT_NE(text.find("setmaxnreg.dec.sync.aligned.u32 40"), std::string::npos);
      EXPECT_NE(text.find("setmaxnreg.inc.sync.aligned.u32 232"), std::string::npos);
      EXPECT_NE(text.find("bar.sync"), std::string::npos);  // the consumers' named barrier
    }
  }
}

// Warp specialization (Stage::warp_specialize through MatmulWgmmaOptions): a producer
// warpgroup issues the TMA copies on empty/full mbarriers, the consumers never meet a
// __syncthreads in the k loop; a persistent grid and an epilogue (the consumers' named
// barrier around C's shared tile), through the PTX path (the only one: sm_90a).
TEST(Wgmma, WarpSpecializedGemmEqualsInterpretAndCxx) {
  struct Case {
    int M, N, K;
    ops::MatmulWgmmaOptions o;
  };
  ops::MatmulWgmmaOptions deep, persistent, registers, three, four;
  deep.warp_specialized = true;  // 128 x 128 tiles, 2 consumers, 3 stages over 5 k tiles
  three = four = deep;           // 3 and 4 consumers: setmaxnreg's split of fewer launch registers
  three.block_m = 192;
  four.block_m = 256;
  three.block_n = four.block_n = 64;
  registers = deep;
  registers.a_from_registers = true;
  persistent = deep;
  persistent.block_m = persistent.block_n = 64;  // 1 consumer, 2 stages, 4 tiles over 2 blocks
  persistent.tile_k = 32;
  persistent.stages = 2;
  persistent.persistent_blocks = 2;
  for (const Case& c : {Case{128, 128, 320, deep}, Case{128, 128, 96, persistent}, Case{128, 128, 192, registers},
                        Case{192, 64, 192, three}, Case{256, 64, 192, four}}) {
    SCOPED_TRACE(fmt::format("{} x {} x {}, block_m {}", c.M, c.N, c.K, c.o.block_m));
    Gemm g;
    g.M = c.M;
    g.N = c.N;
    g.K = c.K;
    g.t = BFloat(16);
    Tensor A = placeholder({c.M, c.K}, g.t, "A"), B = placeholder({c.K, c.N}, g.t, "B");
    Tensor C = ops::matmul(A, B, "C");
    Schedule s = create_schedule({C});
    ops::schedule_matmul_wgmma_cuda(s, C, c.o);
    const LoweredFunc f =
        lower(s, {A, B, C}, fmt::format("wgmma_specialized_{}{}", c.o.block_m, c.o.a_from_registers ? "_rs" : ""));
    const std::string ir = to_string(f);
    EXPECT_NE(ir.find(") by the producer warpgroup {"), std::string::npos) << ir;
    EXPECT_EQ(ir.find("barrier();"), std::string::npos) << ir;  // mbarriers order the copies
    const std::string cu = build_cuda(f).source();
    const int consumers = c.o.block_m / 64;
    // Registers move only inside the block: what the producer releases, shared by the
    // consumers (one consumer already has all a thread can use).
    const WarpSpecialization split = WarpSpecialization::balanced(consumers);
    EXPECT_EQ(split.consumer_registers, (std::array<int, 5>{0, 0, 232, 152, 104}[consumers]));
    if (consumers == 1) {
      EXPECT_EQ(cu.find("te_ptx_setmaxnreg"), std::string::npos) << cu;
    } else {
      EXPECT_NE(cu.find(fmt::format("if (threadIdx.y == {}) {{\n    te_ptx_setmaxnreg_dec<40>();", consumers)),
                std::string::npos)
          << cu;
      EXPECT_NE(cu.find(fmt::format("te_ptx_setmaxnreg_inc<{}>();", split.consumer_registers)), std::string::npos)
          << cu;
    }
    const int buffers = 2 * c.o.stages;  // A's and B's
    EXPECT_NE(cu.find(fmt::format("te_tma_init_ws_barriers(te_tma_barriers, {}, {});", buffers, 128 * consumers)),
              std::string::npos)
        << cu;
    EXPECT_NE(cu.find(fmt::format("dim3(128, {}, 1)", consumers + 1)), std::string::npos) << cu;
    EXPECT_NE(cu.find("te_tma_produce_"), std::string::npos) << cu;
    EXPECT_NE(cu.find(fmt::format("te_tma_release(te_tma_barriers, {}, ", buffers)), std::string::npos) << cu;
    size_t syncs = 0;  // the mbarriers' initialization only
    for (size_t at = cu.find("__syncthreads();"); at != std::string::npos; at = cu.find("__syncthreads();", at + 1))
      ++syncs;
    EXPECT_EQ(syncs, 1u) << cu;
    EXPECT_EQ(difference(g, f, cuda_test::EmulatedProgram::Paths::Ptx), "");
  }
}

// C's shape need not be a multiple of the tiles: the last tiles along M and N start
// earlier (min(tile * block, M - block)), overlapping the one before, so every TMA box
// and wgmma stays whole and nothing is guarded. K's last tile is whole too: its TMA
// copies fill the columns of A and rows of B past K with zeros (K = 200: half of the
// last 16 of k), which the wgmmas multiply, or A's register fragments load. Through the
// block's and the warp-specialized pipelines, a persistent grid, an epilogue (bias,
// bfloat16) and A from registers, equal to interpret() and C++.
TEST(Wgmma, ShapesThatAreNotTileMultiplesRunWholeTiles) {
  struct Case {
    int M, N, K;
    ops::MatmulWgmmaOptions o;
    bool epilogue;
  };
  ops::MatmulWgmmaOptions plain, persistent, specialized, threads;
  plain.block_n = 64;
  persistent = plain;
  persistent.persistent_blocks = 3;  // 2 x 3 tiles of 128 x 64
  specialized = persistent;
  specialized.warp_specialized = true;
  threads = plain;  // cp.async copies and B transposed by the threads
  threads.tma = false;
  threads.b_mn_major = false;
  ops::MatmulWgmmaOptions registers = plain, registers_specialized = specialized;  // A's fragments past K:
  registers.a_from_registers = registers_specialized.a_from_registers = true;      // loaded from TMA's zeros
  for (const Case& c :
       {Case{200, 136, 136, plain, false}, Case{200, 136, 64, persistent, false}, Case{136, 72, 128, threads, false},
        Case{200, 136, 200, specialized, false}, Case{200, 136, 72, plain, true}, Case{200, 136, 64, specialized, true},
        Case{200, 136, 88, registers, false}, Case{200, 136, 200, registers_specialized, false}}) {
    SCOPED_TRACE(fmt::format("{} x {} x {}{}{}{}{}", c.M, c.N, c.K, c.o.persistent_blocks ? ", persistent" : "",
                             c.o.warp_specialized ? ", warp-specialized" : "", c.epilogue ? ", epilogue" : "",
                             c.o.a_from_registers ? ", A from registers" : ""));
    const DataType t = BFloat(16);
    Tensor A = placeholder({c.M, c.K}, t, "A"), B = placeholder({c.K, c.N}, t, "B");
    Tensor bias = placeholder({c.N}, Float(32), "bias");
    Tensor C = ops::matmul(A, B, "C");
    Tensor D = compute(
        {c.M, c.N}, [&](Expr i, Expr j) { return cast(t, C(i, j) + bias(j)); }, "D");
    Schedule s = create_schedule({c.epilogue ? D : C});
    ops::schedule_matmul_wgmma_cuda(s, c.epilogue ? D : C, c.o);
    const LoweredFunc f = c.epilogue ? lower(s, {A, B, bias, D}, "uneven_epilogue") : lower(s, {A, B, C}, "uneven");
    const std::string ir = to_string(f);
    EXPECT_NE(ir.find(fmt::format(" * 128), {})", c.M - 128)), std::string::npos) << ir;  // the last tile's rows
    if (c.K % 64 == 0) {
      EXPECT_EQ(ir.find("if ("), std::string::npos) << ir;  // no guard: every tile is whole
    } else {                                                // the zeros past K, in the last k tile's copies
      EXPECT_NE(ir.find("] = bfloat16(0.0);"), std::string::npos) << ir;
    }
    const auto paths =
        c.o.warp_specialized ? cuda_test::EmulatedProgram::Paths::Ptx : cuda_test::EmulatedProgram::Paths::Both;
    if (!c.epilogue) {
      Gemm g;
      g.M = c.M;
      g.N = c.N;
      g.K = c.K;
      g.t = t;
      EXPECT_EQ(difference(g, f, paths), "");
      continue;
    }
    cuda_test::EmulatedProgram program(paths);
    program.add(build_cuda(f));
    std::string log;
    ASSERT_TRUE(program.build(&log)) << log;
    NDArray a = small_integers(c.M, c.K, t, 1), b = small_integers(c.K, c.N, t, 5);
    NDArray bias_values = NDArray::empty({c.N}, Float(32));
    for (int j = 0; j < c.N; ++j) cuda_test::set_element(bias_values, j, double(j % 7) - 3);
    NDArray want = NDArray::empty({c.M, c.N}, t);
    interpret(f, {a, b, bias_values, want});
    for (int i = 0; i < c.M; ++i)
      for (int j = 0; j < c.N; ++j) {
        float acc = float(j % 7) - 3;
        for (int k = 0; k < c.K; ++k) acc += small_integer(i * c.K + k, 1) * small_integer(k * c.N + j, 5);
        ASSERT_EQ(cuda_test::element(want, i * c.N + j), double(float(bfloat16(acc)))) << i << ", " << j;
      }
    cuda_test::EmulatedRun r = program.run(f.name, f, {a, b, bias_values, NDArray::empty({c.M, c.N}, t)});
    ASSERT_EQ(r.error, 0) << r.output;
    EXPECT_EQ(cuda_test::compare_arrays(want, r.arrays[3]), "");
  }
}

// fastest_wgmma_options: the configuration measured fastest on an H200 (warp-specialized
// 128 x 256 tiles, 3 stages, a persistent grid up to 132 blocks), fitted to C's shape.
TEST(Wgmma, FastestOptionsFitTheMeasuredConfigurationToTheShape) {
  struct Want {
    int64_t M, N;
    bool epilogue;
    int block_m, block_n, stages, persistent_blocks;
  };
  for (const Want& w : {Want{8192, 8192, false, 128, 256, 3, 128}, Want{4096, 4096, false, 128, 256, 3, 128},
                        Want{4096, 4096, true, 128, 256, 2, 128}, Want{200, 136, false, 128, 128, 3, 4},
                        Want{96, 200, false, 64, 192, 3, 4}, Want{256, 256 * 67, false, 128, 256, 3, 67},
                        Want{128 * 139, 256, false, 128, 256, 3, 0}}) {
    SCOPED_TRACE(fmt::format("{} x {}{}", w.M, w.N, w.epilogue ? ", epilogue" : ""));
    const ops::MatmulWgmmaOptions o = ops::fastest_wgmma_options(w.M, w.N, w.epilogue);
    EXPECT_EQ(o.block_m, w.block_m);
    EXPECT_EQ(o.block_n, w.block_n);
    EXPECT_EQ(o.stages, w.stages);
    EXPECT_EQ(o.persistent_blocks, w.persistent_blocks);  // 139 tiles: a block per tile
    EXPECT_TRUE(o.warp_specialized && o.tma && o.b_mn_major && !o.a_from_registers);
  }
  // A shape that is not a tile multiple, through the emulation: 2 x 2 tiles of 128 x 256
  // shifted inward, K's last tile half zeros, on 4 persistent warp-specialized blocks.
  Gemm g;
  g.M = 200;
  g.N = 272;
  g.K = 96;
  g.t = BFloat(16);
  Tensor A = placeholder({g.M, g.K}, g.t, "A"), B = placeholder({g.K, g.N}, g.t, "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::schedule_matmul_wgmma_cuda(s, C, ops::fastest_wgmma_options(g.M, g.N));
  const LoweredFunc f = lower(s, {A, B, C}, "fastest");
  const std::string cu = build_cuda(f).source();
  EXPECT_NE(cu.find("te_ptx_setmaxnreg_inc<232>();"), std::string::npos) << cu;
  EXPECT_NE(cu.find("dim3(4, 1, 1), dim3(128, 3, 1)"), std::string::npos) << cu;
  EXPECT_EQ(difference(g, f, cuda_test::EmulatedProgram::Paths::Ptx), "");
}

TEST(Wgmma, MisuseIsAnErrorNamingWhatIsWrong) {
  expect_error([] { intrinsics::cuda_wgmma_m64nNk16(Float(16), 12); },
               {"intrinsics::cuda_wgmma_m64nNk16: n is 12; wgmma's tiles are 64 x n with n a multiple of 8 from 8 to "
                "256"});
  expect_error([] { intrinsics::cuda_wgmma_m64nNk16(Float(32), 64); },
               {"intrinsics::cuda_wgmma_m64nNk16: tensor cores multiply float16 or bfloat16, not float32"});
  expect_error([] { intrinsics::cuda_wgmma_m64nNk16_kn(Float(16), 260); },
               {"intrinsics::cuda_wgmma_m64nNk16_kn: n is 260"});
  Gemm unswizzled;
  unswizzled.swizzle_a = 0;
  expect_error([&] { build_cuda(wgmma_gemm(unswizzled, "unswizzled")); },
               {"tensor intrinsic 'cuda_wgmma_m64n64k16_f16f32' takes its declaration's 'A' from 'A.shared', a shared "
                "buffer; wgmma reads K-major tiles of swizzled shared buffers"});
  // K-major rows of 64 elements (128 bytes) swizzled by 64 bytes: two column blocks of 32,
  // each wgmma's 16 columns in one of them; the emulation runs it against interpret().
  Gemm blocks;
  blocks.swizzle_b = 64;
  EXPECT_EQ(difference(blocks, wgmma_gemm(blocks, "blocks")), "");
  Gemm narrow;  // rows of 64 elements (128 bytes) swizzled by 128 bytes: narrower than it
  narrow.tile_k = 32;
  narrow.swizzle_b = 128;
  expect_error([&] { build_cuda(wgmma_gemm(narrow, "narrow")); },
               {"from 'B.shared', whose rows are 32 elements of 2 bytes, but it is swizzled by 128 bytes: wgmma's "
                "tiles need rows of exactly the swizzle's width (64 elements), or whole column blocks of it"});
  Gemm local;
  local.accumulators = "local";
  expect_error([&] { build_cuda(wgmma_gemm(local, "local")); },
               {"as a warpgroup fragment (\"wgmma accumulator\"), but 'C.local' is in local memory; give it scope "
                "\"warpgroup\""});
  Gemm k_tail;  // K's last tile guarded: the threads' copies leave no zeros past K for the wgmma
  k_tail.K = 136;
  expect_error([&] { wgmma_gemm(k_tail, "k_tail"); },
               {"tensorize: stage 'C.warpgroup' at axis 'i.c' does not match intrinsic 'cuda_wgmma_m64n64k16_f16f32': "
                "the nest under the axis has a condition",
                "(only a TMA copy's bounds, a copy's of a TMA-filled tile, and a reduction's over such tiles, may "
                "be guarded)"});
  Gemm shared_a;
  shared_a.registers_a = true;
  expect_error([&] { build_cuda(wgmma_gemm(shared_a, "shared_a")); },
               {"tensor intrinsic 'cuda_wgmma_m64n64k16_f16f32_rs' takes its declaration's 'A' as a warpgroup fragment "
                "(\"wgmma A\"), but 'A.shared' is in shared memory; give it scope \"warpgroup\""});
  expect_error([] { intrinsics::cuda_wgmma_load_a(Float(32)); },
               {"intrinsics::cuda_wgmma_load_a: tensor cores multiply float16 or bfloat16, not float32"});
  expect_error([] { intrinsics::cuda_wgmma_m64nNk16_rs(BFloat(16), 12); },
               {"intrinsics::cuda_wgmma_m64nNk16_rs: n is 12; wgmma's tiles are 64 x n"});
  expect_error([] { intrinsics::cuda_wgmma_m64nNk16_rs_kn(Float(16), 0); },
               {"intrinsics::cuda_wgmma_m64nNk16_rs_kn: n is 0"});
  // B MN-major ([K][N] tiles of 64 halves, 128 bytes): swizzled by 64 bytes it is two
  // column blocks of 32, and the 64 x 16 wgmma reads whole blocks; by 128 it is one.
  auto kn_gemm = [](int swizzle_b, int n) {
    Tensor A = placeholder({128, 64}, Float(16), "A"), B = placeholder({64, 64}, Float(16), "B");
    IterVar k = reduce_axis({0, 64}, "k");
    Tensor C = compute(
        {128, 64}, [&](Expr i, Expr j) { return sum(cast(Float(32), A(i, k)) * cast(Float(32), B(k, j)), {k}); }, "C");
    Schedule s = create_schedule({C});
    Tensor AS = s.cache_read(A, "shared", {C}), BS = s.cache_read(B, "shared", {C});
    Tensor CF = s.cache_write(C, "warpgroup");
    auto [wg, y64] = s[C].split(C.axis(0), 64);
    auto [xo, xi] = s[C].split(C.axis(1), n);
    s[C].reorder({wg, xo, y64, xi});
    s[C].bind(wg, thread_axis("blockIdx.y"));
    s[C].bind(xo, thread_axis("blockIdx.x"));
    s[C].tensorize(y64, intrinsics::cuda_wgmma_store_f32(n));
    s[CF].compute_at(s[C], xo);
    auto [kk, k16] = s[CF].split(CF.op()->reduce_axis[0], 16);
    s[CF].reorder({kk, CF.axis(0), CF.axis(1), k16});
    s[CF].tensorize(CF.axis(0), intrinsics::cuda_wgmma_m64nNk16_kn(Float(16), n));
    for (const auto& [S, swizzle] : {std::pair{AS, 128}, std::pair{BS, swizzle_b}}) {
      s[S].compute_at(s[C], xo);
      if (swizzle) s[S].swizzle(swizzle);
      auto [pieces, lanes] = s[S].split(S.axis(1), 8);
      auto [pass, thread] = s[S].split(s[S].fuse(S.axis(0), pieces), 128);
      s[S].bind(thread, thread_axis("threadIdx.x"));
      s[S].vectorize(lanes);
    }
    return build_cuda(lower(s, {A, B, C}, "kn"));
  };
  kn_gemm(128, 64);
  kn_gemm(64, 64);
  expect_error([&] { kn_gemm(0, 64); },
               {"tensor intrinsic 'cuda_wgmma_m64n64k16_f16f32_kn' takes its declaration's 'B' from 'B.shared', a "
                "shared buffer; wgmma reads MN-major tiles of swizzled shared buffers"});
  expect_error([&] { kn_gemm(128, 32); },
               {"from 'B.shared', whose rows are 32 elements, but a 128-byte swizzle's column blocks are 64 elements "
                "wide: wgmma's MN-major tiles are rows of whole column blocks of the buffer"});
  Gemm x64;
  x64.copy_threads = 64;
  expect_error([&] { build_cuda(wgmma_gemm(x64, "x64")); },
               {"runs tensor intrinsic 'cuda_wgmma_fill_64x64_f32', which a warpgroup's 128 threads run together, "
                "but its threadIdx.x extent is 64"});
}

// Each misuse of warp specialization is a te::Error naming the stage or kernel and the rule.
TEST(Wgmma, WarpSpecializationMisuseIsAnError) {
  // The reference schedule of a block_m x 64 x 128 GEMM (warp-specialized or not), then
  // `change` on it, built for `arch`.
  auto build = [](int block_m, bool specialized, const std::function<void(Schedule&)>& change, const std::string& name,
                  const std::string& arch = "") {
    Tensor A = placeholder({block_m, 128}, BFloat(16), "A"), B = placeholder({128, 64}, BFloat(16), "B");
    Tensor C = ops::matmul(A, B, "C");
    Schedule s = create_schedule({C});
    ops::MatmulWgmmaOptions o;
    o.block_m = block_m;
    o.block_n = 64;
    o.stages = 2;
    o.warp_specialized = specialized;
    ops::schedule_matmul_wgmma_cuda(s, C, o);
    change(s);
    CudaOptions options;
    options.arch = arch;
    return build_cuda(lower(s, {A, B, C}, name), options);
  };
  auto stage = [](Schedule& s, const std::string& name) {
    for (const auto& st : s.get()->stages)
      if (st->op->name == name) return s[st->op];
    throw std::runtime_error("no stage " + name);
  };
  const auto unchanged = [](Schedule&) {};
  EXPECT_NO_THROW(build(128, true, unchanged, "ws"));
  expect_error(
      [&] {
        build(
            128, true,
            [&](Schedule& s) {
              stage(s, "B.shared").warp_specialize({48, 232});
            },
            "ws");
      },
      {"CUDA: in kernel 'ws_kernel0', TMA copy", "its stage gives the producer and consumer warpgroups",
       "give them the same (warp_specialize)"});
  expect_error(
      [&] {
        build(
            192, true,
            [&](Schedule& s) {
              for (const char* name : {"A.shared", "B.shared"}) stage(s, name).warp_specialize({40, 232});
            },
            "ws");
      },
      {"CUDA: kernel 'ws_kernel0' is warp-specialized",
       "its 512 threads launch with 128 registers each (ptxas's __launch_bounds__ cap); its 3 consumer warpgroups at "
       "232 ask 39936 registers more, its producer warpgroup at 40 releases 11264, and setmaxnreg.inc takes only what "
       "the block released: it would wait forever; give warp_specialize WarpSpecialization::balanced(3) = {40, 152}"});
  // setmaxnreg only lowers the producer's registers and raises the consumers' from the launch's count.
  expect_error(
      [&] {
        build(
            128, true,
            [&](Schedule& s) {
              for (const char* name : {"A.shared", "B.shared"}) stage(s, name).warp_specialize({176, 232});
            },
            "ws");
      },
      {"its 384 threads launch with 168 registers each (ptxas's __launch_bounds__ cap), fewer than its producer "
       "warpgroup's 176: setmaxnreg.dec cannot raise them; give warp_specialize WarpSpecialization::balanced(2) = "
       "{40, 232}"});
  expect_error(
      [&] {
        build(
            64, true,
            [&](Schedule& s) {
              for (const char* name : {"A.shared", "B.shared"}) stage(s, name).warp_specialize({40, 232});
            },
            "ws");
      },
      {"its 256 threads launch with 256 registers each (ptxas's __launch_bounds__ cap), more than its consumer "
       "warpgroups' 232: setmaxnreg.inc cannot lower them; give warp_specialize WarpSpecialization::balanced(1) = "
       "{0, 0}"});
  // A kernel whose B copy is TMA but not warp-specialized.
  expect_error(
      [&] {
        build(
            64, false, [&](Schedule& s) { stage(s, "A.shared").warp_specialize(); }, "mixed");
      },
      {"CUDA: kernel 'mixed_kernel0' is warp-specialized (Stage::warp_specialize of the stage filling 'A.shared'), but "
       "its TMA copy into 'B.shared' is not; a producer warpgroup issues all of a kernel's TMA copies or none"});
  expect_error([&] { build(128, true, unchanged, "sm90", "sm_90"); }, {"which needs sm_90a"});  // setmaxnreg

  // The stage primitive and lower()'s checks.
  Tensor A = placeholder({64, 128}, BFloat(16), "A");
  IterVar k = reduce_axis({0, 128}, "k");
  Tensor C = compute(
      {64}, [&](Expr i) { return sum(cast(Float(32), A(i, k)), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  auto [ko, ki] = s[C].split(k, 64);
  s[AS].compute_at(s[C], ko);
  expect_error(
      [&] {
        s[AS].warp_specialize({20, 232});
      },
      {"warp_specialize: stage 'A.shared': producer registers 20; setmaxnreg takes 24 to 256, a multiple of 8 "
       "(or 0 to keep the compiled count)"});
  expect_error([&] { s[AS].warp_specialize({40, 236}); }, {"consumer registers 236"});
  expect_error(
      [&] {
        s[AS].warp_specialize({WarpSpecialization::kBalanced, 232});
      },
      {"warp_specialize: stage 'A.shared': registers {-1, 232}; give both counts, or kBalanced for both"});
  expect_error([&] { s[A].warp_specialize(); }, {"warp_specialize: stage 'A' is a placeholder"});
  expect_error([&] { s[C].warp_specialize(); }, {"warp_specialize: stage 'C' is an output"});
  s[AS].warp_specialize();
  expect_error(
      [&] {
        lower(s, {A, C}, "one_buffer");
      },
      {"lower: stage 'A.shared' is warp-specialized but has one buffer, so its producer could not copy ahead "
       "of the consumers; pipeline it"});
  s[AS].pipeline(2);
  expect_error(
      [&] {
        lower(s, {A, C}, "untensorized");
      },
      {"lower: stage 'A.shared' is warp-specialized but not tensorized; the producer warpgroup issues TMA "
       "copies (tensorize the stage with intrinsics::cuda_tma_load_2d)"});
}

}  // namespace
