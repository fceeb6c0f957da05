// Graph analysis for the rules.
#include "auto_schedule/graph.h"

#include <algorithm>

#include "expr/analysis.h"
#include "te/ir.h"

namespace te::auto_sched {

namespace {

class CostCounter : public IRVisitor {
 public:
  int cost = 0;
  void visit_binary(const BinaryNode* n) override {
    if (n->dtype.is_float()) cost += n->op == BinOp::Div ? 8 : 1;
    IRVisitor::visit_binary(n);
  }
  void visit_call(const CallNode* n) override {
    switch (n->op) {
      case Intrinsic::Floor:
      case Intrinsic::Ceil:
      case Intrinsic::Round:
      case Intrinsic::NearbyInt:
      case Intrinsic::Trunc:
      case Intrinsic::Abs:
      case Intrinsic::Fma: cost += n->dtype.is_float() ? 1 : 0; break;
      case Intrinsic::Likely:
      case Intrinsic::IfThenElse:
      case Intrinsic::BitAnd:
      case Intrinsic::BitOr:
      case Intrinsic::BitXor:
      case Intrinsic::BitNot:
      case Intrinsic::ShiftLeft:
      case Intrinsic::ShiftRight:
      case Intrinsic::Popcount:
      case Intrinsic::IsNan:
      case Intrinsic::IsInf:
      case Intrinsic::IsFinite: break;
      default: cost += 8;  // exp, log, sqrt, pow, tanh, the rest of the math library, extern calls
    }
    IRVisitor::visit_call(n);
  }
};

}  // namespace

std::vector<Read> reads_in(const Expr& e) {
  std::vector<Read> reads;
  for (const TensorReadNode* n : tensor_reads(e)) reads.push_back({n->op.get(), n->indices});
  return reads;
}

int float_cost(const Expr& e) {
  CostCounter c;
  c.visit(e);
  return c.cost;
}

int64_t const_value(const Expr& e) {
  const int64_t* v = e.defined() ? as_const_int(e) : nullptr;
  return v ? *v : -1;
}

int64_t const_extent(const IterVar& iv) { return const_value(iv.dom().extent); }

int64_t const_elements(const std::vector<Expr>& shape) {
  int64_t n = 1;
  for (const Expr& e : shape) {
    const int64_t c = const_value(e);
    if (c < 0) return -1;
    n *= c;
  }
  return n;
}

int64_t const_points(const std::vector<IterVar>& axes) {
  int64_t n = 1;
  for (const IterVar& iv : axes) {
    const int64_t c = const_extent(iv);
    if (c < 0) return -1;
    n *= c;
  }
  return n;
}

int64_t const_evaluations(const OperationNode& op) {
  int64_t n = const_elements(op.shape);
  for (const IterVar& r : op.reduce_axis) n = const_extent(r) > 0 && n > 0 ? n * const_extent(r) : -1;
  return n;
}

Graph::Graph(const std::vector<Tensor>& outputs) {
  std::vector<Operation> ops = topo_sort(outputs);
  for (const Operation& op : ops) {
    Node& n = nodes_[op.get()];
    n.op = op;
    if (op->kind == OpKind::Compute)
      for (const Expr& b : op->bodies()) {
        std::vector<Read> r = reads_in(b);
        n.reads.insert(n.reads.end(), r.begin(), r.end());
        n.cost += float_cost(b);
      }
    // A scatter's positions read tensors too (a gather's indices).
    for (const Expr& e : op->scatter_index) {
      std::vector<Read> r = reads_in(e);
      n.reads.insert(n.reads.end(), r.begin(), r.end());
    }
  }
  for (const Operation& op : ops)
    if (op->scatter_base) nodes_.at(op->scatter_base.get()).scatter_base = true;
  for (const Tensor& t : outputs) nodes_.at(t.op().get()).output = true;
  for (const Operation& op : ops) {
    Node& n = nodes_.at(op.get());
    topo_.push_back(&n);
    std::set<const OperationNode*> seen;
    for (const Read& r : n.reads)
      if (seen.insert(r.op).second) nodes_.at(r.op).consumers.push_back(op.get());
  }
}

void Graph::expand(const Expr& e, std::vector<Read>* out, int depth) const {
  for (Read& r : reads_in(e)) {
    if (!inlined.count(r.op) || depth > 16) {
      out->push_back(std::move(r));
      continue;
    }
    // The producer's body at the read's point.
    const OperationNode& p = *r.op;
    std::vector<std::pair<Var, Expr>> at;
    for (size_t d = 0; d < p.axis.size() && d < r.indices.size(); ++d) at.emplace_back(p.axis[d].var(), r.indices[d]);
    expand(substitute(p.body, at), out, depth + 1);
  }
}

std::vector<Read> Graph::effective_reads(const OperationNode* op) const {
  std::vector<Read> out;
  for (const Expr& b : op->bodies()) expand(b, &out, 0);
  for (const Expr& e : op->scatter_index) expand(e, &out, 0);
  return out;
}

std::vector<const OperationNode*> Graph::effective_consumers(const OperationNode* op) const {
  std::vector<const OperationNode*> out;
  for (const Node* n : topo_) {
    if (!n->is_compute() || inlined.count(n->op.get())) continue;
    for (const Read& r : effective_reads(n->op.get()))
      if (r.op == op) {
        out.push_back(n->op.get());
        break;
      }
  }
  return out;
}

}  // namespace te::auto_sched
