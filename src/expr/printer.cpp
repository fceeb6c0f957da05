// The IR printer: stable, C-like text that users paste into golden tests.
//
// Format (one statement per line, two-space indents, every simple statement ends in ';'):
//   expressions   binary ops fully parenthesised: (a + b), (a < b), (a && b), !a;
//                 `/` and `%` are FLOOR division and modulo, truncdiv(a, b) / truncmod(a, b)
//                 are C's; min(a, b), max(a, b), select(c, a, b), if_then_else(c, a, b),
//                 floor(x) and every other intrinsic by name; casts as float32(x);
//                 extern calls as call_extern(float32, "name", x, y) (the call's type).
//   immediates    int32 plain (5, -5); other integer types in cast form (int64(5), uint8(255));
//                 bool as true / false; float32 with an f suffix (0.5f, 1.0f, 1e+20f),
//                 float64 plain (0.5, 1.0), float16 in cast form (float16(0.5)); the shortest
//                 text that reads back to the same value; non-finite values in cast form:
//                 float32(inf), float64(-inf), float32(nan).
//   vectors       ramp(base, stride, lanes), broadcast(value, lanes).
//   memory        A[i], A[i, j] (one index per dimension before flattening); a predicated
//                 load or store names its predicate inside the brackets: A[ramp(i, 1, 8) if p].
//   tensors       A(i, j); reductions sum(A(i, k), axis=[k], where=(k < 4)).
//   let           (let x = v in body) in expressions; `let x = v;` as a statement, its body
//                 following at the same indent.
//   loops         for (i, 0, 16) {            serial
//                 parallel for (i, 0, 16) {   also `vectorized for`, `unrolled for`
//                 launch_thread threadIdx.x (tx, 0, 64) {   a thread-bound loop: tag, var
//   statements    C[i] = (A[i] + B[i]);  if (c) { ... } else if (d) { ... } else { ... }
//                 allocate B[float32 * 16 * 16] in shared { ... }
//                 (", swizzled 128 bytes" after the scope: Stage::swizzle)
//                 assert(cond, "message");  (its body follows at the same indent)
//                 barrier();  evaluate(x);
//   functions     func name(A: float32[n], m: int32) { ... }
// Variables print by name; a second, distinct variable with a name already printed gets a
// suffix (n, then n_1, n_2) so that one printout never shows two variables as one.
#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "expr/int_arith.h"
#include "te/ir.h"
#include "te/tensor.h"
#include "te/tensorize.h"

namespace te {

namespace {

// The C operator of a bitwise intrinsic, or nullptr.
const char* bitwise_symbol(Intrinsic op) {
  switch (op) {
    case Intrinsic::BitAnd: return "&";
    case Intrinsic::BitOr: return "|";
    case Intrinsic::BitXor: return "^";
    case Intrinsic::BitNot: return "~";
    case Intrinsic::ShiftLeft: return "<<";
    case Intrinsic::ShiftRight: return ">>";
    default: return nullptr;
  }
}

// Shortest decimal text that reads back to v; always shows it is a float ("1.0", not "1").
std::string float_digits(double v, int bits) {
  std::string s = bits == 64 ? fmt::format("{}", v) : fmt::format("{}", static_cast<float>(v));
  if (bits != 64 && static_cast<double>(static_cast<float>(v)) != v) s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string float_imm_text(DataType t, double v) {
  if (std::isnan(v)) return fmt::format("{}(nan)", t.to_string());
  if (std::isinf(v)) return fmt::format("{}({}inf)", t.to_string(), v < 0 ? "-" : "");
  if (t.bits() == 32) return float_digits(v, 32) + "f";
  if (t.bits() == 64) return float_digits(v, 64);
  return fmt::format("{}({})", t.to_string(), float_digits(v, t.bits()));
}

std::string int_imm_text(DataType t, int64_t v) {
  if (t.is_bool()) return v ? "true" : "false";
  if (t.is_uint()) return fmt::format("{}({})", t.to_string(), arith::as_unsigned(v, t));
  if (t == Int(32)) return std::to_string(v);
  return fmt::format("{}({})", t.to_string(), v);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

class Printer {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}

  void print(const Expr& e) {
    if (!e.defined()) {
      os_ << "<undefined>";
      return;
    }
    switch (e->kind) {
      case ExprKind::IntImm: {
        auto* n = e.as<IntImmNode>();
        os_ << int_imm_text(n->dtype, n->value);
        return;
      }
      case ExprKind::FloatImm: {
        auto* n = e.as<FloatImmNode>();
        os_ << float_imm_text(n->dtype, n->value);
        return;
      }
      case ExprKind::Var: os_ << name_of(e.as<VarNode>()); return;
      case ExprKind::Cast: {
        auto* n = e.as<CastNode>();
        os_ << n->dtype.to_string() << "(";
        print(n->value);
        os_ << ")";
        return;
      }
      case ExprKind::Binary: return print_binary(e.as<BinaryNode>());
      case ExprKind::Not:
        os_ << "!";
        print(e.as<NotNode>()->a);
        return;
      case ExprKind::Select: {
        auto* n = e.as<SelectNode>();
        print_call("select", {n->cond, n->true_value, n->false_value});
        return;
      }
      case ExprKind::Load: {
        auto* n = e.as<LoadNode>();
        print_access(n->buffer, n->indices, n->predicate);
        return;
      }
      case ExprKind::Ramp: {
        auto* n = e.as<RampNode>();
        os_ << "ramp(";
        print(n->base);
        os_ << ", ";
        print(n->stride);
        os_ << ", " << n->lanes << ")";
        return;
      }
      case ExprKind::Broadcast: {
        auto* n = e.as<BroadcastNode>();
        os_ << "broadcast(";
        print(n->value);
        os_ << ", " << n->lanes << ")";
        return;
      }
      case ExprKind::Call: {
        auto* n = e.as<CallNode>();
        if (const char* sym = bitwise_symbol(n->op)) {  // as C writes them
          if (n->args.size() == 1) {
            os_ << sym;
            print(n->args[0]);
            return;
          }
          os_ << "(";
          print(n->args[0]);
          os_ << " " << sym << " ";
          print(n->args[1]);
          os_ << ")";
          return;
        }
        if (n->op == Intrinsic::Extern) {  // as built: call_extern(float32, "name", args...)
          os_ << "call_extern(" << n->dtype.to_string() << ", \"" << n->extern_name << "\"";
          for (const Expr& a : n->args) {
            os_ << ", ";
            print(a);
          }
          os_ << ")";
          return;
        }
        print_call(intrinsic_name(n->op), n->args);
        return;
      }
      case ExprKind::Let: {
        auto* n = e.as<LetNode>();
        os_ << "(let " << name_of(n->var.get()) << " = ";
        print(n->value);
        os_ << " in ";
        print(n->body);
        os_ << ")";
        return;
      }
      case ExprKind::TensorRead: {
        auto* n = e.as<TensorReadNode>();
        print_call(n->op ? n->op->output_name(n->value_index) : std::string("<unknown tensor>"), n->indices);
        return;
      }
      case ExprKind::Reduce: return print_reduce(e.as<ReduceNode>());
    }
  }

  void print(const Stmt& s) {
    if (!s.defined()) return;
    switch (s->kind) {
      case StmtKind::LetStmt: {
        auto* n = s.as<LetStmtNode>();
        line_start();
        os_ << "let " << name_of(n->var.get()) << " = ";
        print(n->value);
        os_ << ";\n";
        print(n->body);
        return;
      }
      case StmtKind::For: return print_for(s.as<ForNode>());
      case StmtKind::Store: {
        auto* n = s.as<StoreNode>();
        line_start();
        print_access(n->buffer, n->indices, n->predicate);
        os_ << (n->atomic_add ? " += " : " = ");
        print(n->value);
        os_ << (n->atomic_add ? ";  // atomic\n" : ";\n");
        return;
      }
      case StmtKind::Allocate: {
        auto* n = s.as<AllocateNode>();
        line_start();
        os_ << "allocate " << n->buffer.name() << "[" << n->buffer.dtype().to_string();
        for (const Expr& d : n->buffer.shape()) {
          os_ << " * ";
          print(d);
        }
        os_ << "] in " << scope_name(n->buffer.scope());
        if (n->buffer.swizzle_bytes() != 0) os_ << ", swizzled " << n->buffer.swizzle_bytes() << " bytes";
        if (n->buffer.swizzle_row() != 0)
          os_ << " in blocks of " << n->buffer.swizzle_bytes() / n->buffer.dtype().bytes() << " columns";
        os_ << " {\n";
        print_block(n->body);
        line_start();
        os_ << "}\n";
        return;
      }
      case StmtKind::IfThenElse: {
        line_start();
        print_if(s.as<IfThenElseNode>());
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& x : s.as<SeqNode>()->seq) print(x);
        return;
      case StmtKind::Evaluate:
        line_start();
        os_ << "evaluate(";
        print(s.as<EvaluateNode>()->value);
        os_ << ");\n";
        return;
      case StmtKind::Barrier:
        line_start();
        os_ << "barrier();\n";
        return;
      case StmtKind::Assert: {
        auto* n = s.as<AssertNode>();
        line_start();
        os_ << "assert(";
        print(n->cond);
        os_ << ", " << quoted(n->message) << ");\n";
        print(n->body);
        return;
      }
      case StmtKind::TensorIntrinsicCall: {
        // The call with each region's start, then the declaration it stands for (what
        // interpret() runs) as a block.
        auto* n = s.as<TensorIntrinsicCallNode>();
        line_start();
        os_ << "tensor_intrinsic " << n->intrinsic->name << "(";
        for (size_t i = 0; i < n->buffers.size(); ++i) {
          if (i) os_ << ", ";
          os_ << n->buffers[i].name() << "[";
          print(n->offsets[i]);
          os_ << ":]";
          // The strides of a declaration tensor with free strides (others are dense).
          if (i < n->intrinsic->free_strides.size() && n->intrinsic->free_strides[i]) {
            os_ << " strides (";
            print_list(n->strides[i]);
            os_ << ")";
          }
        }
        os_ << ")";
        // A warp-specialized copy: the producer warpgroup issues it (see the CUDA backend).
        if (n->producer) os_ << " by the producer warpgroup";
        os_ << " {\n";
        print_block(n->body);
        line_start();
        os_ << "}\n";
        return;
      }
    }
  }

  void print(const LoweredFunc& f) {
    line_start();
    os_ << "func " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      if (i) os_ << ", ";
      if (p.is_buffer()) {
        os_ << p.buffer.name() << ": " << p.buffer.dtype().to_string() << "[";
        print_list(p.buffer.shape());
        os_ << "]";
      } else if (p.var.defined()) {
        os_ << name_of(p.var.get()) << ": " << p.var.dtype().to_string();
      } else {
        os_ << "<undefined parameter>";
      }
    }
    os_ << ") {\n";
    print_block(f.body);
    line_start();
    os_ << "}\n";
  }

 private:
  void line_start() {
    for (int i = 0; i < indent_; ++i) os_ << "  ";
  }

  void print_block(const Stmt& body) {
    ++indent_;
    print(body);
    --indent_;
  }

  void print_list(const std::vector<Expr>& xs) {
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i) os_ << ", ";
      print(xs[i]);
    }
  }

  void print_call(const std::string& name, const std::vector<Expr>& args) {
    os_ << name << "(";
    print_list(args);
    os_ << ")";
  }

  void print_binary(const BinaryNode* n) {
    switch (n->op) {
      case BinOp::TruncDiv:
      case BinOp::TruncMod:
      case BinOp::Min:
      case BinOp::Max: print_call(binop_name(n->op), {n->a, n->b}); return;
      default:
        os_ << "(";
        print(n->a);
        os_ << " " << binop_name(n->op) << " ";
        print(n->b);
        os_ << ")";
        return;
    }
  }

  void print_access(const Buffer& buf, const std::vector<Expr>& indices, const Expr& predicate) {
    os_ << (buf.defined() ? buf.name() : std::string("<undefined buffer>")) << "[";
    print_list(indices);
    if (predicate.defined()) {
      os_ << " if ";
      print(predicate);
    }
    os_ << "]";
  }

  void print_reduce(const ReduceNode* n) {
    const bool tuple = n->sources.size() > 1;
    os_ << (n->combiner ? n->combiner->name.c_str() : reducer_name(n->reducer)) << "(";
    if (tuple) os_ << "(";
    for (size_t i = 0; i < n->sources.size(); ++i) {
      if (i) os_ << ", ";
      print(n->sources[i]);
    }
    if (tuple) os_ << ")";
    os_ << ", axis=[";
    for (size_t i = 0; i < n->axis.size(); ++i) {
      if (i) os_ << ", ";
      os_ << name_of(n->axis[i].var().get());
    }
    os_ << "]";
    if (n->condition.defined()) {
      os_ << ", where=";
      print(n->condition);
    }
    os_ << ")";
    if (tuple) os_ << "." << n->value_index;
  }

  void print_for(const ForNode* n) {
    line_start();
    switch (n->for_kind) {
      case ForKind::Serial: os_ << "for ("; break;
      case ForKind::ThreadBinding: os_ << "launch_thread " << n->thread_tag << " ("; break;
      default: os_ << for_kind_name(n->for_kind) << " for ("; break;
    }
    os_ << name_of(n->var.get()) << ", ";
    print(n->min);
    os_ << ", ";
    print(n->extent);
    os_ << ") {\n";
    print_block(n->body);
    line_start();
    os_ << "}\n";
  }

  // Prints from "if" on (the caller wrote the indent); else-if chains stay flat.
  void print_if(const IfThenElseNode* n) {
    os_ << "if (";
    print(n->cond);
    os_ << ") {\n";
    print_block(n->then_case);
    line_start();
    if (!n->else_case.defined()) {
      os_ << "}\n";
      return;
    }
    if (auto* nested = n->else_case.as<IfThenElseNode>()) {
      os_ << "} else ";
      print_if(nested);
      return;
    }
    os_ << "} else {\n";
    print_block(n->else_case);
    line_start();
    os_ << "}\n";
  }

  // The printed name of v: its own, or with a suffix if another variable already has it.
  const std::string& name_of(const VarNode* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string name = v->name;
    for (int k = 1; taken_.count(name); ++k) name = fmt::format("{}_{}", v->name, k);
    taken_.insert(name);
    return names_.emplace(v, name).first->second;
  }

  std::ostream& os_;
  int indent_ = 0;
  std::unordered_map<const VarNode*, std::string> names_;
  std::unordered_set<std::string> taken_;
};

template <typename T>
std::string print_to_string(const T& x) {
  std::ostringstream os;
  Printer(os).print(x);
  return os.str();
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  Printer(os).print(e);
  return os;
}
std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  Printer(os).print(s);
  return os;
}
std::ostream& operator<<(std::ostream& os, const LoweredFunc& f) {
  Printer(os).print(f);
  return os;
}
std::string to_string(const Expr& e) { return print_to_string(e); }
std::string to_string(const Stmt& s) { return print_to_string(s); }
std::string to_string(const LoweredFunc& f) { return print_to_string(f); }

}  // namespace te
