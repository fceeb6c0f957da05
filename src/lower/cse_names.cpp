#include "lower/cse_names.h"

#include <cctype>

#include "expr/reads_memory.h"
#include "te/ir.h"

namespace te::lowering {
namespace {

constexpr size_t kMaxLength = 20;

// A C identifier from a name, other characters as '_' ("i.outer" -> "i_outer"); a buffer
// keeps only its last dotted part ("grid_sample.weights" -> "weights").
std::string identifier(const std::string& name, bool last_part) {
  size_t dot = name.rfind('.');
  std::string s = !last_part || dot == std::string::npos || dot + 1 == name.size() ? name : name.substr(dot + 1);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
  return s;
}

std::string with_suffix(const std::string& base, const std::string& suffix) {
  if (base.empty()) return base;
  bool has = base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0 &&
             base[base.size() - suffix.size() - 1] == '_';
  return has ? base : base + "_" + suffix;  // not "x_ok_ok"
}

const char* operation_word(BinOp op) {
  switch (op) {
    case BinOp::Add: return "sum";
    case BinOp::Sub: return "diff";
    case BinOp::Mul: return "prod";
    default: return "quot";  // division and modulo
  }
}

// What e is made of: the tensor it reads (or the variable it starts from), and what was
// done to it last; "" when nothing names it.
std::string describe(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Var: return identifier(e.as<VarNode>()->name, false);
    case ExprKind::Load: return identifier(e.as<LoadNode>()->buffer.name(), true);
    case ExprKind::Cast: return describe(e.as<CastNode>()->value);
    case ExprKind::Broadcast: return describe(e.as<BroadcastNode>()->value);
    case ExprKind::Not: return describe(e.as<NotNode>()->a);
    case ExprKind::Select: {
      auto* n = e.as<SelectNode>();
      std::string t = describe(n->true_value);
      return t.empty() ? describe(n->false_value) : t;
    }
    case ExprKind::Call: {
      auto* n = e.as<CallNode>();
      if (n->op == Intrinsic::IfThenElse) return describe(n->args[1]);
      if (n->op == Intrinsic::Likely || n->args.empty()) return n->args.empty() ? "" : describe(n->args[0]);
      std::string base;
      for (const Expr& a : n->args)
        if (base.empty()) base = describe(a);
      const char* fn = n->op == Intrinsic::Extern ? n->extern_name.c_str() : intrinsic_name(n->op);
      return base.empty() ? fn : base + "_" + fn;
    }
    case ExprKind::Binary: {
      auto* n = e.as<BinaryNode>();
      std::string base = describe(n->a);
      if (base.empty()) base = describe(n->b);
      if (is_comparison(n->op) || n->op == BinOp::And || n->op == BinOp::Or) return with_suffix(base, "ok");
      if (n->op == BinOp::Min || n->op == BinOp::Max) return with_suffix(base, "clamped");
      // A product or sum of two named values names both (weights * data: "weights_data");
      // of two values from one source, the operation (coords - coords_floor: "coords_diff").
      std::string a = describe(n->a), b = describe(n->b);
      if (a.empty() || b.empty()) return base;
      bool related = a.compare(0, b.size(), b) == 0 || b.compare(0, a.size(), a) == 0;
      if (!related && a.size() + b.size() < kMaxLength) return a + "_" + b;
      if (related) return with_suffix(a.size() <= b.size() ? a : b, operation_word(n->op));
      return base;
    }
    default: return "";
  }
}

}  // namespace

std::string local_name(const Expr& value) {
  std::string name = describe(value);
  // Integer arithmetic on loop variables alone is an index.
  if (value.dtype().is_int() && name.find("_ok") == std::string::npos && !reads_memory(value)) name = "idx";
  if (name.empty()) return "v";
  // Locals in lower case, as C code names them (a load of X is `x`, not the buffer's name).
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.size() > kMaxLength) name = name.substr(0, kMaxLength);
  while (name.size() > 1 && name.back() == '_') name.pop_back();
  return name;
}

}  // namespace te::lowering
