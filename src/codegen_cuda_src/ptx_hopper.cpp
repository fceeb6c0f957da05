#include "codegen_cuda_src/ptx_hopper.h"

#include <fmt/format.h>

#include "codegen_cuda_src/ptx_instructions.h"
#include "te/error.h"

namespace te::cuda {

namespace {

// The shared-memory address of a generic pointer, as the .shared instructions take it.
std::string shared_address(const char* local, const char* pointer) {
  return fmt::format("  const unsigned {} = (unsigned)__cvta_generic_to_shared({});\n", local, pointer);
}

// The body of a warp-specialized kernel's own calls (setmaxnreg, the consumers' named
// barrier) where the instruction is missing: nvcc's host pass parses the kernel, and te
// builds such kernels for sm_90a alone, so no GPU runs this.
constexpr const char* kWarpSpecializedOnly =
    "  __trap();  // warp specialization needs sm_90a (te refuses other CudaOptions::arch)\n";

PtxForm hopper_form(HopperInstruction instruction) {
  const std::string sm90 = "TE_PTX(900)", sm90a = "TE_PTX(900) && TE_PTX_SM90A";
  switch (instruction) {
    case HopperInstruction::WgmmaFence:
      return {"te_ptx_wgmma_fence",
              sm90a,
              "// wgmma.fence: the warpgroup's register accesses before it happen before the wgmmas after it.\n",
              "void te_ptx_wgmma_fence()",
              "  asm volatile(\"wgmma.fence.sync.aligned;\\n\" : : : \"memory\");\n",
              ""};
    case HopperInstruction::WgmmaCommitGroup:
      return {"te_ptx_wgmma_commit_group",
              sm90a,
              "// wgmma.commit_group: the wgmmas issued since the last commit become one group.\n",
              "void te_ptx_wgmma_commit_group()",
              "  asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" : : : \"memory\");\n",
              ""};
    case HopperInstruction::WgmmaWaitGroup:
      return {"te_ptx_wgmma_wait_group",
              sm90a,
              "// wgmma.wait_group N: waits until at most N of the warpgroup's wgmma groups are pending.\n",
              "void te_ptx_wgmma_wait_group()",
              "  asm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" : : \"n\"(N) : \"memory\");\n",
              "template <int N>\n"};
    case HopperInstruction::WgmmaFenceRegisters:
      return {"te_ptx_wgmma_fence_registers",
              sm90a,
              "// No instruction: ties the accumulators to this point, so the compiler keeps their accesses\n"
              "// on the right side of a wgmma.fence / wgmma.wait_group.\n",
              "void te_ptx_wgmma_fence_registers(float* d, int count)",
              "#pragma unroll\n"
              "  for (int i = 0; i < count; ++i) asm volatile(\"\" : \"+f\"(d[i]) : : \"memory\");\n",
              ""};
    case HopperInstruction::SetmaxnregInc:
    case HopperInstruction::SetmaxnregDec: {
      const bool inc = instruction == HopperInstruction::SetmaxnregInc;
      return {inc ? "te_ptx_setmaxnreg_inc" : "te_ptx_setmaxnreg_dec",
              sm90a,
              inc ? "// setmaxnreg.inc: this warpgroup's threads may use up to N registers (24..256, multiples of 8).\n"
                  : "// setmaxnreg.dec: this warpgroup's threads give back registers down to N.\n",
              inc ? "void te_ptx_setmaxnreg_inc()" : "void te_ptx_setmaxnreg_dec()",
              inc ? "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %0;\\n\" : : \"n\"(N));\n"
                  : "  asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\\n\" : : \"n\"(N));\n",
              "template <int N>\n",
              kWarpSpecializedOnly};
    }
    case HopperInstruction::NamedBarrierSync:
      return {"te_ptx_bar_sync",
              sm90,
              "// bar.sync id, threads: waits until `threads` threads (whole warps) arrived at barrier `id`\n"
              "// (1..15; __syncthreads() is barrier 0 over the whole block).\n",
              "void te_ptx_bar_sync(unsigned id, unsigned threads)",
              "  asm volatile(\"bar.sync %0, %1;\\n\" : : \"r\"(id), \"r\"(threads) : \"memory\");\n",
              "",
              "  (void)id;\n"
              "  (void)threads;\n" +
                  std::string(kWarpSpecializedOnly)};
    case HopperInstruction::FenceProxyAsync:
      return {"te_ptx_fence_proxy_async",
              sm90,
              "// fence.proxy.async: this thread's shared-memory writes are visible to the async proxy (TMA,\n"
              "// wgmma) after it.\n",
              "void te_ptx_fence_proxy_async()",
              "  asm volatile(\"fence.proxy.async.shared::cta;\\n\" : : : \"memory\");\n",
              ""};
    case HopperInstruction::MbarrierInit:
      return {"te_ptx_mbarrier_init",
              sm90,
              "// mbarrier.init: a barrier in shared memory whose phases complete after `count` arrivals\n"
              "// and the transactions (bytes) they expect.\n",
              "void te_ptx_mbarrier_init(unsigned long long* bar, unsigned count)",
              shared_address("address", "bar") +
                  "  asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" : : \"r\"(address), \"r\"(count) : "
                  "\"memory\");\n",
              ""};
    case HopperInstruction::MbarrierArrive:
      return {"te_ptx_mbarrier_arrive",
              sm90,
              "// mbarrier.arrive: one arrival on the barrier's current phase.\n",
              "void te_ptx_mbarrier_arrive(unsigned long long* bar)",
              shared_address("address", "bar") +
                  "  asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" : : \"r\"(address) : \"memory\");\n",
              ""};
    case HopperInstruction::MbarrierArriveExpectTx:
      return {"te_ptx_mbarrier_arrive_expect_tx",
              sm90,
              "// mbarrier.arrive.expect_tx: the current phase also waits for `bytes` of copies; one arrival.\n",
              "void te_ptx_mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes)",
              shared_address("address", "bar") +
                  "  asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" : : \"r\"(address), "
                  "\"r\"(bytes) : \"memory\");\n",
              ""};
    case HopperInstruction::MbarrierTryWaitParity:
      return {"te_ptx_mbarrier_try_wait_parity",
              sm90,
              "// mbarrier.try_wait.parity: whether the phase of that parity has completed (its copies then\n"
              "// visible); the hardware may wait a while before answering false.\n",
              "bool te_ptx_mbarrier_try_wait_parity(unsigned long long* bar, unsigned parity)",
              shared_address("address", "bar") +
                  "  unsigned done;\n"
                  "  asm volatile(\n"
                  "      \"{\\n.reg .pred p;\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n"
                  "selp.u32 %0, 1, 0, p;\\n}\\n\"\n"
                  "      : \"=r\"(done)\n"
                  "      : \"r\"(address), \"r\"(parity)\n"
                  "      : \"memory\");\n"
                  "  return done != 0;\n",
              ""};
    case HopperInstruction::TmaLoad2d:
      return {"te_ptx_tma_load_2d",
              sm90,
              "// TMA: the box of a 2-D tensor map at element (c0, c1) (c0 innermost) into shared memory;\n"
              "// its bytes complete the barrier's transactions.\n",
              "void te_ptx_tma_load_2d(void* dst, const void* map, int c0, int c1, unsigned long long* bar)",
              shared_address("address", "dst") + shared_address("barrier", "bar") +
                  "  asm volatile(\n"
                  "      \"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \"\n"
                  "      \"[%0], [%1, {%2, %3}], [%4];\\n\"\n"
                  "      :\n"
                  "      : \"r\"(address), \"l\"(map), \"r\"(c0), \"r\"(c1), \"r\"(barrier)\n"
                  "      : \"memory\");\n",
              ""};
  }
  TE_ICHECK(false, "CUDA: a Hopper instruction without a form");
  return {};
}

// "%first, %first+1, ..." for count operands, 8 to a line of the asm string.
std::string operand_list(int first, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    if (i > 0) out += i % 8 == 0 ? ",\"\n      \" " : ", ";
    out += fmt::format("%{}", first + i);
  }
  return out;
}

}  // namespace

std::string use_hopper_ptx(HelperSet& helpers, HopperInstruction instruction) {
  return use_ptx_form(helpers, hopper_form(instruction));
}

namespace {

// wgmma m64n<n>k16 with A from a descriptor (shared memory) or from registers.
std::string use_wgmma_form(HelperSet& helpers, DataType ab, int n, bool transpose_b, bool registers_a) {
  TE_ICHECK(n >= 8 && n <= 256 && n % 8 == 0, "CUDA: wgmma's N must be a multiple of 8 in 8..256");
  TE_ICHECK(ab == Float(16) || ab == BFloat(16), "CUDA: wgmma multiplies float16 or bfloat16");
  const std::string type = ab == Float(16) ? "f16" : "bf16";
  const std::string name =
      fmt::format("te_ptx_wgmma_m64n{}k16_f32_{}{}{}", n, type, registers_a ? "_rs" : "", transpose_b ? "_tb" : "");
  const int regs = n / 2;
  std::string outputs;
  for (int i = 0; i < regs; ++i)
    outputs += fmt::format("{}\"+f\"(d[{}])", i == 0 ? "" : i % 8 == 0 ? ",\n        " : ", ", i);
  // Operands: d, then a (a descriptor, or 4 registers), b's descriptor, scale-d. A in
  // registers takes no imm-trans-a.
  const int a_count = registers_a ? 4 : 1;
  const std::string a = registers_a ? "{" + operand_list(regs, 4) + "}" : fmt::format("%{}", regs);
  const std::string inputs = registers_a ? "\"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3])" : "\"l\"(desc_a)";
  const std::string body = fmt::format(
      "  asm volatile(\n"
      "      \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{0}, 0;\\n\"\n"
      "      \"wgmma.mma_async.sync.aligned.m64n{1}k16.f32.{2}.{2} \"\n"
      "      \"{{{3}}}, \"\n"
      "      \"{4}, %{5}, p, 1, 1, {6}{7};\\n}}\\n\"\n"
      "      : {8}\n"
      "      : {9}, \"l\"(desc_b), \"r\"(scale_d));\n",
      regs + a_count + 1, n, type, operand_list(0, regs), a, regs + a_count, registers_a ? "" : "0, ",
      transpose_b ? 1 : 0, outputs, inputs);
  const std::string b_layout = transpose_b ? "MN-major (imm-trans-b)" : "K-major";
  const std::string comment =
      registers_a ? fmt::format(
                        "// wgmma m64n{0}k16, {1} inputs, A from registers: d (the thread's {2} accumulators of the\n"
                        "// 64 x {0} tile) = a (64 x 16: the thread's 4 registers of the warpgroup's fragment) x b\n"
                        "// (16 x {0}, {3} in shared memory) [+ d when scale_d]; complete at a later wait_group.\n",
                        n, type, regs, b_layout)
                  : fmt::format(
                        "// wgmma m64n{0}k16, {1} inputs: d (the thread's {2} accumulators of the 64 x {0} tile)\n"
                        "// = a (64 x 16) x b (16 x {0}) [+ d when scale_d], a K-major, b {3} in shared\n"
                        "// memory (matrix descriptors); complete at a later wgmma.wait_group.\n",
                        n, type, regs, b_layout);
  return use_ptx_form(helpers, {name, "TE_PTX(900) && TE_PTX_SM90A", comment,
                                fmt::format("void {}(float* d, {}, unsigned long long desc_b, int scale_d)", name,
                                            registers_a ? "const unsigned* a" : "unsigned long long desc_a"),
                                body, ""});
}

}  // namespace

std::string use_wgmma_ptx(HelperSet& helpers, DataType ab, int n, bool transpose_b) {
  return use_wgmma_form(helpers, ab, n, transpose_b, false);
}

std::string use_wgmma_rs_ptx(HelperSet& helpers, DataType ab, int n, bool transpose_b) {
  return use_wgmma_form(helpers, ab, n, transpose_b, true);
}

}  // namespace te::cuda
