// Kernels and their packed entry points: the C prototype of the KernelSignature, the
// parameter prologue (null checks, scalar conversions) and the runtime declarations.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"

namespace te::codegen {

std::string packed_symbol(const std::string& prefix, const std::string& name) { return prefix + name + "__packed"; }

CodeGen::CodeGen(llvm::Module& module, const CodeGenOptions& options)
    : module_(module), ctx_(module.getContext()), b_(module.getContext()), options_(options) {
  if (options_.fma_contraction) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }
}

llvm::Function* CodeGen::new_function(llvm::FunctionType* type, llvm::GlobalValue::LinkageTypes linkage,
                                      const std::string& name) {
  llvm::Function* fn = llvm::Function::Create(type, linkage, name, &module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  if (!options_.cpu.empty()) fn->addFnAttr("target-cpu", options_.cpu);
  if (!options_.features.empty()) fn->addFnAttr("target-features", options_.features);
  if (options_.prefer_vector_bits > 0)
    fn->addFnAttr("prefer-vector-width", std::to_string(options_.prefer_vector_bits));
  return fn;
}

llvm::FunctionCallee CodeGen::runtime_function(const char* name) {
  llvm::Type* i8_ptr = compat::pointer_to(b_.getInt8Ty());
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  std::string n = name;
  llvm::FunctionType* type = nullptr;
  if (n == "te_parallel_for") {
    auto* body = llvm::FunctionType::get(i32, {i64, i64, i8_ptr}, false);
    type = llvm::FunctionType::get(i32, {i64, compat::pointer_to(body), i8_ptr}, false);
  } else if (n == "te_set_last_error" || n == "te_free") {
    type = llvm::FunctionType::get(b_.getVoidTy(), {i8_ptr}, false);
  } else if (n == "te_alloc" || n == "te_alloc_uninitialized") {
    type = llvm::FunctionType::get(i8_ptr, {i64}, false);
  }
  TE_ICHECK(type != nullptr, "runtime_function: unknown function");
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, type);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    if (n == "te_alloc" || n == "te_alloc_uninitialized") f->addRetAttr(llvm::Attribute::NoAlias);  // fresh memory
  }
  return callee;
}

namespace {

// Buffers a function's body allocates.
class Allocations : public IRVisitor {
 public:
  std::vector<const BufferNode*> buffers;

 protected:
  void visit_allocate(const AllocateNode* n) override {
    buffers.push_back(n->buffer.get());
    IRVisitor::visit_allocate(n);
  }
};

}  // namespace

void CodeGen::alias_scopes_for(const LoweredFunc& f, const KernelSignature& sig) {
  // Parameters are noalias and every allocation is fresh memory: each buffer gets its
  // own scope, and its accesses are declared not to alias any other buffer's.
  std::vector<const BufferNode*> all;
  for (const KernelArg& a : sig.args)
    if (a.buffer.defined()) all.push_back(a.buffer.get());
  Allocations allocations;
  allocations.visit(f.body);
  for (const BufferNode* b : allocations.buffers)
    if (std::find(all.begin(), all.end(), b) == all.end()) all.push_back(b);
  llvm::MDBuilder md(ctx_);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(f.name);
  std::vector<llvm::Metadata*> scopes;
  for (const BufferNode* b : all) scopes.push_back(md.createAnonymousAliasScope(domain, b->name));
  scope_of_.clear();
  noalias_of_.clear();
  for (size_t k = 0; k < all.size(); ++k) {
    std::vector<llvm::Metadata*> others;
    for (size_t j = 0; j < all.size(); ++j)
      if (j != k) others.push_back(scopes[j]);
    scope_of_[all[k]] = llvm::MDNode::get(ctx_, {scopes[k]});
    noalias_of_[all[k]] = llvm::MDNode::get(ctx_, others);
  }
}

void CodeGen::add_function(const LoweredFunc& f, const KernelSignature& sig) {
  func_name_ = f.name;
  std::vector<llvm::Type*> params;
  for (const KernelArg& a : sig.args) {
    params.push_back(a.buffer.defined() ? static_cast<llvm::Type*>(compat::pointer_to(memory_type(a.buffer.dtype())))
                                        : abi_type(a.var.dtype()));
  }
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), params, false);
  llvm::Function* kernel = new_function(type, llvm::GlobalValue::ExternalLinkage, options_.symbol_prefix + f.name);
  for (size_t k = 0; k < sig.args.size(); ++k) {
    llvm::Argument* arg = kernel->getArg(static_cast<unsigned>(k));
    arg->setName(sig.args[k].c_name);
    if (sig.args[k].buffer.defined()) {
      arg->addAttr(llvm::Attribute::NoAlias);
      arg->addAttr(llvm::Attribute::NoCapture);
    }
  }
  fs_ = FunctionState{kernel, {}, false, {}};
  vars_.clear();
  buffers_.clear();
  mask_ = nullptr;
  parallel_bodies_ = 0;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", kernel));
  alias_scopes_for(f, sig);
  find_streamable_outputs(f, sig);
  for (size_t k = 0; k < sig.args.size(); ++k) {
    const KernelArg& a = sig.args[k];
    llvm::Value* arg = kernel->getArg(static_cast<unsigned>(k));
    if (a.buffer.defined()) {
      llvm::BasicBlock* null_bb = llvm::BasicBlock::Create(ctx_, "null." + a.c_name, kernel);
      llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "ok." + a.c_name, kernel);
      b_.CreateCondBr(b_.CreateIsNull(arg), null_bb, ok_bb);
      b_.SetInsertPoint(null_bb);
      emit_fail(fmt::format("{}: argument '{}' is a null pointer", f.name, a.c_name));
      b_.SetInsertPoint(ok_bb);
      buffers_[a.buffer.get()] = BufferInfo{arg, a.buffer.dtype(), a.buffer.dtype().bytes(), scope_of_[a.buffer.get()],
                                            noalias_of_[a.buffer.get()]};
    } else {
      DataType t = a.var.dtype();
      llvm::Value* v = arg;
      if (t.is_bool())
        v = b_.CreateICmpNE(v, b_.getInt8(0));
      else
        v = round_to(v, t);  // float16/bfloat16 arrive as float
      vars_[a.var.get()] = v;
    }
  }
  emit(f.body);
  emit_success_return();
  if (options_.packed_entries) emit_packed_entry(kernel, sig);
}

void CodeGen::emit_packed_entry(llvm::Function* kernel, const KernelSignature& sig) {
  llvm::Type* i8_ptr = compat::pointer_to(b_.getInt8Ty());
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {compat::pointer_to(i8_ptr)}, false);
  llvm::Function* packed =
      new_function(type, llvm::GlobalValue::ExternalLinkage, packed_symbol(options_.symbol_prefix, sig.name));
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", packed));
  llvm::Value* args = packed->getArg(0);
  std::vector<llvm::Value*> values;
  for (size_t k = 0; k < sig.args.size(); ++k) {
    llvm::Value* slot = b_.CreateLoad(i8_ptr, b_.CreateConstInBoundsGEP1_64(i8_ptr, args, k));
    llvm::Type* t = kernel->getFunctionType()->getParamType(static_cast<unsigned>(k));
    values.push_back(b_.CreateLoad(t, b_.CreateBitCast(slot, compat::pointer_to(t))));
  }
  b_.CreateRet(b_.CreateCall(kernel, values));
}

}  // namespace te::codegen
