#include "expr/reads_memory.h"

namespace te {

namespace {

class MemoryReads : public IRVisitor {
 public:
  explicit MemoryReads(const DataVars& data_vars) : data_vars_(data_vars) {}
  bool found = false;

 protected:
  void visit_load(const LoadNode*) override { found = true; }
  // An extern function's result is as unknown as data: an index computed by one is
  // checked at run time like a gather's.
  void visit_call(const CallNode* n) override {
    if (n->op == Intrinsic::Extern) found = true;
    IRVisitor::visit_call(n);
  }
  void visit_var(const VarNode* n) override { found = found || data_vars_.count(n) != 0; }

 private:
  const DataVars& data_vars_;
};

}  // namespace

bool reads_memory(const Expr& e, const DataVars& data_vars) {
  MemoryReads r(data_vars);
  r.visit(e);
  return r.found;
}

void note_let(DataVars& data_vars, const VarNode* var, const Expr& value) {
  if (reads_memory(value, data_vars)) data_vars.insert(var);
}

}  // namespace te
