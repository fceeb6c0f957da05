// Check "loop nesting": annotations that would have no effect where the schedule put
// their loop are refused once the stages' nests are assembled (after "attach"):
//  - parallel inside a parallel or vectorized loop, or inside or around a GPU kernel (te's
//    thread pool runs one level of parallel loops, on the host);
//  - vectorize inside a vectorized loop (te vectorizes one loop of a nest);
//  - vectorize around a GPU kernel.
#include <fmt/format.h>

#include "lower/passes.h"

namespace te::lowering {

namespace {

class NestingChecker : public IRVisitor {
 public:
  explicit NestingChecker(const LowerContext& ctx) {
    for (const Stage& st : ctx.sched.stages())
      for (const IterVar& leaf : st.leaf_iter_vars()) stage_of_[leaf.var().get()] = st.name();
  }

 protected:
  void visit_for(const ForNode* n) override {
    const bool gpu = n->for_kind == ForKind::ThreadBinding && !n->thread_tag.empty();
    if (n->for_kind == ForKind::Parallel) {
      if (const ForNode* o = enclosing(ForKind::Parallel))
        refuse(n, "parallel", o, "parallel", "fuse the two loops and parallelize the fused loop");
      if (const ForNode* o = enclosing(ForKind::Vectorized))
        refuse(n, "parallel", o, "vectorized", "parallelize a loop outside the vectorized one");
      if (gpu_ != nullptr)
        refuse(n, "parallel", gpu_, "bound to " + gpu_->thread_tag,
               "GPU threads already run it in parallel: bind it to a thread axis instead");
    }
    if (n->for_kind == ForKind::Vectorized)
      if (const ForNode* o = enclosing(ForKind::Vectorized))
        refuse(n, "vectorized", o, "vectorized", "vectorize only the innermost of the two");
    if (gpu && gpu_ == nullptr) {
      for (ForKind k : {ForKind::Parallel, ForKind::Vectorized})
        if (const ForNode* o = enclosing(k))
          throw Error(
              fmt::format("lower: loop '{}' of stage '{}' is {}, but it contains the GPU kernel that "
                          "loop '{}' of stage '{}' starts ({}); a kernel launch is not split across "
                          "host threads or vector lanes: leave the host loop serial",
                          o->var.name(), stage(o), k == ForKind::Parallel ? "parallel" : "vectorized", n->var.name(),
                          stage(n), n->thread_tag));
    }
    const ForNode* saved_gpu = gpu_;
    if (gpu && gpu_ == nullptr) gpu_ = n;
    loops_.push_back(n);
    IRVisitor::visit_for(n);
    loops_.pop_back();
    gpu_ = saved_gpu;
  }

 private:
  const ForNode* enclosing(ForKind kind) const {
    for (const ForNode* f : loops_)
      if (f->for_kind == kind) return f;
    return nullptr;
  }
  std::string stage(const ForNode* f) const {
    auto it = stage_of_.find(f->var.get());
    return it == stage_of_.end() ? "?" : it->second;
  }
  [[noreturn]] void refuse(const ForNode* inner, const char* what, const ForNode* outer, const std::string& outer_is,
                           const char* fix) const {
    throw Error(
        fmt::format("lower: loop '{}' of stage '{}' is {}, but it runs inside loop '{}' of stage '{}', "
                    "which is {}; the inner annotation would have no effect: {}",
                    inner->var.name(), stage(inner), what, outer->var.name(), stage(outer), outer_is, fix));
  }

  std::map<const VarNode*, std::string> stage_of_;
  std::vector<const ForNode*> loops_;
  const ForNode* gpu_ = nullptr;  // the outermost GPU thread loop around the current one
};

}  // namespace

void check_loop_nesting(const Stmt& body, const LowerContext& ctx) {
  NestingChecker c(ctx);
  c.visit(body);
}

}  // namespace te::lowering
