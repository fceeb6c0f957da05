#include "codegen_cuda_src/lane_nest.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>

#include "expr/analysis.h"
#include "te/error.h"

namespace te::cuda {

namespace {

// A lane's stores get unrolled into straight-line code; beyond this many per lane te
// refuses rather than print pages of it.
constexpr int64_t kMaxStoresPerLane = 1024;
constexpr int kMaxThreads = 128;  // a warpgroup's

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

// One run of a store of the nest: the loops' values, lets and branches around it,
// outermost first.
struct Step {
  const StmtNode* stmt = nullptr;
  int64_t value = 0;           // For: the loop's value; IfThenElse: 0 then, 1 else
  int64_t begin = 0, end = 0;  // For: its range
};
struct Run {
  const StoreNode* store = nullptr;
  std::vector<Step> path;
};

// Runs the nest's loops by value, calling `on_store` for each store with the variables'
// values (`value` evaluates an integer expression, nullopt when it depends on something
// else) and the run.
class Enumerator {
 public:
  using Value = std::function<std::optional<int64_t>(const Expr&)>;
  Enumerator(const std::string& kernel, std::function<void(const Run&, const Value&)> on_store)
      : kernel_(kernel), on_store_(std::move(on_store)) {}

  void walk(const StmtNode* s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* n = static_cast<const ForNode*>(s);
        const std::optional<int64_t> min = value(n->min), extent = value(n->extent);
        if (!min || !extent)
          throw Error(
              fmt::format("CUDA: in kernel '{}', loop '{}' reads or writes warp fragments element by "
                          "element, but its bounds ({}, {}) are not constants: each lane runs its elements "
                          "unrolled",
                          kernel_, n->var.name(), to_string(n->min), to_string(n->extent)));
        for (int64_t v = *min; v < *min + *extent; ++v) {
          env_[n->var.get()] = v;
          run_.path.push_back({n, v, *min, *min + *extent});
          walk(n->body.get());
          run_.path.pop_back();
        }
        env_.erase(n->var.get());
        return;
      }
      case StmtKind::LetStmt: {
        auto* n = static_cast<const LetStmtNode*>(s);
        if (const std::optional<int64_t> v = value(n->value)) env_[n->var.get()] = *v;
        run_.path.push_back({n, 0});
        walk(n->body.get());
        run_.path.pop_back();
        env_.erase(n->var.get());
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& x : static_cast<const SeqNode*>(s)->seq) walk(x.get());
        return;
      case StmtKind::IfThenElse: {
        auto* n = static_cast<const IfThenElseNode*>(s);
        if (const std::optional<int64_t> holds = value(n->cond)) {  // the nest's loops decide it
          const Stmt& body = *holds ? n->then_case : n->else_case;
          if (body.defined()) walk(body.get());
          return;
        }
        for (int64_t branch : {0, 1}) {  // both: each lane tests it at run time
          const Stmt& body = branch == 0 ? n->then_case : n->else_case;
          if (!body.defined()) continue;
          run_.path.push_back({n, branch});
          walk(body.get());
          run_.path.pop_back();
        }
        return;
      }
      case StmtKind::Store:
        run_.store = static_cast<const StoreNode*>(s);
        on_store_(run_, [this](const Expr& e) { return value(e); });
        return;
      default: TE_ICHECK(false, "a lane nest holds loops, lets, branches, sequences and stores only");
    }
  }

 private:
  std::optional<int64_t> value(const Expr& e) const {
    return evaluate_int(e, [this](const VarNode* v) -> std::optional<int64_t> {
      auto it = env_.find(v);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    });
  }

  const std::string& kernel_;
  std::function<void(const Run&, const Enumerator::Value&)> on_store_;
  std::map<const VarNode*, int64_t> env_;
  Run run_;
};

// The value a path statement computes: a let's value, a branch's condition.
Expr path_value(const StmtNode* s) {
  if (s->kind == StmtKind::LetStmt) return static_cast<const LetStmtNode*>(s)->value;
  if (s->kind == StmtKind::IfThenElse) return static_cast<const IfThenElseNode*>(s)->cond;
  return Expr();
}

// The warp loads of a run: those of its lets' values and branches' conditions, then of
// the store.
std::vector<const LoadNode*> run_loads(const Run& r) {
  std::vector<const LoadNode*> loads;
  for (const Step& step : r.path)
    if (const Expr e = path_value(step.stmt); e.defined())
      for (const LoadNode* l : warp_loads(e)) loads.push_back(l);
  for (const LoadNode* l : warp_loads(r.store->value)) loads.push_back(l);
  for (const Expr& i : r.store->indices)
    for (const LoadNode* l : warp_loads(i)) loads.push_back(l);
  return loads;
}

int lowest_lane(const ThreadSet& lanes) {
  for (int l = 0; l < kMaxThreads; ++l)
    if (lanes[l]) return l;
  return -1;
}

// The first `threads` threads.
ThreadSet all_threads(int threads) {
  ThreadSet all;
  for (int l = 0; l < threads; ++l) all.set(l);
  return all;
}

bool is_warpgroup_kind(Fragment f) { return f == Fragment::WgmmaA || f == Fragment::WgmmaD; }

// The threads that hold a fragment laid out as `f` together (a warp's 32, a warpgroup's
// 128), and the rows of its tiles (2 per lane group: mma.sync's 16, wgmma's 64).
int group_threads(Fragment f) { return is_warpgroup_kind(f) ? kMaxThreads : 32; }
int64_t tile_rows(Fragment f) { return group_threads(f) / 2; }

// A lane's part of the nest before it is compared with the others': runs as trees.
struct LaneNode {
  const StmtNode* stmt = nullptr;
  int64_t value = 0;
  int64_t begin = 0, end = 0;  // a For's range
  std::map<const LoadNode*, int64_t> load_slots;
  int64_t store_slot = -1;
  std::vector<LaneNode> children;
};

class Planner {
 public:
  Planner(const std::map<const BufferNode*, FragmentLayout>& layouts, const std::string& kernel)
      : layouts_(layouts), kernel_(kernel) {}

  LaneNest run(const ForNode* root) {
    // The group: the threads holding the fragments this nest reads and writes (a kernel
    // may hold a warp's mma.sync fragments and a warpgroup's wgmma ones).
    const BufferUse use = buffer_use(root->body);
    for (const auto& [b, l] : layouts_)
      if (use.loads(b) || use.stores(b)) threads_ = std::max(threads_, group_threads(l.kind));
    Enumerator e(kernel_, [this](const Run& r, const Enumerator::Value& value) { add(r, value); });
    e.walk(root);
    check_reductions();
    LaneNest nest;
    nest.stores = stores_;
    nest.lane_stores = *std::max_element(lane_stores_.begin(), lane_stores_.begin() + threads_);
    nest.fewest_lane_stores = *std::min_element(lane_stores_.begin(), lane_stores_.begin() + threads_);
    nest.trees = combine(trees_, all_threads(threads_));
    nest.threads = threads_;
    for (const auto& [key, reduction] : reductions_) nest.reductions.push_back(reduction);
    // (By name, not by address: the butterflies in the same order every run.)
    std::sort(nest.reductions.begin(), nest.reductions.end(), [](const LaneReduction& a, const LaneReduction& b) {
      return std::make_pair(a.buffer.name(), a.slot) < std::make_pair(b.buffer.name(), b.slot);
    });
    return nest;
  }

 private:
  const FragmentLayout& layout_of(const Buffer& b) const {
    auto it = layouts_.find(b.get());
    if (it == layouts_.end())
      throw Error(
          fmt::format("CUDA: in kernel '{}', warp buffer '{}' is accessed element by element, but no tensor "
                      "intrinsic reads or writes it and it is not computed from fragments that one does, so "
                      "no fragment layout says which lane holds which element: give it another scope "
                      "(\"local\" or \"shared\")",
                      kernel_, b.name()));
    return it->second;
  }

  struct Access {
    const Buffer* buffer;
    int64_t element;
    FragmentPlace place;
  };

  Access access(const Buffer& b, const Expr& index, const Enumerator::Value& value) const {
    const std::optional<int64_t> element = value(index);
    if (!element)
      throw Error(
          fmt::format("CUDA: in kernel '{}', warp buffer '{}' is accessed element by element at {}, which "
                      "the loops around the access do not fix: each lane runs the elements it holds, so "
                      "the index must depend on those loops only (compute the stage at the warp's loop)",
                      kernel_, b.name(), to_string(index)));
    return {&b, *element, fragment_place(layout_of(b), *element)};
  }

  // What the messages call one of the group's threads.
  const char* thread_word() const { return te::cuda::thread_word(threads_); }

  std::string lanes_text(const ThreadSet& lanes) const {
    const int first = lowest_lane(lanes);
    const char* what = thread_word();
    return lanes.count() == 4 && first % 4 == 0 && lanes[first + 3]
               ? fmt::format("{}s {} to {}", what, first, first + 3)
               : fmt::format("{} {}", what, first);
  }

  void add(const Run& r, const Enumerator::Value& value) {
    const StoreNode* n = r.store;
    if (n->predicate.defined() || n->atomic_add || n->indices.size() != 1 || n->value.dtype().lanes() != 1)
      throw Error(
          fmt::format("CUDA: in kernel '{}', the store to '{}' in a loop nest over warp fragments is "
                      "predicated, atomic or a vector; each lane stores its elements one by one",
                      kernel_, n->buffer.name()));
    // The lanes that run this store: those holding every warp element it touches.
    const ThreadSet everyone = all_threads(threads_);
    ThreadSet lanes = everyone;
    std::string first;
    auto claim = [&](const Access& a) {
      if ((lanes & a.place.lanes).none())
        throw Error(fmt::format(
            "CUDA: in kernel '{}', one step of the loop nest over warp fragments touches {}, which {} holds, and "
            "'{}' at {}, which {} holds: a step must stay in one lane (read and write the fragments at the same "
            "element, or along the rows a lane holds)",
            kernel_, first, lanes_text(lanes), a.buffer->name(), a.element, lanes_text(a.place.lanes)));
      if (first.empty()) first = fmt::format("'{}' at {}", a.buffer->name(), a.element);
      lanes &= a.place.lanes;
    };
    std::optional<Access> target;
    if (is_warp(n->buffer)) {
      target = access(n->buffer, n->indices[0], value);
      claim(*target);
    }
    std::map<const LoadNode*, int64_t> slots;
    const std::vector<const LoadNode*> loads = run_loads(r);
    for (const LoadNode* l : loads) {
      if (l->predicate.defined() || l->indices.size() != 1 || l->dtype.lanes() != 1)
        throw Error(
            fmt::format("CUDA: in kernel '{}', a load of warp buffer '{}' is predicated or a vector; "
                        "each lane reads its elements one by one",
                        kernel_, l->buffer.name()));
      const Access a = access(l->buffer, l->indices[0], value);
      claim(a);
      slots[l] = a.place.slot;
    }
    TE_ICHECK(lanes != everyone, "a store of a lane nest that touches no warp buffer");
    if (target && lanes != target->place.lanes) note_partial(r, *target, lanes);
    if (target) note_write(*target, lanes != target->place.lanes, r);
    for (const LoadNode* l : loads)
      if (l->buffer.get() != n->buffer.get() || !target || lanes == target->place.lanes) note_read(l, value);
    ++stores_;
    for (int l = 0; l < threads_; ++l) {
      if (!lanes[l]) continue;
      if (++lane_stores_[l] > kMaxStoresPerLane)
        throw Error(
            fmt::format("CUDA: in kernel '{}', a loop nest over warp fragments gives {} {} more than {} "
                        "stores; each lane's are unrolled, so split the stage into smaller nests",
                        kernel_, thread_word(), l, kMaxStoresPerLane));
      insert(l, r, slots, target ? target->place.slot : -1);
    }
  }

  // Adds the run to lane l's tree.
  void insert(int l, const Run& r, const std::map<const LoadNode*, int64_t>& slots, int64_t store_slot) {
    std::vector<LaneNode>* level = &trees_[l];
    for (const Step& step : r.path) {
      if (level->empty() || level->back().stmt != step.stmt || level->back().value != step.value) {
        LaneNode node;
        node.stmt = step.stmt;
        node.value = step.value;
        node.begin = step.begin;
        node.end = step.end;
        if (const Expr e = path_value(step.stmt); e.defined())
          for (const LoadNode* load : warp_loads(e)) node.load_slots[load] = slots.at(load);
        level->push_back(std::move(node));
      }
      level = &level->back().children;
    }
    LaneNode leaf;
    leaf.stmt = r.store;
    leaf.store_slot = store_slot;
    for (const LoadNode* load : warp_loads(r.store->value)) leaf.load_slots[load] = slots.at(load);
    for (const Expr& i : r.store->indices)
      for (const LoadNode* load : warp_loads(i)) leaf.load_slots[load] = slots.at(load);
    level->push_back(std::move(leaf));
  }

  // A store in fewer lanes than hold its element: one lane's part of a row reduction,
  // `W = W op x`, combined across the row's lanes after the nest.
  void note_partial(const Run& r, const Access& target, const ThreadSet& lanes) {
    const StoreNode* n = r.store;
    const auto* b = n->value.as<BinaryNode>();
    const bool combines = b != nullptr &&
                          (b->op == BinOp::Add || b->op == BinOp::Mul || b->op == BinOp::Min || b->op == BinOp::Max) &&
                          (reads_element(b->a, n) || reads_element(b->b, n));
    if (!combines)
      throw Error(fmt::format(
          "CUDA: in kernel '{}', the store to '{}' at {} runs in {} of the {} that hold the element: only a row "
          "reduction (the element combined by +, *, min or max with a value of that lane) may, its lanes' parts "
          "then combined",
          kernel_, n->buffer.name(), target.element, lanes_text(lanes), lanes_text(target.place.lanes)));
    const auto key = std::make_pair(n->buffer.get(), target.place.slot);
    auto [it, inserted] = reductions_.emplace(key, LaneReduction{n->buffer, target.place.slot, b->op});
    if (!inserted && it->second.op != b->op)
      throw Error(fmt::format("CUDA: in kernel '{}', the row reduction into '{}' combines by both {} and {}", kernel_,
                              n->buffer.name(), binop_name(it->second.op), binop_name(b->op)));
  }

  static bool reads_element(const Expr& e, const StoreNode* n) {
    const auto* l = e.as<LoadNode>();
    return l != nullptr && l->buffer.get() == n->buffer.get() && l->indices.size() == 1 &&
           l->indices[0].same_as(n->indices[0]);
  }

  // The elements a row reduction combines must start at its identity and be read only by
  // the reduction until the nest ends (their lanes' parts combine after it).
  void note_write(const Access& target, bool partial, const Run& r) {
    const auto key = std::make_pair(target.buffer->get(), target.element);
    if (partial) {
      partial_elements_.insert(key);
      return;
    }
    if (partial_elements_.count(key))
      throw Error(
          fmt::format("CUDA: in kernel '{}', '{}' at {} is stored to after its row reduction in the same "
                      "loop nest; its lanes' parts combine only after the nest",
                      kernel_, target.buffer->name(), target.element));
    initial_[key] = r.store->value;
  }

  void note_read(const LoadNode* l, const Enumerator::Value& value) {
    const std::optional<int64_t> element = value(l->indices[0]);
    if (element && partial_elements_.count({l->buffer.get(), *element}))
      throw Error(
          fmt::format("CUDA: in kernel '{}', '{}' at {} is read in the loop nest of its row reduction, "
                      "before its lanes' parts combine (after the nest)",
                      kernel_, l->buffer.name(), *element));
  }

  void check_reductions() const {
    for (const auto& key : partial_elements_) {
      auto it = initial_.find(key);
      const BufferNode* b = key.first;
      BinOp op = BinOp::Add;
      for (const auto& [k, r] : reductions_)
        if (k.first == b) op = r.op;
      if (it == initial_.end() || !is_identity(it->second, op))
        throw Error(fmt::format(
            "CUDA: in kernel '{}', the row reduction into '{}' at {} does not start from {} in its loop nest: each "
            "lane reduces its part from there, and the parts combine",
            kernel_, b->name, key.second, identity_text(op)));
    }
  }

  static bool is_identity(const Expr& e, BinOp op) {
    const double* f = as_const_float(e);
    const int64_t* i = as_const_int(e);
    if (!f && !i) return false;
    const double v = f ? *f : static_cast<double>(*i);
    switch (op) {
      case BinOp::Add: return v == 0.0;
      case BinOp::Mul: return v == 1.0;
      case BinOp::Max:
        return e.same_as(min_value(e.dtype())) || (f && std::isinf(v) && v < 0) ||
               (i && *i == *as_const_int(min_value(e.dtype())));
      case BinOp::Min: return (f && std::isinf(v) && v > 0) || (i && *i == *as_const_int(max_value(e.dtype())));
      default: return false;
    }
  }

  static const char* identity_text(BinOp op) {
    switch (op) {
      case BinOp::Add: return "0";
      case BinOp::Mul: return "1";
      case BinOp::Max: return "the type's lowest value";
      default: return "the type's highest value";
    }
  }

  Error runs_differently(int model, int lane) const {
    const char* what = thread_word();
    return Error(fmt::format(
        "CUDA: in kernel '{}', a loop nest over warp fragments runs differently in {} {} and {} {}: each lane "
        "must run the same steps on the elements it holds, their loops' values differing with the lane's row and "
        "column in its fragments only (a lane skips only iterations its values put past the loop's range)",
        kernel_, what, model, what, lane));
  }

  // The lanes' trees as one: the same statements in every lane of `active`, loop values
  // affine in the lane's g and t, the same slots. A nest may cover part of the fragments
  // (the rows of a tile past the end of the data, a split's tail): a lane may lack a
  // loop's iteration where its value there falls outside the loop's range (the iteration
  // is then guarded), or run an iteration in which every deeper step is so guarded for it.
  // The template is the lane with the most steps; every lane's steps are checked against it.
  std::vector<LaneTree> combine(const std::array<std::vector<LaneNode>, kMaxThreads>& lanes, const ThreadSet& active) {
    int first_lane = -1;
    for (int l = 0; l < threads_; ++l)
      if (active[l] && (first_lane < 0 || lanes[l].size() > lanes[first_lane].size())) first_lane = l;
    std::vector<LaneTree> out;
    if (first_lane < 0) return out;
    const std::vector<LaneNode>& model = lanes[first_lane];
    std::array<size_t, kMaxThreads> next{};
    auto has = [&](int l, const LaneNode& node) {
      return active[l] && next[l] < lanes[l].size() && lanes[l][next[l]].stmt == node.stmt;
    };
    for (const LaneNode& first : model) {
      LaneTree t;
      t.stmt = first.stmt;
      t.load_slots = first.load_slots;
      t.store_slot = first.store_slot;
      const bool is_for = first.stmt->kind == StmtKind::For;
      const int w0 = first_lane / 32, g0 = first_lane % 32 / 4, t0 = first_lane % 4;
      if (is_for) {  // the value's steps along t, g and w, from threads beside the model that run it
        int64_t per_t = 0, per_g = 0, per_w = 0;
        for (int dt = -t0; dt < 4 - t0; ++dt)
          if (dt != 0 && has(first_lane + dt, first)) {
            per_t = (lanes[first_lane + dt][next[first_lane + dt]].value - first.value) / dt;
            break;
          }
        for (int dg = -g0; dg < 8 - g0; ++dg)
          if (dg != 0 && has(first_lane + 4 * dg, first)) {
            per_g = (lanes[first_lane + 4 * dg][next[first_lane + 4 * dg]].value - first.value) / dg;
            break;
          }
        bool other_warps_run_it = false;
        for (int dw = -w0; dw < threads_ / 32 - w0; ++dw)
          if (dw != 0 && has(first_lane + 32 * dw, first)) {
            per_w = (lanes[first_lane + 32 * dw][next[first_lane + 32 * dw]].value - first.value) / dw;
            other_warps_run_it = true;
            break;
          }
        // Only the model's warp runs the loop (the others' rows all past its end): a step
        // of the range's length puts every other warp's values outside it.
        if (!other_warps_run_it && threads_ > 32) per_w = first.end - first.begin;
        t.value = {first.value - per_g * g0 - per_t * t0 - per_w * w0, per_g, per_t, per_w};
        t.begin = first.begin;
        t.end = first.end;
      } else if (first.stmt->kind == StmtKind::IfThenElse) {
        t.value = {first.value, 0, 0, 0};  // the branch, the same in every lane
      }
      std::array<std::vector<LaneNode>, kMaxThreads> children;
      ThreadSet running;
      for (int l = 0; l < threads_; ++l) {
        if (!active[l]) continue;
        const int64_t value =
            t.value.base + t.value.per_w * (l / 32) + t.value.per_g * (l % 32 / 4) + t.value.per_t * (l % 4);
        const LaneNode* node = next[l] < lanes[l].size() ? &lanes[l][next[l]] : nullptr;
        const bool same = node != nullptr && node->stmt == first.stmt && node->load_slots == first.load_slots &&
                          node->store_slot == first.store_slot && node->value == value;
        if (same) {
          children[l] = node->children;
          ++next[l];
        } else if (is_for && (value < t.begin || value >= t.end)) {
          t.guarded = true;  // not this lane's: past the loop's range
          continue;
        } else if (first.stmt->kind == StmtKind::Store) {
          throw runs_differently(first_lane, l);
        }  // else the lane runs this step with nothing under it: every deeper step guarded for it
        running.set(l);
      }
      t.children = combine(children, running);
      out.push_back(std::move(t));
    }
    for (int l = 0; l < threads_; ++l)
      if (active[l] && next[l] != lanes[l].size()) throw runs_differently(first_lane, l);
    return out;
  }

  const std::map<const BufferNode*, FragmentLayout>& layouts_;
  const std::string& kernel_;
  int threads_ = 32;  // the group whose fragments the nest runs on: a warp, or a warpgroup (128)
  std::array<std::vector<LaneNode>, kMaxThreads> trees_;
  std::array<int64_t, kMaxThreads> lane_stores_{};
  int64_t stores_ = 0;
  std::map<std::pair<const BufferNode*, int64_t>, LaneReduction> reductions_;  // by (buffer, slot)
  std::set<std::pair<const BufferNode*, int64_t>> partial_elements_;           // by (buffer, element)
  std::map<std::pair<const BufferNode*, int64_t>, Expr> initial_;
};

}  // namespace

FragmentPlace fragment_place(const FragmentLayout& l, int64_t element) {
  // A warpgroup's 64-row fragments: warp w holds rows 16 w .. 16 w + 15 as a warp holds an
  // mma.sync fragment's (the wgmma accumulator figure: each 8 columns as mma's C; its A
  // register figure: mma's A).
  const int64_t rows = tile_rows(l.kind);
  auto in_warp = [](int64_t warp, uint64_t lanes) {
    ThreadSet s;
    for (int b = 0; b < 32; ++b)
      if (lanes >> b & 1u) s.set(static_cast<size_t>(warp * 32 + b));
    return s;
  };
  if (l.rows_only) {  // a row of the tiles: its lanes 4 g .. 4 g + 3, slots 2 per tile
    const int64_t r = element % rows;
    return {in_warp(r / 16, uint64_t{0xf} << (r % 8 * 4)), element / rows * 2 + r % 16 / 8};
  }
  const Expr slot = fragment_slot(l.shape, make_const(Int(64), element), l.row);  // (kept alive for base)
  const int64_t* base = as_const_int(slot);
  TE_ICHECK(base != nullptr, "a fragment's slot of a constant element is a constant");
  const int64_t rr = element / l.row % l.shape.rows, c = element % l.row % l.shape.cols;
  const int64_t w = rr / 16, r = rr % 16;
  auto lane = [&](int64_t x) { return in_warp(w, uint64_t{1} << x); };
  switch (l.kind) {
    case Fragment::A:  // 16 x 16: rows g and g + 8, columns 2t, 2t + 1, then the same 8 columns on
    case Fragment::WgmmaA: return {lane(r % 8 * 4 + c % 8 / 2), *base + c / 8 * 4 + r / 8 * 2 + c % 2};
    case Fragment::B:  // 16 (k) x 8 (n): column g, rows 2t, 2t + 1, then 8 rows on
      return {lane(c * 4 + r % 8 / 2), *base + r / 8 * 2 + r % 2};
    case Fragment::C:  // 16 x 8: rows g and g + 8, columns 2t, 2t + 1; per 8 columns
    case Fragment::WgmmaD: return {lane(r % 8 * 4 + c % 8 / 2), *base + c / 8 * 4 + r / 8 * 2 + c % 2};
    default: break;
  }
  TE_ICHECK(false, "fragment_place of a layout that is not a warp's mma fragment");
  return {};
}

int fragment_threads(MemoryScope scope) { return scope == MemoryScope::Warpgroup ? kMaxThreads : 32; }

int64_t lane_array_size(const FragmentLayout& l, int64_t elements) {
  return l.rows_only ? elements / tile_rows(l.kind) * 2 : elements / group_threads(l.kind);
}

void infer_fragment_layouts(const std::vector<const ForNode*>& nests,
                            const std::map<const BufferNode*, int64_t>& elements,
                            std::map<const BufferNode*, FragmentLayout>* layouts) {
  const std::string kernel;  // inference never throws: planning reports what stays unknown
  for (bool changed = true; changed;) {
    changed = false;
    for (const ForNode* root : nests) {
      // Per unlaid buffer stored: the laid-out loads consistent with every store so far,
      // each as "same element" (false) or "its row" (true).
      std::map<const BufferNode*, std::optional<std::set<std::pair<const BufferNode*, bool>>>> candidates;
      Enumerator e(kernel, [&](const Run& r, const Enumerator::Value& value) {
        const StoreNode* n = r.store;
        if (!is_warp(n->buffer) || layouts->count(n->buffer.get()) || n->indices.size() != 1) return;
        const std::optional<int64_t> w = value(n->indices[0]);
        if (!w) return;
        std::set<std::pair<const BufferNode*, bool>> here;
        for (const LoadNode* l : run_loads(r)) {
          auto it = layouts->find(l->buffer.get());
          const std::optional<int64_t> s = l->indices.size() == 1 ? value(l->indices[0]) : std::nullopt;
          if (it == layouts->end() || !s) continue;
          if (*s == *w) here.insert({l->buffer.get(), false});
          if (!it->second.rows_only && it->second.kind != Fragment::B && *s / it->second.row == *w)
            here.insert({l->buffer.get(), true});
        }
        if (here.empty()) return;  // e.g. the reduction's initial value
        auto& c = candidates[n->buffer.get()];
        if (!c) {
          c = here;
          return;
        }
        std::set<std::pair<const BufferNode*, bool>> both;
        for (const auto& x : *c)
          if (here.count(x)) both.insert(x);
        c = both;
      });
      try {
        e.walk(root);
      } catch (const Error&) {
        continue;  // planning reports it
      }
      for (const auto& [b, c] : candidates) {
        if (!c || c->empty()) continue;
        // (By name, not by address: the same choice, and the same comment, every run.)
        const auto& [from, rows] = *std::min_element(c->begin(), c->end(), [](const auto& x, const auto& y) {
          return std::tie(x.first->name, x.second) < std::tie(y.first->name, y.second);
        });
        FragmentLayout l = layouts->at(from);
        auto count = elements.find(b);
        if (rows) {
          if (count == elements.end() || count->second % tile_rows(l.kind) != 0) continue;
          l.rows_only = true;
          l.row = 1;
        }
        l.origin = fmt::format("'{}'", from->name);
        (*layouts)[b] = l;
        changed = true;
      }
    }
  }
}

LaneNest plan_lane_nest(const ForNode* root, const std::map<const BufferNode*, FragmentLayout>& layouts,
                        const std::string& kernel) {
  return Planner(layouts, kernel).run(root);
}

}  // namespace te::cuda
