#include "graph_schedule.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace te::fuzz {
namespace {

// The stages of a schedule with who reads whom (through the current operations, which
// cache_read, cache_write and rfactor rewrite).
struct StageGraph {
  std::vector<Stage> stages;  // producers before consumers
  std::vector<std::vector<size_t>> consumers;
  std::vector<bool> inlined;

  explicit StageGraph(const Schedule& s) : stages(s.stages()) {
    std::map<const OperationNode*, size_t> index;
    for (size_t i = 0; i < stages.size(); ++i) index[stages[i].op().get()] = i;
    consumers.resize(stages.size());
    inlined.assign(stages.size(), false);
    for (size_t j = 0; j < stages.size(); ++j)
      for (const Operation& in : stages[j].op()->inputs) {
        auto it = index.find(in.get());
        if (it != index.end()) consumers[it->second].push_back(j);
      }
  }

  // The stages that read stage i once inlined stages are substituted into their readers.
  std::vector<size_t> effective_consumers(size_t i) const {
    std::vector<size_t> out;
    for (size_t c : consumers[i]) {
      std::vector<size_t> more = inlined[c] ? effective_consumers(c) : std::vector<size_t>{c};
      for (size_t m : more)
        if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    }
    return out;
  }
};

bool is_compute(const Stage& st) { return st.op()->kind == OpKind::Compute; }
bool is_reduction(const Stage& st) { return !st.op()->reduce_axis.empty(); }

// The extent of a loop if its domain is a constant.
bool const_extent(const IterVar& iv, int64_t* out) {
  const int64_t* e = as_const_int(iv.dom().extent);
  if (e) *out = *e;
  return e != nullptr;
}

std::string names(const std::vector<IterVar>& ivs) {
  std::string s;
  for (size_t i = 0; i < ivs.size(); ++i) s += (i ? ", " : "") + ivs[i].name();
  return s;
}

// Where a stage's loops run. Inside a consumer's parallel or vectorized loop the same
// annotation again would have no effect, and lower() refuses it (check_loop_nesting).
struct Nest {
  bool in_parallel = false, in_vector = false;
};

// The loops of a stage that cpu_loops annotated.
struct Annotated {
  IterVar parallel, vectorized;
};

// The nest of a stage computed at loop `at` of `parent` (annotated as `a`, in nest `outer`).
Nest nest_at(const Stage& parent, const Annotated& a, const Nest& outer, const IterVar& at) {
  Nest n = outer;
  // The parent's leaves from the outermost down to `at` enclose the stage.
  for (const IterVar& leaf : parent.leaf_iter_vars()) {
    n.in_parallel = n.in_parallel || leaf.same_as(a.parallel);
    n.in_vector = n.in_vector || leaf.same_as(a.vectorized);
    if (leaf.same_as(at)) break;
  }
  return n;
}

// Random restructuring of a stage's loops, then annotations that lower() accepts where
// the stage runs (`nest`): one vectorized and one parallel loop at most, the parallel
// one outside the vectorized one.
Annotated cpu_loops(Rng& rng, Stage st, std::ostringstream& log, StepFilter& steps, const Nest& nest) {
  Annotated out;
  static const int kFactors[] = {1, 2, 3, 3, 4, 5, 7, 7};
  const std::string who = st.name() + ": ";
  // Loops whose extent is a constant wherever the stage runs: the inner loops of splits by
  // a constant factor. (A stage that is not an output gets its loops' extents from the
  // region its readers need, which need not be a constant even when the axis's is.)
  std::set<const IterVarNode*> constant_inner;
  int restructures = static_cast<int>(rng.below(4));
  for (int k = 0; k < restructures; ++k) {
    std::vector<IterVar> leaves = st.leaf_iter_vars();
    switch (rng.below(4)) {
      case 0: {
        IterVar iv = rng.pick(leaves);
        int f = rng.pick(kFactors);
        bool nparts = rng.chance(25);
        if (!steps.take()) break;
        auto [o, i] = nparts ? st.split_nparts(iv, f) : st.split(iv, f);
        if (!nparts) constant_inner.insert(i.get());
        log << who << (nparts ? "split_nparts(" : "split(") << iv.name() << ", " << f << ")\n";
        break;
      }
      case 1: {
        if (leaves.size() < 2) break;
        size_t p = rng.below(leaves.size() - 1);
        if (leaves[p].type() != leaves[p + 1].type() || !steps.take()) break;
        st.fuse(leaves[p], leaves[p + 1]);
        log << who << "fuse(" << leaves[p].name() << ", " << leaves[p + 1].name() << ")\n";
        break;
      }
      case 2: {
        std::vector<IterVar> order = leaves;
        rng.shuffle(order);
        if (!steps.take()) break;
        st.reorder(order);
        log << who << "reorder(" << names(order) << ")\n";
        break;
      }
      default: {
        if (leaves.size() < 2) break;
        size_t p = rng.below(leaves.size() - 1);
        int fx = rng.pick(kFactors), fy = rng.pick(kFactors);
        if (!steps.take()) break;
        auto [xo, yo, xi, yi] = st.tile(leaves[p], leaves[p + 1], fx, fy);
        constant_inner.insert(xi.get());
        constant_inner.insert(yi.get());
        log << who << "tile(" << leaves[p].name() << ", " << leaves[p + 1].name() << ", " << fx << ", " << fy << ")\n";
        break;
      }
    }
  }
  std::vector<IterVar> leaves = st.leaf_iter_vars();
  std::set<const IterVarNode*> annotated;
  auto small = [&](const IterVar& iv) {
    int64_t e;
    const bool constant = st.is_output() || constant_inner.count(iv.get());
    return constant && const_extent(iv, &e) && e <= 16 && !annotated.count(iv.get());
  };
  if (rng.chance(40) && !nest.in_vector) {
    std::vector<IterVar> cands;
    for (const IterVar& iv : leaves)
      if (iv.type() == IterVarType::DataPar && small(iv)) cands.push_back(iv);
    if (!cands.empty()) {
      IterVar iv = cands.back().same_as(leaves.back()) && rng.chance(70) ? cands.back() : rng.pick(cands);
      if (steps.take()) {
        st.vectorize(iv);
        out.vectorized = iv;
        annotated.insert(iv.get());
        log << who << "vectorize(" << iv.name() << ")\n";
      }
    }
  }
  if (rng.chance(30)) {
    std::vector<IterVar> cands;
    for (const IterVar& iv : leaves)
      if (small(iv)) cands.push_back(iv);
    if (!cands.empty()) {
      IterVar iv = rng.pick(cands);
      if (steps.take()) {
        st.unroll(iv);
        annotated.insert(iv.get());
        log << who << "unroll(" << iv.name() << ")\n";
      }
    }
  }
  if (rng.chance(35) && !nest.in_parallel && !nest.in_vector) {
    std::vector<IterVar> cands;
    for (const IterVar& iv : leaves) {
      if (out.vectorized.same_as(iv)) break;  // only loops outside the vectorized one
      if (iv.type() == IterVarType::DataPar && !annotated.count(iv.get())) cands.push_back(iv);
    }
    if (!cands.empty()) {
      IterVar iv = rng.chance(60) ? cands.front() : rng.pick(cands);
      if (steps.take()) {
        st.parallel(iv);
        out.parallel = iv;
        annotated.insert(iv.get());
        log << who << "parallel(" << iv.name() << ")\n";
      }
    }
  }
  return out;
}

std::vector<Tensor> reader_tensors(const StageGraph& g, const std::vector<size_t>& readers) {
  std::vector<Tensor> out;
  for (size_t r : readers) out.emplace_back(g.stages[r].op());
  return out;
}

}  // namespace

void schedule_for_cpu(Rng& rng, Schedule& s, const std::vector<Tensor>& computes, std::ostringstream& log,
                      StepFilter& steps) {
  // Stages that copy: cache_read of any tensor for some of its readers.
  if (rng.chance(30)) {
    StageGraph g(s);
    std::vector<size_t> cands;
    for (size_t i = 0; i < g.stages.size(); ++i)
      if (!g.consumers[i].empty()) cands.push_back(i);
    if (!cands.empty()) {
      size_t x = rng.pick(cands);
      std::vector<size_t> readers = g.consumers[x];
      if (readers.size() > 1 && rng.chance(50)) readers = {rng.pick(readers)};
      const char* scope = rng.chance(50) ? "global" : "local";
      if (steps.take()) {
        Tensor copy = s.cache_read(Tensor(g.stages[x].op()), scope, reader_tensors(g, readers));
        log << "cache_read(" << g.stages[x].name() << ", \"" << scope << "\", {";
        for (size_t r = 0; r < readers.size(); ++r) log << (r ? ", " : "") << g.stages[readers[r]].name();
        log << "}) -> " << copy.name() << "\n";
      }
    }
  }
  std::set<const OperationNode*> rewritten;
  for (const Tensor& t : computes) {
    if (!rng.chance(12) || !steps.take()) continue;
    Tensor local = s.cache_write(t, "local");
    rewritten.insert(t.op().get());
    log << "cache_write(" << t.name() << ", \"local\") -> " << local.name() << "\n";
  }
  for (const Tensor& t : computes) {
    if (rewritten.count(t.op().get()) || t.op()->reduce_axis.empty() || !rng.chance(12)) continue;
    Stage st = s[t];
    std::vector<IterVar> red;
    for (const IterVar& iv : st.leaf_iter_vars())
      if (iv.type() == IterVarType::Reduce) red.push_back(iv);
    IterVar k = rng.pick(red);
    int f = static_cast<int>(rng.range(1, 4));
    bool use_inner = rng.chance(50);
    int factor_axis = static_cast<int>(rng.range(0, t.ndim()));
    if (!steps.take()) continue;
    auto [ko, ki] = st.split(k, f);
    IterVar axis = use_inner ? ki : ko;
    Tensor rf = s.rfactor(t, axis, factor_axis);
    log << t.name() << ": split(" << k.name() << ", " << f << "); rfactor(" << axis.name() << ", " << factor_axis
        << ") -> " << rf.name() << "\n";
  }

  // Consumers before producers: a consumer's loops are final when a producer attaches.
  StageGraph g(s);
  std::vector<Nest> nest(g.stages.size());
  std::vector<Annotated> annotated(g.stages.size());
  for (size_t i = g.stages.size(); i-- > 0;) {
    Stage st = g.stages[i];
    if (!is_compute(st)) continue;
    if (!st.is_output()) {
      std::vector<size_t> eff = g.effective_consumers(i);
      int r = static_cast<int>(rng.below(100));
      if (!is_reduction(st) && r < 30) {
        if (steps.take()) {
          st.compute_inline();
          g.inlined[i] = true;
          log << st.name() << ": compute_inline()\n";
          continue;
        }
      } else if (eff.size() == 1 && r < 75) {
        Stage parent = g.stages[eff[0]];
        IterVar at = rng.pick(parent.leaf_iter_vars());
        if (steps.take()) {
          st.compute_at(parent, at);
          nest[i] = nest_at(parent, annotated[eff[0]], nest[eff[0]], at);
          log << st.name() << ": compute_at(" << parent.name() << ", " << at.name() << ")\n";
        }
      }
    }
    annotated[i] = cpu_loops(rng, st, log, steps, nest[i]);
  }
}

namespace {

// Fuses the data-parallel loops of a stage (they lead its leaf list when it has not been
// restructured) and splits the result by `threads`: (outer, inner).
std::pair<IterVar, IterVar> fuse_and_split(Stage st, int threads, std::ostringstream& log) {
  std::vector<IterVar> data;
  for (const IterVar& iv : st.leaf_iter_vars())
    if (iv.type() == IterVarType::DataPar) data.push_back(iv);
  IterVar fused = data.size() == 1 ? data[0] : st.fuse(data);
  auto [o, i] = st.split(fused, threads);
  log << st.name() << ": fuse(" << names(data) << "); split(" << fused.name() << ", " << threads << ")\n";
  return {o, i};
}

}  // namespace

void schedule_for_gpu(Rng& rng, Schedule& s, const std::vector<Tensor>& inputs, const std::vector<Tensor>& computes,
                      std::ostringstream& log) {
  static const int kThreads[] = {1, 2, 3, 4, 7, 8, 16, 32, 64};
  // Structure first. Outputs are always kernels, so their copies can be fixed now:
  // an input read by an output through shared memory, an output computed per thread
  // into local memory.
  std::set<const OperationNode*> forced_shared, forced_local;
  for (const Tensor& t : computes) {
    Stage st = s[t];
    if (!st.is_output()) continue;
    bool reads_shared = false;
    for (const Tensor& in : inputs) {
      bool reads = false;
      for (const Operation& op : st.op()->inputs) reads = reads || op == in.op();
      if (!reads || !rng.chance(25)) continue;
      Tensor copy = s.cache_read(in, "shared", {Tensor(st.op())});
      forced_shared.insert(copy.op().get());
      reads_shared = true;
      log << "cache_read(" << in.name() << ", \"shared\", {" << t.name() << "}) -> " << copy.name() << "\n";
    }
    // (An output whose reads go through shared memory keeps its stage: cache_write would
    // move those reads into the local stage, computed per thread.)
    if (rng.chance(20) && !reads_shared) {
      Tensor local = s.cache_write(t, "local");
      forced_local.insert(local.op().get());
      log << "cache_write(" << t.name() << ", \"local\") -> " << local.name() << "\n";
    }
  }

  StageGraph g(s);
  const size_t n = g.stages.size();
  std::vector<int> threads(n, 0);  // kernels: their thread count
  std::vector<IterVar> block_loop(n), thread_loop(n);
  std::vector<bool> per_thread(n, false);  // computed inside a thread of a kernel
  for (size_t i = n; i-- > 0;) {
    Stage st = g.stages[i];
    if (!is_compute(st)) continue;
    const bool shared_copy = forced_shared.count(st.op().get()) != 0;
    const bool local_copy = forced_local.count(st.op().get()) != 0;
    if (!st.is_output()) {
      std::vector<size_t> eff = g.effective_consumers(i);
      const bool one = eff.size() == 1;
      const size_t e = one ? eff[0] : 0;
      int r = static_cast<int>(rng.below(100));
      if (!shared_copy && !local_copy && !is_reduction(st) && r < 30) {
        st.compute_inline();
        g.inlined[i] = true;
        log << st.name() << ": compute_inline()\n";
        continue;
      }
      // Per block, in shared memory: the block's threads compute it together, split by
      // the kernel's actual thread count (its split may have been clamped to a smaller
      // extent). Not reductions: a shared accumulator needs a barrier in its loop, which
      // cannot sit in a loop that fewer threads than the block's run.
      if (one && threads[e] > 0 && (shared_copy || (!local_copy && !is_reduction(st) && r < 55))) {
        Stage parent = g.stages[e];
        int64_t block_threads = threads[e];
        const_extent(thread_loop[e], &block_threads);
        st.compute_at(parent, block_loop[e]);
        auto [o, in] = fuse_and_split(st, static_cast<int>(block_threads), log);
        st.bind(in, thread_axis("threadIdx.x"));
        log << st.name() << ": compute_at(" << parent.name() << ", " << block_loop[e].name() << "); bind(" << in.name()
            << ", threadIdx.x)\n";
        continue;
      }
      if (one && (threads[e] > 0 || per_thread[e]) && (local_copy || r < 80)) {
        // Per thread ("local"): at the consumer's thread loop, or anywhere inside it.
        Stage parent = g.stages[e];
        IterVar at = threads[e] > 0 ? thread_loop[e] : rng.pick(parent.leaf_iter_vars());
        st.compute_at(parent, at);
        per_thread[i] = true;
        log << st.name() << ": compute_at(" << parent.name() << ", " << at.name() << ")\n";
        if (rng.chance(30)) {
          IterVar last = st.leaf_iter_vars().back();
          int64_t ext;
          if (const_extent(last, &ext) && ext <= 16) {
            st.unroll(last);
            log << st.name() << ": unroll(" << last.name() << ")\n";
          }
        }
        continue;
      }
      // Copies into shared or local memory read by an output always find their place above.
      if (shared_copy || local_copy) throw std::logic_error("fuzz generator: no place for copy " + st.name());
    }
    // Its own kernel.
    threads[i] = rng.pick(kThreads);
    auto [bo, ti] = fuse_and_split(st, threads[i], log);
    st.bind(bo, thread_axis("blockIdx.x"));
    st.bind(ti, thread_axis("threadIdx.x"));
    block_loop[i] = bo;
    thread_loop[i] = ti;
    log << st.name() << ": bind(" << bo.name() << ", blockIdx.x); bind(" << ti.name() << ", threadIdx.x)\n";
  }
}

}  // namespace te::fuzz
