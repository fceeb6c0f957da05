// Whether an allocation's body loads only elements it stored before (analysis.h): then the
// storage needs no zero-fill. The body is run on paper, its loops iteration by iteration
// with their variables' values, marking the elements each store writes and checking each
// load's; anything not followed exactly (an index of unknown value, a predicated store, a
// tensor intrinsic on the buffer, more steps than the budget) answers false. Once every
// element is stored, the rest of the body is not followed: any load it makes reads a
// stored element (a producer's nest that fills the buffer, then its consumers'.)
#include <unordered_map>
#include <vector>

#include "expr/analysis.h"
#include "expr/buffer_util.h"

namespace te {
namespace {

// The elements a flat index covers: `lanes` of them, `stride` apart from `first`.
struct Elements {
  int64_t first = 0, stride = 0;
  int lanes = 1;
};

class PaperRun : public IRVisitor {
 public:
  PaperRun(const BufferNode* buf, int64_t elements, int64_t budget)
      : buf_(buf), stored_(static_cast<size_t>(elements), false), steps_left_(budget) {}

  bool run(const Stmt& body) {
    visit(body);
    return ok_;
  }

  using IRVisitor::visit;
  void visit(const Stmt& s) override {
    if (ok_ && stored_count_ < stored_.size()) IRVisitor::visit(s);
  }

 protected:
  void visit_load(const LoadNode* n) override {
    IRVisitor::visit_load(n);
    if (!ok_ || n->buffer.get() != buf_) return;
    if (--steps_left_ < 0) return fail();
    std::optional<Elements> at = elements_of(n->indices);
    if (!at || !all_stored(*at)) fail();
  }
  void visit_let(const LetNode* n) override {
    visit(n->value);
    Binding b(*this, n->var.get(), n->value);
    visit(n->body);
  }
  void visit_let_stmt(const LetStmtNode* n) override {
    visit(n->value);
    Binding b(*this, n->var.get(), n->value);
    visit(n->body);
  }
  void visit_for(const ForNode* n) override {
    visit(n->min);
    visit(n->extent);
    if (!ok_ || !touches(n->body)) return;
    std::optional<int64_t> min = value(n->min), extent = value(n->extent);
    if (!min || !extent) return fail();
    for (int64_t i = 0; i < *extent && ok_; ++i) {
      if (--steps_left_ < 0) return fail();
      values_[n->var.get()] = *min + i;
      visit(n->body);
    }
    values_.erase(n->var.get());
  }
  void visit_store(const StoreNode* n) override {
    IRVisitor::visit_store(n);  // its value's and indices' loads come first
    if (!ok_ || n->buffer.get() != buf_) return;
    if (--steps_left_ < 0) return fail();
    std::optional<Elements> at = elements_of(n->indices);
    if (!at) return fail();
    if (n->atomic_add && !all_stored(*at)) return fail();  // it reads the element first
    if (n->predicate.defined()) return;                    // lanes unknown: none counted
    for (int l = 0; l < at->lanes; ++l) {
      const auto e = static_cast<size_t>(at->first + l * at->stride);
      stored_count_ += stored_[e] ? 0 : 1;
      stored_[e] = true;
    }
  }
  void visit_if_then_else(const IfThenElseNode* n) override {
    visit(n->cond);
    if (!ok_) return;
    if (std::optional<int64_t> c = value(n->cond)) return visit(*c != 0 ? n->then_case : n->else_case);
    // Either side may run: each is checked from the stores so far; afterwards only what
    // both stored counts.
    steps_left_ -= static_cast<int64_t>(stored_.size() / 64);  // the copy's cost
    std::vector<bool> before = stored_;
    const size_t count_before = stored_count_;
    visit(n->then_case);
    std::vector<bool> after_then = std::move(stored_);
    stored_ = std::move(before);
    stored_count_ = count_before;
    visit(n->else_case);
    stored_count_ = 0;
    for (size_t i = 0; i < stored_.size(); ++i) {
      stored_[i] = stored_[i] && after_then[i];
      stored_count_ += stored_[i] ? 1 : 0;
    }
  }
  void visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n) override {
    for (const Buffer& b : n->buffers)
      if (b.get() == buf_) return fail();  // its regions are not followed element by element
    IRVisitor::visit_tensor_intrinsic_call(n);
  }

 private:
  // A variable's value while a Let's or LetStmt's body is visited (when it has one).
  struct Binding {
    Binding(PaperRun& r, const VarNode* v, const Expr& e) : run(r), var(v) {
      if (std::optional<int64_t> x = r.value(e)) r.values_[v] = *x;
    }
    ~Binding() { run.values_.erase(var); }
    PaperRun& run;
    const VarNode* var;
  };

  void fail() { ok_ = false; }

  std::optional<int64_t> value(const Expr& e) const {
    return evaluate_int(e, [this](const VarNode* v) -> std::optional<int64_t> {
      auto it = values_.find(v);
      if (it == values_.end()) return std::nullopt;
      return it->second;
    });
  }

  std::optional<Elements> elements_of(const std::vector<Expr>& indices) const {
    if (indices.size() != 1) return std::nullopt;
    const Expr& i = indices[0];
    Elements at;
    if (const auto* r = i.as<RampNode>()) {
      std::optional<int64_t> base = value(r->base), stride = value(r->stride);
      if (!base || !stride) return std::nullopt;
      at = {*base, *stride, r->lanes};
    } else if (const auto* b = i.as<BroadcastNode>()) {
      std::optional<int64_t> x = value(b->value);
      if (!x) return std::nullopt;
      at = {*x, 0, 1};
    } else {
      std::optional<int64_t> x = value(i);
      if (!x) return std::nullopt;
      at = {*x, 0, 1};
    }
    const auto size = static_cast<int64_t>(stored_.size());
    const int64_t last = at.first + (at.lanes - 1) * at.stride;
    if (at.first < 0 || at.first >= size || last < 0 || last >= size) return std::nullopt;
    return at;
  }

  bool all_stored(const Elements& at) const {
    for (int l = 0; l < at.lanes; ++l)
      if (!stored_[static_cast<size_t>(at.first + l * at.stride)]) return false;
    return true;
  }

  // Whether s loads or stores the buffer (asked once per loop node).
  bool touches(const Stmt& s) {
    auto [it, added] = touches_.emplace(s.get(), false);
    if (added) {
      BufferUse use = buffer_use(s);
      it->second = use.loads(buf_) || use.stores(buf_);
    }
    return it->second;
  }

  const BufferNode* buf_;
  std::vector<bool> stored_;
  size_t stored_count_ = 0;  // the true elements of stored_
  int64_t steps_left_;
  bool ok_ = true;
  std::unordered_map<const VarNode*, int64_t> values_;
  std::unordered_map<const StmtNode*, bool> touches_;
};

}  // namespace

bool loads_only_stored_elements(const AllocateNode& a, int64_t budget) {
  // The bitmap of stored elements: up to 2 MiB. (A buffer of more elements than the
  // budget's steps can still be answered when vector stores fill it.)
  constexpr int64_t kMaxElements = int64_t{1} << 24;
  std::optional<int64_t> elements = constant_elements(a.buffer, kMaxElements);
  if (!elements) return false;
  return PaperRun(a.buffer.get(), *elements, budget).run(a.body);
}

}  // namespace te
