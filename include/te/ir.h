// Loop IR: the statements that lowering produces, visitors, mutators and LoweredFunc.
#pragma once
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "te/expr.h"

namespace te {

enum class StmtKind : uint8_t {
  LetStmt, For, Store, Allocate, IfThenElse, Seq, Evaluate, Barrier, Assert
};

// How a For loop runs. ThreadBinding loops carry a thread_tag ("threadIdx.x", ...).
enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };
const char* for_kind_name(ForKind k);  // "serial", "parallel", "vectorized", ...

struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const StmtNode>& node() const { return node_; }
  StmtKind kind() const;
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

struct LetStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;
  Var var;
  Expr value;
  Stmt body;
  LetStmtNode(Var v, Expr val, Stmt b)
      : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
};
struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var var;
  Expr min, extent;
  ForKind for_kind;
  std::string thread_tag;  // only for ThreadBinding
  Stmt body;
  ForNode(Var v, Expr mn, Expr ext, ForKind k, std::string tag, Stmt b)
      : StmtNode(kKind), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)),
        for_kind(k), thread_tag(std::move(tag)), body(std::move(b)) {}
};
// buffer[indices...] = value (lanes where predicate holds; undefined predicate = all).
struct StoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  Expr predicate;
  StoreNode(Buffer buf, Expr v, std::vector<Expr> i, Expr p)
      : StmtNode(kKind), buffer(std::move(buf)), value(std::move(v)), indices(std::move(i)),
        predicate(std::move(p)) {}
};
// Storage for buffer (its shape and scope) that lives for the duration of body.
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Buffer buffer;
  Stmt body;
  AllocateNode(Buffer buf, Stmt b) : StmtNode(kKind), buffer(std::move(buf)), body(std::move(b)) {}
};
struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  Expr cond;
  Stmt then_case, else_case;  // else_case may be undefined
  IfThenElseNode(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
};
struct SeqNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;
  std::vector<Stmt> seq;
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(kKind), seq(std::move(s)) {}
};
struct EvaluateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;
  Expr value;
  explicit EvaluateNode(Expr v) : StmtNode(kKind), value(std::move(v)) {}
};
// Every thread of the block waits here (CUDA __syncthreads()).
struct BarrierNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Barrier;
  BarrierNode() : StmtNode(kKind) {}
};
// If cond is false, the function fails with a te::Error carrying message; else body runs.
struct AssertNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Assert;
  Expr cond;
  std::string message;
  Stmt body;
  AssertNode(Expr c, std::string m, Stmt b)
      : StmtNode(kKind), cond(std::move(c)), message(std::move(m)), body(std::move(b)) {}
};

// ---- Builders ----
Stmt let_stmt(Var v, Expr value, Stmt body);
Stmt for_loop(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag = "");
Stmt store(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate = Expr());
Stmt allocate(Buffer buffer, Stmt body);
Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case = Stmt());
// A sequence; nested sequences are flattened and undefined entries dropped.
Stmt seq(std::vector<Stmt> stmts);
Stmt evaluate(Expr value);
Stmt barrier();
Stmt assert_stmt(Expr cond, std::string message, Stmt body);

// A function parameter: a buffer (pointer + shape) or a scalar variable.
struct Param {
  Buffer buffer;  // defined for buffer parameters
  Var var;        // defined for scalar parameters
  bool is_buffer() const { return buffer.defined(); }
  const std::string& name() const { return is_buffer() ? buffer.name() : var.name(); }
};

// A lowered function: a name, ordered parameters and a body.
struct LoweredFunc {
  std::string name;
  std::vector<Param> params;
  Stmt body;
};

// ---- Visitors and mutators (Halide style) ----
// IRVisitor walks every child; override a visit to look at a node kind, and call the
// base visit to keep walking below it.
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);

 protected:
  virtual void visit_int_imm(const IntImmNode*) {}
  virtual void visit_float_imm(const FloatImmNode*) {}
  virtual void visit_var(const VarNode*) {}
  virtual void visit_cast(const CastNode* n);
  virtual void visit_binary(const BinaryNode* n);
  virtual void visit_not(const NotNode* n);
  virtual void visit_select(const SelectNode* n);
  virtual void visit_load(const LoadNode* n);
  virtual void visit_ramp(const RampNode* n);
  virtual void visit_broadcast(const BroadcastNode* n);
  virtual void visit_call(const CallNode* n);
  virtual void visit_let(const LetNode* n);
  virtual void visit_tensor_read(const TensorReadNode* n);
  virtual void visit_reduce(const ReduceNode* n);

  virtual void visit_let_stmt(const LetStmtNode* n);
  virtual void visit_for(const ForNode* n);
  virtual void visit_store(const StoreNode* n);
  virtual void visit_allocate(const AllocateNode* n);
  virtual void visit_if_then_else(const IfThenElseNode* n);
  virtual void visit_seq(const SeqNode* n);
  virtual void visit_evaluate(const EvaluateNode* n);
  virtual void visit_barrier(const BarrierNode*) {}
  virtual void visit_assert(const AssertNode* n);
};

// IRMutator rebuilds a tree bottom-up; a node whose children did not change is
// returned as it was (same node), so unchanged subtrees stay shared.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
  virtual Expr mutate_int_imm(const Expr& e, const IntImmNode*) { return e; }
  virtual Expr mutate_float_imm(const Expr& e, const FloatImmNode*) { return e; }
  virtual Expr mutate_var(const Expr& e, const VarNode*) { return e; }
  virtual Expr mutate_cast(const Expr& e, const CastNode* n);
  virtual Expr mutate_binary(const Expr& e, const BinaryNode* n);
  virtual Expr mutate_not(const Expr& e, const NotNode* n);
  virtual Expr mutate_select(const Expr& e, const SelectNode* n);
  virtual Expr mutate_load(const Expr& e, const LoadNode* n);
  virtual Expr mutate_ramp(const Expr& e, const RampNode* n);
  virtual Expr mutate_broadcast(const Expr& e, const BroadcastNode* n);
  virtual Expr mutate_call(const Expr& e, const CallNode* n);
  virtual Expr mutate_let(const Expr& e, const LetNode* n);
  virtual Expr mutate_tensor_read(const Expr& e, const TensorReadNode* n);
  virtual Expr mutate_reduce(const Expr& e, const ReduceNode* n);

  virtual Stmt mutate_let_stmt(const Stmt& s, const LetStmtNode* n);
  virtual Stmt mutate_for(const Stmt& s, const ForNode* n);
  virtual Stmt mutate_store(const Stmt& s, const StoreNode* n);
  virtual Stmt mutate_allocate(const Stmt& s, const AllocateNode* n);
  virtual Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n);
  virtual Stmt mutate_seq(const Stmt& s, const SeqNode* n);
  virtual Stmt mutate_evaluate(const Stmt& s, const EvaluateNode* n);
  virtual Stmt mutate_barrier(const Stmt& s, const BarrierNode*) { return s; }
  virtual Stmt mutate_assert(const Stmt& s, const AssertNode* n);

  // Mutates each element; returns true if any changed.
  bool mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out);
};

// Replaces variables (by identity) with expressions.
Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map);
Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, Expr>>& map);

// Structural equality of statements (variables compared by identity).
bool equal(const Stmt& a, const Stmt& b);

// ---- Printing ----
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const LoweredFunc& f);
std::string to_string(const Stmt& s);
std::string to_string(const LoweredFunc& f);

}  // namespace te
