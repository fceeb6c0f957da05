#include "codegen_cuda_src/wgmma_helpers.h"

#include <fmt/format.h>

#include "codegen_cuda_src/ptx_hopper.h"
#include "codegen_cuda_src/ptx_instructions.h"

namespace te::cuda {

namespace {

// The thread's accumulator i of the 64 x n tile (the ISA's wgmma D figure): warp w of the
// warpgroup holds rows 16w..16w+15, lane l row l / 4 (+ 8 for i % 4 >= 2), columns
// 8 (i / 4) + 2 (l % 4) + i % 2.
const char* const kPlace = "  const unsigned te_t = threadIdx.x & 127u, te_warp = te_t >> 5, te_lane = te_t & 31u;\n";
const char* const kRowCol =
    "    const unsigned row = 16u * te_warp + (te_lane >> 2) + 8u * ((i >> 1) & 1u);\n"
    "    const unsigned col = 8u * (i >> 2) + 2u * (te_lane & 3u) + (i & 1u);\n";

// A wgmma matrix descriptor (ISA: "Matrix Descriptor Format") for a K-major tile of a
// shared buffer swizzled by `swizzle` bytes, its rows that wide: start address, leading
// byte offset 16 (unused when swizzled), stride byte offset 8 rows, the swizzle mode.
const char* const kDescriptor =
    "// The wgmma matrix descriptor of a K-major tile at p of a shared buffer swizzled by\n"
    "// `swizzle` bytes (rows that wide): start, leading offset 16 (unused when swizzled),\n"
    "// stride offset 8 rows (one swizzle pattern), mode 1/2/3 for 128/64/32 bytes.\n"
    "#if TE_PTX(900) && TE_PTX_SM90A\n"
    "static __device__ __forceinline__ unsigned long long te_wgmma_descriptor(const void* p, int swizzle) {\n"
    "  const unsigned long long address = (unsigned long long)__cvta_generic_to_shared(p);\n"
    "  const unsigned long long mode = swizzle == 128 ? 1ull : swizzle == 64 ? 2ull : 3ull;\n"
    "  return ((address & 0x3ffffull) >> 4) | (1ull << 16) | ((unsigned long long)(8 * swizzle) >> 4 << 32) |\n"
    "         (mode << 62);\n"
    "}\n"
    "#endif\n";

// The descriptor of an MN-major tile (ISA: "Shared Memory Matrix Layout", MN-major with a
// swizzle): rows of k `swizzle` bytes apart within a column block, 8-row groups 8 rows
// apart (stride byte offset), column blocks of swizzle / 2 elements `block_bytes` apart
// (leading byte offset).
const char* const kDescriptorMn =
    "// The wgmma matrix descriptor of an MN-major tile at p (K x N, n in column blocks of\n"
    "// `swizzle` bytes, `block_bytes` apart) of a swizzled shared buffer: start, leading offset\n"
    "// the column blocks' distance, stride offset 8 rows (one swizzle pattern), the mode.\n"
    "#if TE_PTX(900) && TE_PTX_SM90A\n"
    "static __device__ __forceinline__ unsigned long long te_wgmma_descriptor_mn(const void* p, int swizzle,\n"
    "                                                                           int block_bytes) {\n"
    "  const unsigned long long address = (unsigned long long)__cvta_generic_to_shared(p);\n"
    "  const unsigned long long mode = swizzle == 128 ? 1ull : swizzle == 64 ? 2ull : 3ull;\n"
    "  return ((address & 0x3ffffull) >> 4) | ((unsigned long long)(block_bytes >> 4) << 16) |\n"
    "         ((unsigned long long)(8 * swizzle) >> 4 << 32) | (mode << 62);\n"
    "}\n"
    "#endif\n";

std::string element_mn_helper(const char* c_type) {
  return fmt::format(
      "// Element (k, j) of an MN-major tile at p (K x N, n in column blocks of `swizzle` bytes,\n"
      "// `block_bytes` apart) of a swizzled shared buffer.\n"
      "#if !(TE_PTX(900) && TE_PTX_SM90A)\n"
      "static __device__ __forceinline__ {0} te_wgmma_element_mn(const {0}* p, unsigned k, unsigned j, int swizzle,\n"
      "                                                        int block_bytes) {{\n"
      "  const unsigned w = (unsigned)swizzle / 2u;\n"
      "  const unsigned long long address = reinterpret_cast<unsigned long long>(p) + (j / w) * (unsigned)block_bytes "
      "+\n"
      "                                     k * (unsigned)swizzle + 2u * (j % w);\n"
      "  const unsigned long long mask = (unsigned long long)(swizzle / 16 - 1);\n"
      "  return *reinterpret_cast<const {0}*>(address ^ (((address >> 7) & mask) << 4));\n"
      "}}\n"
      "#endif\n",
      c_type);
}

// Element (r, k) of a K-major tile at p of a shared buffer swizzled by `swizzle` bytes:
// row r is r * swizzle bytes on, and the address goes through the swizzle (its bits
// [4, 4 + w) XOR [7, 7 + w)); the buffer starts on a pattern boundary, so the low bits
// of a generic address are those of its shared one.
// portable_only: only the portable path reads it (te_wgmma_element); else both paths
// (te_wgmma_element_any).
std::string element_helper(const char* c_type, bool portable_only = true) {
  return fmt::format(
      "// Element (r, k) of a K-major tile at p of a shared buffer swizzled by `swizzle` bytes.\n"
      "{1}"
      "static __device__ __forceinline__ {0} te_wgmma_element{2}(const {0}* p, unsigned r, unsigned k, int swizzle) "
      "{{\n"
      "  const unsigned long long address = reinterpret_cast<unsigned long long>(p) + r * (unsigned)swizzle + 2u * k;\n"
      "  const unsigned long long mask = (unsigned long long)(swizzle / 16 - 1);\n"
      "  return *reinterpret_cast<const {0}*>(address ^ (((address >> 7) & mask) << 4));\n"
      "}}\n"
      "{3}",
      c_type, portable_only ? "#if !(TE_PTX(900) && TE_PTX_SM90A)\n" : "", portable_only ? "" : "_any",
      portable_only ? "#endif\n" : "");
}

// The thread's element e (0..7) of the warpgroup's 64 x 16 A register fragment (the ISA's
// wgmma A register figure, each warp's 16 rows as mma.m16n8k16's A): warp w holds rows
// 16w..16w+15, lane l row l / 4 (+ 8 for e % 4 >= 2), column 2 (l % 4) + e % 2 (+ 8 for
// e >= 4).
const char* const kFragmentRowCol =
    "    const unsigned row = 16u * te_warp + (te_lane >> 2) + 8u * ((e >> 1) & 1u);\n"
    "    const unsigned col = 2u * (te_lane & 3u) + (e & 1u) + 8u * (e >> 2);\n";

std::string load_a(HelperSet& helpers, DataType t) {
  const bool bf16 = t.is_bfloat();
  const char* c_type = bf16 ? "__nv_bfloat16" : "__half";
  const std::string name = fmt::format("te_wgmma_load_a_{}", bf16 ? "bf16" : "f16");
  helpers.use_text(std::string("te_wgmma_element_any_") + c_type, element_helper(c_type, false));
  helpers.use_text(
      name, fmt::format("// wgmma's A from registers: a (this thread's 8 elements of the warpgroup's 64 x 16\n"
                        "// register fragment) = the K-major tile at s of a shared buffer swizzled by s_swizzle\n"
                        "// bytes.\n"
                        "{0} void {1}(const {2}* s, {2}* a, int s_swizzle) {{\n"
                        "{3}"
                        "#pragma unroll\n"
                        "  for (unsigned e = 0; e < 8u; ++e) {{\n"
                        "{4}"
                        "    a[e] = te_wgmma_element_any(s, row, col, s_swizzle);\n"
                        "  }}\n"
                        "}}\n",
                        kDeviceFunction, name, c_type, kPlace, kFragmentRowCol));
  return name;
}

// c += a * b: a a K-major shared tile (a descriptor) or, registers_a, the thread's part of
// the warpgroup's A register fragment; b K-major or (kn) MN-major.
std::string mma(HelperSet& helpers, DataType t, int n, bool kn, bool registers_a) {
  const bool bf16 = t.is_bfloat();
  const char* c_type = bf16 ? "__nv_bfloat16" : "__half";
  const char* to_float = bf16 ? "__bfloat162float" : "__half2float";
  const std::string name =
      fmt::format("te_wgmma_m64n{}k16_{}{}{}", n, bf16 ? "bf16" : "f16", registers_a ? "_rs" : "", kn ? "_kn" : "");
  const std::string ptx = registers_a ? use_wgmma_rs_ptx(helpers, t, n, kn) : use_wgmma_ptx(helpers, t, n, kn);
  const std::string fence = use_hopper_ptx(helpers, HopperInstruction::WgmmaFence);
  const std::string commit = use_hopper_ptx(helpers, HopperInstruction::WgmmaCommitGroup);
  const std::string registers = use_hopper_ptx(helpers, HopperInstruction::WgmmaFenceRegisters);
  if (!registers_a || !kn) {  // A or B K-major in shared memory: its descriptor, the portable sum's reads
    helpers.use_text("te_wgmma_descriptor", kDescriptor);
    helpers.use_text(std::string("te_wgmma_element_") + c_type, element_helper(c_type));
  }
  if (kn) {
    helpers.use_text("te_wgmma_descriptor_mn", kDescriptorMn);
    helpers.use_text(std::string("te_wgmma_element_mn_") + c_type, element_mn_helper(c_type));
  }
  const std::string b_desc =
      kn ? "te_wgmma_descriptor_mn(b, b_swizzle, b_block_bytes)" : "te_wgmma_descriptor(b, b_swizzle)";
  const std::string b_element =
      kn ? "te_wgmma_element_mn(b, k, col, b_swizzle, b_block_bytes)" : "te_wgmma_element(b, col, k, b_swizzle)";
  const std::string b_words =
      kn ? fmt::format("16 x {}, MN-major: column blocks b_block_bytes apart", n) : fmt::format("{} x 16, K-major", n);
  // The parts that differ with A's place: the comment, A's parameter and operand, and how
  // the portable sum reads A (elsewhere than sm_90a).
  const std::string comment =
      registers_a
          ? fmt::format(
                "// wgmma m64n{0}k16 with A from registers: c (this thread's {1} accumulators of the warpgroup's\n"
                "// 64 x {0} tile) += a (64 x 16: this thread's 8 elements of the warpgroup's register\n"
                "// fragment) x b ({2}) of a shared buffer swizzled by b_swizzle bytes. sm_90a: one\n"
                "// wgmma.mma_async, left in flight (a must not change until it completes); elsewhere each\n"
                "// thread sums its accumulators, A's elements from the lanes holding them (warp shuffles).\n",
                n, n / 2, b_words)
          : fmt::format(
                "// wgmma m64n{0}k16: c (this thread's {1} accumulators of the warpgroup's 64 x {0} tile) +=\n"
                "// a (64 x 16) x b ({2}), tiles of shared buffers swizzled by a_swizzle and\n"
                "// b_swizzle bytes. sm_90a: one wgmma.mma_async, left in flight (te_wgmma_wait_all before\n"
                "// the next barrier and the store); elsewhere each thread sums its accumulators from\n"
                "// shared memory, k in order.\n",
                n, n / 2, b_words);
  const char* a_swizzle = registers_a ? "" : " int a_swizzle,";
  const char* a_operand = registers_a ? "reinterpret_cast<const unsigned*>(a)" : "te_wgmma_descriptor(a, a_swizzle)";
  const char* place =
      registers_a ? "  const unsigned te_lane = threadIdx.x & 31u;  // the rows come from the lanes holding them\n"
                  : kPlace;
  const char* row_col =
      registers_a ? "    const unsigned col = 8u * (i >> 2) + 2u * (te_lane & 3u) + (i & 1u);  // (kRowCol's)\n"
                  : kRowCol;
  const std::string sum =
      registers_a
          ? fmt::format(
                "    for (unsigned k = 0; k < 16u; ++k) {{\n"
                "      // A(row, k) is element (k % 2) + 2 (row / 8 % 2) + 4 (k / 8) of lane 4 (row % 8) + k % 8 / 2.\n"
                "      const float a_rk = __shfl_sync(0xffffffffu, {0}(a[(k & 1u) + 2u * ((i >> 1) & 1u) + 4u * (k >> "
                "3)]),\n"
                "                                     (int)(4u * (te_lane >> 2) + ((k & 7u) >> 1)));\n"
                "      sum = sum + a_rk * {0}({1});\n"
                "    }}\n",
                to_float, b_element)
          : fmt::format(
                "    for (unsigned k = 0; k < 16u; ++k)\n"
                "      sum = sum + {0}(te_wgmma_element(a, row, k, a_swizzle)) * {0}({1});\n",
                to_float, b_element);
  helpers.use_text(name, fmt::format("{0}"
                                     "{1} void {2}(const {3}* a, const {3}* b, float* c,{4} int b_swizzle{5}) {{\n"
                                     "#if TE_PTX(900) && TE_PTX_SM90A\n"
                                     "  {6}(c, {7});\n"
                                     "  {8}();\n"
                                     "  {9}(c, {10}, {11}, 1);\n"
                                     "  {12}();\n"
                                     "#else\n"
                                     "{13}"
                                     "#pragma unroll\n"
                                     "  for (unsigned i = 0; i < {7}u; ++i) {{\n"
                                     "{14}"
                                     "    float sum = c[i];\n"
                                     "#pragma unroll\n"
                                     "{15}"
                                     "    c[i] = sum;\n"
                                     "  }}\n"
                                     "#endif\n"
                                     "}}\n",
                                     comment, kDeviceFunction, name, c_type, a_swizzle, kn ? ", int b_block_bytes" : "",
                                     registers, n / 2, fence, ptx, a_operand, b_desc, commit, place, row_col, sum));
  return name;
}

std::string fill(HelperSet& helpers, int n) {
  const std::string name = fmt::format("te_wgmma_fill_64x{}", n);
  helpers.use_text(name, fmt::format("// The wgmma accumulators of a 64 x {1} tile set to zero ({2} per thread).\n"
                                     "{0} void {3}(float* c) {{\n"
                                     "#pragma unroll\n"
                                     "  for (int i = 0; i < {2}; ++i) c[i] = 0.0f;\n"
                                     "}}\n",
                                     kDeviceFunction, n, n / 2, name));
  return name;
}

std::string store(HelperSet& helpers, int n) {
  const std::string name = fmt::format("te_wgmma_store_64x{}", n);
  const std::string wait = use_wgmma_wait_all(helpers);
  const std::string registers = use_hopper_ptx(helpers, HopperInstruction::WgmmaFenceRegisters);
  helpers.use_text(
      name,
      fmt::format("// The wgmma accumulators of a 64 x {1} tile to memory (row stride `stride`) once the\n"
                  "// warpgroup's wgmmas are complete: each thread's pairs of adjacent columns, as float2\n"
                  "// where aligned.\n"
                  "{0} void {3}(float* c, float* d, long long stride) {{\n"
                  "  {6}();\n"
                  "#if TE_PTX(900) && TE_PTX_SM90A\n"
                  "  {7}(c, {2});  // read after the wait, not before\n"
                  "#endif\n"
                  "{4}"
                  "  const bool pairs = (reinterpret_cast<unsigned long long>(d) & 7ull) == 0 && (stride & 1) == 0;\n"
                  "#pragma unroll\n"
                  "  for (unsigned i = 0; i < {2}u; i += 2) {{\n"
                  "{5}"
                  "    float* at = d + (long long)row * stride + col;\n"
                  "    if (pairs) {{\n"
                  "      float2 v;\n"
                  "      v.x = c[i];\n"
                  "      v.y = c[i + 1];\n"
                  "      *reinterpret_cast<float2*>(at) = v;\n"
                  "    }} else {{\n"
                  "      at[0] = c[i];\n"
                  "      at[1] = c[i + 1];\n"
                  "    }}\n"
                  "  }}\n"
                  "}}\n",
                  kDeviceFunction, n, n / 2, name, kPlace, kRowCol, wait, registers));
  return name;
}

}  // namespace

std::string use_wgmma_helper(HelperSet& helpers, WgmmaHelper h, DataType t, int n) {
  switch (h) {
    case WgmmaHelper::Mma: return mma(helpers, t, n, false, false);
    case WgmmaHelper::MmaKn: return mma(helpers, t, n, true, false);
    case WgmmaHelper::MmaRs: return mma(helpers, t, n, false, true);
    case WgmmaHelper::MmaRsKn: return mma(helpers, t, n, true, true);
    case WgmmaHelper::LoadA: return load_a(helpers, t);
    case WgmmaHelper::Fill: return fill(helpers, n);
    case WgmmaHelper::Store: return store(helpers, n);
  }
  return "";
}

// Waits for the warpgroup's wgmmas: the tiles they read may then be refilled, and their
// accumulators read.
namespace {

// Registers a wgmma.wait_group helper: `name()` (`templated`: name<N>()) waiting with
// `count` groups left pending.
std::string use_wgmma_wait(HelperSet& helpers, const char* name, const char* comment, bool templated,
                           const char* count) {
  const std::string wait = use_hopper_ptx(helpers, HopperInstruction::WgmmaWaitGroup);
  helpers.use_text(name,
                   fmt::format("{0}{1}{2} void {3}() {{\n"
                               "#if TE_PTX(900) && TE_PTX_SM90A\n"
                               "  {4}<{5}>();\n"
                               "#endif\n"
                               "}}\n",
                               comment, templated ? "template <int N>\n" : "", kDeviceFunction, name, wait, count));
  return name;
}

}  // namespace

std::string use_wgmma_wait_all(HelperSet& helpers) {
  return use_wgmma_wait(helpers, "te_wgmma_wait_all",
                        "// Waits for this warpgroup's wgmmas (before a barrier, after which the tiles they\n"
                        "// read may be refilled, and before their accumulators are stored).\n",
                        false, "0");
}

std::string use_wgmma_wait_older(HelperSet& helpers) {
  return use_wgmma_wait(helpers, "te_wgmma_wait_older",
                        "// Waits for this warpgroup's wgmmas but the newest N groups (those stay in flight\n"
                        "// while the tiles the older ones read are released).\n",
                        true, "N");
}

}  // namespace te::cuda
