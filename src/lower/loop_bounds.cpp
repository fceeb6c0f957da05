#include "lower/loop_bounds.h"

#include <cstdint>

namespace te::lowering {

void add_range_bounds(VarBounds& known, const Var& v, const Expr& min, const Expr& extent, bool open_ended) {
  Interval lo, hi;
  if (!const_bounds(min, known, &lo)) return;
  int64_t top = v.dtype().bits() >= 64 ? INT64_MAX : INT32_MAX;
  if (const_bounds(simplify(min + extent - 1, known), known, &hi))
    top = hi.max;
  else if (!open_ended)
    return;
  if (top < lo.min) top = lo.min;  // an empty loop: any bounds hold for its variable
  known[v.get()] = Interval{lo.min, top};
}

namespace {

class Collector : public IRVisitor {
 public:
  Collector(VarBounds* out, bool open_ended) : out_(out), open_ended_(open_ended) {}

 protected:
  void visit_for(const ForNode* n) override {
    add_range_bounds(*out_, n->var, n->min, n->extent, open_ended_);
    IRVisitor::visit_for(n);
  }

 private:
  VarBounds* out_;
  bool open_ended_;
};

}  // namespace

VarBounds loop_var_bounds(const Stmt& s, const VarBounds& known, bool open_ended) {
  VarBounds out = known;
  Collector c(&out, open_ended);
  c.visit(s);
  return out;
}

}  // namespace te::lowering
