#include "codegen_cuda_src/tensor_core_helpers.h"

#include <fmt/format.h>

#include <map>

#include "codegen_cuda_src/ptx_instructions.h"

namespace te::cuda {

namespace {

struct Type16 {
  std::string sfx, c, to_float, from_bits;
};

Type16 type16(DataType t) {
  if (t.is_bfloat()) return {"bf16", "__nv_bfloat16", "__bfloat162float", "__ushort_as_bfloat16"};
  return {"f16", "__half", "__half2float", "__ushort_as_half"};
}

// The lane's row/column in its quad: PTX's groupID and threadID_in_group.
const char* const kLane = "  const unsigned te_lane = threadIdx.x & 31u, te_g = te_lane >> 2, te_t = te_lane & 3u;\n";

std::string mma(const Type16& t, const std::string& name, const std::string& ptx) {
  return fmt::format(
      "// mma.sync m16n8k16, float accumulators: c (4 per lane) += a (8 per lane) x b (4 per lane).\n"
      "// Before sm_80: the same sums through warp shuffles, k in order (a product of two\n"
      "// 16-bit floats is exact in float, so the result is te's declaration's, bit for bit).\n"
      "{0} void {1}(const {2}* a, const {2}* b, float* c) {{\n"
      "#if TE_PTX(800)\n"
      "  {3}(c, reinterpret_cast<const unsigned*>(a), reinterpret_cast<const unsigned*>(b));\n"
      "#else\n"
      "{5}"
      "#pragma unroll\n"
      "  for (int p = 0; p < 8; ++p) {{  // k = 2p, 2p + 1: one 32-bit pair of each fragment\n"
      "    const int q = p & 3, r = (p >> 2) * 2;\n"
      "    const int from_a = (int)(te_g * 4u) + q, from_b0 = (int)(te_t * 8u) + q, from_b1 = from_b0 + 4;\n"
      "    const unsigned a0 = __shfl_sync(0xffffffffu, (unsigned){6}(a[2 * r]) | ((unsigned){6}(a[2 * r + 1]) << 16), "
      "from_a);\n"
      "    const unsigned a1 = __shfl_sync(0xffffffffu, (unsigned){6}(a[2 * r + 2]) | ((unsigned){6}(a[2 * r + 3]) << "
      "16), from_a);\n"
      "    const unsigned bp = (unsigned){6}(b[r]) | ((unsigned){6}(b[r + 1]) << 16);\n"
      "    const unsigned b0 = __shfl_sync(0xffffffffu, bp, from_b0);\n"
      "    const unsigned b1 = __shfl_sync(0xffffffffu, bp, from_b1);\n"
      "#pragma unroll\n"
      "    for (int h = 0; h < 32; h += 16) {{\n"
      "      const float x0 = {4}({7}((unsigned short)(a0 >> h))), x1 = {4}({7}((unsigned short)(a1 >> h)));\n"
      "      const float y0 = {4}({7}((unsigned short)(b0 >> h))), y1 = {4}({7}((unsigned short)(b1 >> h)));\n"
      "      c[0] = c[0] + x0 * y0;\n"
      "      c[1] = c[1] + x0 * y1;\n"
      "      c[2] = c[2] + x1 * y0;\n"
      "      c[3] = c[3] + x1 * y1;\n"
      "    }}\n"
      "  }}\n"
      "#endif\n"
      "}}\n",
      kDeviceFunction, name, t.c, ptx, t.to_float, kLane, t.sfx == "bf16" ? "__bfloat16_as_ushort" : "__half_as_ushort",
      t.from_bits);
}

// A fragment that each lane loads: `count` elements, element i from s[`index`] (`comment`
// says which tile).
struct LaneLoads {
  const char* comment;
  int count;
  const char* index;
};

const LaneLoads kLoadA = {"The \"a\" fragment of a 16 x 16 tile (row stride `stride`)", 8,
                          "(long long)(te_g + ((i >> 1) & 1) * 8) * stride + 2 * te_t + (i & 1) + (i >> 2) * 8"};
const LaneLoads kLoadB = {"The \"b\" fragment of a 16 (k) x 8 tile (row stride `stride`)", 4,
                          "(long long)(2 * te_t + (i & 1) + (i >> 1) * 8) * stride + te_g"};
const LaneLoads kLoadBT = {"The \"b\" fragment of an 8 (n) x 16 (k) tile, b stored transposed (row stride `stride`)", 4,
                           "(long long)te_g * stride + 2 * te_t + (i & 1) + (i >> 1) * 8"};

std::string lane_loads(const Type16& t, const std::string& name, const LaneLoads& load) {
  return fmt::format(
      "// {4}: each lane loads its {5} elements.\n"
      "{0} void {1}(const {2}* s, long long stride, {2}* f) {{\n"
      "{3}"
      "#pragma unroll\n"
      "  for (int i = 0; i < {5}; ++i) f[i] = s[{6}];\n"
      "}}\n",
      kDeviceFunction, name, t.c, kLane, load.comment, load.count, load.index);
}

// An ldmatrix form: the fragment it loads, the instruction, and the row each lane gives
// the address of (elements after s).
struct Ldmatrix {
  const char* fragment;
  PtxInstruction instruction;
  const char* row;
};

// x4 for "a": lanes 0-7, 8-15, 16-23, 24-31 give the rows of its four 8 x 8 quarters.
const Ldmatrix kLdmatrixA = {"a", PtxInstruction::LdmatrixX4,
                             "(long long)((lane & 7u) + ((lane >> 3) & 1u) * 8u) * stride + (lane >> 4) * 8u"};
// x2.trans for "b": lanes 0-15 give the rows k.
const Ldmatrix kLdmatrixB = {"b", PtxInstruction::LdmatrixX2Trans, "(long long)(lane & 15u) * stride"};
// x2 for "b" stored transposed: lanes 0-7 give the rows n of its first 8 k, lanes 8-15
// of the next 8.
const Ldmatrix kLdmatrixBT = {"b", PtxInstruction::LdmatrixX2,
                              "(long long)(lane & 7u) * stride + ((lane >> 3) & 1u) * 8u"};

// A fragment from shared memory through ldmatrix (sm_75+) when its rows are 16-byte
// aligned (`aligned`: the code generator proved it), else `fallback`, each lane's loads.
std::string ldmatrix(const Type16& t, const std::string& name, const std::string& fallback, const Ldmatrix& form,
                     const std::string& ptx) {
  return fmt::format(
      "// The \"{4}\" fragment from shared memory: {5} where its rows are 16-byte aligned\n"
      "// (`aligned`: te proved it), else {3}.\n"
      "{0} void {1}(const {2}* s, long long stride, {2}* f, bool aligned) {{\n"
      "#if TE_PTX(750)\n"
      "  if (aligned || ((reinterpret_cast<unsigned long long>(s) & 15ull) == 0 && (stride & 7) == 0)) {{\n"
      "    const unsigned lane = threadIdx.x & 31u;\n"
      "    {5}(reinterpret_cast<unsigned*>(f), s + {6});\n"
      "    return;\n"
      "  }}\n"
      "#endif\n"
      "  (void)aligned;\n"
      "  {3}(s, stride, f);\n"
      "}}\n",
      kDeviceFunction, name, t.c, fallback, form.fragment, ptx, form.row);
}

// The helpers that load a fragment: each lane's loads (`lanes`), or ldmatrix (`form`)
// falling back to those (`fallback`).
struct FragmentLoad {
  std::string prefix;  // the helper's name before the type's suffix
  const LaneLoads* lanes = nullptr;
  const Ldmatrix* form = nullptr;
  TensorCoreHelper fallback = TensorCoreHelper::LoadA;
};

const std::map<TensorCoreHelper, FragmentLoad>& fragment_loads() {
  using H = TensorCoreHelper;
  static const std::map<H, FragmentLoad> loads = {
      {H::LoadA, {"te_load_matrix_a_", &kLoadA}},
      {H::LoadB, {"te_load_matrix_b_", &kLoadB}},
      {H::LoadBT, {"te_load_matrix_bt_", &kLoadBT}},
      {H::LdmatrixA, {"te_ldmatrix_a_", nullptr, &kLdmatrixA, H::LoadA}},
      {H::LdmatrixB, {"te_ldmatrix_b_", nullptr, &kLdmatrixB, H::LoadB}},
      {H::LdmatrixBT, {"te_ldmatrix_bt_", nullptr, &kLdmatrixBT, H::LoadBT}},
  };
  return loads;
}

std::string store_c(const std::string& name) {
  return fmt::format(
      "// The \"c\" fragment to memory (row stride `stride`): two pairs per lane, as float2 where aligned.\n"
      "{0} void {1}(const float* f, float* d, long long stride) {{\n"
      "{2}"
      "  float* r0 = d + (long long)te_g * stride + 2 * te_t;\n"
      "  float* r1 = r0 + 8 * stride;\n"
      "  if ((reinterpret_cast<unsigned long long>(d) & 7ull) == 0 && (stride & 1) == 0) {{\n"
      "    float2 v0, v1;\n"
      "    v0.x = f[0];\n"
      "    v0.y = f[1];\n"
      "    v1.x = f[2];\n"
      "    v1.y = f[3];\n"
      "    *reinterpret_cast<float2*>(r0) = v0;\n"
      "    *reinterpret_cast<float2*>(r1) = v1;\n"
      "  }} else {{\n"
      "    r0[0] = f[0];\n"
      "    r0[1] = f[1];\n"
      "    r1[0] = f[2];\n"
      "    r1[1] = f[3];\n"
      "  }}\n"
      "}}\n",
      kDeviceFunction, name, kLane);
}

std::string fill_c(const std::string& name) {
  return fmt::format(
      "// The \"c\" fragment set to zero (4 per lane).\n"
      "{0} void {1}(float* f) {{\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 4; ++i) f[i] = 0.0f;\n"
      "}}\n",
      kDeviceFunction, name);
}

}  // namespace

std::optional<TensorCoreHelper> ldmatrix_helper(TensorCoreHelper lane_loads) {
  for (const auto& [h, load] : fragment_loads())
    if (load.form != nullptr && load.fallback == lane_loads) return h;
  return std::nullopt;
}

std::string use_tensor_core_helper(HelperSet& helpers, TensorCoreHelper h, DataType t) {
  const Type16 ty = type16(t);
  std::string name;
  switch (h) {
    case TensorCoreHelper::Mma: {
      const std::string ptx = use_ptx(helpers, t.is_bfloat() ? PtxInstruction::MmaBF16 : PtxInstruction::MmaF16);
      name = "te_mma_m16n8k16_" + ty.sfx;
      helpers.use_text(name, mma(ty, name, ptx));
    } break;
    case TensorCoreHelper::LoadA:
    case TensorCoreHelper::LoadB:
    case TensorCoreHelper::LoadBT: {
      const FragmentLoad& load = fragment_loads().at(h);
      name = load.prefix + ty.sfx;
      helpers.use_text(name, lane_loads(ty, name, *load.lanes));
    } break;
    case TensorCoreHelper::LdmatrixA:
    case TensorCoreHelper::LdmatrixB:
    case TensorCoreHelper::LdmatrixBT: {
      const FragmentLoad& load = fragment_loads().at(h);
      std::string fallback = use_tensor_core_helper(helpers, load.fallback, t);
      name = load.prefix + ty.sfx;
      helpers.use_text(name, ldmatrix(ty, name, fallback, *load.form, use_ptx(helpers, load.form->instruction)));
    } break;
    case TensorCoreHelper::StoreC:
      name = "te_store_matrix_c";
      helpers.use_text(name, store_c(name));
      break;
    case TensorCoreHelper::FillC:
      name = "te_fill_matrix_c";
      helpers.use_text(name, fill_c(name));
      break;
  }
  return name;
}

}  // namespace te::cuda
