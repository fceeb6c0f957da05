// Hopper's TMA as a te tensor intrinsic (intrinsics::cuda_tma_load_2d): tiles copied into
// shared memory by one thread's cp.async.bulk.tensor, completing on an mbarrier per
// destination buffer that every thread waits on before the next barrier, through a tensor
// map the launcher encodes. Through both paths of the CUDA emulation (the emulated TMA,
// whose copies land only when a thread observes the mbarrier's phase, and the block's
// threads' own copy) the kernels equal interpret() and plain C++: unswizzled and swizzled
// boxes, boxes of one row, rows of several column blocks (a box each), 1-, 2- and 4-byte
// elements, a batched (3-D) source. A planted missing wait is
// caught; nvcc builds the kernels and their launcher for sm_90a with the instructions in
// the PTX; every misuse is a te::Error naming what is wrong.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/reduction_kernels.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;

namespace {

struct Copy {
  int batch = 1, M = 64, N = 64;  // the source: batch x M x N (a matrix when batch is 1)
  int rows = 32, cols = 32;       // the box
  DataType t = Float(32);
  int swizzle = 0;
};

// out = in * 2 + 1, each block's rows x cols tile of `in` staged in shared memory by one
// TMA copy, 128 threads computing the tile from it.
LoweredFunc tma_scale(const Copy& c, const std::string& name) {
  const bool batched = c.batch > 1;
  Tensor in = batched ? placeholder({c.batch, c.M, c.N}, c.t, "in") : placeholder({c.M, c.N}, c.t, "in");
  Tensor out =
      batched
          ? compute(
                {c.batch, c.M, c.N},
                [&](Expr b, Expr i, Expr j) { return in(b, i, j) * make_const(c.t, 2) + make_const(c.t, 1); }, "out")
          : compute(
                {c.M, c.N}, [&](Expr i, Expr j) { return in(i, j) * make_const(c.t, 2) + make_const(c.t, 1); }, "out");
  Schedule s = create_schedule({out});
  Tensor S = s.cache_read(in, "shared", {out});
  const size_t d = batched ? 1 : 0;
  auto [by, yi] = s[out].split(out.axis(d), c.rows);
  auto [bx, xi] = s[out].split(out.axis(d + 1), c.cols);
  if (batched) {
    s[out].reorder({out.axis(0), by, bx, yi, xi});
    s[out].bind(out.axis(0), thread_axis("blockIdx.z"));
  } else {
    s[out].reorder({by, bx, yi, xi});
  }
  auto [pass, thread] = s[out].split(s[out].fuse(yi, xi), 128);
  s[out].bind(by, thread_axis("blockIdx.y"));
  s[out].bind(bx, thread_axis("blockIdx.x"));
  s[out].bind(thread, thread_axis("threadIdx.x"));
  s[S].compute_at(s[out], bx);
  if (c.swizzle) s[S].swizzle(c.swizzle);
  s[S].tensorize(S.axis(d), intrinsics::cuda_tma_load_2d(c.t, c.rows, c.cols));
  return lower(s, {in, out}, name);
}

std::vector<NDArray> arrays(const Copy& c) {
  const std::vector<int64_t> shape =
      c.batch > 1 ? std::vector<int64_t>{c.batch, c.M, c.N} : std::vector<int64_t>{c.M, c.N};
  NDArray in = NDArray::empty(shape, c.t);
  for (int64_t i = 0; i < in.size(); ++i) cuda_test::set_element(in, i, double((i * 7 + 3) % 11) - 5);
  return {in, NDArray::empty(shape, c.t)};
}

TEST(Tma, TileCopiesEqualInterpretAndCxxThroughBothPaths) {
  struct Case {
    Copy c;
    const char* what;
  };
  // {batch, M, N, box rows, box cols, type, swizzle}
  const std::vector<Case> cases = {
      {Copy{}, "float32, unswizzled"},
      {Copy{1, 128, 192, 64, 64, Float(16), 128}, "float16, 128-byte swizzle"},
      {Copy{1, 64, 64, 16, 32, BFloat(16), 64}, "bfloat16, 64-byte swizzle"},
      {Copy{1, 64, 128, 16, 32, Int(8), 32}, "int8, 32-byte swizzle"},
      {Copy{1, 8, 128, 1, 64, Float(32), 0}, "float32, boxes of one row"},
      {Copy{1, 64, 256, 32, 128, Float(16), 128}, "float16 rows of two 128-byte column blocks"},
      {Copy{3, 32, 64, 16, 16, Float(32), 64}, "a batch of matrices, float32, 64-byte swizzle"},
  };
  cuda_test::EmulatedProgram program(cuda_test::EmulatedProgram::Paths::Both);
  std::vector<LoweredFunc> fs;
  for (size_t k = 0; k < cases.size(); ++k) {
    fs.push_back(tma_scale(cases[k].c, fmt::format("tma_copy_{}", k)));
    const CudaModule m = build_cuda(fs.back());
    EXPECT_NE(m.source().find("te_tma_load_"), std::string::npos) << m.source();
    EXPECT_NE(m.source().find("te_tma_encode_2d(&in_map, in, "), std::string::npos) << m.source();
    program.add(m);
  }
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;
  for (size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE(cases[k].what);
    const Copy& c = cases[k].c;
    std::vector<NDArray> args = arrays(c);
    NDArray want = NDArray::empty(args[1].shape(), c.t);
    interpret(fs[k], {args[0], want});
    const NDArray& in = args[0];
    for (int64_t i = 0; i < in.size(); ++i)
      ASSERT_EQ(cuda_test::element(want, i), cuda_test::element(in, i) * 2 + 1) << "interpret() at " << i;
    cuda_test::EmulatedRun r = program.run(fs[k].name, fs[k], {args[0], args[1]});
    ASSERT_EQ(r.error, 0) << r.output;
    EXPECT_EQ(cuda_test::compare_arrays(want, r.arrays[1]), "");
  }
}

// The launcher encodes one map per source and box, the kernel declares the destinations'
// mbarriers in its dynamic shared memory, and every thread waits for the copies before
// the barrier after them.
TEST(Tma, KernelAndLauncherReadAsWritten) {
  const CudaModule m = build_cuda(tma_scale(Copy{}, "tma_text"));
  const std::string& cu = m.source();
  for (const char* line :
       {"extern \"C\" __global__ void __launch_bounds__(128) tma_text_kernel0(const float* __restrict__ in, float* "
        "__restrict__ out, const __grid_constant__ te_tensor_map in_map) {",
        "  unsigned long long* const te_tma_barriers = reinterpret_cast<unsigned long long*>(te_shared_memory + 4096); "
        " "
        "// TMA's mbarriers: in_shared",
        "  te_tma_init_barriers(te_tma_barriers, 1);\n  __syncthreads();",
        "te_tma_load_32x32_float32(in_shared, 0, &in_map, in, 64, 64, i_outer * 32, j_outer * 32, te_tma_barriers, 0, "
        "te_tma_pending, te_tma_phase);",
        "  te_tma_wait(te_tma_barriers, 1, 0x1u, te_tma_pending, te_tma_phase);\n  __syncthreads();",
        "    const cudaError_t in_map_err = te_tma_encode_2d(&in_map, in, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 64, 64, "
        "32, "
        "32, CU_TENSOR_MAP_SWIZZLE_NONE);\n    if (in_map_err != cudaSuccess) return in_map_err;",
        "void* te_args[] = {(void*)&in, (void*)&out, (void*)&in_map};"})
    EXPECT_NE(cu.find(line), std::string::npos) << line << "\n" << cu;
  ASSERT_EQ(m.kernels().size(), 1u);
  const CudaKernel& k = m.kernels()[0];
  EXPECT_TRUE(k.dynamic_shared);
  EXPECT_EQ(k.shared_bytes, 32 * 32 * 4 + 8);
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_TRUE(k.params[2].is_tensor_map());
  EXPECT_FALSE(k.params[2].is_buffer());
  EXPECT_EQ(k.params[2].buffer.name(), "in");
  EXPECT_EQ(k.params[2].tensor_map_box, (std::array<int, 3>{{32, 32, 0}}));
}

// The emulated TMA copy lands only when a thread observes its mbarrier's phase: a kernel
// whose threads skip the wait reads the tile before it arrived.
TEST(Tma, AMissingWaitIsCaughtByTheEmulation) {
  const Copy c;
  const LoweredFunc f = tma_scale(c, "tma_no_wait");
  const CudaModule m = build_cuda(f);
  std::string planted = m.source();
  const std::string wait = "te_tma_wait(te_tma_barriers, 1, 0x1u, te_tma_pending, te_tma_phase);\n";
  for (size_t at = planted.find(wait); at != std::string::npos; at = planted.find(wait, at))
    planted.replace(at, wait.size(), "(void)te_tma_phase;\n");
  ASSERT_NE(planted, m.source());
  cuda_test::EmulatedProgram program(cuda_test::EmulatedProgram::Paths::Ptx);
  program.add(CudaModule(m.name(), planted, m.launcher_params(), m.kernels(), false, false));
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;
  std::vector<NDArray> args = arrays(c);
  NDArray want = NDArray::empty({c.M, c.N}, c.t);
  interpret(f, {args[0], want});
  cuda_test::EmulatedRun r = program.run(f.name, f, {args[0], args[1]});
  ASSERT_EQ(r.error, 0) << r.output;
  EXPECT_NE(cuda_test::compare_arrays(want, r.arrays[1]), "") << "a missing wait went unseen";
}

TEST(Tma, NvccBuildsKernelAndLauncherForSm90aWithTheCopyInThePtx) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  cuda_test::TempDir dir;
  const std::string cu = dir.path() + "/t.cu";
  Copy c{1, 128, 128, 64, 64, BFloat(16), 128};
  cuda_test::write_file(cu, build_cuda(tma_scale(c, "tma_nvcc")).source());
  // -c: the launcher too, against the toolkit's cuda.h (cuTensorMapEncodeTiled's types).
  cuda_test::CommandResult obj = cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-c", dir.path() + "/t.o");
  ASSERT_EQ(obj.status, 0) << obj.output;
  cuda_test::CommandResult ptx = cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-ptx", dir.path() + "/t.ptx");
  ASSERT_EQ(ptx.status, 0) << ptx.output;
  const std::string text = cuda_test::read_file(dir.path() + "/t.ptx");
  for (const char* instruction :
       {"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64",
        "mbarrier.init.shared::cta.b64", "fence.proxy.async.shared::cta"})
    EXPECT_NE(text.find(instruction), std::string::npos) << instruction;
  // Before sm_90 the block's threads copy the box: the file still builds.
  cuda_test::CommandResult sm80 = cuda_test::nvcc_compile(nvcc, cu, "sm_80", "-cubin", dir.path() + "/p");
  EXPECT_EQ(sm80.status, 0) << sm80.output;
}

// out = in + 1 over 64 x 64, a block per 32 rows and a thread per row, `in` cached in
// `scope` (S): where the misuse cases start.
struct RowsPerBlock {
  explicit RowsPerBlock(const std::string& scope) {
    S = s.cache_read(in, scope, {out});
    auto [b, r] = s[out].split(out.axis(0), 32);
    s[out].bind(b, thread_axis("blockIdx.x"));
    s[out].bind(r, thread_axis("threadIdx.x"));
    block = b;
    row = r;
  }
  CudaModule build(const std::string& name) { return build_cuda(lower(s, {in, out}, name)); }

  Tensor in = placeholder({64, 64}, Float(32), "in");
  Tensor out = compute(
      {64, 64}, [this](Expr i, Expr j) { return in(i, j) + 1.0f; }, "out");
  Schedule s = create_schedule({out});
  Tensor S;
  IterVar block, row;
};

TEST(Tma, MisuseIsAnErrorNamingWhatIsWrong) {
  expect_error([] { intrinsics::cuda_tma_load_2d(Float(32), 300, 32); },
               {"intrinsics::cuda_tma_load_2d: the box is 300 x 32; TMA's boxes have 1 to 256 rows and columns"});
  expect_error([] { intrinsics::cuda_tma_load_2d(Float(16), 16, 12); },
               {"intrinsics::cuda_tma_load_2d: a box row is 12 columns of 2 bytes; TMA copies rows of a multiple of 16 "
                "bytes"});
  expect_error([] { intrinsics::cuda_tma_load_2d(Float(32).with_lanes(4), 16, 16); },
               {"intrinsics::cuda_tma_load_2d: TMA copies elements of 1, 2, 4 or 8 bytes, not float32x4"});

  Copy narrow{1, 64, 64, 32, 32, Float(16), 128};  // rows of 64 bytes swizzled by 128
  expect_error([&] { build_cuda(tma_scale(narrow, "narrow")); },
               {"TMA copy 'cuda_tma_load_32x32_float16' from 'in' into 'in.shared': 'in.shared' is swizzled by 128 "
                "bytes but the box's rows are 64 bytes; TMA swizzles rows of exactly the swizzle's width"});
  {  // boxes of 8 columns (16 bytes) from rows of 12 (24 bytes)
    Tensor in = placeholder({64, 12}, Float(16), "in");
    Tensor out = compute(
        {64, 8}, [&](Expr i, Expr j) { return in(i, j); }, "out");
    Schedule s = create_schedule({out});
    Tensor S = s.cache_read(in, "shared", {out});
    auto [by, yi] = s[out].split(out.axis(0), 32);
    s[out].bind(by, thread_axis("blockIdx.x"));
    s[out].bind(yi, thread_axis("threadIdx.x"));
    s[S].compute_at(s[out], by);
    s[S].tensorize(S.axis(0), intrinsics::cuda_tma_load_2d(Float(16), 32, 8));
    expect_error(
        [&] {
          build_cuda(lower(s, {in, out}, "odd"));
        },
        {"'in' has rows of 24 bytes; a tensor map's rows are a multiple of 16 bytes apart"});
  }

  // Each thread its own row: a row per thread of a shared tile, or a thread's local copy.
  {
    RowsPerBlock shared("shared");
    shared.s[shared.S].compute_at(shared.s[shared.out], shared.block);
    auto [row, one] = shared.s[shared.S].split(shared.S.axis(0), 1);
    shared.s[shared.S].bind(row, thread_axis("threadIdx.x"));
    shared.s[shared.S].tensorize(one, intrinsics::cuda_tma_load_2d(Float(32), 1, 64));
    expect_error([&] { shared.build("per_thread"); },
                 {"TMA copy 'cuda_tma_load_1x64_float32' from 'in' into 'in.shared': where it copies",
                  "depends on threadIdx; one thread issues the copy for the whole block"});
    RowsPerBlock local("local");
    local.s[local.S].compute_at(local.s[local.out], local.row);
    local.s[local.S].tensorize(local.S.axis(0), intrinsics::cuda_tma_load_2d(Float(32), 1, 64));
    expect_error([&] { local.build("per_thread"); },
                 {"the destination is a local buffer; TMA copies into shared memory (cache_read with \"shared\")"});
  }
  {  // A box of a wider shared tile: TMA writes its rows densely.
    RowsPerBlock wide("shared");
    Schedule& s = wide.s;
    s[wide.S].compute_at(s[wide.out], wide.block);
    auto [jo, ji] = s[wide.S].split(wide.S.axis(1), 32);
    s[wide.S].reorder({jo, wide.S.axis(0), ji});
    s[wide.S].tensorize(wide.S.axis(0), intrinsics::cuda_tma_load_2d(Float(32), 32, 32));
    expect_error([&] { wide.build("wide"); },
                 {"the box lands in rows 64 elements apart; TMA writes its 32 columns densely, so the shared tile's "
                  "rows must be 32 elements long"});
  }
  {  // Half a row of a buffer kept in column blocks: TMA fills whole rows of such a buffer.
    Tensor in = placeholder({64, 128}, Float(16), "in");
    Tensor out = compute(
        {64, 128}, [&](Expr i, Expr j) { return in(i, j); }, "out");
    Schedule s = create_schedule({out});
    Tensor S = s.cache_read(in, "shared", {out});
    auto [block, row] = s[out].split(out.axis(0), 32);
    s[out].bind(block, thread_axis("blockIdx.x"));
    s[out].bind(row, thread_axis("threadIdx.x"));
    s[S].compute_at(s[out], block);
    s[S].swizzle(128);  // rows of 256 bytes: two column blocks
    auto [r, one] = s[S].split(S.axis(0), 1);
    auto [half, c] = s[S].split(S.axis(1), 64);
    s[S].reorder({r, half, one, c});
    s[S].tensorize(one, intrinsics::cuda_tma_load_2d(Float(16), 1, 64));
    expect_error(
        [&] {
          build_cuda(lower(s, {in, out}, "half_rows"));
        },
        {"'in.shared' is kept in column blocks of rows of 128 elements, but the box's rows are 64; TMA fills "
         "whole rows of such a buffer"});
  }
  {  // 32-byte pieces of rows: each lands off the 128-byte boundary TMA writes from.
    RowsPerBlock pieces("shared");
    Schedule& s = pieces.s;
    s[pieces.S].compute_at(s[pieces.out], pieces.block);
    auto [r, one] = s[pieces.S].split(pieces.S.axis(0), 1);
    auto [c, eight] = s[pieces.S].split(pieces.S.axis(1), 8);
    s[pieces.S].reorder({r, c, one, eight});
    s[pieces.S].tensorize(one, intrinsics::cuda_tma_load_2d(Float(32), 1, 8));
    expect_error([&] { pieces.build("pieces"); },
                 {"TMA copy 'cuda_tma_load_1x8_float32' from 'in' into 'in.shared': it lands at element",
                  "which is not on a 128-byte boundary (as cp.async.bulk.tensor needs)"});
  }
  {  // From shared memory: TMA reads global memory.
    RowsPerBlock twice("shared");
    Schedule& s = twice.s;
    Tensor S2 = s.cache_read(twice.S, "shared", {twice.out});
    s[twice.S].compute_at(s[twice.out], twice.block);
    s[S2].compute_at(s[twice.out], twice.block);
    auto [pass, t] = s[twice.S].split(s[twice.S].fuse(twice.S.axis(0), twice.S.axis(1)), 32);
    s[twice.S].bind(t, thread_axis("threadIdx.x"));
    s[S2].tensorize(S2.axis(0), intrinsics::cuda_tma_load_2d(Float(32), 32, 64));
    expect_error([&] { twice.build("from_shared"); },
                 {"TMA copy 'cuda_tma_load_32x64_float32' from 'in.shared' into 'in.shared.shared': the source is a "
                  "shared buffer; TMA copies from global memory"});
  }
}

// Warp specialization without wgmma: row sums of a 256 x 256 float32 matrix, each block's
// rows x 32 tiles TMA-copied 4 deep by a producer warpgroup while `threads` consumer
// threads (one row each) add them up, waiting for a tile where they read it. Returns
// the function (and runs it in the emulation against interpret() and C++ when `run`).
LoweredFunc warp_specialized_row_sums(int threads, int threads_y, bool run) {
  const int M = 256, K = 256;
  Tensor A = placeholder({M, K}, Float(32), "A");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M}, [&](Expr i) { return sum(A(i, k), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  auto [bx, rows] = s[C].split(C.axis(0), threads * threads_y);
  auto [ty, tx] = s[C].split(rows, threads);
  auto [ko, ki] = s[C].split(k, 32);
  s[C].reorder({bx, ko, ty, tx, ki});
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  if (threads_y > 1) s[C].bind(ty, thread_axis(threads_y == 2 ? "threadIdx.z" : "threadIdx.y"));
  s[AS].compute_at(s[C], ko);
  s[AS].pipeline(4);
  s[AS].tensorize(AS.axis(0), intrinsics::cuda_tma_load_2d(Float(32), threads * threads_y, 32));
  s[AS].warp_specialize({0, 0});  // registers as compiled: sm_90 is enough
  const LoweredFunc f = lower(s, {A, C}, fmt::format("row_sums_{}", threads));
  if (!run) return f;
  const CudaModule m = build_cuda(f);
  EXPECT_NE(m.source().find("te_tma_produce_"), std::string::npos) << m.source();
  EXPECT_EQ(m.source().find("setmaxnreg"), std::string::npos) << m.source();
  cuda_test::EmulatedProgram program(cuda_test::EmulatedProgram::Paths::Ptx);
  program.add(m);
  std::string log;
  EXPECT_TRUE(program.build(&log)) << log;
  NDArray a = NDArray::empty({M, K}, Float(32));
  for (int e = 0; e < M * K; ++e) cuda_test::set_element(a, e, double((e * 5) % 11) - 5);
  NDArray want = NDArray::empty({M}, Float(32));
  interpret(f, {a, want});
  for (int i = 0; i < M; ++i) {
    double row = 0;
    for (int c = 0; c < K; ++c) row += double(((i * K + c) * 5) % 11) - 5;
    EXPECT_EQ(cuda_test::element(want, i), row) << i;
  }
  cuda_test::EmulatedRun r = program.run(f.name, f, {a, NDArray::empty({M}, Float(32))});
  EXPECT_EQ(r.error, 0) << r.output;
  EXPECT_EQ(cuda_test::compare_arrays(want, r.arrays[1]), "");
  return f;
}

TEST(Tma, WarpSpecializedCopiesEqualInterpretAndCxx) { warp_specialized_row_sums(128, 1, true); }

TEST(Tma, WarpSpecializationNeedsWarpgroupsAlongX) {
  expect_error([] { build_cuda(warp_specialized_row_sums(64, 1, false)); },
               {"CUDA: kernel 'row_sums_64_kernel0' is warp-specialized (Stage::warp_specialize of the stage filling "
                "'A.shared'), but its threadIdx.x extent is 64; the producer and consumers are warpgroups, so bind "
                "loops of exactly 128 to threadIdx.x"});
  expect_error([] { build_cuda(warp_specialized_row_sums(128, 2, false)); },
               {"but it binds threadIdx.z (2); the consumer warpgroups are threadIdx.y, the producer one more"});
}

}  // namespace
