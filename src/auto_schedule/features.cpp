// Loop-IR features: one walk over the lowered nest that counts, for every store, the work
// done each time it runs (arithmetic, loads by access pattern, vector width) times how
// often it runs (the product of its loops' trip counts), and the bytes its loads touch
// inside its innermost loops (the working set that decides whether the data stays in L1
// or L2). Whole-nest figures (parallel work items against threads, loop overhead, guards,
// buffers allocated) complete them.
#include "auto_schedule/features.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "auto_schedule/graph.h"
#include "lower/int_set.h"

namespace te::auto_sched {

namespace {

// Working-set depths: the innermost 1..kDepths loops around a store.
constexpr int kDepths = 4;

enum Feature : size_t {
  kFloatOps,
  kIntOps,
  kVectorOps,
  kScalarStores,
  kVectorStores,
  kLanesStored,
  kLoadContiguousVector,
  kLoadStridedVector,
  kLoadInvariant,
  kLoadScalarStep,
  kLoadGather,
  kLoadLocal,
  kStoreLocal,
  kBytesLoaded,
  kBytesStored,
  kWorkingSet1,
  kWorkingSet2,
  kWorkingSet3,
  kWorkingSet4,
  kOverL1Iters,
  kOverL2Iters,
  kParallelItems,
  kItemsPerThread,
  kThreadBalance,
  kLoopIters,
  kGuardIters,
  kUnrolledBody,
  kLocalBytes,
  kGlobalTempBytes,
  kStores,
  kCount
};

const char* const kNames[kCount] = {"float_ops",
                                    "int_ops",
                                    "vector_ops",
                                    "scalar_stores",
                                    "vector_stores",
                                    "lanes_stored",
                                    "load_contiguous_vector",
                                    "load_strided_vector",
                                    "load_invariant",
                                    "load_scalar_step",
                                    "load_gather",
                                    "load_local",
                                    "store_local",
                                    "bytes_loaded",
                                    "bytes_stored",
                                    "working_set_1",
                                    "working_set_2",
                                    "working_set_3",
                                    "working_set_4",
                                    "over_l1_iters",
                                    "over_l2_iters",
                                    "parallel_items",
                                    "items_per_thread",
                                    "thread_balance",
                                    "loop_iters",
                                    "guard_iters",
                                    "unrolled_body",
                                    "local_bytes",
                                    "global_temp_bytes",
                                    "stores"};

// A loop's trip count: its constant extent, or the constant side of min(c, rest) (a tail
// loop), or the largest value of an extent of the outer loops' variables (`outer`: a
// window narrowed to the taps inside a padding), else 1.
double trip_count(const Expr& extent, const lowering::RelaxMap& outer) {
  int64_t c = const_value(extent);
  if (c >= 0) return double(c);
  if (const auto* b = extent.as<BinaryNode>(); b && b->op == BinOp::Min) {
    int64_t l = const_value(b->a), r = const_value(b->b);
    if (l >= 0 || r >= 0) return double(std::max(l, r));
  }
  const lowering::IntSet range = lowering::eval_set(extent, outer, {});
  if (range.max.defined()) {
    const int64_t most = const_value(simplify(range.max));
    if (most >= 0) return double(most);
  }
  return 1;
}

double buffer_bytes(const Buffer& b) {
  double n = b.dtype().bytes();
  for (const Expr& e : b.shape()) n *= double(std::max<int64_t>(const_value(e), 1));
  return n;
}

struct Loop {
  Var var;
  double trips;
};

// Counts one store's expression: arithmetic, and its loads by access pattern.
class ExprCounter : public IRVisitor {
 public:
  ExprCounter(const std::vector<Loop>& loops) : loops_(loops) {}
  double float_ops = 0, int_ops = 0, vector_ops = 0;
  double contiguous = 0, strided = 0, invariant = 0, stepping = 0, gather = 0, local = 0, bytes = 0;
  std::vector<double> working_set = std::vector<double>(kDepths, 0.0);

  void visit_binary(const BinaryNode* n) override {
    (n->dtype.is_float() ? float_ops : int_ops) += n->dtype.lanes();
    if (n->dtype.is_vector()) vector_ops += 1;
    IRVisitor::visit_binary(n);
  }
  void visit_call(const CallNode* n) override {
    // Transcendentals cost about as much as eight multiply-adds.
    if (n->dtype.is_float()) float_ops += 8.0 * n->dtype.lanes();
    IRVisitor::visit_call(n);
  }
  void visit_load(const LoadNode* n) override {
    const int lanes = n->dtype.lanes();
    bytes += double(lanes) * n->dtype.bytes();
    if (n->buffer.scope() != MemoryScope::Global) local += 1;
    const Expr& index = n->indices.empty() ? Expr() : n->indices.back();
    if (index.defined()) classify(index, lanes);
    footprint(n, lanes);
    IRVisitor::visit_load(n);
  }

 private:
  void classify(const Expr& index, int lanes) {
    if (contains_load(index)) {
      gather += 1;
    } else if (const auto* r = index.as<RampNode>()) {
      (const_value(r->stride) == 1 ? contiguous : strided) += 1;
    } else if (lanes > 1) {
      strided += 1;
    } else if (!loops_.empty() && uses_var(index, loops_.back().var)) {
      stepping += 1;
    } else {
      invariant += 1;
    }
  }
  // Elements this load touches while the innermost d loops run: the loops its index
  // depends on multiply it (bounded by the buffer's size).
  void footprint(const LoadNode* n, int lanes) {
    double elems = lanes, cap = buffer_bytes(n->buffer) / n->buffer.dtype().bytes();
    for (int d = 0; d < kDepths; ++d) {
      if (d < int(loops_.size())) {
        const Loop& l = loops_[loops_.size() - 1 - d];
        for (const Expr& i : n->indices)
          if (uses_var(i, l.var)) {
            elems *= l.trips;
            break;
          }
      }
      working_set[d] += std::min(elems, cap) * n->dtype.bytes() / lanes;
    }
  }
  static bool contains_load(const Expr& e) {
    struct Finder : IRVisitor {
      bool found = false;
      void visit_load(const LoadNode*) override { found = true; }
    } f;
    f.visit(e);
    return f.found;
  }
  const std::vector<Loop>& loops_;
};

class NestWalker : public IRVisitor {
 public:
  std::vector<double> f = std::vector<double>(kCount, 0.0);
  double outer_parallel = 0;

 protected:
  void visit_for(const ForNode* n) override {
    double trips = trip_count(n->extent, outer_);
    if (n->for_kind == ForKind::Parallel && parallel_depth_ == 0) outer_parallel = std::max(outer_parallel, trips);
    if (n->for_kind == ForKind::Parallel) ++parallel_depth_;
    if (n->for_kind == ForKind::Unrolled) f[kUnrolledBody] += trips;
    // A loop still marked vectorized runs as vector instructions: its trips are lanes.
    const bool vector = n->for_kind == ForKind::Vectorized;
    if (vector) {
      vector_lanes_ *= trips;
    } else {
      iters_ *= trips;
      f[kLoopIters] += iters_;
      loops_.push_back({n->var, trips});
    }
    outer_[n->var.get()] = Range::from_min_extent(n->min, n->extent);
    IRVisitor::visit_for(n);
    outer_.erase(n->var.get());
    if (vector) {
      vector_lanes_ /= trips;
    } else {
      iters_ /= trips;
      loops_.pop_back();
    }
    if (n->for_kind == ForKind::Parallel) --parallel_depth_;
  }
  void visit_if_then_else(const IfThenElseNode* n) override {
    f[kGuardIters] += iters_;
    IRVisitor::visit_if_then_else(n);
  }
  void visit_allocate(const AllocateNode* n) override {
    (n->buffer.scope() == MemoryScope::Global ? f[kGlobalTempBytes] : f[kLocalBytes]) += buffer_bytes(n->buffer);
    IRVisitor::visit_allocate(n);
  }
  void visit_store(const StoreNode* n) override {
    ExprCounter c(loops_);
    c.visit(n->value);
    for (const Expr& i : n->indices) c.visit(i);
    const double times = iters_, lanes = double(n->value.dtype().lanes()) * vector_lanes_;
    const double scale = times * vector_lanes_;  // a vectorized loop's body counts once per lane
    f[kFloatOps] += c.float_ops * scale;
    f[kIntOps] += c.int_ops * scale;
    f[kVectorOps] += c.vector_ops * times;
    f[lanes > 1 ? kVectorStores : kScalarStores] += times;
    f[kLanesStored] += lanes * times;
    f[kLoadContiguousVector] += c.contiguous * times;
    f[kLoadStridedVector] += c.strided * times;
    f[kLoadInvariant] += c.invariant * times;
    f[kLoadScalarStep] += c.stepping * scale;
    f[kLoadGather] += c.gather * scale;
    f[kLoadLocal] += c.local * scale;
    if (n->buffer.scope() != MemoryScope::Global) f[kStoreLocal] += times;
    f[kBytesLoaded] += c.bytes * scale;
    f[kBytesStored] += lanes * n->buffer.dtype().bytes() * times;
    f[kStores] += 1;
    // The working set is a property of the loops, weighted by how often the store runs.
    for (int d = 0; d < kDepths; ++d) f[kWorkingSet1 + d] = std::max(f[kWorkingSet1 + d], c.working_set[d]);
    if (c.working_set[2] > 48 * 1024) f[kOverL1Iters] += times;
    if (c.working_set[3] > 2 * 1024 * 1024) f[kOverL2Iters] += times;
    IRVisitor::visit_store(n);
  }

 private:
  double iters_ = 1, vector_lanes_ = 1;
  int parallel_depth_ = 0;
  lowering::RelaxMap outer_;  // the enclosing loops' ranges
  std::vector<Loop> loops_;
};

}  // namespace

const std::vector<std::string>& loop_feature_names() {
  static const std::vector<std::string> names(kNames, kNames + kCount);
  return names;
}

std::vector<float> feature_vector(const LoweredFunc& fn, int threads) {
  NestWalker w;
  w.visit(fn.body);
  std::vector<double>& f = w.f;
  const double t = std::max(threads, 1);
  f[kParallelItems] = w.outer_parallel;
  f[kItemsPerThread] = w.outer_parallel / t;
  // 1 when the items divide evenly among the threads; the idle share otherwise.
  f[kThreadBalance] = w.outer_parallel > 0 ? std::ceil(w.outer_parallel / t) * t / w.outer_parallel - 1 : 1;
  std::vector<float> out(kCount);
  for (size_t i = 0; i < kCount; ++i) out[i] = float(std::log2(1.0 + std::max(f[i], 0.0)));
  return out;
}

}  // namespace te::auto_sched
