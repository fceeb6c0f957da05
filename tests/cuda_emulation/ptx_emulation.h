// The PTX instructions te's .cu files issue on sm_75+/sm_80+ GPUs, emulated on the CPU, so
// that te's tests run the GPU path of every helper and not only its portable one.
//
// te prints each instruction as one small function, te_ptx_<name>, defined in the .cu file
// unless TE_PTX_EMULATED is defined, and chooses the GPU path with `#if TE_PTX(arch)`. This
// header defines TE_PTX_EMULATED, makes TE_PTX(arch) true, and implements each te_ptx_*
// from NVIDIA's "Parallel Thread Execution ISA" (version 8.x; each function names its
// section), not from te's portable code: the two paths are independent, and
// EmulatedProgram (harness.h) runs every .cu that has a TE_PTX path both ways and
// compares them bit for bit.
//
// What the ISA leaves open, the emulation fixes as follows:
//  - mma: the order and precision of the sums are the hardware's; here each output is
//    c + a[.][0] * b[0][.] + a[.][1] * b[1][.] + ... in float, k in order (the tests use
//    inputs whose products and sums are exact, as the GPU kit's bit-exact corpus does).
//  - cp.async: a copy reads its source when issued and lands in shared memory only when a
//    cp.async.wait_group/wait_all completes it, never earlier (the latest the ISA allows),
//    so a missing wait leaves the old contents and shows as a wrong result.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "cuda_emulation.h"

#define TE_PTX_EMULATED 1
#define TE_PTX(arch) 1

namespace te_emu::ptx {

[[noreturn]] inline void fail(const char* instruction, const char* why) {
  std::fprintf(stderr, "cuda emulation: %s: %s\n", instruction, why);
  std::abort();
}

// Warp-level instructions (.sync.aligned) are executed by all 32 lanes of the warp
// together (Hopper's warpgroup ones by the 128 threads of 4 consecutive warps): each
// thread publishes its n 32-bit operands, and receives every thread's of its group.
template <int N, unsigned Group = 32>
struct WarpOperands {
  unsigned lane[Group][N];
};
template <int N, unsigned Group = 32>
WarpOperands<N, Group> exchange(const unsigned (&mine)[N], const char* instruction) {
  static_assert(Group == 32 || Group == 128, "a warp or a warpgroup");
  WarpExchange& x = *current_exchange;
  const unsigned me = linear_thread, base = me - me % Group;
  if (base + Group > x.slots.size())
    fail(instruction, Group == 32 ? "needs the 32 lanes of a full warp (.aligned)"
                                  : "needs the 128 threads of a full warpgroup (.aligned)");
  BlockBarrier& group = Group == 32 ? *x.warps[me / 32] : *x.warpgroups[me / 128];
  WarpOperands<N, Group> all;
  for (int round = 0; round < (N + 1) / 2; ++round) {
    unsigned long long pair = mine[2 * round];
    if (2 * round + 1 < N) pair |= static_cast<unsigned long long>(mine[2 * round + 1]) << 32;
    x.slots[me] = pair;
    group.arrive_and_wait();
    for (unsigned l = 0; l < Group; ++l) {
      all.lane[l][2 * round] = static_cast<unsigned>(x.slots[base + l]);
      if (2 * round + 1 < N) all.lane[l][2 * round + 1] = static_cast<unsigned>(x.slots[base + l] >> 32);
    }
    group.arrive_and_wait();
  }
  return all;
}

inline unsigned lane_id() { return linear_thread & 31u; }

// The two 16-bit halves of a .f16x2/.bf16x2 register: the element of lower index in the
// lower half (ISA: "Packed Data Types").
inline unsigned short half_of(unsigned reg, int which) { return static_cast<unsigned short>(reg >> (16 * which)); }

// IEEE 754 binary16 to float (ISA: "Floating Point Data Types", .f16).
inline float f16_to_float(unsigned short h) {
  const unsigned sign = (h >> 15) & 1u, exponent = (h >> 10) & 31u, mantissa = h & 1023u;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 1024u), static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

// bfloat16 to float: the upper 16 bits of a binary32 (ISA: .bf16).
inline float bf16_to_float(unsigned short h) {
  const unsigned bits = static_cast<unsigned>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 d, a, b, c (ISA, "Matrix
// Fragments for mma.m16n8k16 with floating point type"). With groupID = lane >> 2
// and threadID_in_group = lane % 4:
//  A (16 x 16, row-major), four .x2 registers, elements a0..a7:
//    row = groupID for a0, a1, a4, a5; groupID + 8 for a2, a3, a6, a7
//    col = threadID_in_group * 2 + (i & 1) for a0..a3; the same + 8 for a4..a7
//  B (16 x 8, column-major), two .x2 registers, b0..b3:
//    row = threadID_in_group * 2 + (i & 1) for b0, b1; the same + 8 for b2, b3
//    col = groupID
//  C and D (16 x 8), four floats c0..c3:
//    row = groupID for c0, c1; groupID + 8 for c2, c3
//    col = threadID_in_group * 2 + (i & 1)
inline void mma_m16n8k16(float* d, const unsigned* a, const unsigned* b, float (*to_float)(unsigned short),
                         const char* instruction) {
  unsigned mine[10];
  for (int i = 0; i < 4; ++i) mine[i] = a[i];
  for (int i = 0; i < 2; ++i) mine[4 + i] = b[i];
  for (int i = 0; i < 4; ++i) std::memcpy(&mine[6 + i], &d[i], 4);
  const WarpOperands<10> all = exchange(mine, instruction);
  float A[16][16], B[16][8], C[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned group = l >> 2, in_group = l % 4;
    for (int i = 0; i < 8; ++i) {
      const unsigned row = group + ((i == 2 || i == 3 || i == 6 || i == 7) ? 8 : 0);
      const unsigned col = in_group * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = to_float(half_of(all.lane[l][i / 2], i % 2));
    }
    for (int i = 0; i < 4; ++i) {
      const unsigned row = in_group * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      B[row][group] = to_float(half_of(all.lane[l][4 + i / 2], i % 2));
    }
    for (int i = 0; i < 4; ++i) {
      const unsigned row = group + (i >= 2 ? 8 : 0), col = in_group * 2 + (i & 1);
      std::memcpy(&C[row][col], &all.lane[l][6 + i], 4);
    }
  }
  const unsigned group = lane_id() >> 2, in_group = lane_id() % 4;
  for (int i = 0; i < 4; ++i) {
    const unsigned row = group + (i >= 2 ? 8 : 0), col = in_group * 2 + (i & 1);
    float sum = C[row][col];
    for (int k = 0; k < 16; ++k) sum = sum + A[row][k] * B[k][col];
    d[i] = sum;
  }
}

// ldmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{,.trans}.shared.b16 (ISA, "Warp-level matrix load
// instruction: ldmatrix"): `count` 8 x 8 matrices of 16-bit elements. Lanes
// 8i..8i+7 give the addresses of the rows of matrix i (lanes 0-7 for .x1, 0-15 for .x2),
// each row 16 bytes, 16-byte aligned. Destination register i of lane l holds matrix i's
// row l / 4, elements 2 * (l % 4) and 2 * (l % 4) + 1; with .trans, the same of the
// transposed matrix (column l / 4, rows 2 * (l % 4) and 2 * (l % 4) + 1).
inline void ldmatrix(unsigned* d, const void* row, int count, bool trans, const char* instruction) {
  const unsigned long long address = reinterpret_cast<unsigned long long>(row);
  const unsigned mine[2] = {static_cast<unsigned>(address), static_cast<unsigned>(address >> 32)};
  const WarpOperands<2> all = exchange(mine, instruction);
  auto row_of = [&](int matrix, int r) -> const unsigned char* {
    const unsigned l = static_cast<unsigned>(matrix * 8 + r);
    const unsigned long long a = all.lane[l][0] | (static_cast<unsigned long long>(all.lane[l][1]) << 32);
    if (a % 16 != 0) fail(instruction, "a row address is not 16-byte aligned");
    return reinterpret_cast<const unsigned char*>(a);
  };
  auto element = [&](int matrix, int r, int c) {
    unsigned short e;
    std::memcpy(&e, row_of(matrix, r) + 2 * c, 2);
    return static_cast<unsigned>(e);
  };
  const int l = static_cast<int>(lane_id());
  for (int i = 0; i < count; ++i) {
    const int first = 2 * (l % 4), second = first + 1, other = l / 4;
    const unsigned lo = trans ? element(i, first, other) : element(i, other, first);
    const unsigned hi = trans ? element(i, second, other) : element(i, other, second);
    d[i] = lo | (hi << 16);
  }
}

// This thread's cp.async copies (ISA, "Data Movement and Conversion Instructions:
// cp.async", "cp.async.commit_group", "cp.async.wait_group / cp.async.wait_all"): the
// copies not yet in a group, then the committed groups, oldest first.
struct AsyncCopy {
  unsigned char* dst;
  unsigned char bytes[16];
  int size;
};
struct AsyncCopies {
  std::vector<AsyncCopy> uncommitted;
  std::deque<std::vector<AsyncCopy>> groups;
};
inline thread_local AsyncCopies async_copies;

inline void land(const std::vector<AsyncCopy>& copies) {
  for (const AsyncCopy& c : copies) std::memcpy(c.dst, c.bytes, static_cast<size_t>(c.size));
}

}  // namespace te_emu::ptx

// cp.async.cg.shared.global [dst], [src], 16: reads 16 bytes (both addresses aligned to
// the copy's size), lands them at a later wait.
static inline void te_ptx_cp_async_16(void* dst, const void* src) {
  const char* const instruction = "cp.async.cg.shared.global";
  if (reinterpret_cast<unsigned long long>(dst) % 16 || reinterpret_cast<unsigned long long>(src) % 16)
    te_emu::ptx::fail(instruction, "an address is not aligned to the copy's 16 bytes");
  te_emu::ptx::AsyncCopy c;
  c.dst = static_cast<unsigned char*>(dst);
  std::memcpy(c.bytes, src, 16);
  c.size = 16;
  te_emu::ptx::async_copies.uncommitted.push_back(c);
}
// cp.async.commit_group: the copies issued since the last commit become one group.
static inline void te_ptx_cp_async_commit_group() {
  te_emu::ptx::AsyncCopies& q = te_emu::ptx::async_copies;
  q.groups.push_back(std::move(q.uncommitted));
  q.uncommitted.clear();
}
// cp.async.wait_group n: waits until at most n of the most recent groups are pending.
static inline void te_ptx_cp_async_wait_group(int n) {
  te_emu::ptx::AsyncCopies& q = te_emu::ptx::async_copies;
  while (q.groups.size() > static_cast<size_t>(n)) {
    te_emu::ptx::land(q.groups.front());
    q.groups.pop_front();
  }
}
// cp.async.wait_all: cp.async.commit_group, then cp.async.wait_group 0.
static inline void te_ptx_cp_async_wait_all() {
  te_ptx_cp_async_commit_group();
  te_ptx_cp_async_wait_group(0);
}

static inline void te_ptx_mma_m16n8k16_f16(float* d, const unsigned* a, const unsigned* b) {
  te_emu::ptx::mma_m16n8k16(d, a, b, te_emu::ptx::f16_to_float, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
}
static inline void te_ptx_mma_m16n8k16_bf16(float* d, const unsigned* a, const unsigned* b) {
  te_emu::ptx::mma_m16n8k16(d, a, b, te_emu::ptx::bf16_to_float, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
}
static inline void te_ptx_ldmatrix_x1(unsigned* d, const void* row) {
  te_emu::ptx::ldmatrix(d, row, 1, false, "ldmatrix.sync.aligned.m8n8.x1.shared.b16");
}
static inline void te_ptx_ldmatrix_x2(unsigned* d, const void* row) {
  te_emu::ptx::ldmatrix(d, row, 2, false, "ldmatrix.sync.aligned.m8n8.x2.shared.b16");
}
static inline void te_ptx_ldmatrix_x4(unsigned* d, const void* row) {
  te_emu::ptx::ldmatrix(d, row, 4, false, "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
}
static inline void te_ptx_ldmatrix_x1_trans(unsigned* d, const void* row) {
  te_emu::ptx::ldmatrix(d, row, 1, true, "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16");
}
static inline void te_ptx_ldmatrix_x2_trans(unsigned* d, const void* row) {
  te_emu::ptx::ldmatrix(d, row, 2, true, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16");
}
static inline void te_ptx_ldmatrix_x4_trans(unsigned* d, const void* row) {
  te_emu::ptx::ldmatrix(d, row, 4, true, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16");
}

// Hopper (sm_90/sm_90a): wgmma, TMA, mbarrier.
#include "hopper_emulation.h"
