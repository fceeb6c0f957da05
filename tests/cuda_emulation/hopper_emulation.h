// Hopper's asynchronous instructions (sm_90 / sm_90a) emulated on the CPU: warpgroup MMA
// (wgmma) with shared-memory matrix descriptors, TMA tensor copies (cp.async.bulk.tensor)
// and the mbarriers they complete on, from NVIDIA's "Parallel Thread Execution ISA"
// (version 8.x; each function names its section) and, for the tensor map, the CUDA
// driver API's cuTensorMapEncodeTiled documentation (cuda.h). Included by
// ptx_emulation.h; the te_ptx_* functions replace those te's .cu files define.
//
// Shared memory: the emulation maps the block's dynamic shared memory (1024-byte aligned)
// to shared addresses 0..size (__cvta_generic_to_shared); an address elsewhere is an
// error, so a Hopper kernel keeps its operands there, as te's do.
//
// What the ISA leaves open, the emulation fixes at its latest or strictest:
//  - wgmma.mma_async reads its shared-memory operands and writes its accumulators when a
//    wgmma.wait_group completes it, not before: accumulators read before the wait hold
//    their old values, and operands overwritten before it are read overwritten.
//  - A wgmma.mma_async needs a wgmma.fence since the warpgroup last waited (the ISA
//    requires one between any register access and the wgmma that uses the registers).
//  - TMA copies land in shared memory when a thread observes the completion of their
//    mbarrier's phase (mbarrier.try_wait), not before: a thread that reads without
//    waiting reads the old contents.
//  - Swizzled layouts are computed from the shared address (bits [4, 4 + b) XOR bits
//    [7, 7 + b), b = 1, 2, 3 for 32, 64, 128-byte swizzles), the same for TMA and wgmma;
//    a swizzled operand must start in the first row of its 8-row pattern (descriptor base
//    offset 0), and a swizzled TMA destination on a pattern boundary.
#pragma once
#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_emulation.h"
#include "tensor_map.h"

#define TE_PTX_SM90A 1

// ---- Shared addresses (ISA: "Generic Addressing"; CUDA's __cvta_generic_to_shared) ----
inline std::size_t __cvta_generic_to_shared(const void* p) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  if (te_emu::dynamic_shared == nullptr || c < te_emu::dynamic_shared ||
      c > te_emu::dynamic_shared + te_emu::dynamic_shared_bytes)
    te_emu::ptx::fail("cvta.to.shared", "the emulation maps only the block's dynamic shared memory");
  return static_cast<std::size_t>(c - te_emu::dynamic_shared);
}

namespace te_emu::hopper {

using ptx::fail;

// The bytes at shared address [address, address + bytes), checked to lie in the block's
// dynamic shared memory.
inline unsigned char* shared_bytes(unsigned long long address, unsigned long long bytes, const char* instruction) {
  if (address + bytes > dynamic_shared_bytes) fail(instruction, "a shared-memory operand lies outside the block's");
  return dynamic_shared + address;
}

// The swizzle of a shared address: the 16-byte chunk bits [4, 4 + b) XOR the row bits
// [7, 7 + b), b = 3, 2, 1 for the 128, 64 and 32-byte modes (width in bytes; 0: none).
inline unsigned long long swizzled(unsigned long long address, unsigned width) {
  if (width == 0) return address;
  const unsigned long long mask = width / 16 - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

// ---- mbarrier (ISA: "Parallel Synchronization and Communication Instructions: mbarrier") ----
struct PendingChunk {
  unsigned char* dst;
  std::array<unsigned char, 16> bytes;
};
struct Mbarrier {
  unsigned long long completed = 0;      // phases completed; the current phase's parity is completed % 2
  int expected = 0, pending = 0;         // arrivals per phase, and those the current phase awaits
  long long tx = 0;                      // tx-count: bytes expected minus bytes completed
  std::vector<PendingChunk> current;     // copies completing on the current phase
  std::vector<PendingChunk> unobserved;  // copies of completed phases not yet landed
};
inline std::mutex mbarrier_mutex;
inline std::map<const void*, Mbarrier> mbarriers;  // by the 64-bit object's address

inline Mbarrier& mbarrier_at(const void* bar, const char* instruction) {
  if (reinterpret_cast<unsigned long long>(bar) % 8) fail(instruction, "the mbarrier object is not 8-byte aligned");
  __cvta_generic_to_shared(bar);  // in shared memory
  auto it = mbarriers.find(bar);
  if (it == mbarriers.end()) fail(instruction, "the mbarrier object was never initialized (mbarrier.init)");
  return it->second;
}

// The phase completes when every expected arrival has arrived and the tx-count is zero;
// the next phase then expects the same arrivals.
inline void complete_if_done(Mbarrier& m) {
  if (m.pending != 0 || m.tx != 0) return;
  m.unobserved.insert(m.unobserved.end(), m.current.begin(), m.current.end());
  m.current.clear();
  ++m.completed;
  m.pending = m.expected;
}

inline void arrive(Mbarrier& m, const char* instruction) {
  if (m.pending <= 0) fail(instruction, "more arrivals than the phase expects");
  --m.pending;
  complete_if_done(m);
}

// Time a thread has been waiting on an incomplete phase (a deadlock after 60 s).
inline thread_local std::chrono::steady_clock::time_point waiting_since;
inline thread_local bool waiting = false;

// ---- wgmma (ISA: "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions") ----
struct PendingMma {
  float* d;
  int n;
  unsigned long long desc_a, desc_b;
  bool scale_d;
  bool trans_b;  // imm-trans-b: B MN-major
  float (*to_float)(unsigned short);
  const char* instruction;
  // A from registers: the warpgroup's 128 threads' 4 registers each, as issued (empty:
  // A from desc_a), and this thread's registers, which must hold the same at completion
  // (the array may be out of its C++ scope by then: the harness compiles with
  // -fstack-reuse=none, so its stack slot still holds the kernel's last write).
  std::vector<std::array<unsigned, 4>> a_registers;
  const unsigned* a = nullptr;
};
struct WarpgroupMmas {
  std::vector<PendingMma> uncommitted;
  std::vector<std::vector<PendingMma>> groups;  // committed, oldest first
  bool fenced = false;                          // a wgmma.fence since the last wait
};
inline thread_local WarpgroupMmas warpgroup_mmas;

// Matrix descriptor (ISA: "Matrix Descriptor Format"): start address bits 0-13, leading
// dimension byte offset 16-29, stride dimension byte offset 32-45 (each in 16-byte units),
// base offset 49-51, swizzle mode 62-63 (0 none, 1 128-byte, 2 64-byte, 3 32-byte).
struct Descriptor {
  unsigned long long start, leading, stride;
  unsigned base_offset, swizzle_width;
};
inline Descriptor decode(unsigned long long desc) {
  static const unsigned widths[4] = {0, 128, 64, 32};
  return {(desc & 0x3fff) << 4, ((desc >> 16) & 0x3fff) << 4, ((desc >> 32) & 0x3fff) << 4,
          static_cast<unsigned>((desc >> 49) & 7), widths[desc >> 62]};
}

// The shared address of element (r, k) of a K-major operand (ISA: "Shared Memory Matrix
// Layout"): 8 x 16-byte core matrices. Without swizzling, row r % 8 of core matrix
// (r / 8, k / 8) lies at start + (r / 8) * stride + (k / 8) * leading + (r % 8) * 16;
// with a swizzle of width w, row r of the operand is w bytes after row r - 1 within an
// 8-row pattern, patterns `stride` apart, and the address is swizzled.
inline unsigned long long element_address(const Descriptor& d, unsigned r, unsigned k, const char* instruction) {
  if (d.swizzle_width == 0) return d.start + (r / 8) * d.stride + (k / 8) * d.leading + (r % 8) * 16 + (k % 8) * 2;
  const unsigned long long in_row = d.start % d.swizzle_width;
  if (d.base_offset != 0 || d.start % (8ull * d.swizzle_width) >= d.swizzle_width)
    fail(instruction, "a swizzled operand must start in the first row of its swizzle pattern (base offset 0)");
  if (in_row + 2 * 16 > d.swizzle_width) fail(instruction, "an operand's 16 k elements cross its swizzle row");
  return swizzled(d.start + (r / 8) * d.stride + (r % 8) * d.swizzle_width + 2 * k, d.swizzle_width);
}

// The shared address of element (k, j) of an MN-major operand (B with imm-trans-b; ISA:
// "Shared Memory Matrix Layout", the MN-major canonical layouts), 2-byte elements, T = 8
// elements (16 bytes). Without swizzling: 8 x 16-byte core matrices whose rows run along
// MN: j % 8 within a row, k % 8 the row (16 bytes apart), groups of 8 along MN `stride`
// apart and of 8 along K `leading` apart. With a swizzle of width w bytes: w / 2
// consecutive elements along MN in a row, rows k % 8 w bytes apart, groups of 8 rows
// `stride` apart, groups of w / 2 along MN `leading` apart; the address is swizzled.
inline unsigned long long element_address_mn(const Descriptor& d, unsigned k, unsigned j, const char* instruction) {
  if (d.swizzle_width == 0) return d.start + (j / 8) * d.stride + (k / 8) * d.leading + (k % 8) * 16 + (j % 8) * 2;
  if (d.base_offset != 0 || d.start % (8ull * d.swizzle_width) != 0)
    fail(instruction, "a swizzled MN-major operand must start at the first row and column of a swizzle pattern");
  const unsigned per_row = d.swizzle_width / 2;
  return swizzled(
      d.start + (j / per_row) * d.leading + (k / 8) * d.stride + (k % 8) * d.swizzle_width + 2 * (j % per_row),
      d.swizzle_width);
}

inline float bits_to_float(unsigned long long address, float (*to_float)(unsigned short), const char* instruction) {
  unsigned short bits;
  std::memcpy(&bits, shared_bytes(address, 2, instruction), 2);
  return to_float(bits);
}

inline float operand(const Descriptor& d, unsigned r, unsigned k, float (*to_float)(unsigned short),
                     const char* instruction) {
  return bits_to_float(element_address(d, r, k, instruction), to_float, instruction);
}

// D (64 x n) = A (64 x 16) * B (16 x n) [+ D]: this thread's n / 2 accumulators, as the
// ISA's "Register Fragments" figure for .m64nNk16 lays D out: warp w of the warpgroup
// holds rows 16w..16w+15; accumulator i of lane l is row 16w + l / 4 + 8 * ((i / 2) % 2),
// column 8 * (i / 4) + 2 * (l % 4) + i % 2. Sums in float, k in order.
//
// A from registers (the ISA's wgmma A register figure for .m64nNk16, each warp's 16 rows as
// mma.m16n8k16's A fragment): warp w holds rows 16w..16w+15; lane l's register j holds
// row 16w + l / 4 + 8 (j % 2), columns 2 (l % 4) + 8 (j / 2) in its low half and that + 1
// in its high half.
inline float register_operand(const PendingMma& m, unsigned row, unsigned k) {
  const unsigned lane = 32 * (row / 16) + 4 * (row % 8) + (k % 8) / 2;
  const unsigned reg = (row % 16) / 8 + 2 * (k / 8);
  return m.to_float(static_cast<unsigned short>(m.a_registers[lane][reg] >> (16 * (k % 2))));
}

inline void complete(const PendingMma& m) {
  const bool registers_a = !m.a_registers.empty();
  if (registers_a)
    for (int r = 0; r < 4; ++r)
      if (m.a[r] != m.a_registers[linear_thread % 128][r])
        fail(m.instruction,
             "A's registers changed before the wgmma completed (ISA: they may not be modified "
             "until wgmma.wait_group completes it)");
  const Descriptor a = registers_a ? Descriptor{} : decode(m.desc_a), b = decode(m.desc_b);
  const unsigned t = linear_thread % 128, warp = t / 32, lane = t % 32;
  for (int i = 0; i < m.n / 2; ++i) {
    const unsigned row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    float sum = m.scale_d ? m.d[i] : 0.0f;
    for (unsigned k = 0; k < 16; ++k)
      sum =
          sum + (registers_a ? register_operand(m, row, k) : operand(a, row, k, m.to_float, m.instruction)) *
                    (m.trans_b ? bits_to_float(element_address_mn(b, k, col, m.instruction), m.to_float, m.instruction)
                               : operand(b, col, k, m.to_float, m.instruction));
    m.d[i] = sum;
  }
}

// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} d, a-desc, b-desc,
// scale-d, 1, 1, 0, trans-b: A K-major, B K-major (trans-b 0) or MN-major (1) in shared
// memory. The descriptors and scale-d must be the warpgroup's own (the same in its 128
// threads).
inline void mma_async(float* d, int n, unsigned long long desc_a, unsigned long long desc_b, int scale_d, bool trans_b,
                      float (*to_float)(unsigned short), const char* instruction) {
  if (n < 8 || n > 256 || n % 8) fail(instruction, "N must be a multiple of 8 in 8..256");
  if (!warpgroup_mmas.fenced)
    fail(instruction, "no wgmma.fence since the accumulators were last accessed (ISA: wgmma.fence)");
  const unsigned mine[5] = {static_cast<unsigned>(desc_a), static_cast<unsigned>(desc_a >> 32),
                            static_cast<unsigned>(desc_b), static_cast<unsigned>(desc_b >> 32),
                            static_cast<unsigned>(scale_d != 0)};
  const ptx::WarpOperands<5, 128> all = ptx::exchange<5, 128>(mine, instruction);
  for (unsigned t = 0; t < 128; ++t)
    for (int i = 0; i < 5; ++i)
      if (all.lane[t][i] != mine[i]) fail(instruction, "the warpgroup's threads give different descriptors or scale-d");
  warpgroup_mmas.uncommitted.push_back(
      {d, n, desc_a, desc_b, scale_d != 0, trans_b, to_float, instruction, {}, nullptr});
}

// The same with A from registers (a: this thread's 4 registers of the warpgroup's
// fragment, read here from every thread of the warpgroup).
inline void mma_async_rs(float* d, int n, const unsigned* a, unsigned long long desc_b, int scale_d, bool trans_b,
                         float (*to_float)(unsigned short), const char* instruction) {
  if (n < 8 || n > 256 || n % 8) fail(instruction, "N must be a multiple of 8 in 8..256");
  if (!warpgroup_mmas.fenced)
    fail(instruction, "no wgmma.fence since the registers were last accessed (ISA: wgmma.fence)");
  const unsigned mine[7] = {a[0],
                            a[1],
                            a[2],
                            a[3],
                            static_cast<unsigned>(desc_b),
                            static_cast<unsigned>(desc_b >> 32),
                            static_cast<unsigned>(scale_d != 0)};
  const ptx::WarpOperands<7, 128> all = ptx::exchange<7, 128>(mine, instruction);
  std::vector<std::array<unsigned, 4>> registers(128);
  for (unsigned t = 0; t < 128; ++t) {
    for (int i = 4; i < 7; ++i)
      if (all.lane[t][i] != mine[i]) fail(instruction, "the warpgroup's threads give different descriptors or scale-d");
    for (int r = 0; r < 4; ++r) registers[t][r] = all.lane[t][r];
  }
  warpgroup_mmas.uncommitted.push_back(
      {d, n, 0, desc_b, scale_d != 0, trans_b, to_float, instruction, std::move(registers), a});
}

}  // namespace te_emu::hopper

// wgmma.fence.sync.aligned: orders the warpgroup's register accesses before the wgmmas
// that follow.
static inline void te_ptx_wgmma_fence() { te_emu::hopper::warpgroup_mmas.fenced = true; }
// wgmma.commit_group.sync.aligned: the wgmmas issued since the last commit become one group.
static inline void te_ptx_wgmma_commit_group() {
  te_emu::hopper::WarpgroupMmas& w = te_emu::hopper::warpgroup_mmas;
  w.groups.push_back(std::move(w.uncommitted));
  w.uncommitted.clear();
}
// wgmma.wait_group.sync.aligned N: completes the oldest groups until at most N are pending.
template <int N>
static inline void te_ptx_wgmma_wait_group() {
  te_emu::hopper::WarpgroupMmas& w = te_emu::hopper::warpgroup_mmas;
  while (w.groups.size() > static_cast<std::size_t>(N)) {
    for (const te_emu::hopper::PendingMma& m : w.groups.front()) te_emu::hopper::complete(m);
    w.groups.erase(w.groups.begin());
  }
  w.fenced = false;
}
// The compiler-only fence te puts around wgmma's accumulators: nothing to emulate.
static inline void te_ptx_wgmma_fence_registers(float*, int) {}

// One wgmma form: te_ptx_wgmma_m64n<n>k16_f32_<type><suffix>, B MN-major when trans_b.
#define TE_EMU_WGMMA_FORM(n, type, suffix, trans_b)                                                         \
  static inline void te_ptx_wgmma_m64n##n##k16_f32_##type##suffix(float* d, unsigned long long a,           \
                                                                  unsigned long long b, int scale_d) {      \
    te_emu::hopper::mma_async(d, n, a, b, scale_d, trans_b, te_emu::ptx::type##_to_float,                   \
                              trans_b ? "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." #type "." #type   \
                                        " (imm-trans-b 1)"                                                  \
                                      : "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." #type "." #type); \
  }
// The form with A from registers: te_ptx_wgmma_m64n<n>k16_f32_<type>_rs<suffix>.
#define TE_EMU_WGMMA_RS_FORM(n, type, suffix, trans_b)                                                                 \
  static inline void te_ptx_wgmma_m64n##n##k16_f32_##type##_rs##suffix(float* d, const unsigned* a,                    \
                                                                       unsigned long long b, int scale_d) {            \
    te_emu::hopper::mma_async_rs(                                                                                      \
        d, n, a, b, scale_d, trans_b, te_emu::ptx::type##_to_float,                                                    \
        trans_b ? "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." #type "." #type " (A in registers, imm-trans-b 1)" \
                : "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." #type "." #type " (A in registers)");              \
  }
#define TE_EMU_WGMMA(n)                   \
  TE_EMU_WGMMA_FORM(n, f16, , false)      \
  TE_EMU_WGMMA_FORM(n, bf16, , false)     \
  TE_EMU_WGMMA_FORM(n, f16, _tb, true)    \
  TE_EMU_WGMMA_FORM(n, bf16, _tb, true)   \
  TE_EMU_WGMMA_RS_FORM(n, f16, , false)   \
  TE_EMU_WGMMA_RS_FORM(n, bf16, , false)  \
  TE_EMU_WGMMA_RS_FORM(n, f16, _tb, true) \
  TE_EMU_WGMMA_RS_FORM(n, bf16, _tb, true)
TE_EMU_WGMMA(8)
TE_EMU_WGMMA(16)
TE_EMU_WGMMA(24)
TE_EMU_WGMMA(32)
TE_EMU_WGMMA(40)
TE_EMU_WGMMA(48)
TE_EMU_WGMMA(56)
TE_EMU_WGMMA(64)
TE_EMU_WGMMA(72)
TE_EMU_WGMMA(80)
TE_EMU_WGMMA(88)
TE_EMU_WGMMA(96)
TE_EMU_WGMMA(104)
TE_EMU_WGMMA(112)
TE_EMU_WGMMA(120)
TE_EMU_WGMMA(128)
TE_EMU_WGMMA(136)
TE_EMU_WGMMA(144)
TE_EMU_WGMMA(152)
TE_EMU_WGMMA(160)
TE_EMU_WGMMA(168)
TE_EMU_WGMMA(176)
TE_EMU_WGMMA(184)
TE_EMU_WGMMA(192)
TE_EMU_WGMMA(200)
TE_EMU_WGMMA(208)
TE_EMU_WGMMA(216)
TE_EMU_WGMMA(224)
TE_EMU_WGMMA(232)
TE_EMU_WGMMA(240)
TE_EMU_WGMMA(248)
TE_EMU_WGMMA(256)
#undef TE_EMU_WGMMA
#undef TE_EMU_WGMMA_FORM
#undef TE_EMU_WGMMA_RS_FORM

// setmaxnreg.{inc,dec}.sync.aligned.u32 N (ISA: "setmaxnreg"): N in 24..256, a multiple
// of 8. "A pool of available registers is maintained per-CTA": .dec releases the warp's
// registers above N into it, and .inc "blocks the execution until enough registers are
// available in the CTA's register pool" (what other warps released, not the
// multiprocessor's free registers). A thread starts with the registers ptxas gives a
// setmaxnreg kernel, its __launch_bounds__ cap: 64K / threads in multiples of 8, at most
// 256 (read on an H200, 2026-11-29: 384 threads 168, 640 threads 96; four consumer
// warpgroups asking 112 each there hung). A request nothing will meet stops the program
// here rather than hanging.
namespace te_emu::hopper {
inline int launch_registers() {
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  return static_cast<int>(std::min(256u, 65536u / threads / 8 * 8));
}
inline int& current_registers(WarpExchange& x) {
  int& mine = x.thread_registers[linear_thread];
  if (mine == 0) mine = launch_registers();
  return mine;
}
}  // namespace te_emu::hopper

template <int N>
static inline void te_ptx_setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: 24..256, a multiple of 8");
  te_emu::WarpExchange& x = *te_emu::current_exchange;
  std::unique_lock<std::mutex> lock(x.register_mutex);
  int& mine = te_emu::hopper::current_registers(x);
  if (N < mine) te_emu::hopper::fail("setmaxnreg.inc", "the count is below the thread's current registers");
  const long long more = N - mine;
  if (!x.register_cv.wait_for(lock, std::chrono::seconds(20), [&] { return x.released_registers >= more; }))
    te_emu::hopper::fail("setmaxnreg.inc",
                         "the block's warps never released the registers it asks (the CTA's pool holds only what "
                         "setmaxnreg.dec gave back): on a GPU this kernel hangs");
  x.released_registers -= more;
  mine = N;
}
template <int N>
static inline void te_ptx_setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: 24..256, a multiple of 8");
  te_emu::WarpExchange& x = *te_emu::current_exchange;
  std::lock_guard<std::mutex> lock(x.register_mutex);
  int& mine = te_emu::hopper::current_registers(x);
  if (N > mine) te_emu::hopper::fail("setmaxnreg.dec", "the count is above the thread's current registers");
  x.released_registers += mine - N;
  mine = N;
  x.register_cv.notify_all();
}

// bar.sync id, threads (ISA: "bar, barrier"): id 1..15 here (0 is __syncthreads()'s),
// threads a multiple of the warp size; the barrier completes when that many arrived.
static inline void te_ptx_bar_sync(unsigned id, unsigned threads) {
  if (id == 0 || id > 15 || threads == 0 || threads % 32 != 0)
    te_emu::hopper::fail("bar.sync", "the barrier is 1..15 and its thread count a nonzero multiple of 32");
  te_emu::current_exchange->named_barrier(id, threads).arrive_and_wait();
}

// fence.proxy.async.shared::cta: the emulation has one memory proxy, nothing to order.
static inline void te_ptx_fence_proxy_async() {}

// mbarrier.init.shared::cta.b64 [bar], count: phase 0, count arrivals expected, tx-count 0.
static inline void te_ptx_mbarrier_init(unsigned long long* bar, unsigned count) {
  const char* const instruction = "mbarrier.init.shared::cta.b64";
  if (reinterpret_cast<unsigned long long>(bar) % 8) te_emu::ptx::fail(instruction, "not 8-byte aligned");
  __cvta_generic_to_shared(bar);
  if (count < 1 || count > (1u << 20) - 1) te_emu::ptx::fail(instruction, "count must be in 1..2^20 - 1");
  std::lock_guard<std::mutex> lock(te_emu::hopper::mbarrier_mutex);
  te_emu::hopper::Mbarrier& m = te_emu::hopper::mbarriers[bar];
  m = te_emu::hopper::Mbarrier();
  m.expected = m.pending = static_cast<int>(count);
}
// mbarrier.arrive.shared::cta.b64 _, [bar]: one arrival.
static inline void te_ptx_mbarrier_arrive(unsigned long long* bar) {
  const char* const instruction = "mbarrier.arrive.shared::cta.b64";
  std::lock_guard<std::mutex> lock(te_emu::hopper::mbarrier_mutex);
  te_emu::hopper::arrive(te_emu::hopper::mbarrier_at(bar, instruction), instruction);
}
// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes: expect-tx(bytes), then arrive.
static inline void te_ptx_mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  const char* const instruction = "mbarrier.arrive.expect_tx.shared::cta.b64";
  std::lock_guard<std::mutex> lock(te_emu::hopper::mbarrier_mutex);
  te_emu::hopper::Mbarrier& m = te_emu::hopper::mbarrier_at(bar, instruction);
  m.tx += bytes;
  te_emu::hopper::arrive(m, instruction);
}
// mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity: whether the phase of that
// parity (the current phase or the one before it) has completed. A true answer makes the
// phase's TMA copies visible: they land now if no thread has observed them yet.
static inline bool te_ptx_mbarrier_try_wait_parity(unsigned long long* bar, unsigned parity) {
  const char* const instruction = "mbarrier.try_wait.parity.shared::cta.b64";
  {
    std::lock_guard<std::mutex> lock(te_emu::hopper::mbarrier_mutex);
    te_emu::hopper::Mbarrier& m = te_emu::hopper::mbarrier_at(bar, instruction);
    if (m.completed % 2 != (parity & 1u)) {
      for (const te_emu::hopper::PendingChunk& c : m.unobserved) std::memcpy(c.dst, c.bytes.data(), 16);
      m.unobserved.clear();
      te_emu::hopper::waiting = false;
      return true;
    }
  }
  const auto now = std::chrono::steady_clock::now();
  if (!te_emu::hopper::waiting) {
    te_emu::hopper::waiting = true;
    te_emu::hopper::waiting_since = now;
  } else if (now - te_emu::hopper::waiting_since > std::chrono::seconds(60)) {
    te_emu::ptx::fail(instruction, "deadlock: the phase did not complete in 60 s");
  }
  std::this_thread::yield();
  return false;
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// [dst], [map, {c0, c1}], [bar] (ISA: "cp.async.bulk.tensor"): the box of the tensor map
// whose first element is at coordinates (c0, c1) (c0 the innermost dimension) into shared
// memory at dst, rows of box[0] elements one after another, swizzled as the map says;
// elements outside the tensor are zeros. The copy's bytes complete the barrier's current
// phase's transactions; the data lands when a thread observes the phase completed.
static inline void te_ptx_tma_load_2d(void* dst, const void* map, int c0, int c1, unsigned long long* bar) {
  const char* const instruction = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
  te_emu::TensorMapFields f;
  std::memcpy(&f, map, sizeof f);
  if (reinterpret_cast<unsigned long long>(map) % 64 || f.magic != te_emu::kTensorMapMagic)
    te_emu::ptx::fail(instruction, "the tensor map is not one cuTensorMapEncodeTiled made (64-byte aligned)");
  if (f.rank != 2) te_emu::ptx::fail(instruction, "a .2d copy of a tensor map whose rank is not 2");
  const unsigned long long address = __cvta_generic_to_shared(dst);
  const unsigned alignment = f.swizzle_width ? 8 * f.swizzle_width : 128;
  if (address % alignment)
    te_emu::ptx::fail(instruction, f.swizzle_width ? "a swizzled destination must start on its pattern's boundary"
                                                   : "the destination is not 128-byte aligned");
  const unsigned row_bytes = f.box[0] * f.element_bytes;
  if (f.swizzle_width != 0 && row_bytes != f.swizzle_width)
    te_emu::ptx::fail(instruction, "a swizzled box's rows must fill the swizzle's span (as te's do)");
  const unsigned long long bytes = 1ull * row_bytes * f.box[1];
  te_emu::hopper::shared_bytes(address, bytes, instruction);
  std::vector<te_emu::hopper::PendingChunk> chunks;
  for (unsigned r = 0; r < f.box[1]; ++r)
    for (unsigned chunk = 0; chunk < row_bytes / 16; ++chunk) {
      te_emu::hopper::PendingChunk c;
      const unsigned long long at = address + 1ull * r * row_bytes + 16 * chunk;
      c.dst = te_emu::dynamic_shared + te_emu::hopper::swizzled(at, f.swizzle_width);
      for (unsigned b = 0; b < 16; b += f.element_bytes) {
        const long long x = c0 + static_cast<long long>((16 * chunk + b) / f.element_bytes), y = c1 + r;
        const bool inside = x >= 0 && y >= 0 && static_cast<unsigned long long>(x) < f.dims[0] &&
                            static_cast<unsigned long long>(y) < f.dims[1];
        if (inside)
          std::memcpy(&c.bytes[b], f.global + x * f.strides[0] + y * f.strides[1], f.element_bytes);
        else
          std::memset(&c.bytes[b], 0, f.element_bytes);
      }
      chunks.push_back(c);
    }
  std::lock_guard<std::mutex> lock(te_emu::hopper::mbarrier_mutex);
  te_emu::hopper::Mbarrier& m = te_emu::hopper::mbarrier_at(bar, instruction);
  m.current.insert(m.current.end(), chunks.begin(), chunks.end());
  m.tx -= static_cast<long long>(bytes);
  te_emu::hopper::complete_if_done(m);
}
