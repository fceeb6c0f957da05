// Statements: loops, conditionals, asserts, lets and the error-return path.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"

namespace te::codegen {

void CodeGen::fail_build(const std::string& what) const { throw Error(fmt::format("build: {}: {}", func_name_, what)); }

void CodeGen::emit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s->kind) {
    case StmtKind::LetStmt: {
      const auto* n = s.as<LetStmtNode>();
      note_let(data_vars_, n->var.get(), n->value);
      // An index shared through a local (common_subexpr_elim) keeps what the analyses know
      // of it: its alignment (streaming stores) and its range (gathers proven in bounds).
      std::optional<ScopedBinding<VarBounds>> range;
      if (n->value.dtype().is_integer() && n->value.dtype().is_scalar()) {
        let_factors_[n->var.get()] = known_power_of_two_factor(n->value, let_factors_);
        Interval r{0, 0};
        if (const_bounds(n->value, loop_bounds_, &r)) range.emplace(loop_bounds_, n->var.get(), r);
      }
      ScopedVar bind(vars_, n->var.get(), emit(n->value));
      emit(n->body);
      return;
    }
    case StmtKind::For: return emit_for(s.as<ForNode>());
    case StmtKind::Store: return emit_store(s.as<StoreNode>());
    case StmtKind::Allocate: return emit_allocate(s.as<AllocateNode>());
    case StmtKind::IfThenElse: return emit_if(s.as<IfThenElseNode>());
    case StmtKind::Seq: return emit_seq(s);
    case StmtKind::Evaluate: emit(s.as<EvaluateNode>()->value); return;
    case StmtKind::Barrier:
      fail_build(
          "contains a barrier (GPU thread synchronisation); the CPU backend runs "
          "thread-bound loops serially and cannot honour it: use build_cuda");
    case StmtKind::Assert: return emit_assert(s.as<AssertNode>());
    case StmtKind::TensorIntrinsicCall: return emit_tensor_intrinsic(s.as<TensorIntrinsicCallNode>());
  }
  TE_ICHECK(false, "CodeGen: unknown statement kind");
}

void CodeGen::emit_for(const ForNode* n) {
  // The loop variable's range, for provably_in_bounds, while its body is emitted.
  const int64_t* const_min = as_const_int(n->min);
  const int64_t* const_extent = as_const_int(n->extent);
  std::optional<ScopedBinding<VarBounds>> range;
  if (const_min != nullptr && const_extent != nullptr && *const_extent > 0)
    range.emplace(loop_bounds_, n->var.get(), Interval{*const_min, *const_min + *const_extent - 1});
  if (n->for_kind == ForKind::Parallel && !fs_.in_parallel) return emit_parallel_for(n);
  DataType t = n->var.dtype();
  if (!t.is_integer() || !t.is_scalar())
    fail_build(fmt::format("loop variable '{}' has type {}", n->var.name(), t.to_string()));
  llvm::Value* begin = emit_cast(emit(n->min), n->min.dtype(), t);
  llvm::Value* extent = emit_cast(emit(n->extent), n->extent.dtype(), t);
  std::vector<std::unique_ptr<PrecheckBinding>> checked;
  llvm::Value* end = hoist_index_checks(n, begin, b_.CreateAdd(begin, extent), &checked);
  emit_loop(n->var, begin, end, n->body, n->for_kind);
}

void CodeGen::emit_loop(const Var& var, llvm::Value* begin, llvm::Value* end, const Stmt& body, ForKind kind) {
  bool is_signed = var.dtype().is_int();
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "for." + var.name(), fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, "for." + var.name() + ".body", fn);
  llvm::BasicBlock* exit_bb = llvm::BasicBlock::Create(ctx_, "for." + var.name() + ".end", fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(begin->getType(), 2, var.name());
  i->addIncoming(begin, preheader);
  llvm::Value* more = is_signed ? b_.CreateICmpSLT(i, end) : b_.CreateICmpULT(i, end);
  b_.CreateCondBr(more, body_bb, exit_bb);
  b_.SetInsertPoint(body_bb);
  {
    ScopedVar bind(vars_, var.get(), i);
    emit(body);
  }
  // i < end, so i + 1 cannot overflow.
  llvm::Value* next = b_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1), "", !is_signed, is_signed);
  llvm::BranchInst* back = b_.CreateBr(header);
  i->addIncoming(next, b_.GetInsertBlock());
  // Loops the lowering left marked get the matching hint for LLVM's loop passes.
  llvm::Metadata* hint = nullptr;
  if (kind == ForKind::Unrolled) {
    hint = llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")});
  } else if (kind == ForKind::Vectorized) {
    hint = llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"), llvm::ConstantAsMetadata::get(b_.getTrue())});
  }
  if (hint != nullptr) {
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx_, {nullptr, hint});
    loop_id->replaceOperandWith(0, loop_id);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }
  b_.SetInsertPoint(exit_bb);
}

void CodeGen::emit_if(const IfThenElseNode* n) {
  if (!n->cond.dtype().is_scalar()) fail_build(fmt::format("if condition {} is a vector", to_string(n->cond)));
  llvm::Value* cond = to_bool(emit(n->cond), n->cond.dtype());
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fn);
  llvm::BasicBlock* else_bb = n->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", fn) : nullptr;
  llvm::BasicBlock* end_bb = llvm::BasicBlock::Create(ctx_, "if.end", fn);
  b_.CreateCondBr(cond, then_bb, else_bb != nullptr ? else_bb : end_bb);
  b_.SetInsertPoint(then_bb);
  emit(n->then_case);
  b_.CreateBr(end_bb);
  if (else_bb != nullptr) {
    b_.SetInsertPoint(else_bb);
    emit(n->else_case);
    b_.CreateBr(end_bb);
  }
  b_.SetInsertPoint(end_bb);
}

void CodeGen::emit_assert(const AssertNode* n) {
  if (!n->cond.dtype().is_scalar()) fail_build(fmt::format("assert condition {} is a vector", to_string(n->cond)));
  llvm::Value* cond = to_bool(emit(n->cond), n->cond.dtype());
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "assert.ok", fn);
  llvm::BasicBlock* fail_bb = llvm::BasicBlock::Create(ctx_, "assert.fail", fn);
  llvm::MDBuilder md(ctx_);
  b_.CreateCondBr(cond, ok_bb, fail_bb, md.createBranchWeights(1u << 20, 1));
  b_.SetInsertPoint(fail_bb);
  emit_fail(fmt::format("{}: {}", func_name_, n->message));
  b_.SetInsertPoint(ok_bb);
  emit(n->body);
}

void CodeGen::emit_fail(const std::string& message) {
  llvm::Value* text = b_.CreateGlobalStringPtr(message, "te.error");
  b_.CreateCall(runtime_function("te_set_last_error"), {text});
  emit_error_return(b_.getInt32(-1));
}

void CodeGen::emit_error_return(llvm::Value* code) {
  for (auto it = fs_.heap_allocs.rbegin(); it != fs_.heap_allocs.rend(); ++it)
    b_.CreateCall(runtime_function("te_free"), {*it});
  b_.CreateRet(code);
}

llvm::AllocaInst* CodeGen::entry_alloca(llvm::Type* t, uint64_t align) {
  llvm::BasicBlock& entry = fs_.fn->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
  llvm::AllocaInst* slot = at_entry.CreateAlloca(t);
  slot->setAlignment(llvm::Align(align));
  return slot;
}

}  // namespace te::codegen
