// te::build: signatures, the compile cache and the Module it returns.
//
// The cache maps a key (the printed IR, the identity pattern of its variables and
// buffers, the options, LLVM's version and the host CPU) to loaded code that some Module
// still holds; code no Module holds is unloaded, so the cache never keeps code alive.
#include "te/build.h"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "expr/analysis.h"
#include "codegen_llvm/build_options.h"
#include "codegen_llvm/compiler.h"
#include "codegen_llvm/module_impl.h"
#include "codegen_llvm/target.h"
#include "target/target_check.h"

namespace te::codegen {
namespace {

// Printed IR says nothing of variable identity (two distinct variables may share a
// name) or of the types of loop and let variables; this records both, numbering
// variables and buffers in order of first appearance.
class IdentityPattern : public IRVisitor {
 public:
  std::string text;
  void param(const Param& p) {
    if (!p.is_buffer()) return var(p.var.get());
    buffer(p.buffer.get());
    for (const Expr& e : p.buffer.shape()) visit(e);
  }

 protected:
  void visit_var(const VarNode* n) override { var(n); }
  void visit_load(const LoadNode* n) override {
    buffer(n->buffer.get());
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    buffer(n->buffer.get());
    IRVisitor::visit_store(n);
  }
  void visit_allocate(const AllocateNode* n) override {
    buffer(n->buffer.get());
    IRVisitor::visit_allocate(n);
  }
  void visit_for(const ForNode* n) override {
    var(n->var.get());
    IRVisitor::visit_for(n);
  }
  void visit_let_stmt(const LetStmtNode* n) override {
    var(n->var.get());
    IRVisitor::visit_let_stmt(n);
  }
  void visit_let(const LetNode* n) override {
    var(n->var.get());
    IRVisitor::visit_let(n);
  }

 private:
  void var(const VarNode* v) {
    auto [it, inserted] = vars_.emplace(v, vars_.size());
    text += inserted ? fmt::format("v{}:{} ", it->second, v->dtype.to_string()) : fmt::format("v{} ", it->second);
  }
  void buffer(const BufferNode* b) {
    auto [it, inserted] = buffers_.emplace(b, buffers_.size());
    text += fmt::format("b{} ", it->second);
  }
  std::unordered_map<const VarNode*, size_t> vars_;
  std::unordered_map<const BufferNode*, size_t> buffers_;
};

}  // namespace

std::string cache_key(const CompileInput& in) {
  std::string key = target_fingerprint();
  key += "\n" + build_options_key(in.options);
  for (const LoweredFunc& f : in.funcs) {
    IdentityPattern pattern;
    for (const Param& p : f.params) pattern.param(p);
    pattern.visit(f.body);
    key += to_string(f) + "\n" + pattern.text + "\n";
  }
  return key;
}

namespace {

class CompileCache {
 public:
  std::shared_ptr<LoadedCode> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    std::shared_ptr<LoadedCode> code = it->second.lock();
    if (!code) entries_.erase(it);
    return code;
  }
  void insert(const std::string& key, const std::shared_ptr<LoadedCode>& code) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Drop entries whose code is gone so the map does not grow without bound.
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.expired())
        it = entries_.erase(it);
      else
        ++it;
    }
    entries_[key] = code;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<LoadedCode>> entries_;
};

CompileCache& compile_cache() {
  static CompileCache* cache = new CompileCache();  // outlives static Modules
  return *cache;
}

}  // namespace

CompileInput compile_input(const std::vector<LoweredFunc>& funcs, const BuildOptions& options) {
  check_build_options(options, "build");
  CompileInput in;
  in.options = options;
  std::unordered_set<std::string> names;
  for (const LoweredFunc& f : funcs) {
    if (!names.insert(f.name).second) throw Error(fmt::format("build: two functions are named '{}'", f.name));
    in.sigs.push_back(kernel_signature(f));
    in.funcs.push_back(f);
  }
  return in;
}

}  // namespace te::codegen

namespace te {

Module build(const LoweredFunc& func, const BuildOptions& options) {
  return build(std::vector<LoweredFunc>{func}, options);
}

Module build(const std::vector<LoweredFunc>& funcs, const BuildOptions& options) {
  if (funcs.empty()) throw Error("build: no functions given");
  codegen::CompileInput in = codegen::compile_input(funcs, options);
  std::shared_ptr<codegen::LoadedCode> code;
  std::string key;
  if (options.use_cache) {
    key = codegen::cache_key(in);
    code = codegen::compile_cache().find(key);
    if (code) codegen::note_cache_hit();
  }
  if (!code) {
    code = codegen::jit_compile(in);
    if (options.use_cache) codegen::compile_cache().insert(key, code);
  }
  auto impl = std::make_shared<detail::ModuleImpl>();
  impl->code = code;
  for (size_t k = 0; k < in.funcs.size(); ++k) {
    detail::FunctionEntry e;
    e.func = in.funcs[k];
    e.sig = in.sigs[k];
    const BufferUse use = buffer_use(e.func.body);
    for (const Param& p : e.func.params) e.param_written.push_back(p.is_buffer() && use.stores(p.buffer.get()));
    e.packed = code->packed(k);
    impl->functions.push_back(std::move(e));
  }
  return Module(std::move(impl));
}

std::string llvm_ir(const LoweredFunc& func, bool optimized, const BuildOptions& options) {
  return codegen::compile_text(codegen::compile_input({func}, options),
                               optimized ? codegen::TextKind::OptimizedIR : codegen::TextKind::UnoptimizedIR);
}

std::string assembly(const LoweredFunc& func, const BuildOptions& options) {
  return codegen::compile_text(codegen::compile_input({func}, options), codegen::TextKind::Assembly);
}

std::string describe_target(const BuildOptions& options) {
  check_target_fields(options.target, "describe_target");
  return codegen::describe(options);
}
Target resolved_target(const Target& target) {
  check_target_fields(target, "resolved_target");
  BuildOptions options;
  options.target = target;
  const codegen::TargetSpec spec = codegen::resolve_target(options);
  Target resolved;
  resolved.triple = spec.triple;
  resolved.cpu = spec.cpu;
  resolved.features = spec.features;
  resolved.vector_bits = codegen::widest_vector_bits(spec);
  return resolved;
}
void check_runs_on_host(const Target& target, const std::string& api) {
  check_target_fields(target, api.c_str());
  if (!target.is_llvm())
    throw Error(
        fmt::format("{}: target '{}' cannot run in this process: te runs CPU code only (CUDA kernels "
                    "are .cu files for nvcc)",
                    api, target.str()));
  BuildOptions options;
  options.target = target;
  codegen::check_runs_on_host(codegen::resolve_target(options), api);
}
std::string host_cpu() { return codegen::host_cpu_name(); }
std::string host_cpu_features() { return codegen::host_cpu_feature_string(); }

JitStats jit_stats() { return codegen::current_jit_stats(); }

}  // namespace te
