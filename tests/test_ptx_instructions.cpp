// The emulated PTX instructions (tests/cuda_emulation/ptx_emulation.h) against the PTX
// ISA's own statements, without te's code generator: ldmatrix's lane tables, mma fed by
// ldmatrix computing a matrix product, cp.async's groups landing only at their wait, and
// shfl.sync's modes and segment widths as CUDA documents its intrinsics.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cuda_emulation/ptx_emulation.h"

namespace {

// ---- ldmatrix: four 8 x 8 matrices, element (m, r, c) = 64 m + 8 r + c ----
alignas(16) unsigned short g_matrices[4][8][8];
unsigned g_registers[32][4];

void ldmatrix_x4_kernel(int trans) {
  const unsigned lane = threadIdx.x;
  unsigned d[4];
  const void* row = &g_matrices[lane / 8][lane % 8][0];  // lanes 8i..8i+7: matrix i's rows
  if (trans)
    te_ptx_ldmatrix_x4_trans(d, row);
  else
    te_ptx_ldmatrix_x4(d, row);
  for (int i = 0; i < 4; ++i) g_registers[lane][i] = d[i];
}

unsigned pair(unsigned lo, unsigned hi) { return lo | (hi << 16); }

TEST(PtxInstructions, LdmatrixDealsRowsToLanesAsTheIsaSays) {
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) g_matrices[m][r][c] = static_cast<unsigned short>(64 * m + 8 * r + c);
  for (int trans : {0, 1}) {
    void* args[] = {&trans};
    ASSERT_EQ(cudaLaunchKernel(ldmatrix_x4_kernel, dim3(1), dim3(32), args, 0, nullptr), cudaSuccess);
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < 4; ++i) {
        // Register i of lane l: matrix i's row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1;
        // .trans: its column l / 4, rows 2 (l % 4) and 2 (l % 4) + 1.
        const unsigned a = l / 4, b = 2 * (l % 4);
        const unsigned want = trans ? pair(64 * i + 8 * b + a, 64 * i + 8 * (b + 1) + a)
                                    : pair(64 * i + 8 * a + b, 64 * i + 8 * a + b + 1);
        EXPECT_EQ(g_registers[l][i], want) << "lane " << l << " register " << i << (trans ? " .trans" : "");
      }
  }
}

// ---- mma.sync m16n8k16 with its operands from ldmatrix, as a GEMM loads them ----
alignas(16) unsigned short g_a[16][16];  // row-major, binary16
alignas(16) unsigned short g_b[16][8];   // row-major (k, n), binary16
float g_d[16][8];

unsigned short f16_bits(int v) {  // small integers are exact in binary16
  if (v == 0) return 0;
  const unsigned sign = v < 0 ? 0x8000u : 0u;
  unsigned m = static_cast<unsigned>(v < 0 ? -v : v);
  int e = 0;
  while (m >= 2048) m >>= 1, ++e;
  while (m < 1024) m <<= 1, --e;
  return static_cast<unsigned short>(sign | static_cast<unsigned>(e + 25) << 10 | (m & 1023u));
}

void mma_kernel() {
  const unsigned lane = threadIdx.x, group = lane / 4, in_group = lane % 4;
  unsigned a[4], b[2];
  // A's quarters: rows 0-7 and 8-15 of columns 0-7, then of columns 8-15.
  te_ptx_ldmatrix_x4(a, &g_a[lane % 8 + 8 * ((lane / 8) % 2)][8 * (lane / 16)]);
  // B (k x n) transposed: lanes 0-15 give rows k = 0..15.
  te_ptx_ldmatrix_x2_trans(b, &g_b[lane % 16][0]);
  float d[4] = {1, 2, 3, 4};  // c: added to the product
  te_ptx_mma_m16n8k16_f16(d, a, b);
  for (int i = 0; i < 4; ++i) g_d[group + (i >= 2 ? 8 : 0)][2 * in_group + (i & 1)] = d[i];
}

TEST(PtxInstructions, MmaFedByLdmatrixMultipliesMatrices) {
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) g_a[r][k] = f16_bits((r * 3 + k * 5) % 7 - 3);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) g_b[k][n] = f16_bits((k * 2 + n) % 5 - 2);
  ASSERT_EQ(cudaLaunchKernel(mma_kernel, dim3(1), dim3(32), nullptr, 0, nullptr), cudaSuccess);
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      double sum = 0;
      for (int k = 0; k < 16; ++k) sum += double((r * 3 + k * 5) % 7 - 3) * double((k * 2 + n) % 5 - 2);
      // c's element i of lane l sits at row l / 4 (+ 8 for i >= 2), column 2 (l % 4) + (i & 1).
      const int i = (r >= 8 ? 2 : 0) + n % 2;
      EXPECT_EQ(g_d[r][n], float(sum + (i + 1))) << "row " << r << " column " << n;
    }
}

// ---- cp.async: groups land at their wait, not before ----
alignas(16) unsigned char g_source[48];
alignas(16) unsigned char g_shared[48];
std::vector<int> g_landed;  // after each step: how many of the three copies are visible

int landed() {
  int n = 0;
  for (int c = 0; c < 3; ++c) n += std::memcmp(g_shared + 16 * c, g_source + 16 * c, 16) == 0;
  return n;
}

void cp_async_kernel() {
  for (int c = 0; c < 3; ++c) {
    te_ptx_cp_async_16(g_shared + 16 * c, g_source + 16 * c);
    if (c < 2) te_ptx_cp_async_commit_group();  // groups {0}, {1}; copy 2 not yet in one
    g_landed.push_back(landed());
  }
  te_ptx_cp_async_wait_group(1);  // all but the newest committed group: copy 0
  g_landed.push_back(landed());
  te_ptx_cp_async_wait_all();  // commits copy 2 and waits for everything
  g_landed.push_back(landed());
}

TEST(PtxInstructions, AsyncCopiesLandAtTheirWait) {
  for (int i = 0; i < 48; ++i) g_source[i] = static_cast<unsigned char>(i + 1);
  std::memset(g_shared, 0, sizeof g_shared);
  ASSERT_EQ(cudaLaunchKernel(cp_async_kernel, dim3(1), dim3(1), nullptr, 0, nullptr), cudaSuccess);
  EXPECT_EQ(g_landed, (std::vector<int>{0, 0, 0, 1, 3}));
}

// ---- shfl.sync through CUDA's intrinsics, widths below 32 included ----
int g_shuffled[4][32];

void shuffle_kernel() {
  const int lane = static_cast<int>(threadIdx.x);
  g_shuffled[0][lane] = __shfl_down_sync(0xffffffffu, lane, 3, 16);
  g_shuffled[1][lane] = __shfl_up_sync(0xffffffffu, lane, 2, 8);
  g_shuffled[2][lane] = __shfl_xor_sync(0xffffffffu, lane, 5);
  g_shuffled[3][lane] = __shfl_sync(0xffffffffu, lane, 11, 8);
}

TEST(PtxInstructions, ShufflesFollowTheirModesAndWidths) {
  ASSERT_EQ(cudaLaunchKernel(shuffle_kernel, dim3(1), dim3(32), nullptr, 0, nullptr), cudaSuccess);
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(g_shuffled[0][l], l % 16 + 3 < 16 ? l + 3 : l) << l;  // past its 16-lane segment: its own
    EXPECT_EQ(g_shuffled[1][l], l % 8 >= 2 ? l - 2 : l) << l;       // before its 8-lane segment: its own
    EXPECT_EQ(g_shuffled[2][l], l ^ 5) << l;
    EXPECT_EQ(g_shuffled[3][l], l / 8 * 8 + 11 % 8) << l;  // srcLane modulo the width, in the segment
  }
}

}  // namespace
