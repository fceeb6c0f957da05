// The tensor graph as the rules see it: each compute's reads (with inlined producers
// substituted), its consumers, how costly one point is, and which axes a read uses.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "expr/analysis.h"
#include "te/tensor.h"

namespace te::auto_sched {

// One tensor read: T(indices) of output value_index of op.
struct Read {
  const OperationNode* op = nullptr;
  std::vector<Expr> indices;
};

struct Node {
  Operation op;
  bool output = false;
  std::vector<Read> reads;                      // direct reads of every body
  std::vector<const OperationNode*> consumers;  // direct readers
  int cost = 0;                                 // float arithmetic per point (transcendentals weigh 8)

  bool is_compute() const { return op->kind == OpKind::Compute; }
  bool is_reduction() const { return !op->reduce_axis.empty(); }
  // A scatter, or the base a scatter fills in place: both stay at the root, uninlined.
  bool is_scatter_part() const { return op->is_scatter() || scatter_base; }
  bool scatter_base = false;  // some scatter's base
};

class Graph {
 public:
  explicit Graph(const std::vector<Tensor>& outputs);

  // Every operation, producers first.
  const std::vector<const Node*>& topo() const { return topo_; }
  const Node& at(const OperationNode* op) const { return nodes_.at(op); }

  // Which stages are inlined (set by the inline rule, read by everything after it).
  std::set<const OperationNode*> inlined;

  // op's reads with inlined producers substituted: every read is of an input or of a
  // stage that keeps its own buffer. Indices are in op's axis and reduce-axis vars.
  std::vector<Read> effective_reads(const OperationNode* op) const;
  // The non-inlined computes whose effective reads read op.
  std::vector<const OperationNode*> effective_consumers(const OperationNode* op) const;

 private:
  void expand(const Expr& e, std::vector<Read>* out, int depth) const;
  std::map<const OperationNode*, Node> nodes_;
  std::vector<const Node*> topo_;
};

// The direct tensor reads of e.
std::vector<Read> reads_in(const Expr& e);
// Float arithmetic per evaluation of e (integer index arithmetic is free; exp, log, ...
// and float division weigh 8).
int float_cost(const Expr& e);
// The constant extent of an axis, or -1 when it is symbolic.
int64_t const_extent(const IterVar& iv);
// The constant value of e, or -1.
int64_t const_value(const Expr& e);
// The element count of a constant shape, or -1 when an extent is not constant.
int64_t const_elements(const std::vector<Expr>& shape);
// The point count of axes (the product of their extents; 1 for none), or -1 when an
// extent is not constant.
int64_t const_points(const std::vector<IterVar>& axes);
// The body evaluations of op: its points times its reduction's steps (a convolution's
// multiply-adds), or -1 when an extent is not constant.
int64_t const_evaluations(const OperationNode& op);

}  // namespace te::auto_sched
