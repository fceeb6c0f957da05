// CUDA tensor cores: the intrinsics::cuda_* tensor intrinsics on "warp" fragments and the
// reference tensor-core GEMM (te::ops::schedule_matmul_tensorcore_cuda). interpret() runs
// the declarations; the CUDA emulation runs the generated kernel (the helpers' warp-shuffle
// path, which sums in the declaration's order) and must agree with it bit for bit, and
// both with a plain C++ loop; NVRTC/nvcc show mma.sync and ldmatrix in the code for sm_90
// and no register spills. Every rule the CUDA backend checks has its message pinned.
#include <gtest/gtest.h>

#include <te/ops/matmul.h>
#include <te/ops/matmul_cuda.h>
#include <te/te.h>

#include <filesystem>
#include <memory>
#include <random>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/kernels.h"
#include "test_util.h"

using namespace te;

namespace {

struct GemmCase {
  const char* name;
  int M, N, K;
  DataType type;
  ops::MatmulTensorCoreOptions options;
  bool linear = false;  // ops::linear: B is N x K, its fragments by cuda_load_matrix_bt_8x16
};

ops::MatmulTensorCoreOptions small_options() {
  ops::MatmulTensorCoreOptions o;
  o.block_m = o.block_n = 64;
  o.tile_k = 16;
  return o;
}

ops::MatmulTensorCoreOptions one_warp() {
  ops::MatmulTensorCoreOptions o;
  o.block_m = 16;
  o.block_n = 8;
  o.warps_m = o.warps_n = 1;
  o.tile_k = 16;
  return o;
}

ops::MatmulTensorCoreOptions plain_options() {
  ops::MatmulTensorCoreOptions o = small_options();
  o.double_buffer = false;
  o.pad = 0;
  o.vector = 1;
  o.tile_k = 32;
  return o;
}

std::vector<GemmCase> gemm_cases() {
  ops::MatmulTensorCoreOptions wide = small_options();
  wide.warps_m = 1;
  wide.warps_n = 4;  // warp tiles of 64 x 16
  return {
      {"hgemm_default", 128, 128, 64, Float(16), {}},            // 4 warps of 64 x 64, two k tiles
      {"hgemm_small", 64, 128, 48, Float(16), small_options()},  // 2 blocks, 3 k tiles (odd, double-buffered)
      {"hgemm_one_warp", 32, 16, 32, Float(16), one_warp()},     // a warp per block, one fragment
      {"hgemm_plain", 64, 64, 64, Float(16), plain_options()},   // no double buffer, padding or vectors
      {"hgemm_wide_warps", 64, 64, 32, Float(16), wide},
      {"bgemm_small", 64, 64, 48, BFloat(16), small_options()},
      // C's last tiles shift inward (rows 36..63 and columns 8..63 computed twice)
      {"hgemm_uneven", 100, 72, 48, Float(16), small_options()},
      {"hgemm_linear", 100, 72, 48, Float(16), small_options(), true},
      {"bgemm_linear_plain", 64, 64, 64, BFloat(16), plain_options(), true},  // unpadded rows of B
  };
}

LoweredFunc tensor_core_gemm(const GemmCase& c) {
  return cuda_test::matmul_tensorcore_func(c.M, c.N, c.K, c.type, c.options, c.name, c.linear);
}

// The intrinsics by hand, one warp per block, fragments straight from global memory (no
// shared tiles, so no threadIdx.x loop: the kernel gets its 32 lanes): C (M x N) = A (M x
// 16) B (16 x N), a 16-row block per blockIdx.x, N a multiple of 8. What Manual changes,
// each a mistake the CUDA backend refuses but tensorize_store.
struct Manual {
  bool tensorize_store = true;   // else each lane stores its elements of the accumulators
  std::string a_scope = "warp";  // the A fragment's scope
  bool lanes_loop = false;       // C's 8-column fragments over threadIdx.x (the store inside it)
  int shared_lanes = 0;          // A through shared memory copied by this many threadIdx.x
  bool bind_blocks = true;       // else no kernel at all
  bool b_rows = false;           // B given N x 16 (ops::linear), its fragments by cuda_load_matrix_bt_8x16
  bool bt_on_k_rows = false;     // cuda_load_matrix_bt_8x16 on B given 16 x N (which it does not match)
};

LoweredFunc manual_mma(int M, const Manual& m = {}, DataType t = Float(16), const std::string& name = "mma_by_hand",
                       int N = 8) {
  Tensor A = placeholder({M, 16}, t, "A"), B = m.b_rows ? placeholder({N, 16}, t, "B") : placeholder({16, N}, t, "B");
  Tensor C = m.b_rows ? ops::linear(A, B, "C") : ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  Tensor AS;
  if (m.shared_lanes > 0) AS = s.cache_read(A, "shared", {C});
  Tensor AF = s.cache_read(m.shared_lanes > 0 ? AS : A, m.a_scope, {C});
  Tensor BF = s.cache_read(B, "warp", {C}, m.b_rows ? std::vector<int>{1, 0} : std::vector<int>{});
  Tensor CF = s.cache_write(C, "warp");
  auto [bo, i] = s[C].split(C.axis(0), 16);
  auto [jo, j] = s[C].split(C.axis(1), 8);
  s[C].reorder({bo, jo, i, j});
  if (m.bind_blocks) s[C].bind(bo, thread_axis("blockIdx.x"));
  if (m.lanes_loop) s[C].bind(jo, thread_axis("threadIdx.x"));
  if (m.tensorize_store) s[C].tensorize(i, intrinsics::cuda_store_16x8_f32());
  s[CF].compute_at(s[C], m.lanes_loop ? jo : bo);
  auto [cjo, cj] = s[CF].split(CF.axis(1), 8);
  s[CF].reorder({cjo, CF.axis(0), cj, s[CF].op()->reduce_axis[0]});
  s[CF].tensorize(CF.axis(0), intrinsics::cuda_mma_m16n8k16(t));
  s[AF].compute_at(s[C], bo);
  s[AF].tensorize(AF.axis(0), intrinsics::cuda_load_matrix_a_16x16(t));
  s[BF].compute_at(s[C], m.lanes_loop ? jo : bo);
  auto [bjo, bj] = s[BF].split(BF.axis(1), 8);
  s[BF].reorder({bjo, BF.axis(0), bj});
  s[BF].tensorize(BF.axis(0), m.b_rows || m.bt_on_k_rows ? intrinsics::cuda_load_matrix_bt_8x16(t)
                                                         : intrinsics::cuda_load_matrix_b_16x8(t));
  if (m.shared_lanes > 0) {
    s[AS].compute_at(s[C], bo);
    IterVar f = s[AS].fuse(AS.axis(0), AS.axis(1));
    auto [pass, lane] = s[AS].split(f, m.shared_lanes);
    s[AS].bind(lane, thread_axis("threadIdx.x"));
  }
  return lower(s, {A, B, C}, name);
}

// Values of the 16-bit type: small integers (every sum exact, as on a tensor core) or
// arbitrary ones in [-2, 2) rounded to the type.
NDArray random_matrix(int rows, int cols, DataType t, unsigned seed, bool integers, std::vector<float>* values) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<half> h;
  std::vector<bfloat16> b;
  values->clear();
  for (int i = 0; i < rows * cols; ++i) {
    const float v = integers ? static_cast<float>(small(rng)) : real(rng);
    if (t == Float(16)) {
      h.emplace_back(v);
      values->push_back(static_cast<float>(h.back()));
    } else {
      b.emplace_back(v);
      values->push_back(static_cast<float>(b.back()));
    }
  }
  return t == Float(16) ? NDArray::from_vector(h, {rows, cols}) : NDArray::from_vector(b, {rows, cols});
}

// The rows x cols matrix m transposed.
std::vector<float> transposed(const std::vector<float>& m, int rows, int cols) {
  std::vector<float> t(m.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[size_t(j) * rows + i] = m[size_t(i) * cols + j];
  return t;
}

// C = A B with k in order, each step rounded to float: the declaration's sums.
std::vector<float> reference(const std::vector<float>& a, const std::vector<float>& b, int M, int N, int K) {
  std::vector<float> c(size_t(M) * N, 0.0f);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        volatile float product = a[size_t(i) * K + k] * b[size_t(k) * N + j];  // exact, never fused
        acc = acc + product;
      }
      c[size_t(i) * N + j] = acc;
    }
  return c;
}

class TensorCores : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    suite_ = std::make_unique<cuda_test::EmulatedSuite>();
    for (const GemmCase& c : gemm_cases()) suite_->add([c] { return tensor_core_gemm(c); });
    Manual lanes_store;
    lanes_store.tensorize_store = false;
    suite_->add([] { return manual_mma(48); });
    suite_->add([] { return manual_mma(32, {}, BFloat(16), "mma_by_hand_bf16", 16); });
    suite_->add([lanes_store] { return manual_mma(32, lanes_store, Float(16), "mma_by_hand_lanes", 16); });
    Manual b_rows;
    b_rows.b_rows = true;
    suite_->add([b_rows] { return manual_mma(32, b_rows, BFloat(16), "mma_by_hand_b_rows", 24); });
    suite_->build();
  }
  static void TearDownTestSuite() { suite_.reset(); }

  static std::unique_ptr<cuda_test::EmulatedSuite> suite_;
};

std::unique_ptr<cuda_test::EmulatedSuite> TensorCores::suite_;

TEST_F(TensorCores, GemmInterpretedAndEmulatedAgreeWithCpp) {
  ASSERT_TRUE(suite_->ready()) << suite_->log();
  for (const GemmCase& c : gemm_cases())
    for (bool integers : {true, false}) {
      SCOPED_TRACE(std::string(c.name) + (integers ? " integers" : " reals"));
      std::vector<float> av, bv;
      NDArray a = random_matrix(c.M, c.K, c.type, 7, integers, &av);
      NDArray b = c.linear ? random_matrix(c.N, c.K, c.type, 11, integers, &bv)
                           : random_matrix(c.K, c.N, c.type, 11, integers, &bv);
      const std::vector<float> want = reference(av, c.linear ? transposed(bv, c.N, c.K) : bv, c.M, c.N, c.K);
      const LoweredFunc& f = suite_->func(c.name);
      NDArray out = NDArray::empty({c.M, c.N}, Float(32));
      interpret(f, {a, b, out});
      EXPECT_EQ(out.to_vector<float>(), want) << "interpret() against C++";
      cuda_test::EmulatedRun r = suite_->run(c.name, {a, b, NDArray::empty({c.M, c.N}, Float(32))});
      ASSERT_EQ(r.error, 0) << r.output;
      ASSERT_EQ(r.arrays.size(), 3u);
      EXPECT_EQ(cuda_test::compare_arrays(out, r.arrays[2]), "") << "the emulated kernel against interpret()";
      ASSERT_EQ(r.launches.size(), 1u);
      const auto& o = c.options;
      EXPECT_EQ(r.launches[0], (std::array<unsigned, 6>{unsigned((c.N + o.block_n - 1) / o.block_n),
                                                        unsigned((c.M + o.block_m - 1) / o.block_m), 1, 32,
                                                        unsigned(o.warps_n), unsigned(o.warps_m)}));
    }
}

// The intrinsics by hand: fragments loaded from global memory by each lane's loads, no
// threadIdx.x loop (the launch still has 32 lanes), two 16-bit types; C stored by the
// store intrinsic or (mma_by_hand_lanes) by each lane, its elements one by one; B given
// N x 16 (mma_by_hand_b_rows: a linear layer's weight, as it lies).
TEST_F(TensorCores, SingleWarpKernelFromGlobalMemory) {
  ASSERT_TRUE(suite_->ready()) << suite_->log();
  struct Case {
    const char* name;
    int M, N;
    DataType t;
    bool b_rows = false;
  };
  for (const Case& c :
       {Case{"mma_by_hand", 48, 8, Float(16)}, Case{"mma_by_hand_bf16", 32, 16, BFloat(16)},
        Case{"mma_by_hand_lanes", 32, 16, Float(16)}, Case{"mma_by_hand_b_rows", 32, 24, BFloat(16), true}}) {
    SCOPED_TRACE(c.name);
    std::vector<float> av, bv;
    NDArray a = random_matrix(c.M, 16, c.t, 3, false, &av);
    NDArray b = c.b_rows ? random_matrix(c.N, 16, c.t, 5, false, &bv) : random_matrix(16, c.N, c.t, 5, false, &bv);
    const LoweredFunc& f = suite_->func(c.name);
    NDArray out = NDArray::empty({c.M, c.N}, Float(32));
    interpret(f, {a, b, out});
    EXPECT_EQ(out.to_vector<float>(), reference(av, c.b_rows ? transposed(bv, c.N, 16) : bv, c.M, c.N, 16));
    cuda_test::EmulatedRun r = suite_->run(c.name, {a, b, NDArray::empty({c.M, c.N}, Float(32))});
    ASSERT_EQ(r.error, 0) << r.output;
    EXPECT_EQ(cuda_test::compare_arrays(out, r.arrays[2]), "");
    ASSERT_EQ(r.launches.size(), 1u);
    EXPECT_EQ(r.launches[0], (std::array<unsigned, 6>{unsigned(c.M / 16), 1, 1, 32, 1, 1}));
  }
}

// The loop IR of the reference GEMM: the accumulators are zeroed by the mma's init
// intrinsic, and every access to a warp fragment is an intrinsic.
TEST(TensorCoresLowered, EveryFragmentAccessIsAnIntrinsic) {
  LoweredFunc f = tensor_core_gemm(gemm_cases()[1]);  // 64 x 128 x 48, 64 x 64 blocks of 4 warps
  const std::string text = te::to_string(f.body);
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  // Each warp: a 32 x 32 tile, 2 x 4 fragments of 16 x 8, k in 3 tiles of 16.
  EXPECT_EQ(count("tensor_intrinsic cuda_fill_16x8_f32("), 8);
  // Per step of 16 in k (the double-buffered k loop is unrolled by two): 2 x 4 mma, 2
  // fragments of A, 4 of B.
  const int steps = count("tensor_intrinsic cuda_mma_m16n8k16_f16f32(") / 8;
  EXPECT_GE(steps, 2);
  EXPECT_EQ(count("tensor_intrinsic cuda_mma_m16n8k16_f16f32("), 8 * steps);
  EXPECT_EQ(count("tensor_intrinsic cuda_load_matrix_a_16x16_f16("), 2 * steps);
  EXPECT_EQ(count("tensor_intrinsic cuda_load_matrix_b_16x8_f16("), 4 * steps);
  EXPECT_EQ(count("tensor_intrinsic cuda_store_16x8_f32("), 8);
  EXPECT_NE(text.find("in warp {"), std::string::npos) << text;
  // The shared rows are padded from 16 to 24 and 64 to 72 elements.
  EXPECT_NE(text.find("A.shared[(i.inner.outer * 768):] strides (24, 1)"), std::string::npos) << text;
}

// The shared tiles fill through cp.async, the double buffer's guarded last fills too
// (no 16-byte fill passes through registers; only the unaligned fallback copies lane by
// lane), every barrier waits for the copies first, and CudaOptions::async_copies turns
// it off.
TEST(TensorCoresLowered, SharedTilesFillThroughAsyncCopies) {
  const LoweredFunc f = tensor_core_gemm(gemm_cases()[1]);  // 3 k tiles: the last fill is guarded
  const std::string src = build_cuda(f).source();
  auto count = [&](const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const std::string kernel = src.substr(src.find("__global__"));
  EXPECT_GT(count(kernel, "te_cp_async_16("), 0) << kernel;
  EXPECT_GT(count(kernel, "te_lane] = A["), 0) << "the unaligned fallback copies lane by lane";
  EXPECT_NE(kernel.find("if ("), std::string::npos) << "the last fill is guarded";
  EXPECT_EQ(count(kernel, "const te_vec<"), 0) << kernel;
  EXPECT_EQ(count(kernel, "te_cp_async_wait_all();\n"), count(kernel, "__syncthreads();"));
  EXPECT_EQ(count(kernel, "te_cp_async_wait_all();\n    __syncthreads();"), count(kernel, "\n    __syncthreads();"));
  CudaOptions sync;
  sync.async_copies = false;
  EXPECT_EQ(build_cuda(f, sync).source().find("cp_async"), std::string::npos);
}

TEST(TensorCoresNvrtc, MmaSyncAndLdmatrixInThePtx) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  for (const GemmCase& c : {gemm_cases()[0], gemm_cases()[5]}) {
    SCOPED_TRACE(c.name);
    const std::string ptx = compile_ptx(build_cuda(tensor_core_gemm(c)), "sm_90");
    const std::string types = c.type == Float(16) ? "f16.f16" : "bf16.bf16";
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32." + types + ".f32"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos);
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos) << "16-byte copies into shared memory";
    EXPECT_NE(ptx.find("cp.async.wait_all"), std::string::npos);
    EXPECT_NE(ptx.find("st.global.v2.f32"), std::string::npos) << "float2 stores of C";
    // The shared rows are proven 16-byte aligned: no element-wise fallback of ldmatrix.
    EXPECT_EQ(ptx.find("ld.shared.u16"), std::string::npos);
  }
}

// A linear layer's B (N x K) is copied as it lies, in 16-byte cp.async pieces (no copy
// that transposes it element by element), and its fragments read by ldmatrix without
// .trans.
TEST(TensorCoresNvrtc, LinearWeightsByLdmatrixWithoutTranspose) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  const GemmCase c = gemm_cases()[7];
  ASSERT_TRUE(c.linear);
  const std::string source = build_cuda(tensor_core_gemm(c)).source();
  EXPECT_NE(source.find("te_cp_async_16((B_shared"), std::string::npos) << source;
  EXPECT_NE(source.find("te_ldmatrix_bt_f16(B_shared"), std::string::npos) << source;
  const std::string ptx = compile_ptx(build_cuda(tensor_core_gemm(c)), "sm_90");
  EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x2.shared.b16"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("ldmatrix.sync.aligned.m8n8.x2.trans"), std::string::npos);
  EXPECT_EQ(ptx.find("ld.shared.u16"), std::string::npos) << "no element-wise fallback";
}

// nvcc for sm_80 and sm_90 without a warning and without spills (ptxas's resource usage);
// the SASS has HMMA where cuobjdump is installed (not on te's CPU machines: the GPU kit
// checks it there).
TEST(TensorCoresNvcc, CompilesWithoutSpills) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  cuda_test::TempDir dir;
  for (const GemmCase& c : {gemm_cases()[0], gemm_cases()[5], gemm_cases()[7]}) {
    const std::string cu = dir.path() + "/" + c.name + ".cu";
    cuda_test::write_file(cu, build_cuda(tensor_core_gemm(c)).source());
    for (const char* arch : {"sm_80", "sm_90"}) {
      SCOPED_TRACE(std::string(c.name) + " " + arch);
      const std::string cubin = dir.path() + "/" + c.name + "_" + arch + ".cubin";
      cuda_test::CommandResult r = cuda_test::run_command(
          fmt::format("{} -std=c++17 -arch={} -cubin --resource-usage -Werror all-warnings {} -o {}",
                      cuda_test::quote(nvcc), arch, cuda_test::quote(cu), cuda_test::quote(cubin)));
      ASSERT_EQ(r.status, 0) << r.output;
      EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
      EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
      const std::string cuobjdump = std::filesystem::path(nvcc).parent_path() / "cuobjdump";
      if (::access(cuobjdump.c_str(), X_OK) == 0) {
        cuda_test::CommandResult sass =
            cuda_test::run_command(cuda_test::quote(cuobjdump) + " -sass " + cuda_test::quote(cubin));
        EXPECT_NE(sass.output.find("HMMA.16816.F32"), std::string::npos) << sass.output;
      }
    }
  }
}

TEST(TensorCoresErrors, TheCudaBackendsRules) {
  Manual local_a;
  local_a.a_scope = "local";
  expect_error([&] { build_cuda(manual_mma(16, local_a)); },
               {"tensor intrinsic 'cuda_load_matrix_a_16x16_f16' takes its declaration's 'F' as a warp fragment "
                "(\"a\"), but 'A.local' is in local memory; give it scope \"warp\""});
  Manual wide;
  wide.shared_lanes = 64;
  expect_error([&] { build_cuda(manual_mma(16, wide)); },
               {"kernel 'mma_by_hand_kernel0' runs tensor intrinsic", "but its threadIdx.x extent is 64",
                "bind loops of exactly 32 to threadIdx.x"});
  Manual host;
  host.bind_blocks = false;
  expect_error([&] { build_cuda(manual_mma(16, host)); },
               {"CUDA: the warp allocation of 'C.warp' is outside every kernel"});
  // An intrinsic inside a threadIdx.x loop: the store of each 8-column fragment by a lane.
  Manual in_lane;
  in_lane.lanes_loop = true;
  expect_error([&] { build_cuda(manual_mma(16, in_lane, Float(16), "f", 16)); },
               {"CUDA: in kernel 'f_kernel0', tensor intrinsic 'cuda_load_matrix_b_16x8_f16' is inside threadIdx.x "
                "loop 'j.outer': a warp's 32 lanes run it together (threadIdx.x is the lane)"});
  expect_error([] { build(manual_mma(16)); },
               {"build: mma_by_hand: tensor intrinsic 'cuda_load_matrix_a_16x16_f16' has no implementation for target "
                "'llvm'"});
}

TEST(TensorCoresErrors, IntrinsicsAndInits) {
  expect_error([] { intrinsics::cuda_mma_m16n8k16(Float(32)); },
               {"intrinsics::cuda_mma_m16n8k16: tensor cores multiply float16 or bfloat16, not float32"});
  expect_error([] { intrinsics::cuda_load_matrix_b_16x8(Int(8)); }, {"not int8"});
  // B's rows as columns: the intrinsic does not match a B laid out K x N.
  Manual bt_on_k_rows;
  bt_on_k_rows.bt_on_k_rows = true;
  expect_error([&] { manual_mma(16, bt_on_k_rows); },
               {"does not match intrinsic 'cuda_load_matrix_bt_8x16_f16': the access to 'B' (the declaration's 'S') "
                "moves by 8 elements per iteration of loop"});
  expect_error([] { intrinsics::cuda_load_matrix_bt_8x16(Float(32)); },
               {"intrinsics::cuda_load_matrix_bt_8x16: tensor cores multiply float16 or bfloat16, not float32"});
  TensorIntrinsic copy = intrinsics::cuda_store_16x8_f32();
  expect_error([&] { copy.with_init(intrinsics::cuda_fill_16x8_f32()); },
               {"TensorIntrinsic::with_init: 'cuda_store_16x8_f32' is not a reduction"});
  TensorIntrinsic mma = intrinsics::cuda_mma_m16n8k16(Float(16));
  expect_error([&] { mma.with_init(mma); }, {"the init 'cuda_mma_m16n8k16_f16f32' of", "must not be a reduction"});
  Tensor wrong = compute(
      {16, 16}, [](Expr, Expr) { return Expr(0.0f); }, "Z");
  expect_error([&] { mma.with_init(tensor_intrinsic("zero16", wrong, {})); },
               {"the init 'zero16' computes float32[16, 16], the output of 'cuda_mma_m16n8k16_f16f32' is "
                "float32[16, 8]"});
  // An init whose declaration stores something else than te's identity.
  Tensor ones = compute(
      {16, 8}, [](Expr, Expr) { return Expr(1.0f); }, "O");
  TensorIntrinsic bad = mma.with_init(tensor_intrinsic("ones", ones, {}, {ones}));
  expect_error(
      [&] {
        Tensor A = placeholder({16, 16}, Float(16), "A"), B = placeholder({16, 8}, Float(16), "B");
        Tensor C = ops::matmul(A, B, "C");
        Schedule s = create_schedule({C});
        s[C].tensorize(C.axis(0), bad);
        lower(s, {A, B, C}, "f");
      },
      {"tensorize: the init of stage 'C' at axis 'i' does not match intrinsic 'ones' (the init of "
       "'cuda_mma_m16n8k16_f16f32')",
       "the stage has 0.0f where the declaration has 1.0f"});
}

TEST(TensorCoresErrors, ScheduleRefusesWhatTheIntrinsicsCannotRun) {
  auto schedule = [](Expr M, Expr N, Expr K, DataType t, ops::MatmulTensorCoreOptions o) {
    Tensor A = placeholder({M, K}, t, "A"), B = placeholder({K, N}, t, "B");
    Tensor C = ops::matmul(A, B, "C");
    Schedule s = create_schedule({C});
    ops::schedule_matmul_tensorcore_cuda(s, C, o);
  };
  expect_error([&] { schedule(128, 128, 64, Float(32), {}); },
               {"schedule_matmul_tensorcore_cuda: tensor cores multiply float16 or bfloat16 matrices; A and B are "
                "float32"});
  expect_error([&] { schedule(Var("m"), 128, 64, Float(16), {}); }, {"M is m, not a constant"});
  expect_error([&] { schedule(100, 128, 64, Float(16), {}); },
               {"schedule_matmul_tensorcore_cuda: C is 100 x 128, smaller than a block_m x block_n = 128 x 128 tile "
                "(the last tiles shift inward to stay whole); take smaller tiles"});
  expect_error([&] { schedule(128, 132, 64, Float(16), {}); },
               {"schedule_matmul_tensorcore_cuda: N is 132; B's rows are copied in pieces of vector = 8 elements, so "
                "N is a multiple of 8"});
  expect_error([&] { schedule(128, 128, 80, Float(16), {}); },
               {"schedule_matmul_tensorcore_cuda: K is 80, not a multiple of tile_k = 32 (every k tile is whole)"});
  ops::MatmulTensorCoreOptions o;
  o.tile_k = 24;
  expect_error([&] { schedule(128, 128, 48, Float(16), o); }, {"tile_k (24) must be a multiple of 16"});
  o = {};
  o.warps_m = 3;
  expect_error([&] { schedule(128, 128, 64, Float(16), o); },
               {"block_m (128) must be a multiple of 16 * warps_m (48)"});
  o = {};
  o.pad = 4;
  expect_error([&] { schedule(128, 128, 64, Float(16), o); }, {"pad (4) must be a multiple of 8"});
  o = {};
  o.tile_k = 128;
  expect_error([&] { schedule(128, 128, 128, Float(16), o); }, {"the shared tiles need", "above the 48 KB"});
  expect_error(
      [&] {
        Tensor A = placeholder({128, 64}, Float(16), "A");
        Tensor C = compute(
            {128, 64}, [&](Expr i, Expr j) { return cast(Float(32), A(i, j)); }, "C");
        Schedule s = create_schedule({C});
        ops::schedule_matmul_tensorcore_cuda(s, C);
      },
      {"'C' is not a matmul"});
}

}  // namespace
