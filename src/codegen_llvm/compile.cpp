// The compilation pipeline: CodeGen -> verify -> optimize -> object file or text.
#include <fmt/format.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/compiler.h"
#include "codegen_llvm/disk_cache.h"
#include "codegen_llvm/internal_compile.h"
#include "codegen_llvm/llvm_compat.h"
#include "codegen_llvm/target.h"
#include "expr/extern_calls.h"
#include "te/log.h"

namespace te::codegen {

namespace {

// In an object an extern call names the C symbol itself, which te's math functions may
// also call (`expf`): one symbol called with two function types would be a silent ABI
// mismatch. (CodeGen catches the extern declared second; this, the libm call second.)
void check_one_signature_per_symbol(llvm::Module& m) {
  for (llvm::Function& fn : m)
    for (llvm::BasicBlock& bb : fn)
      for (llvm::Instruction& inst : bb) {
        auto* call = llvm::dyn_cast<llvm::CallInst>(&inst);
        if (call == nullptr) continue;
        auto* callee = llvm::dyn_cast<llvm::Function>(call->getCalledOperand()->stripPointerCasts());
        if (callee != nullptr && callee->getFunctionType() != call->getFunctionType())
          throw Error(
              fmt::format("build: '{}' is called with two C signatures in this build: a call_extern of "
                          "that name and te's own math function, which calls libm's '{}'; give the "
                          "extern function another name or call it with the types libm's takes",
                          callee->getName().str(), callee->getName().str()));
      }
}

}  // namespace

std::unique_ptr<llvm::Module> generate_module(llvm::LLVMContext& ctx, const CompileInput& in,
                                              const std::string& symbol_prefix, bool packed_entries,
                                              const TargetSpec& target, llvm::TargetMachine& tm) {
  auto m = std::make_unique<llvm::Module>(in.funcs.empty() ? "te" : in.funcs[0].name, ctx);
  m->setTargetTriple(target.triple);
  m->setDataLayout(tm.createDataLayout());
  CodeGenOptions options;
  options.cpu = target.cpu;
  options.features = codegen_features(target);
  options.prefer_vector_bits = target.vector_bits;
  options.subtarget = tm.getMCSubtargetInfo();
  options.fma_contraction = in.options.fma_contraction;
  options.fast_vector_math = in.options.fast_vector_math;
  options.check_data_indices = in.options.check_data_indices;
  options.symbol_prefix = symbol_prefix;
  options.packed_entries = packed_entries;
  options.streaming_store_min_bytes = streaming_threshold(target, in.options.streaming_store_min_bytes);
  // In an object, a kernel and an extern function of one name would be one symbol.
  const std::vector<ExternFunction> externs = extern_functions(in.funcs, "build");
  for (const ExternFunction& f : externs)
    for (const LoweredFunc& func : in.funcs)
      if (func.name == f.name)
        throw Error(
            fmt::format("build: '{}' calls call_extern '{}', the name of a function of this build; an "
                        "extern function needs a name of its own",
                        f.caller, f.name));
  CodeGen cg(*m, options);
  for (size_t k = 0; k < in.funcs.size(); ++k) cg.add_function(in.funcs[k], in.sigs[k]);
  if (!externs.empty()) check_one_signature_per_symbol(*m);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*m, &os)) {
    os.flush();
    TE_ICHECK(false, "LLVM rejects the generated IR: " + problems);
  }
  return m;
}

std::string compile_object(const CompileInput& in) {
  // The persistent cache: exporting the same functions again, in a new process, skips LLVM.
  if (disk_cache_dir().empty()) return compile_object(in, nullptr);
  const std::string key = "object\n" + te_build_identity() + "\n" + cache_key(in);
  if (std::optional<std::string> object = disk_cache_get(key)) {
    TE_LOG(Info, fmt::format("object '{}': from the compile cache", in.funcs.empty() ? "" : in.funcs[0].name));
    return *object;
  }
  std::string object = compile_object(in, nullptr);
  disk_cache_put(key, object);
  return object;
}

std::string compile_object(const CompileInput& in, const std::function<void(llvm::Module&)>& extend) {
  std::string what = in.funcs.empty() ? "object" : "object '" + in.funcs[0].name + "'";
  const TargetSpec target = resolve_target(in.options);
  TE_LOG(Info, fmt::format("{}: compiling for {}, cpu {}", what, target.triple, target.cpu));
  StageTimer timer(what);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::TargetMachine> tm = make_target_machine(target, in.options.opt_level);
  std::unique_ptr<llvm::Module> m = generate_module(ctx, in, "", /*packed_entries=*/false, target, *tm);
  if (extend) extend(*m);
  timer.lap("LLVM IR emission");
  optimize(*m, *tm, in.options.opt_level);
  timer.lap("LLVM optimization");
  std::string object = emit_machine_code(*m, *tm, /*assembly=*/false);
  timer.lap("LLVM machine code");
  timer.finish();
  return object;
}

std::string compile_text(const CompileInput& in, TextKind kind) {
  llvm::LLVMContext ctx;
  const TargetSpec target = resolve_target(in.options);
  std::unique_ptr<llvm::TargetMachine> tm = make_target_machine(target, in.options.opt_level);
  std::unique_ptr<llvm::Module> m = generate_module(ctx, in, "", /*packed_entries=*/false, target, *tm);
  if (kind != TextKind::UnoptimizedIR) optimize(*m, *tm, in.options.opt_level);
  if (kind == TextKind::Assembly) return emit_machine_code(*m, *tm, /*assembly=*/true);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  os.flush();
  return text;
}

std::string target_fingerprint() {
  const HostTarget& host = host_target();
  return fmt::format("llvm {}.{}.{}; {}; {}; {}", LLVM_VERSION_MAJOR, LLVM_VERSION_MINOR, LLVM_VERSION_PATCH,
                     host.triple, host.cpu, host.features);
}

bool foreign_target(const BuildOptions& options) { return !resolve_target(options).host_arch; }

std::string describe(const BuildOptions& options) {
  const TargetSpec target = resolve_target(options);
  return fmt::format("{}, cpu {}, features {}", target.triple, target.cpu,
                     target.features.empty() ? "(the cpu's own)" : target.features);
}

std::string host_cpu_name() { return host_target().cpu; }
std::string host_cpu_feature_string() { return host_target().features; }

}  // namespace te::codegen
