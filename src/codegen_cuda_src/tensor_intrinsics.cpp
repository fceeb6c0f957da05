#include "codegen_cuda_src/tensor_intrinsics.h"

#include <fmt/format.h>

#include <map>
#include <variant>

#include "codegen_cuda_src/swizzle.h"
#include "codegen_cuda_src/tensor_core_helpers.h"
#include "codegen_cuda_src/tma.h"
#include "codegen_cuda_src/wgmma_helpers.h"
#include "te/error.h"
#include "te/simplify.h"
#include "te/tensorize.h"

namespace te::cuda {

namespace {

class FindIntrinsics : public IRVisitor {
 public:
  std::vector<const TensorIntrinsicCallNode*> found;

 protected:
  void visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n) override { found.push_back(n); }
};

std::string implementation_list(const TensorIntrinsicNode& in) {
  std::string out;
  for (const auto& [target, impl] : in.implementations) out += (out.empty() ? "" : ", ") + target;
  return out.empty() ? "none" : out;
}

// The implementations te has, by name (the names intrinsics::cuda_* give for "cuda").
struct Entry {
  CudaIntrinsic spec;
  std::variant<TensorCoreHelper, WgmmaHelper> helper;  // a warp's intrinsic or a warpgroup's
  DataType type;                                       // the 16-bit input type, where the helper has one
  int n = 0;                                           // wgmma: the tile's columns
};

const std::map<std::string, Entry>& table() {
  using F = Fragment;
  using H = TensorCoreHelper;
  static const std::map<std::string, Entry> t = [] {
    const FragmentShape a{16, 16, 8}, b{16, 8, 4}, c{16, 8, 4}, memory{};
    std::map<std::string, Entry> m = {
        {"cuda_mma_m16n8k16_f16f32", {{{F::A, F::B, F::C}, {a, b, c}}, H::Mma, Float(16)}},
        {"cuda_mma_m16n8k16_bf16f32", {{{F::A, F::B, F::C}, {a, b, c}}, H::Mma, BFloat(16)}},
        {"cuda_fill_16x8_f32", {{{F::C}, {c}}, H::FillC, Float(32)}},
        {"cuda_load_matrix_a_16x16_f16", {{{F::Memory, F::A}, {memory, a}}, H::LoadA, Float(16)}},
        {"cuda_load_matrix_a_16x16_bf16", {{{F::Memory, F::A}, {memory, a}}, H::LoadA, BFloat(16)}},
        {"cuda_load_matrix_b_16x8_f16", {{{F::Memory, F::B}, {memory, b}}, H::LoadB, Float(16)}},
        {"cuda_load_matrix_b_16x8_bf16", {{{F::Memory, F::B}, {memory, b}}, H::LoadB, BFloat(16)}},
        {"cuda_load_matrix_bt_8x16_f16", {{{F::Memory, F::B}, {memory, b}}, H::LoadBT, Float(16)}},
        {"cuda_load_matrix_bt_8x16_bf16", {{{F::Memory, F::B}, {memory, b}}, H::LoadBT, BFloat(16)}},
        {"cuda_store_16x8_f32", {{{F::C, F::Memory}, {c, memory}}, H::StoreC, Float(32)}},
    };
    const FragmentShape wgmma_a{64, 16, 8};
    for (DataType ab : {Float(16), BFloat(16)})
      m[fmt::format("cuda_wgmma_load_a_64x16_{}", ab == Float(16) ? "f16" : "bf16")] = {
          {{F::KMajorShared, F::WgmmaA}, {memory, wgmma_a}, 128}, WgmmaHelper::LoadA, ab, 16};
    for (int n = 8; n <= 256; n += 8) {
      const FragmentShape d{64, n, n / 2};
      for (DataType ab : {Float(16), BFloat(16)})
        m[fmt::format("cuda_wgmma_m64n{}k16_{}f32", n, ab == Float(16) ? "f16" : "bf16")] = {
            {{F::KMajorShared, F::KMajorShared, F::WgmmaD}, {memory, memory, d}, 128}, WgmmaHelper::Mma, ab, n};
      for (DataType ab : {Float(16), BFloat(16)})
        m[fmt::format("cuda_wgmma_m64n{}k16_{}f32_kn", n, ab == Float(16) ? "f16" : "bf16")] = {
            {{F::KMajorShared, F::MNMajorShared, F::WgmmaD}, {memory, memory, d}, 128}, WgmmaHelper::MmaKn, ab, n};
      for (DataType ab : {Float(16), BFloat(16)}) {
        const std::string type = ab == Float(16) ? "f16" : "bf16";
        m[fmt::format("cuda_wgmma_m64n{}k16_{}f32_rs", n, type)] = {
            {{F::WgmmaA, F::KMajorShared, F::WgmmaD}, {wgmma_a, memory, d}, 128}, WgmmaHelper::MmaRs, ab, n};
        m[fmt::format("cuda_wgmma_m64n{}k16_{}f32_rs_kn", n, type)] = {
            {{F::WgmmaA, F::MNMajorShared, F::WgmmaD}, {wgmma_a, memory, d}, 128}, WgmmaHelper::MmaRsKn, ab, n};
      }
      m[fmt::format("cuda_wgmma_fill_64x{}_f32", n)] = {{{F::WgmmaD}, {d}, 128}, WgmmaHelper::Fill, Float(32), n};
      m[fmt::format("cuda_wgmma_store_64x{}_f32", n)] = {
          {{F::WgmmaD, F::Memory}, {d, memory}, 128}, WgmmaHelper::Store, Float(32), n};
    }
    return m;
  }();
  return t;
}

// The CUDA implementation n's intrinsic names ("" when it has none).
std::string cuda_implementation(const TensorIntrinsicCallNode* n) {
  return TensorIntrinsic(n->intrinsic).implementation("cuda");
}

const Entry* entry(const TensorIntrinsicCallNode* n) {
  auto e = table().find(cuda_implementation(n));
  return e == table().end() ? nullptr : &e->second;
}

}  // namespace

const char* fragment_name(Fragment f) {
  switch (f) {
    case Fragment::A: return "a";
    case Fragment::B: return "b";
    case Fragment::C: return "c";
    case Fragment::WgmmaA: return "wgmma A";
    case Fragment::WgmmaD: return "wgmma accumulator";
    case Fragment::KMajorShared: return "K-major swizzled shared tile";
    case Fragment::MNMajorShared: return "MN-major swizzled shared tile";
    case Fragment::Memory: break;
  }
  return "memory";
}

MemoryScope fragment_scope(Fragment f) {
  switch (f) {
    case Fragment::A:
    case Fragment::B:
    case Fragment::C: return MemoryScope::Warp;
    case Fragment::WgmmaA:
    case Fragment::WgmmaD: return MemoryScope::Warpgroup;
    case Fragment::KMajorShared:
    case Fragment::MNMajorShared:
    case Fragment::Memory: break;
  }
  return MemoryScope::Global;
}

bool issues_async_wgmma(const TensorIntrinsicCallNode* n) {
  const Entry* e = entry(n);
  if (e == nullptr) return false;
  const auto* w = std::get_if<WgmmaHelper>(&e->helper);
  return w != nullptr && is_wgmma_mma(*w);
}

const BufferNode* wgmma_register_operand(const TensorIntrinsicCallNode* n) {
  const Entry* e = entry(n);
  if (e == nullptr) return nullptr;
  const auto* w = std::get_if<WgmmaHelper>(&e->helper);
  return w != nullptr && (*w == WgmmaHelper::MmaRs || *w == WgmmaHelper::MmaRsKn) ? n->buffers[0].get() : nullptr;
}

const CudaIntrinsic* cuda_intrinsic(const TensorIntrinsicCallNode* n) {
  const Entry* e = entry(n);
  return e ? &e->spec : nullptr;
}

std::vector<const TensorIntrinsicCallNode*> tensor_intrinsic_calls(const Stmt& s) {
  FindIntrinsics find;
  if (s.defined()) find.visit(s);
  return find.found;
}

std::vector<const TensorIntrinsicCallNode*> tensor_intrinsic_calls(const LoweredFunc& f) {
  return tensor_intrinsic_calls(f.body);
}

ArchNeed arch_needed(const TensorIntrinsicCallNode* n) {
  if (is_tma_load(n)) {
    const bool setmaxnreg = n->producer && (n->producer->producer_registers || n->producer->consumer_registers);
    if (setmaxnreg) return {90, true, "warp specialization's setmaxnreg"};
    return {90, false, "TMA (cp.async.bulk.tensor)"};
  }
  const Entry* e = entry(n);
  if (e == nullptr) return {};
  if (const auto* w = std::get_if<WgmmaHelper>(&e->helper))
    return is_wgmma_mma(*w) ? ArchNeed{90, true, "wgmma.mma_async"} : ArchNeed{};
  switch (std::get<TensorCoreHelper>(e->helper)) {
    case TensorCoreHelper::Mma: return {80, false, "mma.sync m16n8k16"};
    case TensorCoreHelper::LoadA:
    case TensorCoreHelper::LoadB:  // from shared memory: ldmatrix (print_tensor_intrinsic)
    case TensorCoreHelper::LoadBT:
    case TensorCoreHelper::LdmatrixA:
    case TensorCoreHelper::LdmatrixB:
    case TensorCoreHelper::LdmatrixBT:
      return n->buffers[0].scope() == MemoryScope::Shared ? ArchNeed{75, false, "ldmatrix"} : ArchNeed{};
    case TensorCoreHelper::StoreC:
    case TensorCoreHelper::FillC: break;
  }
  return {};
}

void check_tensor_intrinsics(const LoweredFunc& f) {
  for (const TensorIntrinsicCallNode* n : tensor_intrinsic_calls(f)) {
    if (entry(n) != nullptr || is_tma_load(n)) continue;
    const TensorIntrinsicNode& in = *n->intrinsic;
    const std::string impl = cuda_implementation(n);
    if (!impl.empty())
      throw Error(
          fmt::format("build_cuda: function '{}' calls tensor intrinsic '{}', whose CUDA implementation "
                      "'{}' is not one te has (te's: the intrinsics::cuda_* tensor-core and TMA intrinsics)",
                      f.name, in.name, impl));
    throw Error(
        fmt::format("build_cuda: function '{}' calls tensor intrinsic '{}', which has no implementation "
                    "for target 'cuda' (it has: {}); tensorize with a CUDA intrinsic or build for llvm",
                    f.name, in.name, implementation_list(in)));
  }
}

Expr fragment_slot(const FragmentShape& s, const Expr& offset, int64_t row) {
  const DataType t = offset.dtype();
  auto c = [&](int64_t v) { return make_const(t, v); };
  Expr r = offset / c(row), col = offset % c(row);
  return simplify((r / c(s.rows) * c(row / s.cols) + col / c(s.cols)) * c(s.per_lane));
}

std::vector<std::string> print_tensor_intrinsic(const TensorIntrinsicCallNode* n,
                                                const std::function<std::string(const Expr&)>& print,
                                                const std::function<std::string(const Buffer&)>& buffer,
                                                HelperSet& helpers) {
  const Entry* e = entry(n);
  TE_ICHECK(e != nullptr, "CUDA: an intrinsic check_tensor_intrinsics did not refuse");
  std::vector<std::string> lines, args, swizzles, blocks;
  for (size_t k = 0; k < e->spec.operands.size(); ++k) {
    const Fragment f = e->spec.operands[k];
    const Buffer& b = n->buffers[k];
    const Expr& offset = n->offsets[k];
    if (f == Fragment::KMajorShared) {
      // The analysis checked its rows are the swizzle's width, or that it starts a pattern
      // of a column block (where the swizzle moves nothing: its place in the blocks).
      args.push_back(b.swizzle_row() == 0
                         ? fmt::format("{} + {}", buffer(b), print(offset))
                         : fmt::format("{} + {}", buffer(b), swizzled_index(helpers, b, print(offset))));
      swizzles.push_back(std::to_string(b.swizzle_bytes()));
      continue;
    }
    if (f == Fragment::MNMajorShared) {  // the analysis checked it starts a pattern of a column block
      args.push_back(fmt::format("{} + {}", buffer(b), swizzled_index(helpers, b, print(offset))));
      swizzles.push_back(std::to_string(b.swizzle_bytes()));
      const int64_t row = b.swizzle_row() ? b.swizzle_row() : b.swizzle_bytes() / b.dtype().bytes();
      blocks.push_back(std::to_string(*as_const_int(b.shape()[0]) / row * b.swizzle_bytes()));
      continue;
    }
    if (f == Fragment::Memory) {
      args.push_back(fmt::format("{} + {}", buffer(b), print(offset)));
      args.push_back(fmt::format("(long long){}", print(n->strides[k][0])));
      continue;
    }
    // The analysis checked the row length is a constant multiple of the fragment's.
    const int64_t row = *as_const_int(n->strides[k][0]);
    const FragmentShape& s = e->spec.shapes[k];
    const DataType t = offset.dtype();
    Expr aligned = (offset % make_const(t, row)) % make_const(t, s.cols) == make_zero(t) &&
                   (offset / make_const(t, row)) % make_const(t, s.rows) == make_zero(t);
    if (!can_prove(aligned))
      lines.push_back(fmt::format("if (!({})) __trap();  // a fragment of '{}' off its {} x {} tiles", print(aligned),
                                  b.name(), s.rows, s.cols));
    args.push_back(fmt::format("{} + {}", buffer(b), print(fragment_slot(s, offset, row))));
  }
  if (const auto* wgmma = std::get_if<WgmmaHelper>(&e->helper)) {
    for (const std::string& w : swizzles) args.push_back(w);
    for (const std::string& w : blocks) args.push_back(w);
    std::string call = use_wgmma_helper(helpers, *wgmma, e->type, e->n) + "(";
    for (size_t i = 0; i < args.size(); ++i) call += (i ? ", " : "") + args[i];
    lines.push_back(call + ");");
    return lines;
  }
  TensorCoreHelper h = std::get<TensorCoreHelper>(e->helper);
  // ldmatrix reads shared memory only; its rows must start at 16-byte boundaries, which
  // the kernel's own (16-byte aligned) arrays give for offsets and a stride in whole
  // 8-element steps.
  const std::optional<TensorCoreHelper> ldmatrix = ldmatrix_helper(h);
  if (ldmatrix && n->buffers[0].scope() == MemoryScope::Shared) {
    h = *ldmatrix;
    const Expr& offset = n->offsets[0];
    const int64_t* stride = as_const_int(n->strides[0][0]);
    const bool aligned = n->buffers[0].dtype().bytes() == 2 && stride != nullptr && *stride % 8 == 0 &&
                         can_prove(offset % make_const(offset.dtype(), 8) == make_zero(offset.dtype()));
    args.push_back(aligned ? "true" : "false");
  }
  std::string name = use_tensor_core_helper(helpers, h, e->type);
  std::string call = name + "(";
  for (size_t i = 0; i < args.size(); ++i) call += (i ? ", " : "") + args[i];
  lines.push_back(call + ");");
  return lines;
}

}  // namespace te::cuda
