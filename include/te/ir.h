/// \file
/// Loop IR: the statements that lowering produces, visitors, mutators and LoweredFunc.
#pragma once
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "te/export.h"
#include "te/expr.h"

namespace te {

struct TensorIntrinsicNode;  // te/tensorize.h

/// The kind of a statement node.
enum class StmtKind : uint8_t {
  LetStmt,
  For,
  Store,
  Allocate,
  IfThenElse,
  Seq,
  Evaluate,
  Barrier,
  Assert,
  TensorIntrinsicCall
};

/// How a For loop runs. ThreadBinding loops carry a thread_tag ("threadIdx.x", ...).
enum class ForKind : uint8_t {
  Serial,        ///< a plain loop
  Parallel,      ///< iterations run on the thread pool
  Vectorized,    ///< becomes vector instructions (the vectorize pass)
  Unrolled,      ///< becomes copies of the body (the unroll pass)
  ThreadBinding  ///< runs on a GPU thread axis (thread_tag)
};
TE_API const char* for_kind_name(ForKind k);  ///< "serial", "parallel", "vectorized", ...

/// The base of every statement node; immutable once built.
struct TE_API StmtNode {
  StmtKind kind;  ///< Which node this is.
  /// A node of kind k.
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

/// A statement of the loop IR: a shared handle to an immutable node.
class TE_API Stmt {
 public:
  /// An undefined statement.
  Stmt() = default;
  /// A handle to n.
  explicit Stmt(std::shared_ptr<const StmtNode> n) : node_(std::move(n)) {}
  /// Whether there is a node.
  bool defined() const { return node_ != nullptr; }
  /// The node.
  const StmtNode* get() const { return node_.get(); }
  /// The node.
  const StmtNode* operator->() const { return node_.get(); }
  /// The shared node.
  const std::shared_ptr<const StmtNode>& node() const { return node_; }
  /// The node's kind (the statement must be defined).
  StmtKind kind() const;
  /// The node as T (ForNode, StoreNode...), or null if it is another kind.
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  /// Whether both are the same node.
  bool same_as(const Stmt& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

/// `let var = value in body`.
struct TE_API LetStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;  ///< The node's kind.
  Var var;                                              ///< The variable bound.
  Expr value;                                           ///< Its value.
  Stmt body;                                            ///< Where it is visible.
  /// See let_stmt().
  LetStmtNode(Var v, Expr val, Stmt b)
      : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
};
/// `for (var, min, extent) body`: var runs over [min, min + extent).
struct TE_API ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;  ///< The node's kind.
  Var var;                                          ///< The loop variable.
  Expr min;                                         ///< The first value.
  Expr extent;                                      ///< The number of iterations.
  ForKind for_kind;                                 ///< How the loop runs.
  std::string thread_tag;                           ///< only for ThreadBinding
  Stmt body;                                        ///< The loop body.
  /// See for_loop().
  ForNode(Var v, Expr mn, Expr ext, ForKind k, std::string tag, Stmt b)
      : StmtNode(kKind),
        var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        thread_tag(std::move(tag)),
        body(std::move(b)) {}
};
/// buffer[indices...] = value (lanes where predicate holds; undefined predicate = all);
/// an atomic add (see atomic_add()) adds value instead, lane by lane.
struct TE_API StoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;  ///< The node's kind.
  Buffer buffer;                                      ///< The buffer written.
  Expr value;                                         ///< The value (a vector for vector stores).
  std::vector<Expr> indices;                          ///< One per dimension (one flat index after lowering).
  Expr predicate;                                     ///< Lanes to write; undefined: all.
  /// buffer[indices] += value, each lane atomically (CUDA atomicAdd, LLVM atomicrmw): other
  /// threads' adds to the same element are never lost, in an unspecified order.
  bool atomic_add = false;
  /// See store() and atomic_add().
  StoreNode(Buffer buf, Expr v, std::vector<Expr> i, Expr p, bool atomic = false)
      : StmtNode(kKind),
        buffer(std::move(buf)),
        value(std::move(v)),
        indices(std::move(i)),
        predicate(std::move(p)),
        atomic_add(atomic) {}
};
/// Storage for buffer (its shape and scope) that lives for the duration of body.
struct TE_API AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;  ///< The node's kind.
  Buffer buffer;                                         ///< The buffer allocated.
  Stmt body;                                             ///< Where it lives.
  /// See allocate().
  AllocateNode(Buffer buf, Stmt b) : StmtNode(kKind), buffer(std::move(buf)), body(std::move(b)) {}
};
/// `if (cond) then_case else else_case`.
struct TE_API IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;  ///< The node's kind.
  Expr cond;                                               ///< A bool condition.
  Stmt then_case;                                          ///< Runs when cond holds.
  Stmt else_case;                                          ///< Runs otherwise; may be undefined.
  /// See if_then_else().
  IfThenElseNode(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
};
/// Statements run in order.
struct TE_API SeqNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;  ///< The node's kind.
  std::vector<Stmt> seq;                            ///< The statements.
  /// See seq().
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(kKind), seq(std::move(s)) {}
};
/// Evaluates an expression for its effect (a call).
struct TE_API EvaluateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;  ///< The node's kind.
  Expr value;                                            ///< The expression.
  /// See evaluate().
  explicit EvaluateNode(Expr v) : StmtNode(kKind), value(std::move(v)) {}
};
/// Every thread of the block waits here (CUDA __syncthreads()).
struct TE_API BarrierNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Barrier;  ///< The node's kind.
  /// See barrier().
  BarrierNode() : StmtNode(kKind) {}
};
/// If cond is false, the function fails with a te::Error carrying message; else body runs.
struct TE_API AssertNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Assert;  ///< The node's kind.
  Expr cond;                                           ///< What must hold.
  std::string message;                                 ///< The error's message when it does not.
  Stmt body;                                           ///< Runs when it holds.
  /// See assert_stmt().
  AssertNode(Expr c, std::string m, Stmt b)
      : StmtNode(kKind), cond(std::move(c)), message(std::move(m)), body(std::move(b)) {}
};

/// Who issues a warp-specialized kernel's TMA copies (Stage::warp_specialize): a producer
/// warpgroup the block gets besides its consumer warpgroups (the threads its loops bind),
/// each side's registers set by `setmaxnreg` (0: as compiled). setmaxnreg.inc takes its
/// registers only from those the block's own warpgroups released (the CTA's pool), so the
/// consumers can gain what the producer gives back and no more. By default (kBalanced)
/// build_cuda takes balanced() for the kernel's consumer warpgroups.
struct TE_API WarpSpecialization {
  /// Both counts: balanced(consumer warpgroups), chosen once the kernel's warpgroups are known.
  static constexpr int kBalanced = -1;
  int producer_registers = kBalanced;  ///< the producer warpgroup's registers per thread (24..256, a multiple of 8)
  int consumer_registers = kBalanced;  ///< the consumer warpgroups' registers per thread (24..256, a multiple of 8)
  /// The registers per thread a block of `threads` starts with when its kernel uses
  /// setmaxnreg: ptxas gives such a kernel its `__launch_bounds__` cap, 64K / threads in
  /// multiples of 8, at most 256 (seen on an H200: 384 threads 168, 640 threads 96).
  static int launch_registers(int64_t threads);
  /// 40 registers for the producer and, for each of `consumer_warpgroups`, its launch
  /// count plus an equal share of what the producer releases (232 for two consumers, 152
  /// for three, 104 for four); one consumer already has every register a thread can
  /// use: {0, 0} (no setmaxnreg).
  static WarpSpecialization balanced(int consumer_warpgroups);
  /// Whether both are the same.
  bool operator==(const WarpSpecialization& o) const {
    return producer_registers == o.producer_registers && consumer_registers == o.consumer_registers;
  }
};

/// A tensor intrinsic applied to regions of buffers (what Stage::tensorize leaves where
/// the matched loop nest was). Buffer i is the declaration's input i (the output last);
/// its region starts at element offsets[i] of the (flat) buffer and steps strides[i][d]
/// elements along dimension d of the declaration's tensor. `body` is the declaration's
/// update instantiated on those regions: what interpret() runs and what analyses see (the
/// buffers it reads and writes); a backend emits the intrinsic's implementation instead.
struct TE_API TensorIntrinsicCallNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::TensorIntrinsicCall;  ///< The node's kind.
  std::shared_ptr<const TensorIntrinsicNode> intrinsic;             ///< What runs.
  std::vector<Buffer> buffers;                                      ///< The inputs' buffers, then the output's.
  std::vector<Expr> offsets;               ///< The element offset of each region in its buffer.
  std::vector<std::vector<Expr>> strides;  ///< Per region, the element stride of each dimension.
  Stmt body;                               ///< The declaration on those regions.
  /// A TMA copy of a warp-specialized stage: issued by the kernel's producer warpgroup
  /// (the CUDA backend); absent for every other call.
  std::optional<WarpSpecialization> producer;
  /// See tensor_intrinsic_call().
  TensorIntrinsicCallNode(std::shared_ptr<const TensorIntrinsicNode> in, std::vector<Buffer> bufs,
                          std::vector<Expr> offs, std::vector<std::vector<Expr>> str, Stmt b,
                          std::optional<WarpSpecialization> by = std::nullopt)
      : StmtNode(kKind),
        intrinsic(std::move(in)),
        buffers(std::move(bufs)),
        offsets(std::move(offs)),
        strides(std::move(str)),
        body(std::move(b)),
        producer(by) {}
};

// ---- Builders ----
/// `let v = value in body`.
TE_API Stmt let_stmt(Var v, Expr value, Stmt body);
/// A loop over [min, min + extent); thread_tag names the axis of a ThreadBinding loop.
TE_API Stmt for_loop(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag = "");
/// buffer[indices] = value, on the lanes where predicate holds (undefined: all).
TE_API Stmt store(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate = Expr());
/// buffer[indices] += value, atomically per lane (on the lanes where predicate holds), for
/// adds from parallel loops or GPU threads that may meet (a scatter-add's): float32,
/// float64, int32 and int64 (te::Error otherwise).
TE_API Stmt atomic_add(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate = Expr());
/// A store like `like` (plain or atomic add) with these parts: what passes that rewrite a
/// store's buffer, value or indices use, so the kind of store is never lost.
TE_API Stmt store_like(const StoreNode& like, Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate);
/// Storage for buffer during body.
TE_API Stmt allocate(Buffer buffer, Stmt body);
/// `if (cond) then_case else else_case` (else_case may be undefined).
TE_API Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case = Stmt());
/// A sequence; nested sequences are flattened and undefined entries dropped.
TE_API Stmt seq(std::vector<Stmt> stmts);
/// Evaluates value for its effect.
TE_API Stmt evaluate(Expr value);
/// A barrier between the threads of a block.
TE_API Stmt barrier();
/// Runs body if cond holds; otherwise the function fails with message.
TE_API Stmt assert_stmt(Expr cond, std::string message, Stmt body);
/// A tensor intrinsic on buffer regions (see TensorIntrinsicCallNode); `producer`: a TMA
/// copy the kernel's producer warpgroup issues.
TE_API Stmt tensor_intrinsic_call(std::shared_ptr<const TensorIntrinsicNode> intrinsic, std::vector<Buffer> buffers,
                                  std::vector<Expr> offsets, std::vector<std::vector<Expr>> strides, Stmt body,
                                  std::optional<WarpSpecialization> producer = std::nullopt);

/// A function parameter: a buffer (pointer + shape) or a scalar variable.
struct TE_API Param {
  Buffer buffer;  ///< defined for buffer parameters
  Var var;        ///< defined for scalar parameters
  /// Whether this is a buffer parameter.
  bool is_buffer() const { return buffer.defined(); }
  /// The buffer's or the variable's name.
  const std::string& name() const { return is_buffer() ? buffer.name() : var.name(); }
};

/// A lowered function: a name, ordered parameters and a body.
struct TE_API LoweredFunc {
  std::string name;           ///< A C identifier: the function's name in every backend.
  std::vector<Param> params;  ///< Buffers (in lower()'s order), then unbound scalar vars.
  Stmt body;                  ///< The loop nest.
};

// ---- Visitors and mutators (Halide style) ----
/// IRVisitor walks every child; override a visit to look at a node kind, and call the
/// base visit to keep walking below it.
class TE_API IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  /// Visits an expression (dispatches on its kind).
  virtual void visit(const Expr& e);
  /// Visits a statement (dispatches on its kind).
  virtual void visit(const Stmt& s);

 protected:
  /// \name One function per node kind
  /// Override to look at that kind; the base versions visit the node's children.
  //@{
  virtual void visit_int_imm(const IntImmNode*) {}          ///< IntImmNodes.
  virtual void visit_float_imm(const FloatImmNode*) {}      ///< FloatImmNodes.
  virtual void visit_var(const VarNode*) {}                 ///< VarNodes.
  virtual void visit_cast(const CastNode* n);               ///< CastNodes.
  virtual void visit_binary(const BinaryNode* n);           ///< BinaryNodes.
  virtual void visit_not(const NotNode* n);                 ///< NotNodes.
  virtual void visit_select(const SelectNode* n);           ///< SelectNodes.
  virtual void visit_load(const LoadNode* n);               ///< LoadNodes.
  virtual void visit_ramp(const RampNode* n);               ///< RampNodes.
  virtual void visit_broadcast(const BroadcastNode* n);     ///< BroadcastNodes.
  virtual void visit_call(const CallNode* n);               ///< CallNodes.
  virtual void visit_let(const LetNode* n);                 ///< LetNodes.
  virtual void visit_tensor_read(const TensorReadNode* n);  ///< TensorReadNodes.
  virtual void visit_reduce(const ReduceNode* n);           ///< ReduceNodes.

  virtual void visit_let_stmt(const LetStmtNode* n);                           ///< LetStmtNodes.
  virtual void visit_for(const ForNode* n);                                    ///< ForNodes.
  virtual void visit_store(const StoreNode* n);                                ///< StoreNodes.
  virtual void visit_allocate(const AllocateNode* n);                          ///< AllocateNodes.
  virtual void visit_if_then_else(const IfThenElseNode* n);                    ///< IfThenElseNodes.
  virtual void visit_seq(const SeqNode* n);                                    ///< SeqNodes.
  virtual void visit_evaluate(const EvaluateNode* n);                          ///< EvaluateNodes.
  virtual void visit_barrier(const BarrierNode*) {}                            ///< BarrierNodes.
  virtual void visit_assert(const AssertNode* n);                              ///< AssertNodes.
  virtual void visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n);  ///< Its offsets and body.
  //@}
};

/// IRMutator rebuilds a tree bottom-up; a node whose children did not change is
/// returned as it was (same node), so unchanged subtrees stay shared.
class TE_API IRMutator {
 public:
  virtual ~IRMutator() = default;
  /// Mutates an expression (dispatches on its kind).
  virtual Expr mutate(const Expr& e);
  /// Mutates a statement (dispatches on its kind).
  virtual Stmt mutate(const Stmt& s);

 protected:
  /// \name One function per node kind
  /// Override to rewrite that kind; the base versions mutate the children and rebuild
  /// the node only if one changed. `e` / `s` is the node being mutated, as a handle.
  //@{
  virtual Expr mutate_int_imm(const Expr& e, const IntImmNode*) { return e; }      ///< IntImmNodes.
  virtual Expr mutate_float_imm(const Expr& e, const FloatImmNode*) { return e; }  ///< FloatImmNodes.
  virtual Expr mutate_var(const Expr& e, const VarNode*) { return e; }             ///< VarNodes.
  virtual Expr mutate_cast(const Expr& e, const CastNode* n);                      ///< CastNodes.
  virtual Expr mutate_binary(const Expr& e, const BinaryNode* n);                  ///< BinaryNodes.
  virtual Expr mutate_not(const Expr& e, const NotNode* n);                        ///< NotNodes.
  virtual Expr mutate_select(const Expr& e, const SelectNode* n);                  ///< SelectNodes.
  virtual Expr mutate_load(const Expr& e, const LoadNode* n);                      ///< LoadNodes.
  virtual Expr mutate_ramp(const Expr& e, const RampNode* n);                      ///< RampNodes.
  virtual Expr mutate_broadcast(const Expr& e, const BroadcastNode* n);            ///< BroadcastNodes.
  virtual Expr mutate_call(const Expr& e, const CallNode* n);                      ///< CallNodes.
  virtual Expr mutate_let(const Expr& e, const LetNode* n);                        ///< LetNodes.
  virtual Expr mutate_tensor_read(const Expr& e, const TensorReadNode* n);         ///< TensorReadNodes.
  virtual Expr mutate_reduce(const Expr& e, const ReduceNode* n);                  ///< ReduceNodes.

  virtual Stmt mutate_let_stmt(const Stmt& s, const LetStmtNode* n);            ///< LetStmtNodes.
  virtual Stmt mutate_for(const Stmt& s, const ForNode* n);                     ///< ForNodes.
  virtual Stmt mutate_store(const Stmt& s, const StoreNode* n);                 ///< StoreNodes.
  virtual Stmt mutate_allocate(const Stmt& s, const AllocateNode* n);           ///< AllocateNodes.
  virtual Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n);     ///< IfThenElseNodes.
  virtual Stmt mutate_seq(const Stmt& s, const SeqNode* n);                     ///< SeqNodes.
  virtual Stmt mutate_evaluate(const Stmt& s, const EvaluateNode* n);           ///< EvaluateNodes.
  virtual Stmt mutate_barrier(const Stmt& s, const BarrierNode*) { return s; }  ///< BarrierNodes.
  virtual Stmt mutate_assert(const Stmt& s, const AssertNode* n);               ///< AssertNodes.
  /// Its offsets and body.
  virtual Stmt mutate_tensor_intrinsic_call(const Stmt& s, const TensorIntrinsicCallNode* n);
  //@}

  /// Mutates each element; returns true if any changed.
  bool mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out);
};

/// Replaces variables (by identity) with expressions.
TE_API Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map);
/// Replaces variables (by identity) with expressions in a statement.
TE_API Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, Expr>>& map);

/// Structural equality of statements (variables compared by identity).
TE_API bool equal(const Stmt& a, const Stmt& b);

// ---- Printing ----
/// Writes the statement as te's C-like loop-nest text (docs/dump_ir.md explains it).
TE_API std::ostream& operator<<(std::ostream& os, const Stmt& s);
/// Writes `func name(params) { body }`: what `std::cout << lower(...)` prints.
TE_API std::ostream& operator<<(std::ostream& os, const LoweredFunc& f);
/// The text operator<< writes.
TE_API std::string to_string(const Stmt& s);
/// The text operator<< writes.
TE_API std::string to_string(const LoweredFunc& f);

}  // namespace te
