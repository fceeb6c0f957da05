#include "expr/extern_calls.h"

#include <fmt/format.h>

namespace te {

std::string ExternSignature::to_string() const {
  std::vector<std::string> p;
  for (DataType t : params) p.push_back(t.to_string());
  return fmt::format("{}({})", ret.to_string(), fmt::join(p, ", "));
}

ExternSignature extern_signature(const CallNode* call) {
  ExternSignature s;
  s.ret = call->dtype.element_of();
  for (const Expr& a : call->args) s.params.push_back(a.dtype().element_of());
  return s;
}

namespace {

class ExternCollector : public IRVisitor {
 public:
  ExternCollector(std::vector<ExternFunction>& found, const char* what) : found_(found), what_(what) {}
  std::string caller;

 protected:
  void visit_call(const CallNode* n) override {
    IRVisitor::visit_call(n);
    if (n->op != Intrinsic::Extern) return;
    ExternSignature sig = extern_signature(n);
    for (const ExternFunction& f : found_) {
      if (f.name != n->extern_name) continue;
      if (f.sig != sig)
        throw Error(
            fmt::format("{}: call_extern '{}' is called as {} in '{}' and as {} in '{}'; a C function has "
                        "one signature (cast the arguments to the types it takes)",
                        what_, f.name, f.sig.to_string(), f.caller, sig.to_string(), caller));
      return;
    }
    found_.push_back({n->extern_name, sig, caller});
  }

 private:
  std::vector<ExternFunction>& found_;
  const char* what_;
};

}  // namespace

std::vector<ExternFunction> extern_functions(const std::vector<LoweredFunc>& funcs, const char* what) {
  std::vector<ExternFunction> found;
  ExternCollector c(found, what);
  for (const LoweredFunc& f : funcs) {
    c.caller = f.name;
    for (const Param& p : f.params)
      if (p.is_buffer())
        for (const Expr& e : p.buffer.shape()) c.visit(e);
    c.visit(f.body);
  }
  return found;
}

}  // namespace te
