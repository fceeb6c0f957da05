#include "codegen_llvm/signature.h"

#include <fmt/format.h>

#include <set>
#include <unordered_set>

#include "expr/extern_calls.h"

namespace te::codegen {
namespace {

const std::set<std::string>& c_keywords() {
  static const std::set<std::string> k = {
      "auto",   "break",    "case",      "char",     "const",    "continue", "default",  "do",     "double",
      "else",   "enum",     "extern",    "float",    "for",      "goto",     "if",       "inline", "int",
      "long",   "register", "restrict",  "return",   "short",    "signed",   "sizeof",   "static", "struct",
      "switch", "typedef",  "union",     "unsigned", "void",     "volatile", "while",    "bool",   "class",
      "delete", "new",      "private",   "public",   "template", "this",     "throw",    "true",   "false",
      "try",    "catch",    "namespace", "operator", "virtual",  "friend",   "protected"};
  return k;
}

// Collects variables in order of first appearance (a mutator, because it sees the
// Expr handle that a Var can be rebuilt from; it changes nothing).
class VarsInOrder : public IRMutator {
 public:
  std::vector<Var> vars;

 protected:
  Expr mutate_var(const Expr& e, const VarNode* n) override {
    if (seen_.insert(n).second) vars.push_back(Var(std::static_pointer_cast<const VarNode>(e.node())));
    return e;
  }

 private:
  std::unordered_set<const VarNode*> seen_;
};

std::string sanitize(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = "_" + s;
  if (c_keywords().count(s)) s += "_";
  return s;
}

std::string c_scalar(DataType t) {
  if (t.is_bool()) return "uint8_t";
  if (t.is_float()) return t.bits() == 64 ? "double" : "float";
  return fmt::format("{}int{}_t", t.is_uint() ? "u" : "", t.bits());
}

std::string c_storage(DataType t) {
  if (t.is_float() && t.bits() == 16) return "uint16_t";  // float16 and bfloat16 bits
  return c_scalar(t);
}

bool is_value_type(DataType t) {
  if (!t.is_scalar()) return false;
  if (t.is_bool()) return true;
  if (t.is_integer()) return t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  if (t.is_bfloat()) return t.bits() == 16;
  if (t.is_float()) return t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
  return false;
}

}  // namespace

bool is_c_name(const std::string& s) { return te::is_c_identifier(s) && !c_keywords().count(s); }

KernelSignature kernel_signature(const LoweredFunc& f) {
  if (!is_c_name(f.name))
    throw Error(
        fmt::format("build: function name '{}' is not a C identifier (letters, digits "
                    "and '_', not starting with a digit, not a keyword)",
                    f.name));
  KernelSignature sig;
  sig.name = f.name;
  sig.arg_of_param.assign(f.params.size(), -1);
  VarsInOrder collector;
  std::unordered_set<const BufferNode*> buffers;
  for (size_t p = 0; p < f.params.size(); ++p) {
    const Param& param = f.params[p];
    if (param.is_buffer()) {
      const Buffer& b = param.buffer;
      if (!buffers.insert(b.get()).second)
        throw Error(fmt::format("build: {}: buffer '{}' is listed twice among the parameters", f.name, b.name()));
      if (!is_value_type(b.dtype()))
        throw Error(
            fmt::format("build: {}: buffer '{}' has element type {}, which has no "
                        "storage (use bool, int/uint 8-64, float16/32/64 or bfloat16)",
                        f.name, b.name(), b.dtype().to_string()));
      sig.arg_of_param[p] = static_cast<int>(sig.args.size());
      sig.args.push_back(KernelArg{b, Var(), "", static_cast<int>(p)});
      for (const Expr& extent : b.shape()) {
        if (!extent.defined())
          throw Error(fmt::format("build: {}: buffer '{}' has an undefined extent", f.name, b.name()));
        if (!extent.dtype().is_integer() || !extent.dtype().is_scalar())
          throw Error(
              fmt::format("build: {}: buffer '{}' has an extent of type {} ({}); "
                          "extents are integers",
                          f.name, b.name(), extent.dtype().to_string(), to_string(extent)));
        collector.mutate(extent);
      }
    } else {
      if (!param.var.defined())
        throw Error(fmt::format("build: {}: parameter {} is neither a buffer nor a variable", f.name, p));
      if (!is_value_type(param.var.dtype()))
        throw Error(
            fmt::format("build: {}: scalar parameter '{}' has type {}; scalar "
                        "parameters are bool, int/uint 8-64, float16/32/64 or bfloat16",
                        f.name, param.var.name(), param.var.dtype().to_string()));
    }
  }
  // Shape variables come first, then the scalar parameters not already among them.
  for (const Var& v : collector.vars) sig.args.push_back(KernelArg{Buffer(), v, "", -1});
  for (size_t p = 0; p < f.params.size(); ++p) {
    const Param& param = f.params[p];
    if (param.is_buffer()) continue;
    int found = -1;
    for (size_t a = 0; a < sig.args.size(); ++a)
      if (sig.args[a].var.defined() && sig.args[a].var.get() == param.var.get()) found = static_cast<int>(a);
    if (found >= 0) {
      if (sig.args[found].param >= 0)
        throw Error(fmt::format("build: {}: scalar parameter '{}' is listed twice", f.name, param.var.name()));
      sig.args[found].param = static_cast<int>(p);
      sig.arg_of_param[p] = found;
      continue;
    }
    sig.arg_of_param[p] = static_cast<int>(sig.args.size());
    sig.args.push_back(KernelArg{Buffer(), param.var, "", static_cast<int>(p)});
  }
  for (const KernelArg& a : sig.args) {
    if (a.var.defined() && a.param < 0 && !a.var.dtype().is_integer())
      throw Error(
          fmt::format("build: {}: shape variable '{}' has type {}; shape variables are "
                      "integers",
                      f.name, a.var.name(), a.var.dtype().to_string()));
  }
  // Distinct C names, derived from the te names.
  std::set<std::string> used = {sig.name};
  for (KernelArg& a : sig.args) {
    std::string base = sanitize(a.buffer.defined() ? a.buffer.name() : a.var.name());
    std::string name = base;
    for (int k = 1; used.count(name); ++k) name = fmt::format("{}_{}", base, k);
    used.insert(name);
    a.c_name = name;
  }
  return sig;
}

std::string c_type(const KernelArg& a) {
  if (a.buffer.defined()) return c_storage(a.buffer.dtype()) + "*";
  return c_scalar(a.var.dtype());
}

std::string c_prototype(const KernelSignature& s) {
  std::vector<std::string> params;
  for (const KernelArg& a : s.args) params.push_back(c_type(a) + " " + a.c_name);
  if (params.empty()) params.push_back("void");
  return fmt::format("int32_t {}({})", s.name, fmt::join(params, ", "));
}

}  // namespace te::codegen
