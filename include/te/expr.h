// Expressions: immutable, shared nodes. The DSL builders below apply te's type rules.
//
// Type rules (for + - * / % min max and comparisons):
//  - bool operands are rejected by arithmetic and by min/max; && || ! need bool operands.
//  - equal types combine as they are.
//  - an immediate (a literal) takes the type of the other operand: `x + 1`, `f * 0.5`.
//    An integer literal that does not fit the other integer type is an error; a float
//    literal combined with an integer expression makes the result the literal's float type.
//  - float with int/uint: the integer side is cast to the float type.
//  - two floats, or two ints / two uints of different widths: the narrower is widened.
//  - int with uint: both become Int(max(bits)).
//  - vectors: lane counts must match; a scalar is broadcast to the vector's lanes.
//  - `%` on floats is an error (use fmod-free formulations: x - floor(x / y) * y).
// Integer / and % are floor division and modulo (Python, Halide). truncdiv / truncmod
// give C's. Division by zero is defined: x / 0 == 0 and x % 0 == 0 (both kinds), and
// INT_MIN / -1 == INT_MIN (wraps), INT_MIN % -1 == 0. Integer + - * wrap (two's
// complement) at the type's width. Float arithmetic follows IEEE-754.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "te/dtype.h"
#include "te/error.h"

namespace te {

enum class ExprKind : uint8_t {
  IntImm, FloatImm, Var, Cast, Binary, Not, Select, Load, Ramp, Broadcast, Call, Let,
  TensorRead, Reduce
};

enum class BinOp : uint8_t {
  Add, Sub, Mul, Div, Mod, TruncDiv, TruncMod, Min, Max,
  EQ, NE, LT, LE, GT, GE, And, Or
};
const char* binop_name(BinOp op);  // "+", "min", "truncdiv", ...
bool is_comparison(BinOp op);
bool is_logical(BinOp op);        // And, Or

// Calls to built-in functions. IfThenElse evaluates only the taken side; Likely marks
// a condition expected true (a hint for loop partitioning and codegen).
enum class Intrinsic : uint8_t {
  Floor, Ceil, Round, NearbyInt, Trunc, Abs, Exp, Log, Sqrt, Pow, Tanh, Fma, Likely,
  IfThenElse
};
const char* intrinsic_name(Intrinsic op);  // "floor", "if_then_else", ...

struct ExprNode {
  ExprKind kind;
  DataType dtype;
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
};

struct VarNode;
struct BufferNode;
struct IterVarNode;
struct OperationNode;

// A handle on an immutable expression node; null when default-constructed.
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  Expr(int v);        // int32 immediate
  Expr(int64_t v);    // int64 immediate
  Expr(float v);      // float32 immediate
  Expr(double v);     // float64 immediate
  Expr(bool v) = delete;  // write const_true()/const_false(): avoids silent int->bool

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }
  DataType dtype() const;
  ExprKind kind() const;

  // Typed view of the node, or nullptr if the node is of another kind.
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  // Identity (same node), not structural equality: see equal().
  bool same_as(const Expr& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
};

// A variable. Two Vars are the same variable only if they share a node.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = Int(32));
  explicit Var(std::shared_ptr<const VarNode> n) : Expr(std::move(n)) {}
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
};

struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;  // for uint64, the bit pattern
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};
struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
};
struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;
  CastNode(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};
struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinOp op;
  Expr a, b;
  BinaryNode(DataType t, BinOp o, Expr x, Expr y)
      : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};
struct NotNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  Expr a;
  NotNode(DataType t, Expr x) : ExprNode(kKind, t), a(std::move(x)) {}
};
// Both sides are evaluated; see if_then_else for a guarded choice.
struct SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr cond, true_value, false_value;
  SelectNode(DataType t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t), cond(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
};

// A memory scope for buffers and cache stages.
enum class MemoryScope : uint8_t { Global, Shared, Local };
const char* scope_name(MemoryScope s);       // "global", "shared", "local"
MemoryScope parse_scope(const std::string& s);  // throws te::Error on unknown names

// A named region of memory with an element type and a row-major shape.
struct BufferNode {
  std::string name;
  DataType dtype;  // element type (lanes == 1)
  std::vector<Expr> shape;
  MemoryScope scope = MemoryScope::Global;
};
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape,
         MemoryScope scope = MemoryScope::Global);
  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  bool same_as(const Buffer& o) const { return node_ == o.node_; }
  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  const std::vector<Expr>& shape() const { return node_->shape; }
  MemoryScope scope() const { return node_->scope; }
  int ndim() const { return static_cast<int>(node_->shape.size()); }

 private:
  std::shared_ptr<const BufferNode> node_;
};

// buffer[indices...] if predicate (lanes of a vector load; undefined predicate = all).
// Before storage flattening there is one index per dimension; after, exactly one.
struct LoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr predicate;
  LoadNode(DataType t, Buffer b, std::vector<Expr> i, Expr p)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(i)), predicate(std::move(p)) {}
};
// The vector base, base + stride, ..., base + (lanes-1)*stride.
struct RampNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  Expr base, stride;
  int lanes;
  RampNode(DataType t, Expr b, Expr s, int l)
      : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
};
struct BroadcastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Expr value;
  int lanes;
  BroadcastNode(DataType t, Expr v, int l) : ExprNode(kKind, t), value(std::move(v)), lanes(l) {}
};
struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Intrinsic op;
  std::vector<Expr> args;
  CallNode(DataType t, Intrinsic o, std::vector<Expr> a)
      : ExprNode(kKind, t), op(o), args(std::move(a)) {}
};
struct LetNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Let;
  Var var;
  Expr value, body;
  LetNode(DataType t, Var v, Expr val, Expr b)
      : ExprNode(kKind, t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
};

// A range [min, min + extent).
struct Range {
  Expr min, extent;
  Range() = default;
  // [begin, end): reduce_axis({0, K}) reads naturally.
  Range(Expr begin, Expr end);
  static Range from_min_extent(Expr min, Expr extent);
};

enum class IterVarType : uint8_t { DataPar, Reduce, Thread };

// A loop variable with its domain: a compute axis, a reduction axis, a split/fuse
// result, or a GPU thread axis (thread_tag "blockIdx.x", "threadIdx.y", ...).
struct IterVarNode {
  Var var;
  Range dom;
  IterVarType type = IterVarType::DataPar;
  std::string thread_tag;
};
class IterVar {
 public:
  IterVar() = default;
  IterVar(Range dom, Var var, IterVarType type, std::string thread_tag = "");
  bool defined() const { return node_ != nullptr; }
  const IterVarNode* get() const { return node_.get(); }
  const IterVarNode* operator->() const { return node_.get(); }
  bool same_as(const IterVar& o) const { return node_ == o.node_; }
  const Var& var() const { return node_->var; }
  const Range& dom() const { return node_->dom; }
  IterVarType type() const { return node_->type; }
  const std::string& name() const { return node_->var.name(); }
  operator Expr() const { return node_->var; }  // NOLINT: `A(i, k)` with k a reduce axis

 private:
  std::shared_ptr<const IterVarNode> node_;
};

// A reduction axis over dom: `IterVar k = reduce_axis({0, K}, "k");`
IterVar reduce_axis(Range dom, std::string name = "k");
// A GPU thread axis: "blockIdx.x|y|z", "threadIdx.x|y|z", "vthread".
IterVar thread_axis(const std::string& tag);

// A tensor element read inside a compute body: T(i, j). Lowering turns it into a Load.
struct TensorReadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::TensorRead;
  std::shared_ptr<const OperationNode> op;
  std::vector<Expr> indices;
  TensorReadNode(DataType t, std::shared_ptr<const OperationNode> o, std::vector<Expr> i)
      : ExprNode(kKind, t), op(std::move(o)), indices(std::move(i)) {}
};

enum class Reducer : uint8_t { Sum, Prod, Min, Max };
const char* reducer_name(Reducer r);  // "sum", "prod", "min", "max"

// reducer over `axis` of source, counting only points where condition holds.
// Only allowed as the whole body of a compute.
struct ReduceNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Reduce;
  Reducer reducer;
  Expr source;
  std::vector<IterVar> axis;
  Expr condition;  // undefined: all points
  ReduceNode(DataType t, Reducer r, Expr s, std::vector<IterVar> ax, Expr c)
      : ExprNode(kKind, t), reducer(r), source(std::move(s)), axis(std::move(ax)), condition(std::move(c)) {}
};

// ---- Immediates ----
Expr make_const(DataType t, int64_t v);  // IntImm or FloatImm (broadcast if t is a vector)
Expr make_const(DataType t, double v);
Expr make_const(DataType t, int v);
Expr const_true(int lanes = 1);
Expr const_false(int lanes = 1);
Expr make_zero(DataType t);
// The identity element of a reducer (0, 1, +inf/max value, -inf/min value).
Expr reducer_identity(Reducer r, DataType t);
// The largest and smallest values of a type (infinities for floats).
Expr max_value(DataType t);
Expr min_value(DataType t);

// Immediate value of e if it is an IntImm (or a Broadcast of one).
const int64_t* as_const_int(const Expr& e);
const double* as_const_float(const Expr& e);
bool is_const_int(const Expr& e, int64_t v);
bool is_zero(const Expr& e);
bool is_one(const Expr& e);

// ---- Arithmetic (type rules at the top of this file) ----
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floor division on integers
Expr operator%(Expr a, Expr b);  // floor modulo on integers; error on floats
Expr operator-(Expr a);
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
// Builds a Binary node applying the type rules for op.
Expr make_binary(BinOp op, Expr a, Expr b);

Expr select(Expr cond, Expr true_value, Expr false_value);
Expr if_then_else(Expr cond, Expr true_value, Expr false_value);
Expr cast(DataType t, Expr value);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);      // half away from zero
Expr nearbyint(Expr x);  // half to even
Expr trunc(Expr x);
Expr abs(Expr x);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr pow(Expr x, Expr y);
Expr tanh(Expr x);
Expr fma(Expr a, Expr b, Expr c);  // a * b + c
Expr likely(Expr cond);
Expr let(Var v, Expr value, Expr body);

// ---- Vectors and memory (used by lowering and by hand-written loop IR) ----
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr value, int lanes);
Expr load(Buffer buffer, std::vector<Expr> indices, Expr predicate = Expr());

// ---- Reductions (the whole body of a compute) ----
Expr sum(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
Expr prod(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
Expr min(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
Expr max(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
Expr reduce(Reducer r, Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
// Braced-list forms, so that min(x, {k}) is not mistaken for the binary min(x, y).
Expr sum(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());
Expr prod(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());
Expr min(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());
Expr max(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());

// ---- Printing (stable, C-like; see printer.cpp) ----
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::string to_string(const Expr& e);

// Structural equality: same shape of tree, same immediates, same variables (by identity).
bool equal(const Expr& a, const Expr& b);

}  // namespace te
