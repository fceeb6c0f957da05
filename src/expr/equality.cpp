// Structural equality: same tree shape, same types and immediates; variables, buffers,
// iteration variables and tensors compared by identity.
#include <cstring>

#include "expr/reduce_rule.h"
#include "te/ir.h"

namespace te {

namespace {

// Bit-exact: 0.0 and -0.0 differ, a NaN equals the same NaN.
bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

bool equal_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i])) return false;
  return true;
}

}  // namespace

bool same_reduction(const ReduceNode& a, const ReduceNode& b) {
  if (a.reducer != b.reducer || a.combiner != b.combiner || a.axis.size() != b.axis.size()) return false;
  for (size_t i = 0; i < a.axis.size(); ++i)
    if (!a.axis[i].same_as(b.axis[i])) return false;
  return equal_all(a.sources, b.sources) && equal(a.condition, b.condition);
}

namespace {

bool equal_node(const ExprNode* x, const ExprNode* y) {
  switch (x->kind) {
    case ExprKind::IntImm: return static_cast<const IntImmNode*>(x)->value == static_cast<const IntImmNode*>(y)->value;
    case ExprKind::FloatImm:
      return same_double(static_cast<const FloatImmNode*>(x)->value, static_cast<const FloatImmNode*>(y)->value);
    case ExprKind::Var: return false;  // distinct nodes are distinct variables
    case ExprKind::Cast: return equal(static_cast<const CastNode*>(x)->value, static_cast<const CastNode*>(y)->value);
    case ExprKind::Binary: {
      auto* a = static_cast<const BinaryNode*>(x);
      auto* b = static_cast<const BinaryNode*>(y);
      return a->op == b->op && equal(a->a, b->a) && equal(a->b, b->b);
    }
    case ExprKind::Not: return equal(static_cast<const NotNode*>(x)->a, static_cast<const NotNode*>(y)->a);
    case ExprKind::Select: {
      auto* a = static_cast<const SelectNode*>(x);
      auto* b = static_cast<const SelectNode*>(y);
      return equal(a->cond, b->cond) && equal(a->true_value, b->true_value) && equal(a->false_value, b->false_value);
    }
    case ExprKind::Load: {
      auto* a = static_cast<const LoadNode*>(x);
      auto* b = static_cast<const LoadNode*>(y);
      return a->buffer.same_as(b->buffer) && equal_all(a->indices, b->indices) && equal(a->predicate, b->predicate);
    }
    case ExprKind::Ramp: {
      auto* a = static_cast<const RampNode*>(x);
      auto* b = static_cast<const RampNode*>(y);
      return a->lanes == b->lanes && equal(a->base, b->base) && equal(a->stride, b->stride);
    }
    case ExprKind::Broadcast: {
      auto* a = static_cast<const BroadcastNode*>(x);
      auto* b = static_cast<const BroadcastNode*>(y);
      return a->lanes == b->lanes && equal(a->value, b->value);
    }
    case ExprKind::Call: {
      auto* a = static_cast<const CallNode*>(x);
      auto* b = static_cast<const CallNode*>(y);
      return a->op == b->op && a->extern_name == b->extern_name && equal_all(a->args, b->args);
    }
    case ExprKind::Let: {
      auto* a = static_cast<const LetNode*>(x);
      auto* b = static_cast<const LetNode*>(y);
      return a->var.same_as(b->var) && equal(a->value, b->value) && equal(a->body, b->body);
    }
    case ExprKind::TensorRead: {
      auto* a = static_cast<const TensorReadNode*>(x);
      auto* b = static_cast<const TensorReadNode*>(y);
      return a->op == b->op && a->value_index == b->value_index && equal_all(a->indices, b->indices);
    }
    case ExprKind::Reduce: {
      auto* a = static_cast<const ReduceNode*>(x);
      auto* b = static_cast<const ReduceNode*>(y);
      return a->value_index == b->value_index && same_reduction(*a, *b);
    }
  }
  return false;
}

bool equal_stmt_node(const StmtNode* x, const StmtNode* y) {
  switch (x->kind) {
    case StmtKind::LetStmt: {
      auto* a = static_cast<const LetStmtNode*>(x);
      auto* b = static_cast<const LetStmtNode*>(y);
      return a->var.same_as(b->var) && equal(a->value, b->value) && equal(a->body, b->body);
    }
    case StmtKind::For: {
      auto* a = static_cast<const ForNode*>(x);
      auto* b = static_cast<const ForNode*>(y);
      return a->var.same_as(b->var) && a->for_kind == b->for_kind && a->thread_tag == b->thread_tag &&
             equal(a->min, b->min) && equal(a->extent, b->extent) && equal(a->body, b->body);
    }
    case StmtKind::Store: {
      auto* a = static_cast<const StoreNode*>(x);
      auto* b = static_cast<const StoreNode*>(y);
      return a->buffer.same_as(b->buffer) && a->atomic_add == b->atomic_add && equal(a->value, b->value) &&
             equal_all(a->indices, b->indices) && equal(a->predicate, b->predicate);
    }
    case StmtKind::Allocate: {
      auto* a = static_cast<const AllocateNode*>(x);
      auto* b = static_cast<const AllocateNode*>(y);
      return a->buffer.same_as(b->buffer) && equal(a->body, b->body);
    }
    case StmtKind::IfThenElse: {
      auto* a = static_cast<const IfThenElseNode*>(x);
      auto* b = static_cast<const IfThenElseNode*>(y);
      return equal(a->cond, b->cond) && equal(a->then_case, b->then_case) && equal(a->else_case, b->else_case);
    }
    case StmtKind::Seq: {
      auto* a = static_cast<const SeqNode*>(x);
      auto* b = static_cast<const SeqNode*>(y);
      if (a->seq.size() != b->seq.size()) return false;
      for (size_t i = 0; i < a->seq.size(); ++i)
        if (!equal(a->seq[i], b->seq[i])) return false;
      return true;
    }
    case StmtKind::Evaluate:
      return equal(static_cast<const EvaluateNode*>(x)->value, static_cast<const EvaluateNode*>(y)->value);
    case StmtKind::Barrier: return true;
    case StmtKind::Assert: {
      auto* a = static_cast<const AssertNode*>(x);
      auto* b = static_cast<const AssertNode*>(y);
      return a->message == b->message && equal(a->cond, b->cond) && equal(a->body, b->body);
    }
    case StmtKind::TensorIntrinsicCall: {
      auto* a = static_cast<const TensorIntrinsicCallNode*>(x);
      auto* b = static_cast<const TensorIntrinsicCallNode*>(y);
      if (a->intrinsic != b->intrinsic || a->buffers.size() != b->buffers.size() || !(a->producer == b->producer))
        return false;
      for (size_t i = 0; i < a->buffers.size(); ++i)
        if (!a->buffers[i].same_as(b->buffers[i]) || !equal(a->offsets[i], b->offsets[i]) ||
            a->strides[i].size() != b->strides[i].size())
          return false;
      for (size_t i = 0; i < a->strides.size(); ++i)
        for (size_t d = 0; d < a->strides[i].size(); ++d)
          if (!equal(a->strides[i][d], b->strides[i][d])) return false;
      return equal(a->body, b->body);
    }
  }
  return false;
}

}  // namespace

bool equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  return equal_node(a.get(), b.get());
}

bool equal(const Stmt& a, const Stmt& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind) return false;
  return equal_stmt_node(a.get(), b.get());
}

}  // namespace te
