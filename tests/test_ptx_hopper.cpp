// Hopper's emulated instructions (tests/cuda_emulation/hopper_emulation.h) against the
// PTX ISA's and the CUDA documentation's own statements, without te's code generator:
// wgmma's matrix descriptors, core-matrix and swizzled layouts and accumulator fragment;
// TMA boxes, their swizzle patterns and zero fill; mbarrier phases, parities and
// transaction counts; and the planted mistakes only a GPU would otherwise show (a
// missing wait of either kind, a swizzle that disagrees, a missing wgmma.fence).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "cuda_emulation/ptx_emulation.h"

namespace {

// Small integers: every product and sum exact in binary16 and float.
unsigned short half_bits(int v) {
  const __half h = __float2half_rn(static_cast<float>(v));
  unsigned short bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
int a_value(int m, int k) { return (m * 3 + k * 5) % 7 - 3; }
int b_value(int n, int k) { return (n * 5 + k * 3 + 1) % 5 - 2; }

// The matrix descriptor as the ISA's "Matrix Descriptor Format" lays it out.
unsigned long long descriptor(unsigned long long address, unsigned leading, unsigned stride, unsigned swizzle_mode) {
  return ((address >> 4) & 0x3fff) | (static_cast<unsigned long long>((leading >> 4) & 0x3fff) << 16) |
         (static_cast<unsigned long long>((stride >> 4) & 0x3fff) << 32) |
         (static_cast<unsigned long long>(swizzle_mode) << 62);
}

// Accumulator i of thread t of the warpgroup, in the ISA's m64nNk16 D fragment figure.
int d_row(unsigned t, int i) { return static_cast<int>(16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2)); }
int d_col(unsigned t, int i) { return static_cast<int>(8 * (i / 4) + 2 * (t % 4) + i % 2); }

// ---- wgmma on core matrices (no swizzle) ----
constexpr int kN = 32;
float g_d[64][kN];
float g_initial = 0;
int g_skip_wait = 0, g_skip_fence = 0;

// A (64 x 16) at shared offset 0 and B (kN x 16) after it, K-major core matrices: core
// matrix (i, j) of rows 8i..8i+7 and k 8j..8j+7 at 256 i + 128 j (leading 128, stride 256).
void wgmma_core_matrices_kernel() {
  unsigned char* smem = te_emu::dynamic_shared;
  const unsigned t = threadIdx.x;
  if (t == 0) {
    for (int r = 0; r < 64 + kN; ++r)
      for (int k = 0; k < 16; ++k) {
        const bool is_a = r < 64;
        const int row = is_a ? r : r - 64, base = is_a ? 0 : 64 * 16 * 2;
        const unsigned short v = half_bits(is_a ? a_value(row, k) : b_value(row, k));
        std::memcpy(smem + base + (row / 8) * 256 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2, &v, 2);
      }
  }
  __syncthreads();
  float d[kN / 2];
  for (float& x : d) x = g_initial;
  const unsigned long long a = descriptor(__cvta_generic_to_shared(smem), 128, 256, 0);
  const unsigned long long b = descriptor(__cvta_generic_to_shared(smem + 64 * 16 * 2), 128, 256, 0);
  if (!g_skip_fence) te_ptx_wgmma_fence();
  te_ptx_wgmma_m64n32k16_f32_f16(d, a, b, g_initial != 0);
  te_ptx_wgmma_commit_group();
  if (!g_skip_wait) te_ptx_wgmma_wait_group<0>();
  for (int i = 0; i < kN / 2; ++i) g_d[d_row(t, i)][d_col(t, i)] = d[i];
  te_ptx_wgmma_wait_group<0>();
}

float product(int m, int n, int k_count) {
  float sum = 0;
  for (int k = 0; k < k_count; ++k) sum += static_cast<float>(a_value(m, k) * b_value(n, k));
  return sum;
}

int wrong_elements_core_matrices() {
  EXPECT_EQ(cudaLaunchKernel(wgmma_core_matrices_kernel, dim3(1), dim3(128), nullptr, 8192, nullptr), cudaSuccess);
  int wrong = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < kN; ++n) wrong += g_d[m][n] != g_initial + product(m, n, 16);
  return wrong;
}

TEST(PtxHopper, WgmmaMultipliesCoreMatrixOperands) {
  g_skip_wait = g_skip_fence = 0;
  for (float initial : {0.0f, 5.0f}) {  // scale-d 0: D = A B; 1: D += A B
    g_initial = initial;
    EXPECT_EQ(wrong_elements_core_matrices(), 0) << "initial accumulators " << initial;
  }
}

// ---- TMA: boxes, swizzle patterns, zero fill, landing at the observed phase ----
constexpr int kRows = 72;  // the tensor: kRows x 64 float16 (128-byte rows)
alignas(16) unsigned short g_tensor[kRows][64];
unsigned char g_box[64 * 128];
int g_landed_early = 0;
struct TmaArgs {
  CUtensorMap map;
  int c0, c1;
  unsigned bytes;
};
TmaArgs g_tma;

void tma_kernel() {
  unsigned char* smem = te_emu::dynamic_shared;
  unsigned long long* bar = reinterpret_cast<unsigned long long*>(smem + 16384);
  if (threadIdx.x == 0) {
    te_ptx_mbarrier_init(bar, 1);
    te_ptx_mbarrier_arrive_expect_tx(bar, g_tma.bytes);
    te_ptx_tma_load_2d(smem, &g_tma.map, g_tma.c0, g_tma.c1, bar);
    g_landed_early = smem[0] != 0xa5;  // uninitialized until a thread observes the phase
  }
  __syncthreads();
  while (!te_ptx_mbarrier_try_wait_parity(bar, 0)) {
  }
  if (threadIdx.x == 0) std::memcpy(g_box, smem, g_tma.bytes);
}

// A box of `inner` (bytes) x 64 rows at (c0, c1), swizzled by `mode` (CUtensorMapSwizzle).
void load_box(int inner_bytes, int c0, int c1, CUtensorMapSwizzle mode) {
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < 64; ++c) g_tensor[r][c] = static_cast<unsigned short>(500 * r + c + 1);
  const cuuint64_t dims[2] = {64, kRows}, strides[1] = {128};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(inner_bytes / 2), 64}, element_strides[2] = {1, 1};
  ASSERT_EQ(cuTensorMapEncodeTiled(&g_tma.map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, g_tensor, dims, strides, box,
                                   element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, mode,
                                   CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            CUDA_SUCCESS);
  g_tma.c0 = c0;
  g_tma.c1 = c1;
  g_tma.bytes = static_cast<unsigned>(inner_bytes * 64);
  ASSERT_EQ(cudaLaunchKernel(tma_kernel, dim3(1), dim3(64), nullptr, 16384 + 64, nullptr), cudaSuccess);
}

unsigned short box_element(int inner_bytes, int r, int byte) {
  unsigned short v;
  std::memcpy(&v, g_box + r * inner_bytes + byte, 2);
  return v;
}

TEST(PtxHopper, TmaSwizzlesSixteenByteChunksAsCudaDocumentsIt) {
  struct Mode {
    CUtensorMapSwizzle mode;
    int span, rows_per_step;  // the chunk index XORs (row / rows_per_step) % (span / 16)
  };
  for (Mode m : {Mode{CU_TENSOR_MAP_SWIZZLE_128B, 128, 1}, Mode{CU_TENSOR_MAP_SWIZZLE_64B, 64, 2},
                 Mode{CU_TENSOR_MAP_SWIZZLE_32B, 32, 4}}) {
    load_box(m.span, 0, 8, m.mode);
    EXPECT_EQ(g_landed_early, 0) << "a TMA copy landed before any thread observed its phase";
    int wrong = 0;
    for (int r = 0; r < 64; ++r)
      for (int chunk = 0; chunk < m.span / 16; ++chunk) {
        const int stored = chunk ^ ((r / m.rows_per_step) % (m.span / 16));
        for (int e = 0; e < 8; ++e)
          wrong += box_element(m.span, r, 16 * stored + 2 * e) != 500 * (r + 8) + 8 * chunk + e + 1;
      }
    EXPECT_EQ(wrong, 0) << "swizzle span " << m.span;
  }
}

TEST(PtxHopper, TmaFillsZerosOutsideTheTensor) {
  load_box(64, 48, kRows - 8, CU_TENSOR_MAP_SWIZZLE_NONE);  // columns 48..79, rows 64..127
  int wrong = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 32; ++c) {
      const bool inside = 48 + c < 64 && kRows - 8 + r < kRows;
      const int want = inside ? 500 * (kRows - 8 + r) + 48 + c + 1 : 0;
      wrong += box_element(64, r, 2 * c) != want;
    }
  EXPECT_EQ(wrong, 0);
}

TEST(PtxHopper, TensorMapsAreCheckedAsTheDriverDocumentsThem) {
  alignas(64) CUtensorMap map;
  const cuuint64_t dims[2] = {64, 8}, strides[1] = {128}, odd_stride[1] = {120};
  const cuuint32_t box[2] = {64, 8}, narrow_box[2] = {4, 8}, element_strides[2] = {1, 1};
  auto encode = [&](const cuuint64_t* s, const cuuint32_t* b, CUtensorMapSwizzle mode, void* global) {
    return cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, global, dims, s, b, element_strides,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, mode, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  EXPECT_EQ(encode(strides, box, CU_TENSOR_MAP_SWIZZLE_128B, g_tensor), CUDA_SUCCESS);
  EXPECT_EQ(encode(odd_stride, box, CU_TENSOR_MAP_SWIZZLE_NONE, g_tensor), CUDA_ERROR_INVALID_VALUE);  // stride % 16
  EXPECT_EQ(encode(strides, narrow_box, CU_TENSOR_MAP_SWIZZLE_NONE, g_tensor), CUDA_ERROR_INVALID_VALUE);  // 8 bytes
  EXPECT_EQ(encode(strides, box, CU_TENSOR_MAP_SWIZZLE_64B, g_tensor), CUDA_ERROR_INVALID_VALUE);  // 128 B > span
  EXPECT_EQ(encode(strides, box, CU_TENSOR_MAP_SWIZZLE_NONE, reinterpret_cast<char*>(g_tensor) + 8),
            CUDA_ERROR_INVALID_VALUE);  // address % 16
}

// ---- mbarrier: phases, parity, arrivals and transactions ----
std::vector<int> g_trace;

void mbarrier_kernel() {
  unsigned long long* bar = reinterpret_cast<unsigned long long*>(te_emu::dynamic_shared);
  te_ptx_mbarrier_init(bar, 2);
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 0));  // phase 0 running: 0
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 1));  // "phase -1": complete, 1
  te_ptx_mbarrier_arrive(bar);
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 0));  // one of two arrivals: 0
  te_ptx_mbarrier_arrive_expect_tx(bar, 32);
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 0));  // arrived, 32 bytes pending: 0
  alignas(64) static CUtensorMap map;
  alignas(16) static unsigned short data[16];
  const cuuint64_t dims[2] = {16, 1}, strides[1] = {32};
  const cuuint32_t box[2] = {16, 1}, element_strides[2] = {1, 1};
  cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, data, dims, strides, box, element_strides,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  te_ptx_tma_load_2d(te_emu::dynamic_shared + 128, &map, 0, 0, bar);
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 0));  // phase 0 complete: 1
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 1));  // phase 1 running: 0
  te_ptx_mbarrier_arrive(bar);
  te_ptx_mbarrier_arrive(bar);
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 1));  // phase 1 complete: 1
  g_trace.push_back(te_ptx_mbarrier_try_wait_parity(bar, 0));  // phase 2 running: 0
}

TEST(PtxHopper, MbarrierPhasesCompleteOnArrivalsAndTransactions) {
  g_trace.clear();
  ASSERT_EQ(cudaLaunchKernel(mbarrier_kernel, dim3(1), dim3(1), nullptr, 256, nullptr), cudaSuccess);
  EXPECT_EQ(g_trace, (std::vector<int>{0, 1, 0, 0, 1, 0, 1, 0}));
}

// ---- A GEMM step as Hopper kernels run it: TMA fills swizzled tiles, wgmma reads them ----
constexpr int kGemmN = 64;
alignas(16) unsigned short g_ga[64][64];      // A: 64 x K (K = span / 2 of them used)
alignas(16) unsigned short g_gb[kGemmN][64];  // B: N x K (K-major)
float g_gd[64][kGemmN];
struct GemmArgs {
  CUtensorMap a, b;
  int span, descriptor_mode, skip_barrier_wait;
};
GemmArgs g_gemm;

// Tiles of 64 (or N) rows x span bytes, A at shared 0 and B at 8 KiB (pattern-aligned);
// k steps of 16 elements advance the descriptors' start by 32 bytes within the row.
void tma_wgmma_kernel() {
  unsigned char* smem = te_emu::dynamic_shared;
  unsigned long long* bar = reinterpret_cast<unsigned long long*>(smem + 16384);
  const unsigned t = threadIdx.x;
  if (t == 0) {
    te_ptx_mbarrier_init(bar, 1);
    te_ptx_mbarrier_arrive_expect_tx(bar, static_cast<unsigned>(g_gemm.span * (64 + kGemmN)));
    te_ptx_tma_load_2d(smem, &g_gemm.a, 0, 0, bar);
    te_ptx_tma_load_2d(smem + 8192, &g_gemm.b, 0, 0, bar);
  }
  __syncthreads();
  if (!g_gemm.skip_barrier_wait)
    while (!te_ptx_mbarrier_try_wait_parity(bar, 0)) {
    }
  float d[kGemmN / 2] = {};
  const unsigned stride = 8 * static_cast<unsigned>(g_gemm.span);  // 8 rows of a swizzle pattern
  te_ptx_wgmma_fence();
  for (int step = 0; step < g_gemm.span / 32; ++step) {
    const unsigned long long a = descriptor(__cvta_generic_to_shared(smem) + 32 * step, 16, stride,
                                            static_cast<unsigned>(g_gemm.descriptor_mode));
    const unsigned long long b = descriptor(__cvta_generic_to_shared(smem + 8192) + 32 * step, 16, stride,
                                            static_cast<unsigned>(g_gemm.descriptor_mode));
    te_ptx_wgmma_m64n64k16_f32_bf16(d, a, b, step > 0);
  }
  te_ptx_wgmma_commit_group();
  te_ptx_wgmma_wait_group<0>();
  for (int i = 0; i < kGemmN / 2; ++i) g_gd[d_row(t, i)][d_col(t, i)] = d[i];
  if (g_gemm.skip_barrier_wait && t == 0)
    while (!te_ptx_mbarrier_try_wait_parity(bar, 0)) {
    }
}

unsigned short bf16_bits(int v) {  // small integers are exact in bfloat16
  const float f = static_cast<float>(v);
  unsigned bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<unsigned short>(bits >> 16);
}

// Descriptor swizzle modes (ISA): 1 128-byte, 2 64-byte, 3 32-byte.
int descriptor_mode_of(int span) { return span == 128 ? 1 : span == 64 ? 2 : 3; }

int wrong_elements_gemm(int span, int descriptor_mode, int skip_barrier_wait) {
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < 64; ++k) g_ga[m][k] = bf16_bits(a_value(m, k));
  for (int n = 0; n < kGemmN; ++n)
    for (int k = 0; k < 64; ++k) g_gb[n][k] = bf16_bits(b_value(n, k));
  const CUtensorMapSwizzle mode = span == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                  : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                               : CU_TENSOR_MAP_SWIZZLE_32B;
  const cuuint64_t dims[2] = {64, 64}, strides[1] = {128};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(span / 2), 64}, element_strides[2] = {1, 1};
  for (auto [map, global] :
       {std::pair{&g_gemm.a, static_cast<void*>(g_ga)}, std::pair{&g_gemm.b, static_cast<void*>(g_gb)}})
    EXPECT_EQ(cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, global, dims, strides, box,
                                     element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, mode,
                                     CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
              CUDA_SUCCESS);
  g_gemm.span = span;
  g_gemm.descriptor_mode = descriptor_mode;
  g_gemm.skip_barrier_wait = skip_barrier_wait;
  EXPECT_EQ(cudaLaunchKernel(tma_wgmma_kernel, dim3(1), dim3(128), nullptr, 16384 + 64, nullptr), cudaSuccess);
  int wrong = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < kGemmN; ++n) wrong += g_gd[m][n] != product(m, n, span / 2);
  return wrong;
}

TEST(PtxHopper, WgmmaReadsTheTilesTmaSwizzled) {
  for (int span : {128, 64, 32}) EXPECT_EQ(wrong_elements_gemm(span, descriptor_mode_of(span), 0), 0) << span;
}

// ---- Planted mistakes: each gives a wrong result (or stops the program) here ----
TEST(PtxHopper, PlantedMistakesAreCaught) {
  g_initial = 0;
  g_skip_fence = 0;
  g_skip_wait = 1;  // accumulators read before wgmma.wait_group
  EXPECT_GT(wrong_elements_core_matrices(), 0) << "a missing wgmma.wait_group";
  g_skip_wait = 0;
  EXPECT_GT(wrong_elements_gemm(128, descriptor_mode_of(128), 1), 0) << "a missing mbarrier wait";
  EXPECT_GT(wrong_elements_gemm(64, descriptor_mode_of(128), 0), 0) << "a descriptor swizzle unlike the TMA's";
  EXPECT_GT(wrong_elements_gemm(64, 0, 0), 0) << "a swizzled tile read as core matrices";
}

// ---- setmaxnreg: the consumers take only what the block's producer released ----
std::atomic<int> g_raised{0};

// Five warpgroups (640 threads: 96 registers each at launch); the last gives back down to
// 40, the other four raise theirs to N.
template <int N>
void setmaxnreg_kernel() {
  if (threadIdx.y == 4) {
    te_ptx_setmaxnreg_dec<40>();
  } else {
    te_ptx_setmaxnreg_inc<N>();
    ++g_raised;
  }
}

TEST(PtxHopper, SetmaxnregRaisesFromWhatTheBlockReleased) {
  g_raised = 0;  // 4 x 128 x (104 - 96) = 4096 <= 128 x (96 - 40) = 7168
  ASSERT_EQ(cudaLaunchKernel(setmaxnreg_kernel<104>, dim3(1), dim3(128, 5), nullptr, 0, nullptr), cudaSuccess);
  EXPECT_EQ(g_raised.load(), 512);
}

TEST(PtxHopperDeathTest, SetmaxnregAskingMoreThanReleasedStopsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 4 x 128 x (112 - 96) = 8192 > 7168: on an H200 this kernel hung.
  EXPECT_DEATH(cudaLaunchKernel(setmaxnreg_kernel<112>, dim3(1), dim3(128, 5), nullptr, 0, nullptr),
               "setmaxnreg.inc: the block's warps never released the registers it asks");
}

TEST(PtxHopperDeathTest, AWgmmaWithoutAFenceStopsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  g_initial = 0;
  g_skip_wait = 0;
  g_skip_fence = 1;
  EXPECT_DEATH(wrong_elements_core_matrices(), "no wgmma.fence since the accumulators were last accessed");
  g_skip_fence = 0;
}

}  // namespace
