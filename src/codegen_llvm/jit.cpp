// The process's JIT: one ORC LLJIT, created on first use and never destroyed (Modules in
// static storage may outlive any destruction order). Each build's object file goes in
// under its own ResourceTracker, so dropping the last Module unloads its code.
#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include <atomic>
#include <mutex>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/compiler.h"
#include "codegen_llvm/disk_cache.h"
#include "codegen_llvm/extern_symbols.h"
#include "codegen_llvm/internal_compile.h"
#include "codegen_llvm/llvm_compat.h"
#include "codegen_llvm/target.h"
#include "te/log.h"
#include "te/runtime/c_runtime_api.h"

namespace te::codegen {
namespace {

std::atomic<uint64_t> g_compilations{0};
std::atomic<uint64_t> g_cache_hits{0};
std::atomic<uint64_t> g_live_code{0};
std::atomic<uint64_t> g_next_module{0};
std::atomic<uint64_t> g_disk_hits{0};

std::string llvm_message(llvm::Error err) { return llvm::toString(std::move(err)); }

llvm::orc::LLJIT& the_jit() {
  static llvm::orc::LLJIT* jit = [] {
    host_target();  // initialises the native target
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) throw Error("build: LLVM cannot describe this host: " + llvm_message(jtmb.takeError()));
    auto created = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    if (!created) throw Error("build: cannot start LLVM's JIT: " + llvm_message(created.takeError()));
    std::unique_ptr<llvm::orc::LLJIT> j = std::move(*created);
    llvm::orc::JITDylib& main = j->getMainJITDylib();
    // te's runtime by address; everything else (libm, memset) from the process.
    llvm::orc::SymbolMap runtime;
    auto add = [&](const char* name, const void* address) {
      runtime[j->mangleAndIntern(name)] = compat::absolute_symbol(address);
    };
    add("te_parallel_for", reinterpret_cast<const void*>(&te_parallel_for));
    add("te_set_last_error", reinterpret_cast<const void*>(&te_set_last_error));
    add("te_get_last_error", reinterpret_cast<const void*>(&te_get_last_error));
    add("te_alloc", reinterpret_cast<const void*>(&te_alloc));
    add("te_alloc_uninitialized", reinterpret_cast<const void*>(&te_alloc_uninitialized));
    add("te_free", reinterpret_cast<const void*>(&te_free));
    if (llvm::Error err = main.define(llvm::orc::absoluteSymbols(std::move(runtime))))
      throw Error("build: cannot register te's runtime with the JIT: " + llvm_message(std::move(err)));
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(j->getDataLayout().getGlobalPrefix());
    if (!process)
      throw Error("build: the JIT cannot search this process's symbols: " + llvm_message(process.takeError()));
    main.addGenerator(std::move(*process));
    const HostTarget& host = host_target();
    TE_LOG(Info, fmt::format("JIT target: {}, cpu {}", host.triple, host.cpu));
    TE_LOG(Debug, fmt::format("JIT target features: {}", host.features));
    return j.release();
  }();
  return *jit;
}

class JitCode : public LoadedCode {
 public:
  JitCode(llvm::orc::ResourceTrackerSP tracker, std::vector<PackedFn> fns, std::unique_ptr<ExternLibraries> libraries)
      : tracker_(std::move(tracker)), fns_(std::move(fns)), libraries_(std::move(libraries)) {
    g_live_code.fetch_add(1);
  }
  ~JitCode() override {
    // Nothing useful can be done if unloading fails; the code then stays mapped.
    if (llvm::Error err = tracker_->remove()) llvm::consumeError(std::move(err));
    g_live_code.fetch_sub(1);
    // libraries_ closes after the code that calls into them is gone (members die after
    // this body).
  }
  PackedFn packed(size_t k) const override { return fns_.at(k); }

 private:
  llvm::orc::ResourceTrackerSP tracker_;
  std::vector<PackedFn> fns_;
  std::unique_ptr<ExternLibraries> libraries_;
};

// The address of every call_extern function of the build, under the symbol its code calls
// (extern_symbol): resolved before any compiling, so an unknown name fails the build at
// once with te's message, never as a lookup failure of the linked code.
llvm::orc::SymbolMap resolve_externs(llvm::orc::LLJIT& jit, const CompileInput& in, const std::string& prefix,
                                     const ExternLibraries& libraries) {
  llvm::orc::SymbolMap symbols;
  for (const ExternFunction& f : extern_functions(in.funcs, "build"))
    symbols[jit.mangleAndIntern(extern_symbol(prefix, f.name))] = compat::absolute_symbol(libraries.resolve(f));
  return symbols;
}

}  // namespace

namespace {

// The object of in, its symbols prefixed by prefix, compiled by LLVM.
std::string compile_jit_object(const CompileInput& in, const std::string& prefix, StageTimer& timer) {
  llvm::LLVMContext ctx;
  const TargetSpec target = resolve_target(in.options);
  check_runs_on_host(target, "build");
  std::unique_ptr<llvm::TargetMachine> tm = make_target_machine(target, in.options.opt_level);
  std::unique_ptr<llvm::Module> m = generate_module(ctx, in, prefix, /*packed_entries=*/true, target, *tm);
  timer.lap("LLVM IR emission");
  optimize(*m, *tm, in.options.opt_level);
  timer.lap("LLVM optimization");
  std::string object = emit_machine_code(*m, *tm, /*assembly=*/false);
  timer.lap("LLVM machine code");
  g_compilations.fetch_add(1);
  return object;
}

// Loads object under its own tracker; nullptr (nothing left loaded) when the JIT rejects
// it, with the reason in *error.
std::shared_ptr<LoadedCode> load(const CompileInput& in, const std::string& prefix, const std::string& object,
                                 std::unique_ptr<ExternLibraries>& libraries, std::string* error) {
  llvm::orc::LLJIT& jit = the_jit();
  llvm::orc::JITDylib& main = jit.getMainJITDylib();
  llvm::orc::ResourceTrackerSP tracker = main.createResourceTracker();
  llvm::orc::SymbolMap externs = resolve_externs(jit, in, prefix, *libraries);
  auto fail = [&](std::string message) -> std::shared_ptr<LoadedCode> {
    if (llvm::Error removed = tracker->remove()) llvm::consumeError(std::move(removed));
    *error = std::move(message);
    return nullptr;
  };
  if (!externs.empty()) {
    if (llvm::Error err = main.define(llvm::orc::absoluteSymbols(std::move(externs)), tracker))
      return fail("build: the JIT cannot register the extern functions: " + llvm_message(std::move(err)));
  }
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, prefix + "object");
  if (llvm::Error err = jit.addObjectFile(tracker, std::move(buffer)))
    return fail("build: the JIT rejects the compiled code: " + llvm_message(std::move(err)));
  std::vector<PackedFn> fns;
  for (const KernelSignature& sig : in.sigs) {
    auto sym = jit.lookup(main, packed_symbol(prefix, sig.name));
    if (!sym)
      return fail(
          fmt::format("build: {}: the JIT cannot link the compiled code: {}", sig.name, llvm_message(sym.takeError())));
    fns.push_back(reinterpret_cast<PackedFn>(static_cast<uintptr_t>(compat::address_of(*sym))));
  }
  return std::make_shared<JitCode>(std::move(tracker), std::move(fns), std::move(libraries));
}

}  // namespace

std::shared_ptr<LoadedCode> jit_compile(const CompileInput& in) {
  llvm::orc::LLJIT& jit = the_jit();
  std::string what = in.funcs.empty() ? "JIT" : "JIT '" + in.funcs[0].name + "'";
  StageTimer timer(what);
  std::string error;
  // Extern names are resolved before any compiling: an unknown one fails at once.
  auto libraries = std::make_unique<ExternLibraries>(in.options.extern_libraries);
  resolve_externs(jit, in, "", *libraries);
  // The persistent cache (with use_cache): the symbols' prefix comes from the key, so the
  // object is the same in every process. Two live copies of one key would clash (two
  // threads building it at once): the second is compiled again under a prefix of its own.
  if (in.options.use_cache && !disk_cache_dir().empty()) {
    const std::string key = "jit\n" + te_build_identity() + "\n" + cache_key(in);
    const std::string prefix = fmt::format("__te_{:016x}_", cache_digest(key));
    std::optional<std::string> object = disk_cache_get(key);
    const bool hit = object.has_value();
    if (hit) {
      TE_LOG(Info, fmt::format("{}: from the compile cache", what));
      g_disk_hits.fetch_add(1);
    } else {
      TE_LOG(Info, fmt::format("{}: compiling (not in the cache)", what));
      object = compile_jit_object(in, prefix, timer);
    }
    if (std::shared_ptr<LoadedCode> code = load(in, prefix, *object, libraries, &error)) {
      if (!hit) disk_cache_put(key, *object);
      timer.lap("JIT linking");
      timer.finish();
      return code;
    }
    TE_LOG(Debug, fmt::format("{}: the cached prefix is taken ({}); compiling under another", what, error));
  } else {
    TE_LOG(Info, fmt::format("{}: compiling (not in the cache)", what));
  }
  std::string prefix = fmt::format("__te{}_", g_next_module.fetch_add(1));
  std::string object = compile_jit_object(in, prefix, timer);
  std::shared_ptr<LoadedCode> code = load(in, prefix, object, libraries, &error);
  if (!code) throw Error(error);
  timer.lap("JIT linking");
  timer.finish();
  return code;
}

void note_cache_hit() {
  g_cache_hits.fetch_add(1);
  TE_LOG(Info, "JIT: cache hit, reusing the code of an identical earlier build");
}

JitStats current_jit_stats() {
  JitStats s;
  s.compilations = g_compilations.load();
  s.cache_hits = g_cache_hits.load();
  s.live_code_objects = g_live_code.load();
  s.disk_cache_hits = g_disk_hits.load();
  return s;
}

}  // namespace te::codegen
