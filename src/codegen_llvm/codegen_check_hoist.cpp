// Index checks hoisted out of a loop: a load the loop body runs on every iteration at
// an index that steps by a constant with the loop variable from a loop-invariant start
// (bev_pool's `ranks_feat[interval_starts[i] + p]`) is checked once before the loop, at
// its first and last iterations. When either is outside the buffer the loop runs no
// iteration and the function fails afterwards, as for every checked index; the loads in
// the loop then need no check of their own.
#include <fmt/format.h>

#include <memory>

#include "codegen_llvm/check_analysis.h"
#include "codegen_llvm/codegen.h"
#include "codegen_llvm/index_analysis.h"
#include "expr/analysis.h"

namespace te::codegen {
namespace {

// Whether e only uses variables bound outside the loop (or the loop's own), reads no
// buffer the loop stores to and binds no variable of its own.
class Invariant : public IRVisitor {
 public:
  Invariant(const std::unordered_map<const VarNode*, llvm::Value*>& outer, const VarNode* loop_var,
            const std::set<const BufferNode*>& stored)
      : outer_(outer), loop_var_(loop_var), stored_(stored) {}
  bool ok = true;

 protected:
  void visit_var(const VarNode* v) override { ok = ok && (v == loop_var_ || outer_.count(v) != 0); }
  void visit_load(const LoadNode* n) override {
    ok = ok && stored_.count(n->buffer.get()) == 0;
    IRVisitor::visit_load(n);
  }
  void visit_let(const LetNode*) override { ok = false; }
  void visit_reduce(const ReduceNode*) override { ok = false; }
  void visit_tensor_read(const TensorReadNode*) override { ok = false; }

 private:
  const std::unordered_map<const VarNode*, llvm::Value*>& outer_;
  const VarNode* loop_var_;
  const std::set<const BufferNode*>& stored_;
};

}  // namespace

llvm::Value* CodeGen::hoist_index_checks(const ForNode* n, llvm::Value* begin, llvm::Value* end,
                                         std::vector<std::unique_ptr<PrecheckBinding>>* bindings) {
  if (!options_.check_data_indices || mask_ != nullptr) return end;
  const std::set<const BufferNode*> stored = buffer_use(n->body).stored;
  struct Hoisted {
    const LoadNode* load;
    Expr index;
  };
  std::vector<Hoisted> hoisted;
  const Var& var = n->var;
  std::vector<std::pair<Var, Expr>> lets;
  for (const LoadNode* ld : loads_always_run(n->body, &lets)) {
    if (!ld->dtype.is_scalar() || prechecked_.count(ld) != 0) continue;
    // The checks run before the loop: the body's lets are written out.
    Expr index = substitute(flatten_index(ld->buffer, ld->indices), lets);
    if (!index.dtype().is_scalar() || !needs_index_check(ld->buffer, index) || !uses_var(index, var.get())) continue;
    Invariant inv(vars_, var.get(), stored);
    inv.visit(index);
    if (!inv.ok) continue;
    // A constant step per iteration: the first and last iterations bound the rest.
    Expr step = simplify(substitute(index, {{var, var + make_const(var.dtype(), 1)}}) - index);
    if (as_const_int(step) == nullptr) continue;
    hoisted.push_back({ld, index});
  }
  if (hoisted.empty()) return end;

  const bool is_signed = var.dtype().is_int();
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* from = b_.GetInsertBlock();
  llvm::BasicBlock* check_bb = llvm::BasicBlock::Create(ctx_, "for." + var.name() + ".checks", fn);
  llvm::BasicBlock* join_bb = llvm::BasicBlock::Create(ctx_, "for." + var.name() + ".checked", fn);
  // Only a loop that runs reads its indices' loop-invariant parts.
  b_.CreateCondBr(is_signed ? b_.CreateICmpSLT(begin, end) : b_.CreateICmpULT(begin, end), check_bb, join_bb);
  b_.SetInsertPoint(check_bb);
  const DataType t = var.dtype();
  const Expr first = cast(t, n->min), last = cast(t, n->min) + cast(t, n->extent) - make_const(t, 1);
  llvm::Value* all_ok = b_.getTrue();
  for (const Hoisted& h : hoisted) {
    DataType it = h.index.dtype();
    Expr size = element_count(h.load->buffer, it);
    DataType ut = UInt(it.bits());
    Expr at_first = substitute(h.index, {{var, first}});
    Expr at_last = substitute(h.index, {{var, last}});
    Expr inside = cast(ut, at_first) < cast(ut, size) && cast(ut, at_last) < cast(ut, size);
    llvm::Value* ok = to_bool(emit(inside), inside.dtype());
    record_bad_index(h.load->buffer, /*is_store=*/false, b_.CreateNot(ok), {to_string(h.index)});
    all_ok = b_.CreateAnd(all_ok, ok);
    bindings->push_back(std::make_unique<PrecheckBinding>(prechecked_, h.load, PrecheckedLoad{h.index, nullptr}));
  }
  llvm::Value* checked_end = b_.CreateSelect(all_ok, end, begin);
  llvm::BasicBlock* checked_from = b_.GetInsertBlock();
  b_.CreateBr(join_bb);
  b_.SetInsertPoint(join_bb);
  llvm::PHINode* phi = b_.CreatePHI(end->getType(), 2);
  phi->addIncoming(end, from);
  phi->addIncoming(checked_end, checked_from);
  return phi;
}

}  // namespace te::codegen
