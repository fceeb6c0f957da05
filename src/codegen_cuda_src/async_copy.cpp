#include "codegen_cuda_src/async_copy.h"

#include <fmt/format.h>

#include <sstream>

#include "codegen_cuda_src/ptx_instructions.h"
#include "codegen_cuda_src/stmt_util.h"
#include "codegen_cuda_src/warp_specialization.h"

namespace te::cuda {

namespace {

std::string copy_text(const std::string& ptx) {
  return fmt::format(
      "// 16 bytes from global to shared memory: cp.async on sm_80+ (waited for at the next\n"
      "// __syncthreads()), a plain copy elsewhere.\n"
      "static __device__ __forceinline__ void te_cp_async_16(void* dst, const void* src) {{\n"
      "#if TE_PTX(800)\n"
      "  {}(dst, src);\n"
      "#else\n"
      "  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);\n"
      "#endif\n"
      "}}\n",
      ptx);
}

std::string wait_text(const std::string& ptx) {
  return fmt::format(
      "// Waits for this thread's cp.async copies (before a barrier, so the block sees them).\n"
      "static __device__ __forceinline__ void te_cp_async_wait_all() {{\n"
      "#if TE_PTX(800)\n"
      "  {}();\n"
      "#endif\n"
      "}}\n",
      ptx);
}

}  // namespace

const LoadNode* async_copy_source(const StoreNode* n, int lanes) {
  const auto* load = n->value.as<LoadNode>();
  if (load == nullptr || load->predicate.defined() || n->predicate.defined()) return nullptr;
  if (n->buffer.scope() != MemoryScope::Shared || load->buffer.scope() != MemoryScope::Global) return nullptr;
  if (load->buffer.dtype() != n->buffer.dtype() || n->buffer.dtype().bytes() * lanes != 16) return nullptr;
  // 16 consecutive bytes on both sides (a transposing copy reads a strided ramp).
  if (!dense_ramp(load->indices[0], lanes) || !dense_ramp(n->indices[0], lanes)) return nullptr;
  return load;
}

std::string async_copy_text(HelperSet& helpers, const std::string& dst, const std::string& src) {
  helpers.use_text("te_cp_async_16", copy_text(use_ptx(helpers, PtxInstruction::CpAsync16)));
  return fmt::format("te_cp_async_16({}, {});", dst, src);
}

std::string wait_for_async_copies_at_barriers(HelperSet& helpers, const std::string& kernel_text) {
  helpers.use_text("te_cp_async_wait_all", wait_text(use_ptx(helpers, PtxInstruction::CpAsyncWaitAll)));
  return before_each_barrier(kernel_text, "te_cp_async_wait_all();");
}

std::string before_each_barrier(const std::string& kernel_text, const std::string& statement) {
  // The printer writes each barrier as a line of its own: the statement goes on the line
  // before, at its indentation.
  std::istringstream in(kernel_text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const size_t indent = line.find_first_not_of(' ');
    // __syncthreads(), or a warp-specialized kernel's consumer barrier (bar.sync 1, ...).
    const bool barrier =
        indent != std::string::npos && (line.compare(indent, std::string::npos, "__syncthreads();") == 0 ||
                                        is_consumer_barrier(std::string_view(line).substr(indent)));
    if (barrier) out += line.substr(0, indent) + statement + "\n";
    out += line + "\n";
  }
  return out;
}

}  // namespace te::cuda
