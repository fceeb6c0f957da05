// te's inline PTX, one small device function per instruction (te_ptx_<name>), so that the
// helpers that use an instruction read as C++ and te's CPU emulation can replace each
// one (tests/cuda_emulation/ptx_emulation.h defines TE_PTX_EMULATED and its own).
#pragma once
#include <string>

#include "codegen_cuda_src/helpers.h"

namespace te::cuda {

enum class PtxInstruction {
  MmaF16,           // mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
  MmaBF16,          // mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
  LdmatrixX4,       // ldmatrix.sync.aligned.m8n8.x4.shared.b16
  LdmatrixX2,       // ldmatrix.sync.aligned.m8n8.x2.shared.b16
  LdmatrixX2Trans,  // ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
  CpAsync16,        // cp.async.cg.shared.global, 16 bytes
  CpAsyncWaitAll,   // cp.async.wait_all
};

// Registers the instruction's function (after TE_PTX, the macro that says which path a
// helper takes) and returns its name. The function exists where TE_PTX(its arch) holds.
std::string use_ptx(HelperSet& helpers, PtxInstruction instruction);

// One te_ptx_* function: defined where `condition` (a preprocessor expression over
// TE_PTX(arch) and TE_PTX_SM90A) holds, unless the emulation defines its own.
struct PtxForm {
  std::string name;       // te_ptx_<instruction>
  std::string condition;  // "TE_PTX(800)", "TE_PTX_SM90A"
  std::string comment;    // lines starting with "// "
  std::string signature;  // "(float* d, const unsigned* a)"; "template <int N>" forms put it in prefix
  std::string body;
  std::string prefix;  // e.g. "template <int N>\n"
  // The body where the condition fails (nvcc's host pass, other GPUs), for forms the
  // kernel calls directly rather than from a helper with a path of its own; empty: the
  // form is not defined there.
  std::string otherwise = {};
};
// Registers form (and the TE_PTX / TE_PTX_SM90A macros it needs) and returns its name.
std::string use_ptx_form(HelperSet& helpers, const PtxForm& form);

}  // namespace te::cuda
