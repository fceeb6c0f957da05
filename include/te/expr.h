/// \file
/// Expressions: immutable, shared nodes. The DSL builders below apply te's type rules.
///
/// Type rules (for + - * / % min max and comparisons):
///  - bool operands are rejected by arithmetic and by min/max; && || ! need bool operands.
///  - equal types combine as they are.
///  - an immediate (a literal) takes the type of the other operand: `x + 1`, `f * 0.5`.
///    An integer literal that does not fit the other integer type is an error; a float
///    literal combined with an integer expression makes the result the literal's float type.
///  - float with int/uint: the integer side is cast to the float type.
///  - two floats, or two ints / two uints of different widths: the narrower is widened;
///    float16 with bfloat16 (neither holds the other) gives float32.
///  - int with uint: both become Int(max(bits)).
///  - vectors: lane counts must match; a scalar is broadcast to the vector's lanes.
///  - `%` on floats is an error (use fmod-free formulations: x - floor(x / y) * y).
/// Integer / and % are floor division and modulo (Python, Halide). truncdiv / truncmod
/// give C's. Bitwise & | ^ ~ << >> and popcount take integers only (int or uint; a float
/// or bool operand is an error naming the types) and combine types as + does. Division by zero is defined: x / 0 == 0
/// and x % 0 == 0 (both kinds), and INT_MIN / -1 == INT_MIN (wraps), INT_MIN % -1 == 0. Integer + - * wrap (two's
/// complement) at the type's width. Float arithmetic follows IEEE-754; float16 and
/// bfloat16 compute in float32, rounded to their type after every operation.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "te/dtype.h"
#include "te/error.h"
#include "te/export.h"

namespace te {

/// The kind of an expression node.
enum class ExprKind : uint8_t {
  IntImm,
  FloatImm,
  Var,
  Cast,
  Binary,
  Not,
  Select,
  Load,
  Ramp,
  Broadcast,
  Call,
  Let,
  TensorRead,
  Reduce
};

/// The operator of a BinaryNode.
enum class BinOp : uint8_t { Add, Sub, Mul, Div, Mod, TruncDiv, TruncMod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or };
TE_API const char* binop_name(BinOp op);  ///< "+", "min", "truncdiv", ...
/// EQ, NE, LT, LE, GT, GE.
TE_API bool is_comparison(BinOp op);
TE_API bool is_logical(BinOp op);  ///< And, Or

/// Calls to built-in functions. IfThenElse evaluates only the taken side; Likely marks
/// a condition expected true (a hint for loop partitioning and codegen).
/// WarpShuffleDown(value, delta, thread) exchanges values between the threads of a GPU
/// warp (see warp_shuffle_down). ThreadAllreduce is a marker lowering places and then
/// expands itself (pass "lower_thread_allreduce"); no lowered function contains it.
/// Extern is a call of a C function outside te (see call_extern; CallNode::extern_name
/// names it).
enum class Intrinsic : uint8_t {
  Floor,
  Ceil,
  Round,
  NearbyInt,
  Trunc,
  Abs,
  Exp,
  Log,
  Sqrt,
  Pow,
  Tanh,
  Fma,
  Likely,
  IfThenElse,
  WarpShuffleDown,
  ThreadAllreduce,
  // The rest of the math library (float arguments; IsNan/IsInf/IsFinite give bool).
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Atan2,
  Sinh,
  Cosh,
  Erf,
  Sigmoid,
  Exp2,
  Log2,
  Log10,
  Log1p,
  Expm1,
  Rsqrt,
  IsNan,
  IsInf,
  IsFinite,
  // Bitwise operations on integers (see operator& and friends).
  BitAnd,
  BitOr,
  BitXor,
  BitNot,
  ShiftLeft,
  ShiftRight,
  Popcount,
  // A function outside te, by name (call_extern).
  Extern
};
TE_API const char* intrinsic_name(Intrinsic op);  ///< "floor", "if_then_else", ...

/// The base of every expression node; immutable once built.
struct TE_API ExprNode {
  ExprKind kind;   ///< Which node this is.
  DataType dtype;  ///< The type of the value.
  /// A node of kind k and type t.
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
};

struct VarNode;        ///< See below.
struct BufferNode;     ///< See below.
struct IterVarNode;    ///< See below.
struct OperationNode;  ///< See te/tensor.h.

/// A handle on an immutable expression node; null when default-constructed.
class TE_API Expr {
 public:
  /// An undefined expression.
  Expr() = default;
  /// A handle to n.
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  Expr(int v);            ///< int32 immediate
  Expr(int64_t v);        ///< int64 immediate
  Expr(float v);          ///< float32 immediate
  Expr(double v);         ///< float64 immediate
  Expr(bool v) = delete;  ///< write const_true()/const_false(): avoids silent int->bool

  /// Whether there is a node.
  bool defined() const { return node_ != nullptr; }
  /// The node.
  const ExprNode* get() const { return node_.get(); }
  /// The node.
  const ExprNode* operator->() const { return node_.get(); }
  /// The shared node.
  const std::shared_ptr<const ExprNode>& node() const { return node_; }
  /// The type of the value (te::Error if undefined).
  DataType dtype() const;
  /// The node's kind (te::Error if undefined).
  ExprKind kind() const;

  /// Typed view of the node, or nullptr if the node is of another kind.
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  /// Identity (same node), not structural equality: see equal().
  bool same_as(const Expr& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

/// A variable's node.
struct TE_API VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;  ///< The node's kind.
  std::string name;                                 ///< For printing; identity is the node.
  /// A variable of type t.
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
};

/// A variable. Two Vars are the same variable only if they share a node.
class TE_API Var : public Expr {
 public:
  /// An undefined variable.
  Var() = default;
  /// A new variable (int32 by default: shape variables; Float(32) for a float scalar).
  explicit Var(std::string name, DataType t = Int(32));
  /// A handle to the variable n.
  explicit Var(std::shared_ptr<const VarNode> n) : Expr(std::move(n)) {}
  /// The node.
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  /// The node.
  const VarNode* operator->() const { return get(); }
  /// The name.
  const std::string& name() const { return get()->name; }
};

/// An integer (or bool) constant.
struct TE_API IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;  ///< The node's kind.
  int64_t value;                                       ///< for uint64, the bit pattern
  /// A constant v of type t.
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};
/// A floating-point constant.
struct TE_API FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;  ///< The node's kind.
  double value;                                          ///< The value (exactly representable in dtype).
  /// A constant v of type t.
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
};
/// value converted to dtype (float to int truncates and saturates; NaN gives 0).
struct TE_API CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;  ///< The node's kind.
  Expr value;                                        ///< The value converted.
  /// See cast().
  CastNode(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};
/// `a op b`.
struct TE_API BinaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;  ///< The node's kind.
  BinOp op;                                            ///< The operator.
  Expr a;                                              ///< The left operand.
  Expr b;                                              ///< The right operand.
  /// See make_binary().
  BinaryNode(DataType t, BinOp o, Expr x, Expr y) : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};
/// `!a`.
struct TE_API NotNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;  ///< The node's kind.
  Expr a;                                           ///< The bool operand.
  /// See operator!.
  NotNode(DataType t, Expr x) : ExprNode(kKind, t), a(std::move(x)) {}
};
/// Both sides are evaluated; see if_then_else for a guarded choice.
struct TE_API SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;  ///< The node's kind.
  Expr cond;                                           ///< The bool condition.
  Expr true_value;                                     ///< The value when cond holds.
  Expr false_value;                                    ///< The value otherwise.
  /// See select().
  SelectNode(DataType t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t), cond(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
};

/// A memory scope for buffers and cache stages.
enum class MemoryScope : uint8_t {
  Global,    ///< ordinary (device) memory
  Shared,    ///< shared by the threads of a GPU block
  Local,     ///< private to a thread (registers)
  Warp,      ///< a GPU warp's fragment: its 32 lanes hold it together, as tensor intrinsics lay it out
  Warpgroup  ///< a Hopper warpgroup's fragment (wgmma's accumulators): its 128 threads hold it together
};
TE_API const char* scope_name(MemoryScope s);          ///< "global", "shared", "local", "warp", "warpgroup"
TE_API MemoryScope parse_scope(const std::string& s);  ///< throws te::Error on unknown names
/// Local, warp and warpgroup memory: each thread of the loop IR has its own copy (on the
/// GPU a warp's or a warpgroup's fragment is one such thread's).
TE_API bool per_thread_scope(MemoryScope s);

/// A named region of memory with an element type and a row-major shape.
struct TE_API BufferNode {
  std::string name;                         ///< For printing and parameter names.
  DataType dtype;                           ///< element type (lanes == 1)
  std::vector<Expr> shape;                  ///< The extent of each dimension.
  MemoryScope scope = MemoryScope::Global;  ///< Where it lives.
  /// CUDA shared memory laid out by a swizzle of this width in bytes (32, 64 or 128;
  /// Stage::swizzle), 0: none. The CUDA backend puts the element at byte offset b at
  /// b with bits [4, 4 + w) XOR bits [7, 7 + w) (w = 1, 2, 3); interpret() and the CPU
  /// backends keep the row-major layout, which holds the same values.
  int swizzle_bytes = 0;
  /// A swizzled buffer whose rows are wider than its swizzle: the row's length in
  /// elements. The CUDA backend keeps such a buffer as column blocks of the swizzle's
  /// width (the first swizzle-wide part of every row, then the next, ...), each block
  /// swizzled as a buffer of rows that wide: the layout TMA writes and wgmma reads an
  /// MN-major operand in. 0: rows at most the swizzle's width, one block.
  int64_t swizzle_row = 0;
};
/// A shared handle to a BufferNode; buffers are the same only if they share a node.
class TE_API Buffer {
 public:
  /// An undefined buffer.
  Buffer() = default;
  /// A new buffer (swizzle_bytes, swizzle_row: see BufferNode).
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape, MemoryScope scope = MemoryScope::Global,
         int swizzle_bytes = 0, int64_t swizzle_row = 0);
  /// Whether there is a node.
  bool defined() const { return node_ != nullptr; }
  /// The node.
  const BufferNode* get() const { return node_.get(); }
  /// The node.
  const BufferNode* operator->() const { return node_.get(); }
  /// Whether both are the same buffer.
  bool same_as(const Buffer& o) const { return node_ == o.node_; }
  /// The name.
  const std::string& name() const { return node_->name; }
  /// The element type.
  DataType dtype() const { return node_->dtype; }
  /// The extent of each dimension.
  const std::vector<Expr>& shape() const { return node_->shape; }
  /// Where it lives.
  MemoryScope scope() const { return node_->scope; }
  /// Its swizzle's width in bytes (BufferNode::swizzle_bytes), 0: none.
  int swizzle_bytes() const { return node_->swizzle_bytes; }
  /// The row length of a swizzled buffer kept in column blocks (BufferNode::swizzle_row), 0: none.
  int64_t swizzle_row() const { return node_->swizzle_row; }
  /// The number of dimensions.
  int ndim() const { return static_cast<int>(node_->shape.size()); }

 private:
  std::shared_ptr<const BufferNode> node_;
};

/// buffer[indices...] if predicate (lanes of a vector load; undefined predicate = all).
/// Before storage flattening there is one index per dimension; after, exactly one.
struct TE_API LoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;  ///< The node's kind.
  Buffer buffer;                                     ///< The buffer read.
  std::vector<Expr> indices;                         ///< The indices (Ramps for vector loads).
  Expr predicate;                                    ///< Lanes to read (others are 0); undefined: all.
  /// See load().
  LoadNode(DataType t, Buffer b, std::vector<Expr> i, Expr p)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(i)), predicate(std::move(p)) {}
};
/// The vector base, base + stride, ..., base + (lanes-1)*stride.
struct TE_API RampNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;  ///< The node's kind.
  Expr base;                                         ///< The first lane.
  Expr stride;                                       ///< The step between lanes.
  int lanes;                                         ///< The number of lanes.
  /// See ramp().
  RampNode(DataType t, Expr b, Expr s, int l)
      : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
};
/// `lanes` copies of a scalar value.
struct TE_API BroadcastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;  ///< The node's kind.
  Expr value;                                             ///< The scalar.
  int lanes;                                              ///< The number of lanes.
  /// See broadcast().
  BroadcastNode(DataType t, Expr v, int l) : ExprNode(kKind, t), value(std::move(v)), lanes(l) {}
};
/// A call of a built-in function, or of a function outside te (Intrinsic::Extern).
struct TE_API CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;  ///< The node's kind.
  Intrinsic op;                                      ///< The function.
  std::vector<Expr> args;                            ///< Its arguments.
  /// Intrinsic::Extern: the C name of the function called (see call_extern); empty for
  /// the built-in functions. Passes that rebuild a call keep it.
  std::string extern_name;
  /// A call of o (of the extern function `name` when o is Intrinsic::Extern).
  CallNode(DataType t, Intrinsic o, std::vector<Expr> a, std::string name = {})
      : ExprNode(kKind, t), op(o), args(std::move(a)), extern_name(std::move(name)) {}
};
/// `let var = value in body`, as an expression.
struct TE_API LetNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Let;  ///< The node's kind.
  Var var;                                          ///< The variable bound.
  Expr value;                                       ///< Its value.
  Expr body;                                        ///< The result, where var is visible.
  /// See let().
  LetNode(DataType t, Var v, Expr val, Expr b)
      : ExprNode(kKind, t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
};

/// A range [min, min + extent).
struct TE_API Range {
  Expr min;     ///< The first value.
  Expr extent;  ///< The number of values.
  /// An undefined range.
  Range() = default;
  /// [begin, end): reduce_axis({0, K}) reads naturally.
  Range(Expr begin, Expr end);
  /// [min, min + extent).
  static Range from_min_extent(Expr min, Expr extent);
};

/// The role of an IterVar.
enum class IterVarType : uint8_t {
  DataPar,  ///< a data-parallel axis (or a loop derived from one)
  Reduce,   ///< a reduction axis
  Thread    ///< a GPU thread axis (thread_axis())
};

/// A loop variable with its domain: a compute axis, a reduction axis, a split/fuse
/// result, or a GPU thread axis (thread_tag "blockIdx.x", "threadIdx.y", ...).
struct TE_API IterVarNode {
  Var var;                                  ///< The loop variable.
  Range dom;                                ///< Its domain (undefined for derived loops).
  IterVarType type = IterVarType::DataPar;  ///< Its role.
  std::string thread_tag;                   ///< Thread axes: "blockIdx.x", ...
};
/// A shared handle to an IterVarNode: what `C.axis(0)`, `reduce_axis`, `split` and
/// `thread_axis` return, and what schedule primitives take.
class TE_API IterVar {
 public:
  /// An undefined iter var.
  IterVar() = default;
  /// A new iter var.
  IterVar(Range dom, Var var, IterVarType type, std::string thread_tag = "");
  /// Whether there is a node.
  bool defined() const { return node_ != nullptr; }
  /// The node.
  const IterVarNode* get() const { return node_.get(); }
  /// The node.
  const IterVarNode* operator->() const { return node_.get(); }
  /// Whether both are the same iter var.
  bool same_as(const IterVar& o) const { return node_ == o.node_; }
  /// The loop variable.
  const Var& var() const { return node_->var; }
  /// The domain.
  const Range& dom() const { return node_->dom; }
  /// The role.
  IterVarType type() const { return node_->type; }
  /// The variable's name ("i", "i.outer", ...).
  const std::string& name() const { return node_->var.name(); }
  /// The loop variable as an expression.
  operator Expr() const { return node_->var; }  // NOLINT: `A(i, k)` with k a reduce axis

 private:
  std::shared_ptr<const IterVarNode> node_;
};

/// A reduction axis over dom: `IterVar k = reduce_axis({0, K}, "k");`
TE_API IterVar reduce_axis(Range dom, std::string name = "k");
/// A GPU thread axis: "blockIdx.x|y|z", "threadIdx.x|y|z", "vthread".
TE_API IterVar thread_axis(const std::string& tag);

/// A tensor element read inside a compute body: T(i, j). Lowering turns it into a Load.
struct TE_API TensorReadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::TensorRead;  ///< The node's kind.
  std::shared_ptr<const OperationNode> op;                 ///< The operation whose output is read.
  std::vector<Expr> indices;                               ///< One per dimension.
  int value_index = 0;                                     ///< Which output of a multi-output compute.
  /// See Tensor::operator().
  TensorReadNode(DataType t, std::shared_ptr<const OperationNode> o, std::vector<Expr> i, int value = 0)
      : ExprNode(kKind, t), op(std::move(o)), indices(std::move(i)), value_index(value) {}
};

/// How a ReduceNode combines values.
enum class Reducer : uint8_t {
  Sum,    ///< a + b, identity 0
  Prod,   ///< a * b, identity 1
  Min,    ///< min(a, b), identity the largest value
  Max,    ///< max(a, b), identity the smallest value
  Custom  ///< a user's rule (comm_reducer), possibly over a tuple of values
};
TE_API const char* reducer_name(Reducer r);  ///< "sum", "prod", "min", "max", "custom"

/// A user reducer's rule for one tuple of element types (TVM's CommReducer): combining
/// the partial results lhs and rhs gives result (expressions of lhs and rhs only);
/// identity is the value of an empty reduction. Made by CommReducer::operator().
struct TE_API CommReducerNode {
  std::string name;            ///< For printing and messages ("argmax", ...).
  std::vector<Var> lhs;        ///< One variable per value: the first partial result.
  std::vector<Var> rhs;        ///< One variable per value: the second partial result.
  std::vector<Expr> result;    ///< One per value: the combination of lhs and rhs.
  std::vector<Expr> identity;  ///< One per value: the neutral element.
  /// A row reducer (RowReducer): values [0, row_values) are one per row, the others one
  /// per element of the row; 0 for every other reducer.
  int row_values = 0;
  /// A row reducer: quantities of one step of a row (attention's rescale weights), made
  /// once per step from the row values' lhs and rhs, that the element values' results use.
  std::vector<Var> factors;
  /// A row reducer: each factor's value, an expression of the row values' lhs and rhs.
  std::vector<Expr> factor_values;
};

/// reducer over `axis` of the sources, counting only points where condition holds. A
/// tuple reduction (a Custom reducer over several values) is one ReduceNode per value,
/// equal but for value_index: the bodies of a compute_tuple. Only allowed as the whole
/// body of a compute.
struct TE_API ReduceNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Reduce;  ///< The node's kind.
  Reducer reducer;                                     ///< How values combine.
  /// The rule of a Custom reducer (null for the built-in ones).
  std::shared_ptr<const CommReducerNode> combiner;
  std::vector<Expr> sources;  ///< The value(s) at each point: one per tuple element.
  std::vector<IterVar> axis;  ///< The reduction axes.
  Expr condition;             ///< undefined: all points
  int value_index = 0;        ///< Which tuple element this node's value is.
  /// A built-in reducer over one value (see reduce()).
  ReduceNode(DataType t, Reducer r, Expr s, std::vector<IterVar> ax, Expr c)
      : ExprNode(kKind, t), reducer(r), sources{std::move(s)}, axis(std::move(ax)), condition(std::move(c)) {}
  /// Any reducer over any number of values.
  ReduceNode(DataType t, Reducer r, std::shared_ptr<const CommReducerNode> comb, std::vector<Expr> s,
             std::vector<IterVar> ax, Expr c, int index)
      : ExprNode(kKind, t),
        reducer(r),
        combiner(std::move(comb)),
        sources(std::move(s)),
        axis(std::move(ax)),
        condition(std::move(c)),
        value_index(index) {}
  /// This node's value at each point: sources[value_index].
  const Expr& source() const { return sources[static_cast<size_t>(value_index)]; }
};

// ---- Immediates ----
TE_API Expr make_const(DataType t, int64_t v);  ///< IntImm or FloatImm (broadcast if t is a vector)
/// A constant of type t with value v (rounded to t).
TE_API Expr make_const(DataType t, double v);
/// A constant of type t with value v.
TE_API Expr make_const(DataType t, int v);
/// The bool constant true (a vector of `lanes`).
TE_API Expr const_true(int lanes = 1);
/// The bool constant false (a vector of `lanes`).
TE_API Expr const_false(int lanes = 1);
/// Zero of type t.
TE_API Expr make_zero(DataType t);
/// The identity element of a reducer (0, 1, +inf/max value, -inf/min value).
TE_API Expr reducer_identity(Reducer r, DataType t);
/// The largest and smallest values of a type (infinities for floats).
TE_API Expr max_value(DataType t);
/// The smallest value of a type (-infinity for floats).
TE_API Expr min_value(DataType t);

/// Immediate value of e if it is an IntImm (or a Broadcast of one).
TE_API const int64_t* as_const_int(const Expr& e);
/// Immediate value of e if it is a FloatImm (or a Broadcast of one).
TE_API const double* as_const_float(const Expr& e);
/// Whether e is the integer constant v.
TE_API bool is_const_int(const Expr& e, int64_t v);
/// Whether e is a constant 0 (integer or float).
TE_API bool is_zero(const Expr& e);
/// Whether e is a constant 1 (integer or float).
TE_API bool is_one(const Expr& e);

// ---- Arithmetic (type rules at the top of this file) ----
/// \name Arithmetic, comparison and logic
/// Build Binary (or Not) nodes with te's type rules (top of this file); a type error is
/// a te::Error naming both operand types. Comparisons give bool; && || ! take bool.
//@{
TE_API Expr operator+(Expr a, Expr b);
TE_API Expr operator-(Expr a, Expr b);
TE_API Expr operator*(Expr a, Expr b);
TE_API Expr operator/(Expr a, Expr b);  ///< floor division on integers
TE_API Expr operator%(Expr a, Expr b);  ///< floor modulo on integers; error on floats
TE_API Expr operator-(Expr a);
TE_API Expr truncdiv(Expr a, Expr b);
TE_API Expr truncmod(Expr a, Expr b);
TE_API Expr min(Expr a, Expr b);
TE_API Expr max(Expr a, Expr b);
TE_API Expr operator==(Expr a, Expr b);
TE_API Expr operator!=(Expr a, Expr b);
TE_API Expr operator<(Expr a, Expr b);
TE_API Expr operator<=(Expr a, Expr b);
TE_API Expr operator>(Expr a, Expr b);
TE_API Expr operator>=(Expr a, Expr b);
TE_API Expr operator&&(Expr a, Expr b);
TE_API Expr operator||(Expr a, Expr b);
TE_API Expr operator!(Expr a);
//@}
/// Builds a Binary node applying the type rules for op.
TE_API Expr make_binary(BinOp op, Expr a, Expr b);

/// cond ? true_value : false_value, evaluating both sides.
TE_API Expr select(Expr cond, Expr true_value, Expr false_value);
/// cond ? true_value : false_value, evaluating only the taken side (guards loads).
TE_API Expr if_then_else(Expr cond, Expr true_value, Expr false_value);
/// value converted to t (float to int truncates toward zero and saturates; NaN gives 0).
TE_API Expr cast(DataType t, Expr value);
/// \name Math functions
/// On floats (floor, ceil, round, nearbyint, trunc and abs also accept integers, which
/// they return unchanged, or as |x| for abs).
//@{
TE_API Expr floor(Expr x);
TE_API Expr ceil(Expr x);
TE_API Expr round(Expr x);      ///< half away from zero
TE_API Expr nearbyint(Expr x);  ///< half to even
TE_API Expr trunc(Expr x);
TE_API Expr abs(Expr x);
TE_API Expr exp(Expr x);
TE_API Expr log(Expr x);
TE_API Expr sqrt(Expr x);
TE_API Expr pow(Expr x, Expr y);
TE_API Expr tanh(Expr x);
TE_API Expr fma(Expr a, Expr b, Expr c);  ///< a * b + c
TE_API Expr sin(Expr x);
TE_API Expr cos(Expr x);
TE_API Expr tan(Expr x);
TE_API Expr asin(Expr x);
TE_API Expr acos(Expr x);
TE_API Expr atan(Expr x);
TE_API Expr atan2(Expr y, Expr x);  ///< the angle of (x, y), in [-pi, pi]
TE_API Expr sinh(Expr x);
TE_API Expr cosh(Expr x);
TE_API Expr erf(Expr x);
TE_API Expr sigmoid(Expr x);  ///< 1 / (1 + exp(-x)), rounded once for float16
TE_API Expr exp2(Expr x);
TE_API Expr log2(Expr x);
TE_API Expr log10(Expr x);
TE_API Expr log1p(Expr x);  ///< log(1 + x), accurate near 0
TE_API Expr expm1(Expr x);  ///< exp(x) - 1, accurate near 0
TE_API Expr rsqrt(Expr x);  ///< 1 / sqrt(x) (two roundings; CUDA's rsqrtf under fast math)
//@}
/// \name Floating-point classification
/// A bool: whether x is a NaN, an infinity, or neither. An integer x gives the constant
/// answer (false, false, true).
//@{
TE_API Expr isnan(Expr x);     ///< x != x
TE_API Expr isinf(Expr x);     ///< |x| == infinity
TE_API Expr isfinite(Expr x);  ///< neither NaN nor infinite
//@}
/// \name Bitwise operations
/// On integers (int or uint of any width; vectors lane by lane); the operands combine
/// as for + (a literal takes the other side's type) and the result has that type.
/// A float or bool operand is a te::Error naming both types.
///
/// Shifts are defined for every amount b, as multiplication and floor division by 2^b:
/// `a << b` is a * 2^b wrapped to the type (0 once b >= the width), `a >> b` is
/// floor(a / 2^b): arithmetic (sign-filling) on int, logical on uint (0 or -1 once
/// b >= the width); a negative b shifts the other way by -b (as in Halide). Where b is
/// known to lie in [0, width) this is C's shift.
//@{
TE_API Expr operator&(Expr a, Expr b);
TE_API Expr operator|(Expr a, Expr b);
TE_API Expr operator^(Expr a, Expr b);
TE_API Expr operator~(Expr a);
TE_API Expr operator<<(Expr a, Expr b);
TE_API Expr operator>>(Expr a, Expr b);
TE_API Expr popcount(Expr a);  ///< the number of bits set, in a's type
//@}
/// A call of the C function `name`, defined outside te, on scalar arguments:
/// `call_extern(Float(32), "my_activation", {A(i), alpha})`. The function's C signature
/// follows from the types: it returns `ret` and takes one parameter of each argument's
/// type, in order (bool, int8..int64, uint8..uint64, float32 as `float`, float64 as
/// `double`; a literal `2` is an int32, `2.0f` a float32: cast where the function
/// takes another type). Where it comes from:
///  - build() (JIT): the libraries in BuildOptions::extern_libraries, then the process
///    (an executable's own functions must be exported: link it with `-rdynamic`);
///    a name found in neither is a te::Error at build time;
///  - export_object / export_library: an undefined symbol the object's user links (see
///    BuildOptions::extern_libraries for what export_library links);
///  - build_cuda: a `__device__` function from a header given in
///    CudaOptions::extern_headers (te::Error at build time when no header declares it);
///  - interpret(): the host function registered with te::register_extern.
///
/// te treats the function as pure: its result depends only on its arguments, and te may
/// call it any number of times (an inlined stage recomputes it; the simplifier may drop
/// a call whose value is unused, as in `f(x) * 0`), in any order and from several threads
/// at once (parallel loops, GPU threads). It must not throw. In a vectorized loop it is
/// called once per lane (only for the lanes an if_then_else takes). Two calls are equal()
/// when they call the same name with equal arguments.
///
/// te::Error when name is not a C identifier, ret is not one of the types above (float16
/// included: pass a float32), or an argument is undefined, a vector or of another type.
TE_API Expr call_extern(DataType ret, const std::string& name, std::vector<Expr> args);
/// cond, marked as expected to hold (loop_partition splits loops on it).
TE_API Expr likely(Expr cond);
/// `let v = value in body`.
TE_API Expr let(Var v, Expr value, Expr body);
/// CUDA's `__shfl_down_sync(0xffffffff, value, delta, 32)`: value as computed by the thread
/// whose linear index in the block (x + y * blockDim.x + z * blockDim.x * blockDim.y) is
/// `thread + delta`, when that thread is in the same warp of 32; the caller's own value
/// otherwise. `thread` must be the caller's linear index (the interpreter groups threads
/// into warps by it; CUDA reads it from the hardware). Every thread of a warp must reach
/// the shuffle together; only a store's or a let's value may contain one, and only GPU
/// code (build_cuda, interpret) runs it.
TE_API Expr warp_shuffle_down(Expr value, Expr delta, Expr thread);

// ---- Vectors and memory (used by lowering and by hand-written loop IR) ----
/// The vector base, base + stride, ..., base + (lanes - 1) * stride.
TE_API Expr ramp(Expr base, Expr stride, int lanes);
/// `lanes` copies of a scalar.
TE_API Expr broadcast(Expr value, int lanes);
/// buffer[indices] on the lanes where predicate holds (undefined: all).
TE_API Expr load(Buffer buffer, std::vector<Expr> indices, Expr predicate = Expr());

// ---- Reductions (the whole body of a compute) ----
/// \name Reductions
/// The sum, product, minimum or maximum of source over the axes, counting only the
/// points where `where` holds (undefined: all): `sum(A(i, k), {k})`. A reduction must be
/// the whole body of a compute.
//@{
TE_API Expr sum(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
TE_API Expr prod(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
TE_API Expr min(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
TE_API Expr max(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
TE_API Expr reduce(Reducer r, Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
/// Braced-list forms, so that min(x, {k}) is not mistaken for the binary min(x, y).
TE_API Expr sum(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());
TE_API Expr prod(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());
TE_API Expr min(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());
TE_API Expr max(Expr source, std::initializer_list<IterVar> axis, Expr where = Expr());
//@}

/// A user reducer (TVM's comm_reducer): how two partial results combine, and the value
/// of an empty reduction. The rule must be commutative and associative: rfactor and
/// cross-thread reductions combine partial results in any order. A reducer over one
/// value is used like sum(); over a tuple of values (argmax: index and value) it gives
/// one Reduce per value, the bodies of a compute_tuple.
class TE_API CommReducer {
 public:
  /// result[i] from the partial results lhs and rhs (one Expr per value each).
  using Combine = std::function<std::vector<Expr>(const std::vector<Expr>& lhs, const std::vector<Expr>& rhs)>;
  /// The identity, one Expr per value, for the values' element types.
  using Identity = std::function<std::vector<Expr>(const std::vector<DataType>& types)>;
  /// A reducer named `name` (printing, messages); see comm_reducer().
  CommReducer(std::string name, Combine combine, Identity identity);
  /// The reduction of one value: `my_sum(A(i, k), {k})`.
  Expr operator()(Expr source, const std::vector<IterVar>& axis, Expr where = Expr()) const;
  /// The reduction of a tuple: one Reduce per value, in order (see compute_tuple).
  std::vector<Expr> operator()(std::vector<Expr> sources, const std::vector<IterVar>& axis, Expr where = Expr()) const;
  /// The name given at construction.
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  Combine combine_;
  Identity identity_;
};

/// A reducer whose state is a few values per row and a row of elements that are combined
/// with the help of the row's step: the online softmax of attention (running maximum and
/// sum per query, the weighted values per (query, dim) rescaled as the maximum grows).
/// Each step of a row runs `row` once, then `element` once per element of the row with
/// the step's factors, so the row's quantities are not recomputed per element. Used with
/// compute_rows; see docs/reductions.md. Both rules must be commutative and associative
/// together, as for CommReducer.
class TE_API RowReducer {
 public:
  /// One step of a row: the combined row values and the factors the elements use.
  struct RowStep {
    std::vector<Expr> values;   ///< One per row value: the combination of lhs and rhs.
    std::vector<Expr> factors;  ///< Quantities of the step the element rule uses.
    /// Optional names of the factors (in the loop IR); default `<reducer>.f<i>`.
    std::vector<std::string> factor_names;
  };
  /// The row values' combination from the partial row values lhs and rhs.
  using RowCombine = std::function<RowStep(const std::vector<Expr>& lhs, const std::vector<Expr>& rhs)>;
  /// The elements' combination from the partial elements lhs and rhs and the step's factors.
  using ElementCombine = std::function<std::vector<Expr>(const std::vector<Expr>& lhs, const std::vector<Expr>& rhs,
                                                         const std::vector<Expr>& factors)>;
  /// A row reducer named `name` (printing, messages).
  RowReducer(std::string name, RowCombine row, ElementCombine element, CommReducer::Identity row_identity,
             CommReducer::Identity element_identity);
  /// The reduction: one Reduce per value, the row values first (the bodies of compute_rows).
  /// The row sources and `where` must not use the element axes.
  std::vector<Expr> operator()(std::vector<Expr> row_sources, std::vector<Expr> element_sources,
                               const std::vector<IterVar>& axis, Expr where = Expr()) const;
  /// The name given at construction.
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  RowCombine row_;
  ElementCombine element_;
  CommReducer::Identity row_identity_, element_identity_;
};

/// Attention's reduction over keys (FlashAttention's online softmax): {max, sum, acc...}
/// with max = the largest score, sum = the sum of exp(score - max) and acc_i = the sum of
/// exp(score - max) * values_i, one Expr per value. acc_i / sum is softmax(score) · values_i.
/// Points left out by `where` count for nothing; a row with none gives {-inf, 0, 0}.
/// The score and `where` are per row, the values per element (compute_rows).
TE_API std::vector<Expr> online_softmax(Expr score, std::vector<Expr> values, const std::vector<IterVar>& axis,
                                        Expr where = Expr());
/// online_softmax over partial results: each point is a block's {max, sum, acc...} (its
/// largest score, the sum of exp(score - max) over the block, the exp-weighted sums),
/// folded into the running state rescaled (FlashAttention's step per block of keys). A
/// block with max -inf counts for nothing.
TE_API std::vector<Expr> online_softmax_merge(Expr max, Expr sum, std::vector<Expr> values,
                                              const std::vector<IterVar>& axis, Expr where = Expr());

/// A reducer over one value: combine(a, b) and identity(type), e.g.
/// `comm_reducer([](Expr a, Expr b) { return a | b; }, [](DataType t) { return make_zero(t); }, "or")`.
TE_API CommReducer comm_reducer(std::function<Expr(Expr, Expr)> combine, std::function<Expr(DataType)> identity,
                                std::string name = "reduce");
/// A reducer over a tuple of values (see CommReducer::Combine and Identity).
TE_API CommReducer comm_reducer(CommReducer::Combine combine, CommReducer::Identity identity,
                                std::string name = "reduce");

/// \name Tuple reductions
/// argmax / argmin give {index, value}: the position along the single axis (its
/// variable's type) of the largest / smallest source value, the first such position on
/// ties, NaN counting as larger than any number (PyTorch's rule) for argmax and smaller
/// for argmin. An empty reduction gives {the index type's largest value, the identity}.
/// welford gives {mean, m2, count} of the source in one pass (Welford's update, combined
/// as Chan et al.), all of the source's float type: the variance is m2 / count (biased)
/// or m2 / (count - 1). Each result is one Reduce per value: the bodies of a
/// compute_tuple (`compute_tuple({M}, [&](Expr i) { return argmax(A(i, k), {k}); },
/// {"idx", "val"})`).
//@{
TE_API std::vector<Expr> argmax(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
TE_API std::vector<Expr> argmin(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
TE_API std::vector<Expr> welford(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
//@}

// ---- Printing (stable, C-like; see printer.cpp) ----
/// Writes the expression as te's C-like text.
TE_API std::ostream& operator<<(std::ostream& os, const Expr& e);
/// The text operator<< writes.
TE_API std::string to_string(const Expr& e);

/// Structural equality: same shape of tree, same immediates, same variables (by identity).
TE_API bool equal(const Expr& a, const Expr& b);

}  // namespace te
