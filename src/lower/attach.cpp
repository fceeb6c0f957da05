// Pass "attach": assembles each stage's nest into statements and puts the stages computed
// at a loop (compute_at) at the start of that loop's body, producers first; the stages at
// the root follow one another in dependency order.
#include <map>

#include "lower/passes.h"
#include "lower/stage_graph.h"

namespace te::lowering {

namespace {

using Attached = std::map<const IterVarNode*, std::vector<Stmt>>;

Stmt wrap_loop(const NestLoop& L, Stmt body) {
  if (!L.has_loop) return body;
  return for_loop(L.iv.var(), L.min, L.extent, L.kind, std::move(body), L.thread_tag);
}

Stmt init_nest(const StageNest& nest) {
  auto repeated = [&](Stmt s, const std::vector<size_t>& loops) {
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) s = wrap_loop(nest.loops[*it], s);
    return s;
  };
  Stmt elements = repeated(nest.init, nest.init_loops);
  if (!nest.row_init.defined()) return elements;
  return seq({repeated(nest.row_init, nest.row_init_loops), elements});
}

// A row reduction's step: the row's update around its element loops.
Stmt row_step(const StageNest& nest, Stmt element_loops) {
  Stmt s = seq({nest.row_stores, std::move(element_loops)});
  for (auto it = nest.row_lets.rbegin(); it != nest.row_lets.rend(); ++it) s = let_stmt(it->first, it->second, s);
  return nest.row_guard.defined() ? if_then_else(nest.row_guard, s) : s;
}

Stmt compose(const StageNest& nest, const Attached& attached) {
  Stmt inner = nest.body;
  bool has_init = nest.init.defined();
  for (size_t i = nest.loops.size(); i-- > 0;) {
    if (nest.row_stores.defined() && nest.row_level == i + 1) inner = row_step(nest, inner);
    std::vector<Stmt> parts;
    auto it = attached.find(nest.loops[i].iv.get());
    if (it != attached.end()) parts = it->second;
    if (has_init && nest.init_level == i + 1) parts.push_back(init_nest(nest));
    parts.push_back(inner);
    if (has_init && nest.init_level == i + 1 && nest.finish.defined()) parts.push_back(nest.finish);
    inner = wrap_loop(nest.loops[i], seq(parts));
  }
  if (has_init && nest.init_level == 0) return seq({init_nest(nest), inner, nest.finish});
  return inner;
}

class Composer {
 public:
  Composer(const std::vector<StageNest>& nests, const ScheduleNode& s) : nests_(nests), s_(s) {}

  Stmt stage(const StageNest& nest) {
    Attached attached;
    for (const StageNest& p : nests_) {
      const StageNode& ps = *p.stage;
      if (ps.attach_type == AttachType::Scope && attach_parent(s_, ps) == nest.stage)
        attached[ps.attach_ivar.get()].push_back(stage(p));
    }
    return compose(nest, attached);
  }

 private:
  const std::vector<StageNest>& nests_;
  const ScheduleNode& s_;
};

}  // namespace

Stmt assemble_nest(const StageNest& nest) { return compose(nest, {}); }

Stmt attach_stages(const std::vector<StageNest>& nests, const LowerContext& ctx) {
  Composer c(nests, *ctx.sched.get());
  std::vector<Stmt> roots;
  for (const StageNest& nest : nests)
    if (nest.stage->attach_type == AttachType::Root) roots.push_back(c.stage(nest));
  return seq(roots);
}

}  // namespace te::lowering
