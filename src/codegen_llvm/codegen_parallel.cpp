// Parallel loops: the body becomes its own function `int32_t body(int64_t begin,
// int64_t end, void* closure)` over a chunk of iterations, the values it uses from
// outside travel in a closure struct on the caller's stack, and the caller hands both
// to te_parallel_for (te/runtime/c_runtime_api.h). Parallel loops inside the body run
// serially in their chunk.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"
#include "expr/analysis.h"

namespace te::codegen {

void CodeGen::emit_parallel_for(const ForNode* n) {
  DataType t = n->var.dtype();
  if (!t.is_integer() || !t.is_scalar())
    fail_build(fmt::format("loop variable '{}' has type {}", n->var.name(), t.to_string()));
  llvm::Value* begin = emit_cast(emit(n->min), n->min.dtype(), t);
  llvm::Value* extent = emit_cast(emit(n->extent), n->extent.dtype(), t);

  // The closure: the loop's start, then every outer value the body uses.
  const Mentions uses = mentions(n->body);
  std::vector<const VarNode*> vars;
  for (const Var& v : uses.vars)
    if (v.get() != n->var.get() && vars_.count(v.get())) vars.push_back(v.get());
  std::vector<const BufferNode*> bufs;
  for (const Buffer& b : uses.buffers)
    if (buffers_.count(b.get())) bufs.push_back(b.get());
  std::vector<llvm::Type*> fields = {begin->getType()};
  for (const VarNode* v : vars) fields.push_back(vars_[v]->getType());
  for (const BufferNode* b : bufs) fields.push_back(buffers_[b].ptr->getType());
  llvm::StructType* closure_type = llvm::StructType::get(ctx_, fields);
  llvm::AllocaInst* closure = entry_alloca(closure_type, 8);
  auto store_field = [&](unsigned k, llvm::Value* v) {
    b_.CreateStore(v, b_.CreateStructGEP(closure_type, closure, k));
  };
  store_field(0, begin);
  for (size_t k = 0; k < vars.size(); ++k) store_field(static_cast<unsigned>(1 + k), vars_[vars[k]]);
  for (size_t k = 0; k < bufs.size(); ++k)
    store_field(static_cast<unsigned>(1 + vars.size() + k), buffers_[bufs[k]].ptr);

  // The body function, emitted with its own state.
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i8_ptr = compat::pointer_to(b_.getInt8Ty());
  auto* body_type = llvm::FunctionType::get(b_.getInt32Ty(), {i64, i64, i8_ptr}, false);
  llvm::Function* body =
      new_function(body_type, llvm::GlobalValue::InternalLinkage,
                   fmt::format("{}.parallel_{}.{}", fs_.fn->getName().str(), parallel_bodies_++, n->var.name()));
  {
    llvm::IRBuilderBase::InsertPointGuard ip_guard(b_);
    FunctionState saved_fs = std::move(fs_);
    auto saved_vars = std::move(vars_);
    auto saved_buffers = std::move(buffers_);
    llvm::Value* saved_mask = mask_;
    fs_ = FunctionState{body, {}, true, {}};
    vars_.clear();
    buffers_.clear();
    mask_ = nullptr;

    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body));
    auto arg = body->arg_begin();
    llvm::Value* chunk_begin = &*arg++;
    llvm::Value* chunk_end = &*arg++;
    llvm::Value* data = b_.CreateBitCast(&*arg, compat::pointer_to(closure_type));
    auto load_field = [&](unsigned k) {
      return b_.CreateLoad(closure_type->getElementType(k), b_.CreateStructGEP(closure_type, data, k));
    };
    llvm::Value* loop_begin = load_field(0);
    for (size_t k = 0; k < vars.size(); ++k) vars_[vars[k]] = load_field(static_cast<unsigned>(1 + k));
    for (size_t k = 0; k < bufs.size(); ++k) {
      BufferInfo info = saved_buffers[bufs[k]];
      info.ptr = load_field(static_cast<unsigned>(1 + vars.size() + k));
      buffers_[bufs[k]] = info;
    }
    llvm::Type* vt = loop_begin->getType();
    llvm::Value* from = b_.CreateAdd(loop_begin, b_.CreateTrunc(chunk_begin, vt));
    llvm::Value* to = b_.CreateAdd(loop_begin, b_.CreateTrunc(chunk_end, vt));
    emit_loop(n->var, from, to, n->body, ForKind::Serial);
    emit_success_return();

    fs_ = std::move(saved_fs);
    vars_ = std::move(saved_vars);
    buffers_ = std::move(saved_buffers);
    mask_ = saved_mask;
  }

  llvm::Value* rc =
      b_.CreateCall(runtime_function("te_parallel_for"), {to_i64(extent, t), body, b_.CreateBitCast(closure, i8_ptr)});
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* fail_bb = llvm::BasicBlock::Create(ctx_, "parallel.fail", fn);
  llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "parallel.ok", fn);
  b_.CreateCondBr(b_.CreateICmpNE(rc, b_.getInt32(0)), fail_bb, ok_bb);
  b_.SetInsertPoint(fail_bb);
  emit_error_return(rc);
  b_.SetInsertPoint(ok_bb);
}

}  // namespace te::codegen
