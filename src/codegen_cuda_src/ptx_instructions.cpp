#include "codegen_cuda_src/ptx_instructions.h"

#include <fmt/format.h>

namespace te::cuda {

namespace {

// Which path a helper takes: the GPU's instructions where the device has them (the host
// pass of nvcc has none), unless te's CPU emulation says otherwise.
const char* const kPtxMacro =
    "// TE_PTX(arch): this device has the PTX instructions of compute capability arch (te's\n"
    "// CPU emulation defines it, and the te_ptx_* functions, itself).\n"
    "#ifndef TE_PTX_EMULATED\n"
    "#if defined(__CUDA_ARCH__)\n"
    "#define TE_PTX(arch) (__CUDA_ARCH__ >= (arch))\n"
    "#else\n"
    "#define TE_PTX(arch) 0\n"
    "#endif\n"
    "#endif\n";

struct Form {
  const char* name;
  int arch;
  const char* comment;
  const char* signature;
  const char* body;
};

Form form(PtxInstruction instruction) {
  switch (instruction) {
    case PtxInstruction::MmaF16:
    case PtxInstruction::MmaBF16: {
      const bool bf16 = instruction == PtxInstruction::MmaBF16;
      return {
          bf16 ? "te_ptx_mma_m16n8k16_bf16" : "te_ptx_mma_m16n8k16_f16", 800,
          bf16 ? "// mma.sync m16n8k16, bf16 inputs: d (4 floats per lane) += a (4 pairs) x b (2 pairs).\n"
               : "// mma.sync m16n8k16, f16 inputs: d (4 floats per lane) += a (4 pairs) x b (2 pairs).\n",
          "(float* d, const unsigned* a, const unsigned* b)",
          bf16 ? "  asm volatile(\n"
                 "      \"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, \"\n"
                 "      \"{%8, %9}, {%0, %1, %2, %3};\\n\"\n"
                 "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
                 "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
               : "  asm volatile(\n"
                 "      \"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, \"\n"
                 "      \"{%8, %9}, {%0, %1, %2, %3};\\n\"\n"
                 "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
                 "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"};
    }
    case PtxInstruction::LdmatrixX4:
      return {"te_ptx_ldmatrix_x4", 750,
              "// ldmatrix x4: four 8 x 8 matrices of 16-bit elements from shared memory; lane l gives the\n"
              "// address of row l % 8 of matrix l / 8 and receives row l / 4, pair l % 4 of each.\n",
              "(unsigned* d, const void* row)",
              "  const unsigned address = (unsigned)__cvta_generic_to_shared(row);\n"
              "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
              "               : \"=r\"(d[0]), \"=r\"(d[1]), \"=r\"(d[2]), \"=r\"(d[3])\n"
              "               : \"r\"(address));\n"};
    case PtxInstruction::LdmatrixX2:
      return {"te_ptx_ldmatrix_x2", 750,
              "// ldmatrix x2: two 8 x 8 matrices of 16-bit elements from shared memory; lanes 0-15\n"
              "// give the addresses of their rows, lane l receives row l / 4, pair l % 4 of each.\n",
              "(unsigned* d, const void* row)",
              "  const unsigned address = (unsigned)__cvta_generic_to_shared(row);\n"
              "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\\n\"\n"
              "               : \"=r\"(d[0]), \"=r\"(d[1])\n"
              "               : \"r\"(address));\n"};
    case PtxInstruction::LdmatrixX2Trans:
      return {"te_ptx_ldmatrix_x2_trans", 750,
              "// ldmatrix x2.trans: two 8 x 8 matrices, transposed; lanes 0-15 give the addresses of\n"
              "// their rows, lane l receives column l / 4, rows 2 (l % 4) and 2 (l % 4) + 1 of each.\n",
              "(unsigned* d, const void* row)",
              "  const unsigned address = (unsigned)__cvta_generic_to_shared(row);\n"
              "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\\n\"\n"
              "               : \"=r\"(d[0]), \"=r\"(d[1])\n"
              "               : \"r\"(address));\n"};
    case PtxInstruction::CpAsync16:
      return {"te_ptx_cp_async_16", 800,
              "// cp.async: 16 bytes from global to shared memory, landing at a later wait.\n",
              "(void* dst, const void* src)",
              "  const unsigned address = (unsigned)__cvta_generic_to_shared(dst);\n"
              "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" : : \"r\"(address), \"l\"(src) : "
              "\"memory\");\n"};
    case PtxInstruction::CpAsyncWaitAll:
      return {"te_ptx_cp_async_wait_all", 800, "// cp.async.wait_all: this thread's copies have landed.\n", "()",
              "  asm volatile(\"cp.async.wait_all;\\n\" : : : \"memory\");\n"};
  }
  return {};
}

// TE_PTX_SM90A: the device has sm_90a's arch-specific instructions (wgmma, setmaxnreg):
// nvcc -arch=sm_90a defines __CUDA_ARCH_FEAT_SM90_ALL.
const char* const kSm90aMacro =
    "// TE_PTX_SM90A: this device has sm_90a's instructions (wgmma, setmaxnreg): nvcc -arch=sm_90a.\n"
    "#ifndef TE_PTX_EMULATED\n"
    "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
    "#define TE_PTX_SM90A 1\n"
    "#else\n"
    "#define TE_PTX_SM90A 0\n"
    "#endif\n"
    "#endif\n";

}  // namespace

std::string use_ptx_form(HelperSet& helpers, const PtxForm& f) {
  helpers.use_text("TE_PTX", kPtxMacro);
  if (f.condition.find("TE_PTX_SM90A") != std::string::npos) helpers.use_text("TE_PTX_SM90A", kSm90aMacro);
  const std::string otherwise = f.otherwise.empty() ? ""
                                                    : fmt::format(
                                                          "#elif !defined(TE_PTX_EMULATED)\n"
                                                          "{}static __device__ __forceinline__ {} {{\n"
                                                          "{}"
                                                          "}}\n",
                                                          f.prefix, f.signature, f.otherwise);
  helpers.use_text(f.name, fmt::format("{0}#if {1} && !defined(TE_PTX_EMULATED)\n"
                                       "{2}static __device__ __forceinline__ {3} {{\n"
                                       "{4}"
                                       "}}\n"
                                       "{5}"
                                       "#endif\n",
                                       f.comment, f.condition, f.prefix, f.signature, f.body, otherwise));
  return f.name;
}

std::string use_ptx(HelperSet& helpers, PtxInstruction instruction) {
  const Form f = form(instruction);
  return use_ptx_form(helpers, {f.name, fmt::format("TE_PTX({})", f.arch), f.comment,
                                fmt::format("void {}{}", f.name, f.signature), f.body, ""});
}

}  // namespace te::cuda
