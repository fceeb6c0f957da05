#include "codegen_cuda_src/tma.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen_cuda_src/c_types.h"
#include "codegen_cuda_src/ptx_hopper.h"
#include "codegen_cuda_src/swizzle.h"
#include "expr/analysis.h"
#include "te/error.h"
#include "te/tensorize.h"

namespace te::cuda {

namespace {

constexpr const char* kMapType = "te_tensor_map";

// CUDA's name of a tensor map element type: the type itself where the driver has it, an
// unsigned integer of its size otherwise (TMA moves bits).
const char* map_data_type(DataType t) {
  if (t == Float(16)) return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  if (t == BFloat(16)) return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
  if (t == Float(32)) return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
  if (t == Float(64)) return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
  if (t == Int(32)) return "CU_TENSOR_MAP_DATA_TYPE_INT32";
  if (t == Int(64)) return "CU_TENSOR_MAP_DATA_TYPE_INT64";
  switch (t.bytes()) {
    case 1: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
    case 2: return "CU_TENSOR_MAP_DATA_TYPE_UINT16";
    case 4: return "CU_TENSOR_MAP_DATA_TYPE_UINT32";
    default: return "CU_TENSOR_MAP_DATA_TYPE_UINT64";
  }
}

const char* map_swizzle(int bytes) {
  switch (bytes) {
    case 32: return "CU_TENSOR_MAP_SWIZZLE_32B";
    case 64: return "CU_TENSOR_MAP_SWIZZLE_64B";
    case 128: return "CU_TENSOR_MAP_SWIZZLE_128B";
    default: return "CU_TENSOR_MAP_SWIZZLE_NONE";
  }
}

const char* const kEncodeText =
    "#ifndef __CUDACC_RTC__\n"
    "#include <cuda.h>\n"
    "// A TMA tensor map over a row-major rows x cols matrix at base, copied in boxes of\n"
    "// box_rows x box_cols (swizzled as given, zeros outside the matrix): the driver's\n"
    "// cuTensorMapEncodeTiled, found through the runtime (no -lcuda).\n"
    "static cudaError_t te_tma_encode_2d(te_tensor_map* map, const void* base, CUtensorMapDataType type,\n"
    "                                    unsigned element_bytes, unsigned long long rows, unsigned long long cols,\n"
    "                                    unsigned box_rows, unsigned box_cols, CUtensorMapSwizzle swizzle) {\n"
    "  void* encode = nullptr;\n"
    "  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;\n"
    "#if CUDART_VERSION >= 12050\n"
    "  const cudaError_t err =\n"
    "      cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &encode, 12000, cudaEnableDefault, &found);\n"
    "#else\n"
    "  const cudaError_t err = cudaGetDriverEntryPoint(\"cuTensorMapEncodeTiled\", &encode, cudaEnableDefault, "
    "&found);\n"
    "#endif\n"
    "  if (err != cudaSuccess) return err;\n"
    "  if (encode == nullptr || found != cudaDriverEntryPointSuccess) return cudaErrorNotSupported;\n"
    "  const cuuint64_t dims[2] = {cols, rows}, strides[1] = {cols * element_bytes};\n"
    "  const cuuint32_t box[2] = {box_cols, box_rows}, element_strides[2] = {1, 1};\n"
    "  const CUresult r = reinterpret_cast<decltype(&cuTensorMapEncodeTiled)>(encode)(\n"
    "      reinterpret_cast<CUtensorMap*>(map), type, 2, const_cast<void*>(base), dims, strides, box,\n"
    "      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,\n"
    "      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n"
    "  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;\n"
    "}\n"
    "#endif\n";

}  // namespace

bool is_tma_load(const TensorIntrinsicCallNode* n) { return intrinsics::is_cuda_tma_load(*n->intrinsic); }

std::pair<int, int> tma_box_of(const TensorIntrinsicCallNode* n) {
  const Tensor& out = n->intrinsic->output;
  return {static_cast<int>(*as_const_int(out.shape()[0])), static_cast<int>(*as_const_int(out.shape()[1]))};
}

TmaMap tma_map_of(const TensorIntrinsicCallNode* n) {
  const auto [rows, cols] = tma_box_of(n);
  TmaMap m;
  m.source = n->buffers[0];
  m.rows = rows;
  m.swizzle = n->buffers[1].swizzle_bytes();
  const int block = m.swizzle / n->buffers[1].dtype().bytes();
  m.cols = n->buffers[1].swizzle_row() != 0 ? std::min(cols, block) : cols;
  return m;
}

Expr tma_matrix_rows(const Buffer& b) {
  Expr rows = make_const(b.shape().back().dtype(), 1);
  for (size_t d = 0; d + 1 < b.shape().size(); ++d) rows = rows * b.shape()[d];
  return rows;
}

Expr tma_matrix_cols(const Buffer& b) { return b.shape().back(); }

std::string tma_map_param_type(HelperSet& helpers) {
  helpers.use_text(kMapType,
                   "// A TMA tensor map: the 128 bytes cuTensorMapEncodeTiled writes (a CUtensorMap), passed to\n"
                   "// a kernel as a __grid_constant__ parameter.\n"
                   "struct alignas(64) te_tensor_map {\n"
                   "  unsigned long long opaque[16];\n"
                   "};\n");
  return fmt::format("const __grid_constant__ {}", kMapType);
}

std::vector<std::string> tma_kernel_prologue(HelperSet& helpers, const std::string& arena, int64_t offset,
                                             const std::vector<std::string>& destination_names,
                                             int64_t consumer_threads) {
  const std::string init = use_hopper_ptx(helpers, HopperInstruction::MbarrierInit);
  const std::string fence = use_hopper_ptx(helpers, HopperInstruction::FenceProxyAsync);
  std::string names;
  for (const std::string& d : destination_names) names += (names.empty() ? "" : ", ") + d;
  const size_t count = destination_names.size();
  if (consumer_threads > 0) {  // warp specialization: full and empty mbarriers
    helpers.use_text(
        "te_tma_init_ws_barriers",
        fmt::format("// A warp-specialized kernel's TMA mbarriers, per shared buffer TMA fills: a full one, whose\n"
                    "// phases complete with the producer's arrival and the box's bytes, then (after all the full\n"
                    "// ones) an empty one, whose phases complete when every consumer thread released the buffer.\n"
                    "{} void te_tma_init_ws_barriers(unsigned long long* barriers, int count, unsigned consumers) {{\n"
                    "#if TE_PTX(900)\n"
                    "  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {{\n"
                    "    for (int i = 0; i < count; ++i) {{\n"
                    "      {}(barriers + i, 1);\n"
                    "      {}(barriers + count + i, consumers);\n"
                    "    }}\n"
                    "    {}();  // visible to the copies (the async proxy)\n"
                    "  }}\n"
                    "#else\n"
                    "  (void)barriers;\n"
                    "  (void)count;\n"
                    "  (void)consumers;\n"
                    "#endif\n"
                    "}}\n",
                    kDeviceFunction, init, init, fence));
    return {
        fmt::format("unsigned long long* const te_tma_barriers = reinterpret_cast<unsigned long long*>({} + {});  "
                    "// TMA's full, then empty, mbarriers: {}",
                    arena, offset, names),
        "unsigned te_tma_pending = 0, te_tma_phase = 0;  // per full mbarrier: a copy to wait for; its next phase's "
        "parity",
        fmt::format("te_tma_init_ws_barriers(te_tma_barriers, {}, {});", count, consumer_threads),
        "__syncthreads();",
    };
  }
  helpers.use_text("te_tma_init_barriers",
                   fmt::format("// The kernel's TMA mbarriers, one per shared buffer TMA fills: each phase completes\n"
                               "// with one arrival (the issuing thread's) and the box's bytes.\n"
                               "{} void te_tma_init_barriers(unsigned long long* barriers, int count) {{\n"
                               "#if TE_PTX(900)\n"
                               "  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {{\n"
                               "    for (int i = 0; i < count; ++i) {}(barriers + i, 1);\n"
                               "    {}();  // visible to the copies (the async proxy)\n"
                               "  }}\n"
                               "#else\n"
                               "  (void)barriers;\n"
                               "  (void)count;\n"
                               "#endif\n"
                               "}}\n",
                               kDeviceFunction, init, fence));
  return {
      fmt::format("unsigned long long* const te_tma_barriers = reinterpret_cast<unsigned long long*>({} + {});  "
                  "// TMA's mbarriers: {}",
                  arena, offset, names),
      "unsigned te_tma_pending = 0, te_tma_phase = 0;  // per mbarrier: a copy to wait for; its next phase's parity",
      fmt::format("te_tma_init_barriers(te_tma_barriers, {});", count),
      "__syncthreads();",
  };
}

// Registers te_tma_wait (waits for the pending copies into the destinations of a mask).
void use_tma_wait(HelperSet& helpers) {
  const std::string wait = use_hopper_ptx(helpers, HopperInstruction::MbarrierTryWaitParity);
  helpers.use_text("te_tma_wait",
                   fmt::format("// Waits for the block's TMA copies into the destinations whose bits `mask` sets that\n"
                               "// this thread has not waited for yet (the bits of pending), each on its\n"
                               "// destination's mbarrier, flipping that barrier's parity.\n"
                               "{} void te_tma_wait(unsigned long long* barriers, int count, unsigned mask,\n"
                               "                    unsigned& pending, unsigned& phase) {{\n"
                               "#if TE_PTX(900)\n"
                               "  for (int i = 0; i < count; ++i) {{\n"
                               "    if (((pending & mask) >> i & 1u) == 0) continue;\n"
                               "    while (!{}(barriers + i, (phase >> i) & 1u)) {{\n"
                               "    }}\n"
                               "    phase ^= 1u << i;\n"
                               "  }}\n"
                               "  pending &= ~mask;\n"
                               "#else\n"
                               "  (void)barriers;\n"
                               "  (void)count;\n"
                               "  (void)mask;\n"
                               "  (void)pending;\n"
                               "  (void)phase;\n"
                               "#endif\n"
                               "}}\n",
                               kDeviceFunction, wait));
}

std::string tma_wait_statement(HelperSet& helpers, int destinations, unsigned mask) {
  use_tma_wait(helpers);
  return fmt::format("te_tma_wait(te_tma_barriers, {}, 0x{:x}u, te_tma_pending, te_tma_phase);", destinations, mask);
}

namespace {

class ReadsBeforeBarrierFinder {
 public:
  explicit ReadsBeforeBarrierFinder(const std::function<int(const BufferNode*)>& slot) : slot_(slot) {}

  // Adds what s reads before its first barrier; whether every path meets one.
  bool scan(const Stmt& s) {
    if (!s.defined()) return false;
    switch (s->kind) {
      case StmtKind::Barrier: return true;
      case StmtKind::Seq:
        for (const Stmt& c : s.as<SeqNode>()->seq)
          if (scan(c)) return true;
        return false;
      case StmtKind::For: {
        auto* n = s.as<ForNode>();
        read(buffer_use(n->min));
        read(buffer_use(n->extent));
        // A serial loop meets its barrier only when it surely runs.
        const int64_t* extent = as_const_int(n->extent);
        return scan(n->body) && (n->for_kind == ForKind::ThreadBinding || (extent != nullptr && *extent > 0));
      }
      case StmtKind::IfThenElse: {
        auto* n = s.as<IfThenElseNode>();
        read(buffer_use(n->cond));
        const bool then_meets = scan(n->then_case);
        const bool else_meets = n->else_case.defined() && scan(n->else_case);
        return then_meets && else_meets;
      }
      case StmtKind::LetStmt: {
        auto* n = s.as<LetStmtNode>();
        read(buffer_use(n->value));
        return scan(n->body);
      }
      case StmtKind::Allocate: return scan(s.as<AllocateNode>()->body);
      case StmtKind::Assert: {
        auto* n = s.as<AssertNode>();
        read(buffer_use(n->cond));
        return scan(n->body);
      }
      case StmtKind::Store:
      case StmtKind::Evaluate:
      case StmtKind::TensorIntrinsicCall:  // no barrier inside: all their loads
        read(buffer_use(s));
        return false;
    }
    return false;
  }
  unsigned mask = 0;

 private:
  void read(const BufferUse& use) {
    for (const BufferNode* b : use.loaded) {
      const int slot = slot_(b);
      if (slot >= 0) mask |= 1u << slot;
    }
  }
  const std::function<int(const BufferNode*)>& slot_;
};

}  // namespace

ReadsBeforeBarrier tma_reads_before_barrier(const Stmt& s, const std::function<int(const BufferNode*)>& slot) {
  ReadsBeforeBarrierFinder f(slot);
  ReadsBeforeBarrier r;
  r.barrier = f.scan(s);
  r.mask = f.mask;
  return r;
}

namespace {

// The lines (at `indent`) issuing n's box at (row0, col0) into `buffer` + offset on
// mbarrier `barriers + slot`: one copy per column block of the destination (one when it
// has none).
std::string box_copies(HelperSet& helpers, const TensorIntrinsicCallNode* n, const std::string& indent) {
  const int cols = tma_box_of(n).second;
  const TmaMap m = tma_map_of(n);
  const std::string copy = use_hopper_ptx(helpers, HopperInstruction::TmaLoad2d);
  std::string copies;
  for (int b = 0; b * m.cols < cols; ++b) {
    const std::string at = b == 0 ? "offset" : fmt::format("offset + {}", b * m.cols);
    copies += fmt::format("{}{}(buffer + {}, map, (int)col0{}, (int)row0, barriers + slot);\n", indent, copy,
                          swizzled_index(helpers, n->buffers[1], at), b == 0 ? "" : fmt::format(" + {}", b * m.cols));
  }
  return copies;
}

// The helper's name for n's box: te_tma_<verb>_<rows>x<cols>_<type>[_sw<swizzle>].
std::string box_helper_name(const TensorIntrinsicCallNode* n, const char* verb) {
  const auto [rows, cols] = tma_box_of(n);
  const TmaMap m = tma_map_of(n);
  return fmt::format("te_tma_{}_{}x{}_{}{}", verb, rows, cols, n->buffers[1].dtype().to_string(),
                     m.swizzle ? fmt::format("_sw{}", m.swizzle) : "");
}

// "a R x C box" and how it lands, for the helpers' comments.
std::string box_words(const TensorIntrinsicCallNode* n) {
  const auto [rows, cols] = tma_box_of(n);
  const TmaMap m = tma_map_of(n);
  const Buffer& dst = n->buffers[1];
  return fmt::format(
      "the {} x {} box of a row-major matrix at (row0, col0) into shared memory at element `offset` of buffer{}{}",
      rows, cols,
      m.swizzle ? fmt::format(", swizzled by {} bytes{}", m.swizzle, dst.swizzle_row() ? " in column blocks" : "") : "",
      m.cols < cols ? fmt::format(" (a {} x {} box per column block)", m.rows, m.cols) : "");
}

}  // namespace

std::string tma_produce_text(HelperSet& helpers, const TensorIntrinsicCallNode* n, const TmaCallText& args,
                             int destinations) {
  const auto [rows, cols] = tma_box_of(n);
  const DataType t = n->buffers[1].dtype();
  const std::string name = box_helper_name(n, "produce");
  const std::string expect = use_hopper_ptx(helpers, HopperInstruction::MbarrierArriveExpectTx);
  const std::string wait = use_hopper_ptx(helpers, HopperInstruction::MbarrierTryWaitParity);
  helpers.use_text(
      name,
      fmt::format(
          "// TMA by the producer warpgroup's thread (warp specialization, sm_90): {0}. Once the\n"
          "// consumers released the buffer's last tile (its empty mbarrier, barriers[count + slot];\n"
          "// `released` holds each one's next parity) the copy is issued; it completes on the full\n"
          "// mbarrier barriers[slot] the consumers wait on.\n"
          "{1} void {2}({3}* buffer, long long offset, const te_tensor_map* map, const {3}* src, long long row0,\n"
          "    long long col0, unsigned long long* barriers, int count, int slot, unsigned& filled,\n"
          "    unsigned& released) {{\n"
          "  (void)src;  // the kernel's pointer: TMA reads through the map\n"
          "#if TE_PTX(900)\n"
          "  if ((filled >> slot) & 1u) {{\n"
          "    while (!{4}(barriers + count + slot, (released >> slot) & 1u)) {{\n"
          "    }}\n"
          "    released ^= 1u << slot;\n"
          "  }}\n"
          "  filled |= 1u << slot;\n"
          "  {5}(barriers + slot, {6}u);\n"
          "{7}"
          "#else\n"
          "  (void)buffer;\n"
          "  (void)offset;\n"
          "  (void)map;\n"
          "  (void)row0;\n"
          "  (void)col0;\n"
          "  (void)barriers;\n"
          "  (void)count;\n"
          "  (void)slot;\n"
          "  (void)filled;\n"
          "  (void)released;\n"
          "  __trap();  // warp specialization needs sm_90 (te refuses other CudaOptions::arch)\n"
          "#endif\n"
          "}}\n",
          box_words(n), kDeviceFunction, name, c_type(t), wait, expect, int64_t{rows} * cols * t.bytes(),
          box_copies(helpers, n, "  ")));
  return fmt::format("{}({}, {}, &{}, {}, {}, {}, te_tma_barriers, {}, {}, te_tma_filled, te_tma_released);", name,
                     args.dst, args.offset, args.map, args.src, args.row0, args.col0, destinations, args.slot);
}

std::string tma_release_statement(HelperSet& helpers, int destinations, int slot) {
  use_tma_wait(helpers);
  const std::string arrive = use_hopper_ptx(helpers, HopperInstruction::MbarrierArrive);
  helpers.use_text(
      "te_tma_release",
      fmt::format("// Warp specialization: where the producer's copy into destination `slot` stands, each\n"
                  "// consumer thread is done with the buffer's last tile: it arrives on the buffer's\n"
                  "// empty mbarrier (barriers[count + slot]), which the producer waits on, and the coming\n"
                  "// copy becomes pending (one still pending is waited for first, keeping the parities\n"
                  "// of te_tma_wait in step).\n"
                  "{} void te_tma_release(unsigned long long* barriers, int count, int slot, unsigned& filled,\n"
                  "                       unsigned& pending, unsigned& phase) {{\n"
                  "#if TE_PTX(900)\n"
                  "  te_tma_wait(barriers, slot + 1, 1u << slot, pending, phase);\n"
                  "  if ((filled >> slot) & 1u) {}(barriers + count + slot);\n"
                  "  filled |= 1u << slot;\n"
                  "  pending |= 1u << slot;\n"
                  "#else\n"
                  "  (void)barriers;\n"
                  "  (void)count;\n"
                  "  (void)slot;\n"
                  "  (void)filled;\n"
                  "  (void)pending;\n"
                  "  (void)phase;\n"
                  "  __trap();  // warp specialization needs sm_90 (te refuses other CudaOptions::arch)\n"
                  "#endif\n"
                  "}}\n",
                  kDeviceFunction, arrive));
  return fmt::format("te_tma_release(te_tma_barriers, {}, {}, te_tma_filled, te_tma_pending, te_tma_phase);",
                     destinations, slot);
}

std::string tma_load_text(HelperSet& helpers, const TensorIntrinsicCallNode* n, const TmaCallText& args) {
  const auto [rows, cols] = tma_box_of(n);
  const Buffer& dst = n->buffers[1];
  const DataType t = dst.dtype();
  const std::string T = c_type(t);
  const std::string name = box_helper_name(n, "load");
  const std::string expect = use_hopper_ptx(helpers, HopperInstruction::MbarrierArriveExpectTx);
  const std::string copies = box_copies(helpers, n, "    ");
  const std::string element = swizzled_index(helpers, dst, "offset + e");
  use_tma_wait(helpers);
  helpers.use_text(
      name,
      fmt::format(
          "// TMA: {0}, zeros outside the rows x cols matrix. On sm_90 one thread issues the copy,\n"
          "// which completes on mbarrier `slot` (te_tma_wait: bit slot of pending; a copy into\n"
          "// the buffer still pending is waited for first); elsewhere the block's\n"
          "// threads copy the box.\n"
          "{3} void {4}({5}* buffer, long long offset, const te_tensor_map* map, const {5}* src, long long rows,\n"
          "    long long cols, long long row0, long long col0, unsigned long long* barriers, int slot,\n"
          "    unsigned& pending, unsigned& phase) {{\n"
          "#if TE_PTX(900)\n"
          "  te_tma_wait(barriers, slot + 1, 1u << slot, pending, phase);\n"
          "  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {{\n"
          "    {6}(barriers + slot, {7}u);\n"
          "{8}"
          "  }}\n"
          "  pending |= 1u << slot;\n"
          "  (void)src;\n"
          "  (void)rows;\n"
          "  (void)cols;\n"
          "#else\n"
          "  const int threads = (int)(blockDim.x * blockDim.y * blockDim.z);\n"
          "  const int me = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));\n"
          "  for (int e = me; e < {1} * {2}; e += threads) {{\n"
          "    const long long r = row0 + e / {2}, c = col0 + e % {2};\n"
          "    buffer[{9}] = r >= 0 && c >= 0 && r < rows && c < cols ? src[r * cols + c] : {5}();\n"
          "  }}\n"
          "  (void)map;\n"
          "  (void)barriers;\n"
          "  (void)slot;\n"
          "  (void)pending;\n"
          "  (void)phase;\n"
          "#endif\n"
          "}}\n",
          box_words(n), rows, cols, kDeviceFunction, name, T, expect, int64_t{rows} * cols * t.bytes(), copies,
          element));
  return fmt::format("{}({}, {}, &{}, {}, {}, {}, {}, {}, te_tma_barriers, {}, te_tma_pending, te_tma_phase);", name,
                     args.dst, args.offset, args.map, args.src, args.rows_total, args.cols_total, args.row0, args.col0,
                     args.slot);
}

std::vector<std::string> tma_encode_lines(HelperSet& helpers, const TmaMap& map, const std::string& var,
                                          const std::string& pointer, const std::string& rows_total,
                                          const std::string& cols_total) {
  tma_map_param_type(helpers);
  helpers.use_text("te_tma_encode_2d", kEncodeText);
  const DataType t = map.source.dtype();
  return {
      fmt::format("{} {};", kMapType, var),
      fmt::format("const cudaError_t {}_err = te_tma_encode_2d(&{}, {}, {}, {}, {}, {}, {}, {}, {});", var, var,
                  pointer, map_data_type(t), t.bytes(), rows_total, cols_total, map.rows, map.cols,
                  map_swizzle(map.swizzle)),
      fmt::format("if ({0}_err != cudaSuccess) return {0}_err;", var),
  };
}

}  // namespace te::cuda
