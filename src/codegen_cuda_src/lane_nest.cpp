#include "codegen_cuda_src/lane_nest.h"

#include <fmt/format.h>

#include <array>

#include "expr/analysis.h"
#include "te/error.h"

namespace te::cuda {

namespace {

// A lane's steps get unrolled into straight-line code; beyond this many per lane te
// refuses rather than print pages of it.
constexpr int64_t kMaxStepsPerLane = 1024;
constexpr int kLanes = 32;

bool is_warp(const Buffer& b) { return b.scope() == MemoryScope::Warp || b.scope() == MemoryScope::Warpgroup; }

// The loads of warp buffers in e, in order.
std::vector<const LoadNode*> warp_loads(const Expr& e) {
  struct Finder : IRVisitor {
    std::vector<const LoadNode*> found;
    void visit_load(const LoadNode* n) override {
      if (is_warp(n->buffer)) found.push_back(n);
      IRVisitor::visit_load(n);
    }
  } f;
  f.visit(e);
  return f.found;
}

// Whether s holds only serial loops, lets, sequences and stores (*touches: whether one of
// them loads or stores a warp buffer).
bool nest_statements(const StmtNode* s, bool* touches) {
  switch (s->kind) {
    case StmtKind::For: {
      auto* n = static_cast<const ForNode*>(s);
      return n->for_kind != ForKind::ThreadBinding && n->for_kind != ForKind::Vectorized &&
             nest_statements(n->body.get(), touches);
    }
    case StmtKind::LetStmt: {
      auto* n = static_cast<const LetStmtNode*>(s);
      *touches |= !warp_loads(n->value).empty();
      return nest_statements(n->body.get(), touches);
    }
    case StmtKind::Seq:
      for (const Stmt& x : static_cast<const SeqNode*>(s)->seq)
        if (!nest_statements(x.get(), touches)) return false;
      return true;
    case StmtKind::Store: {
      auto* n = static_cast<const StoreNode*>(s);
      *touches |= is_warp(n->buffer) || !warp_loads(n->value).empty();
      for (const Expr& i : n->indices) *touches |= !warp_loads(i).empty();
      return true;
    }
    default: return false;
  }
}

class Planner {
 public:
  Planner(const std::map<const BufferNode*, FragmentLayout>& layouts, const std::string& kernel)
      : layouts_(layouts), kernel_(kernel) {}

  LaneNest run(const ForNode* root) {
    walk(root);
    return combine();
  }

 private:
  struct Run {  // one run of a store in one lane
    const StoreNode* store;
    std::vector<const StmtNode*> path;
    std::vector<int64_t> loop_values;
    std::map<const LoadNode*, int64_t> load_slots;
    int64_t store_slot = -1;
  };

  void walk(const StmtNode* s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* n = static_cast<const ForNode*>(s);
        const std::optional<int64_t> min = value(n->min), extent = value(n->extent);
        if (!min || !extent)
          throw Error(fmt::format("CUDA: in kernel '{}', loop '{}' reads warp fragments element by element, but its "
                                  "bounds ({}, {}) are not constants: each lane runs its elements unrolled",
                                  kernel_, n->var.name(), to_string(n->min), to_string(n->extent)));
        path_.push_back(n);
        for (int64_t v = *min; v < *min + *extent; ++v) {
          env_[n->var.get()] = v;
          walk(n->body.get());
        }
        env_.erase(n->var.get());
        path_.pop_back();
        return;
      }
      case StmtKind::LetStmt: {
        auto* n = static_cast<const LetStmtNode*>(s);
        if (const std::optional<int64_t> v = value(n->value)) env_[n->var.get()] = *v;
        path_.push_back(n);
        walk(n->body.get());
        path_.pop_back();
        env_.erase(n->var.get());
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& x : static_cast<const SeqNode*>(s)->seq) walk(x.get());
        return;
      case StmtKind::Store: return run_store(static_cast<const StoreNode*>(s));
      default: TE_ICHECK(false, "a lane nest holds loops, lets, sequences and stores only");
    }
  }

  std::optional<int64_t> value(const Expr& e) const {
    return evaluate_int(e, [this](const VarNode* v) -> std::optional<int64_t> {
      auto it = env_.find(v);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    });
  }

  const FragmentLayout& layout_of(const Buffer& b) const {
    if (b.scope() == MemoryScope::Warpgroup)
      throw Error(fmt::format("CUDA: in kernel '{}', warpgroup buffer '{}' is accessed element by element; only the "
                              "warp fragments of mma.sync (scope \"warp\") are, so tensorize the stages that read "
                              "and write it",
                              kernel_, b.name()));
    auto it = layouts_.find(b.get());
    if (it == layouts_.end())
      throw Error(fmt::format("CUDA: in kernel '{}', warp buffer '{}' is accessed element by element, but no tensor "
                              "intrinsic reads or writes it, so no fragment layout says which lane holds which "
                              "element: give it another scope (\"local\" or \"shared\")",
                              kernel_, b.name()));
    return it->second;
  }

  // Where the access to b at `index` of the current run lands.
  FragmentPlace place(const Buffer& b, const Expr& index) const {
    const std::optional<int64_t> element = value(index);
    if (!element)
      throw Error(fmt::format("CUDA: in kernel '{}', warp buffer '{}' is accessed element by element at {}, which "
                              "the loops around the access do not fix: each lane runs the elements it holds, so "
                              "the index must depend on those loops only (compute the stage at the warp's loop)",
                              kernel_, b.name(), to_string(index)));
    return fragment_place(layout_of(b), *element);
  }

  void run_store(const StoreNode* n) {
    if (n->predicate.defined() || n->atomic_add || n->indices.size() != 1 || n->value.dtype().lanes() != 1)
      throw Error(fmt::format("CUDA: in kernel '{}', the store to '{}' in a loop nest over warp fragments is "
                              "predicated, atomic or a vector; each lane stores its elements one by one",
                              kernel_, n->buffer.name()));
    Run r;
    r.store = n;
    r.path = path_;
    int lane = -1;
    std::string owner_text;
    auto claim = [&](const Buffer& b, const Expr& index, int64_t* slot) {
      const FragmentPlace p = place(b, index);
      if (lane >= 0 && p.lane != lane)
        throw Error(fmt::format(
            "CUDA: in kernel '{}', one step of the loop nest over warp fragments touches {}, which lane {} holds, "
            "and '{}' at {}, which lane {} holds: a step must stay in one lane (read and write the fragments at "
            "the same element, of layouts that put it in the same lane)",
            kernel_, owner_text, lane, b.name(), *value(index), p.lane));
      if (lane < 0) {
        lane = p.lane;
        owner_text = fmt::format("'{}' at {}", b.name(), *value(index));
      }
      *slot = p.slot;
    };
    if (is_warp(n->buffer)) claim(n->buffer, n->indices[0], &r.store_slot);
    std::vector<const LoadNode*> loads;
    for (const StmtNode* s : path_)
      if (s->kind == StmtKind::LetStmt)
        for (const LoadNode* l : warp_loads(static_cast<const LetStmtNode*>(s)->value)) loads.push_back(l);
    for (const LoadNode* l : warp_loads(n->value)) loads.push_back(l);
    for (const LoadNode* l : warp_loads(n->indices[0])) loads.push_back(l);
    for (const LoadNode* l : loads) {
      if (l->predicate.defined() || l->indices.size() != 1 || l->dtype.lanes() != 1)
        throw Error(fmt::format("CUDA: in kernel '{}', a load of warp buffer '{}' is predicated or a vector; "
                                "each lane reads its elements one by one",
                                kernel_, l->buffer.name()));
      int64_t slot = 0;
      claim(l->buffer, l->indices[0], &slot);
      r.load_slots[l] = slot;
    }
    TE_ICHECK(lane >= 0, "a store of a lane nest that touches no warp buffer");
    for (const StmtNode* s : path_)
      if (s->kind == StmtKind::For) r.loop_values.push_back(env_.at(static_cast<const ForNode*>(s)->var.get()));
    if (static_cast<int64_t>(runs_[lane].size()) >= kMaxStepsPerLane)
      throw Error(fmt::format("CUDA: in kernel '{}', a loop nest over warp fragments gives lane {} more than {} "
                              "elements; each lane's are unrolled, so split the stage into smaller nests",
                              kernel_, lane, kMaxStepsPerLane));
    elements_ += 1;
    runs_[lane].push_back(std::move(r));
  }

  // The lanes' runs as one list of steps: the same in every lane but for loop values
  // affine in g and t.
  LaneNest combine() const {
    for (int l = 1; l < kLanes; ++l)
      if (runs_[l].size() != runs_[0].size())
        throw Error(fmt::format("CUDA: in kernel '{}', a loop nest over warp fragments gives lane 0 {} elements "
                                "and lane {} {}: it must cover whole fragments, the same number in every lane",
                                kernel_, runs_[0].size(), l, runs_[l].size()));
    LaneNest nest;
    nest.elements = elements_;
    for (size_t k = 0; k < runs_[0].size(); ++k) {
      const Run& first = runs_[0][k];
      LaneNest::Step step;
      step.store = first.store;
      step.path = first.path;
      step.load_slots = first.load_slots;
      step.store_slot = first.store_slot;
      for (size_t v = 0; v < first.loop_values.size(); ++v) {
        const int64_t base = first.loop_values[v];
        const int64_t per_t = runs_[1][k].loop_values.at(v) - base, per_g = runs_[4][k].loop_values.at(v) - base;
        step.loop_values.push_back({base, per_g, per_t});
      }
      for (int l = 1; l < kLanes; ++l) {
        const Run& r = runs_[l][k];
        bool same = r.store == first.store && r.path == first.path && r.load_slots == first.load_slots &&
                    r.store_slot == first.store_slot;
        for (size_t v = 0; same && v < r.loop_values.size(); ++v) {
          const LaneAffine& a = step.loop_values[v];
          same = r.loop_values[v] == a.base + a.per_g * (l / 4) + a.per_t * (l % 4);
        }
        if (!same)
          throw Error(fmt::format(
              "CUDA: in kernel '{}', the loop nest over warp fragments that stores to '{}' runs differently in lane "
              "0 and lane {} (its {}th element): each lane must run the same steps on the elements it holds, "
              "their loops' values differing with the lane's row and column in its fragments only",
              kernel_, first.store->buffer.name(), l, k));
      }
      nest.steps.push_back(std::move(step));
    }
    return nest;
  }

  const std::map<const BufferNode*, FragmentLayout>& layouts_;
  const std::string& kernel_;
  std::map<const VarNode*, int64_t> env_;
  std::vector<const StmtNode*> path_;
  std::array<std::vector<Run>, kLanes> runs_;
  int64_t elements_ = 0;
};

}  // namespace

FragmentPlace fragment_place(const FragmentLayout& l, int64_t element) {
  const int64_t* base = as_const_int(fragment_slot(l.shape, make_const(Int(64), element), l.row));
  TE_ICHECK(base != nullptr, "a fragment's slot of a constant element is a constant");
  const int64_t r = element / l.row % l.shape.rows, c = element % l.row % l.shape.cols;
  switch (l.kind) {
    case Fragment::A:  // 16 x 16: rows g and g + 8, columns 2t, 2t + 1, then the same 8 columns on
      return {static_cast<int>(r % 8 * 4 + c % 8 / 2), *base + c / 8 * 4 + r / 8 * 2 + c % 2};
    case Fragment::B:  // 16 (k) x 8 (n): column g, rows 2t, 2t + 1, then 8 rows on
      return {static_cast<int>(c * 4 + r % 8 / 2), *base + r / 8 * 2 + r % 2};
    case Fragment::C:  // 16 x 8: rows g and g + 8, columns 2t, 2t + 1
      return {static_cast<int>(r % 8 * 4 + c / 2), *base + r / 8 * 2 + c % 2};
    default: break;
  }
  TE_ICHECK(false, "fragment_place of a layout that is not a warp's mma fragment");
  return {};
}

bool is_lane_nest(const ForNode* root) {
  bool touches = false;
  return nest_statements(root, &touches) && touches;
}

LaneNest plan_lane_nest(const ForNode* root, const std::map<const BufferNode*, FragmentLayout>& layouts,
                        const std::string& kernel) {
  return Planner(layouts, kernel).run(root);
}

}  // namespace te::cuda
