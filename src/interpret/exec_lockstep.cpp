// Lockstep ("SIMT") execution of the threads of one GPU block, for threadIdx loops whose
// body contains a Barrier. Each thread has its own Frame; statements that contain a
// barrier run step by step for all active threads, and statements that contain none run
// for one thread after another (a valid interleaving: nothing inside synchronises).
#include <fmt/format.h>

#include <map>
#include <numeric>

#include "expr/int_arith.h"
#include "interpret/interpreter.h"
#include "interpret/memory.h"

namespace te::interp {
namespace {

std::vector<int> all_threads(size_t count) {
  std::vector<int> v(count);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

void Interpreter::run_threads_in_lockstep(const CStmt* loop, Frame& f, int64_t min, int64_t extent) {
  ThreadGroup g;
  g.threads.reserve(static_cast<size_t>(std::max<int64_t>(extent, 0)));
  for (int64_t k = 0; k < extent; ++k) {
    g.threads.push_back(f);
    g.threads.back().vars[static_cast<size_t>(loop->slot)] = int_scalar(arith::add(min, k, loop->var_type));
  }
  exec_lockstep(loop->children[0], g, all_threads(g.threads.size()));
}

void Interpreter::exec_lockstep(const CStmt* s, ThreadGroup& g, const std::vector<int>& active) {
  if (active.empty()) return;
  if (!s->has_barrier) {
    for (int t : active) exec(s, g.threads[static_cast<size_t>(t)]);
    return;
  }
  switch (s->kind) {
    case StmtKind::TensorIntrinsicCall: break;  // compiled as a Seq of its declaration
    case StmtKind::Seq:
      for (const CStmt* c : s->children) exec_lockstep(c, g, active);
      return;
    case StmtKind::LetStmt:
      exchange_shuffles(s, g, active);
      for (int t : active) {
        Frame& f = g.threads[static_cast<size_t>(t)];
        f.vars[static_cast<size_t>(s->slot)] = eval(s->value, f);
      }
      exec_lockstep(s->children[0], g, active);
      return;
    case StmtKind::Assert:
      for (int t : active)
        if (eval(s->value, g.threads[static_cast<size_t>(t)]).i == 0)
          throw Error(fmt::format("assertion failed: {}", *s->message));
      exec_lockstep(s->children[0], g, active);
      return;
    case StmtKind::IfThenElse: {
      // Threads that disagree split into two sets; a barrier inside either branch then
      // sees only part of the block and reports the divergence.
      std::vector<int> then_set, else_set;
      for (int t : active) (eval(s->value, g.threads[static_cast<size_t>(t)]).i ? then_set : else_set).push_back(t);
      exec_lockstep(s->children[0], g, then_set);
      if (s->children[1]) exec_lockstep(s->children[1], g, else_set);
      return;
    }
    case StmtKind::For:
      if (s->gpu_threads)
        lockstep_thread_loop(s, g, active);
      else
        lockstep_for(s, g, active);
      return;
    case StmtKind::Allocate: lockstep_allocate(s, g, active); return;
    case StmtKind::Barrier:
      if (!g.whole_block)
        throw Error(
            "barrier in divergent control flow: it is reached by only part of the "
            "threads of a block (an enclosing thread loop runs under a "
            "thread-dependent condition)");
      if (active.size() != g.threads.size())
        throw Error(
            fmt::format("barrier in divergent control flow: only {} of the {} threads "
                        "of the block reach it (a thread-dependent if condition or "
                        "loop trip count)",
                        active.size(), g.threads.size()));
      return;
    case StmtKind::Store:
      exchange_shuffles(s, g, active);
      for (int t : active) {
        Frame& f = g.threads[static_cast<size_t>(t)];
        if (s->value->type.is_scalar())
          exec_store(s, f);
        else
          exec_vector_store(s, f);
      }
      return;
    case StmtKind::Evaluate: break;
  }
  TE_ICHECK(false, "exec_lockstep: statement without a barrier reached the lockstep path");
}

void Interpreter::exchange_shuffles(const CStmt* s, ThreadGroup& g, const std::vector<int>& active) {
  auto warp = [](int64_t i) { return i >= 0 ? i / 32 : -((31 - i) / 32); };
  const size_t n = g.threads.size();
  for (const CExpr* e : s->shuffles) {
    // Each thread's linear index in the block, and the warps that are all here: a warp
    // with a thread that does not reach the shuffle would read an undefined value.
    std::vector<int64_t> id(n);
    std::map<int64_t, size_t> by_id;
    for (size_t t = 0; t < n; ++t) {
      id[t] = eval(e->c, g.threads[t]).i;
      if (!by_id.emplace(id[t], t).second)
        throw Error(fmt::format("warp shuffle: two threads of the block give the same thread index {}", id[t]));
    }
    std::vector<char> on(n, 0);
    for (int t : active) on[static_cast<size_t>(t)] = 1;
    for (size_t t = 0; t < n; ++t)
      if (!on[t])
        for (int a : active)
          if (warp(id[t]) == warp(id[static_cast<size_t>(a)]))
            throw Error(
                fmt::format("warp shuffle in divergent control flow: thread {} of warp {} does not "
                            "reach it while thread {} does",
                            id[t], warp(id[t]), id[static_cast<size_t>(a)]));
    std::vector<Scalar> value(n);
    std::vector<int64_t> delta(n);
    for (int t : active) {
      Frame& f = g.threads[static_cast<size_t>(t)];
      value[static_cast<size_t>(t)] = eval(e->a, f);
      delta[static_cast<size_t>(t)] = eval(e->b, f).i;
    }
    for (int t : active) {
      const size_t k = static_cast<size_t>(t);
      const int64_t src = id[k] + delta[k];
      auto it = by_id.find(src);
      bool same_warp = it != by_id.end() && warp(src) == warp(id[k]);
      g.threads[k].shuffled[static_cast<size_t>(e->slot)] = same_warp ? value[it->second] : value[k];
    }
  }
}

void Interpreter::lockstep_for(const CStmt* s, ThreadGroup& g, const std::vector<int>& active) {
  // Each thread has its own bounds; in iteration k only the threads with k < extent run,
  // so a trip count that differs between threads shows up at the next barrier.
  std::vector<int64_t> mins, extents;
  int64_t max_extent = 0;
  for (int t : active) {
    Frame& f = g.threads[static_cast<size_t>(t)];
    mins.push_back(eval(s->min, f).i);
    extents.push_back(eval(s->extent, f).i);
    max_extent = std::max(max_extent, extents.back());
  }
  std::vector<int> running;
  for (int64_t k = 0; k < max_extent; ++k) {
    running.clear();
    for (size_t a = 0; a < active.size(); ++a) {
      if (k >= extents[a]) continue;
      g.threads[static_cast<size_t>(active[a])].vars[static_cast<size_t>(s->slot)] =
          int_scalar(arith::add(mins[a], k, s->var_type));
      running.push_back(active[a]);
    }
    exec_lockstep(s->children[0], g, running);
  }
}

void Interpreter::lockstep_thread_loop(const CStmt* s, ThreadGroup& g, const std::vector<int>& active) {
  // A nested thread axis (threadIdx.y around threadIdx.x): every active thread of g
  // becomes `extent` threads of a new group.
  ThreadGroup inner;
  inner.whole_block = g.whole_block && active.size() == g.threads.size();
  for (int t : active) {
    Frame& f = g.threads[static_cast<size_t>(t)];
    int64_t min = eval(s->min, f).i;
    int64_t extent = eval(s->extent, f).i;
    for (int64_t k = 0; k < extent; ++k) {
      inner.threads.push_back(f);
      inner.threads.back().vars[static_cast<size_t>(s->slot)] = int_scalar(arith::add(min, k, s->var_type));
    }
  }
  exec_lockstep(s->children[0], inner, all_threads(inner.threads.size()));
}

void Interpreter::lockstep_allocate(const CStmt* s, ThreadGroup& g, const std::vector<int>& active) {
  std::vector<std::unique_ptr<BufferStorage>> storage;
  auto frame = [&](int t) -> Frame& { return g.threads[static_cast<size_t>(t)]; };
  const size_t slot = static_cast<size_t>(s->slot);
  if (per_thread_scope(s->buffer->scope)) {
    // Registers / local memory, and warp fragments (whose thread here is a warp): one copy
    // per thread.
    for (int t : active) {
      storage.push_back(std::make_unique<BufferStorage>());
      allocate_storage(storage.back().get(), s->buffer, eval_shape(s, frame(t)));
      frame(t).buffers[slot] = storage.back().get();
    }
  } else {
    // Shared (and global) memory: one copy the whole block sees.
    std::vector<int64_t> shape = eval_shape(s, frame(active.front()));
    for (int t : active)
      if (eval_shape(s, frame(t)) != shape)
        throw Error(
            fmt::format("the shape of {} buffer '{}' differs between the threads of a "
                        "block",
                        scope_name(s->buffer->scope), s->buffer->name));
    storage.push_back(std::make_unique<BufferStorage>());
    allocate_storage(storage.back().get(), s->buffer, shape);
    for (int t : active) frame(t).buffers[slot] = storage.back().get();
  }
  exec_lockstep(s->children[0], g, active);
  for (int t : active) frame(t).buffers[slot] = nullptr;
}

}  // namespace te::interp
