// Random schedules of small pipelines, each lowered and run with interpret() and the LLVM JIT against plain
// C++ over sizes that the random split factors seldom divide: splits, fuses, reorders,
// annotations and where the producer is computed (root, inlined, or at any loop).
#include <gtest/gtest.h>

#include <te/te.h>

#include <random>

#include "test_lower_util.h"

using namespace te;
using namespace lower_test;

namespace {

// Where a stage's loops run: inside a parallel or a vectorized loop of a consumer, the
// same annotation again would have no effect, and lower() refuses it.
struct Nest {
  bool in_parallel = false, in_vector = false;
};

// What shuffle_loops did: a description and the loops it annotated.
struct Shuffled {
  std::string what;
  IterVar parallel, vectorized;
};

// The nest of a producer computed at loop `at` of a consumer shuffled into `c` in `outer`.
Nest nest_at(const Shuffled& c, const Nest& outer, const IterVar& at) {
  Nest n = outer;
  n.in_parallel = n.in_parallel || c.parallel.defined();  // the parallel loop is the outermost
  n.in_vector = n.in_vector || (c.vectorized.defined() && c.vectorized.same_as(at));
  return n;
}

// Applies random loop transformations to a stage; annotates only what lower() accepts:
// vectorize and unroll loops of constant extent, no parallel or vector loop where an
// enclosing loop already is one.
Shuffled shuffle_loops(Schedule& s, const Tensor& t, std::mt19937& rng, bool allow_vector, Nest nest = {}) {
  Shuffled out;
  std::string& what = out.what;
  Stage st = s[t];
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  int steps = static_cast<int>(rng() % 4);
  for (int k = 0; k < steps; ++k) {
    std::vector<IterVar> leaves = st.leaf_iter_vars();
    switch (rng() % 3) {
      case 0: {
        IterVar iv = leaves[pick(leaves.size())];
        int factor = 1 + static_cast<int>(rng() % 5);
        if (rng() % 2)
          st.split(iv, factor);
        else
          st.split_nparts(iv, factor);
        what += " split(" + iv.name() + "," + std::to_string(factor) + ")";
        break;
      }
      case 1: {
        if (leaves.size() < 2) break;
        size_t p = pick(leaves.size() - 1);
        if (leaves[p].type() != leaves[p + 1].type()) break;
        st.fuse(leaves[p], leaves[p + 1]);
        what += " fuse(" + leaves[p].name() + ")";
        break;
      }
      case 2: {
        std::vector<IterVar> order = leaves;
        std::shuffle(order.begin(), order.end(), rng);
        st.reorder(order);
        what += " reorder";
        break;
      }
    }
  }
  std::vector<IterVar> leaves = st.leaf_iter_vars();
  const IterVar& inner = leaves.back();
  const bool constant = as_const_int(inner.dom().extent) != nullptr;
  const unsigned roll = rng() % 3;
  if (allow_vector && !nest.in_vector && constant && inner.type() == IterVarType::DataPar && roll == 0) {
    st.vectorize(inner);
    out.vectorized = inner;
    what += " vectorize(" + inner.name() + ")";
  } else if (constant && rng() % 3 == 0) {
    st.unroll(inner);
    what += " unroll(" + inner.name() + ")";
  }
  if (!nest.in_parallel && !nest.in_vector && leaves.size() > 1 && leaves[0].type() == IterVarType::DataPar &&
      rng() % 3 == 0) {
    st.parallel(leaves[0]);
    out.parallel = leaves[0];
    what += " parallel(" + leaves[0].name() + ")";
  }
  return out;
}

}  // namespace

TEST(LowerRandom, ElementwisePipelines) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    Var m("m"), n("n");
    Tensor A = placeholder({m, n + 1}, Float(32), "A");
    Tensor B = compute(
        {m, n + 1}, [&](Expr i, Expr j) { return A(i, j) * 2.0f + 1.0f; }, "B");
    Tensor C = compute(
        {m, n}, [&](Expr i, Expr j) { return B(i, j) + B(i, j + 1); }, "C");
    Schedule s = create_schedule({C});
    Shuffled c = shuffle_loops(s, C, rng, true);
    std::string what = c.what;
    int where = static_cast<int>(rng() % 3);
    if (where == 1) {
      s[B].compute_inline();
      what += " | B inline";
    } else if (where == 2) {
      std::vector<IterVar> leaves = s[C].leaf_iter_vars();
      IterVar at = leaves[rng() % leaves.size()];
      s[B].compute_at(s[C], at);
      what += " | B at " + at.name();
      what += " |" + shuffle_loops(s, B, rng, false, nest_at(c, {}, at)).what;
    }
    LoweredFunc f = lower(s, {A, C}, "pipeline");
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 7}, {6, 5}}) {
      NDArray a = input({rows, cols + 1}, trial), c = output({rows, cols});
      if (trial % 8 == 0)
        run_backends(f, {a, c});
      else
        interpret(f, {a, c});  // the JIT on a sample: each build costs ~50 ms
      auto av = a.to_vector<float>();
      std::vector<float> want;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          float b0 = av[static_cast<size_t>(i * (cols + 1) + j)] * 2.0f + 1.0f;
          float b1 = av[static_cast<size_t>(i * (cols + 1) + j + 1)] * 2.0f + 1.0f;
          want.push_back(b0 + b1);
        }
      expect_close(c.to_vector<float>(), want, 1e-6f, "trial " + std::to_string(trial) + ":" + what);
      if (HasFatalFailure() || HasFailure()) {
        ADD_FAILURE() << f;
        return;
      }
    }
  }
}

TEST(LowerRandom, ReductionPipelines) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    Var m("m"), n("n");
    Tensor A = placeholder({m, n}, Float(32), "A");
    Tensor B = compute(
        {m, n}, [&](Expr i, Expr j) { return A(i, j) * A(i, j); }, "B");
    IterVar k = reduce_axis({0, n}, "k");
    Tensor C = compute(
        {m}, [&](Expr i) { return sum(B(i, k), {k}); }, "C");
    Tensor D = compute(
        {m}, [&](Expr i) { return C(i) + 1.0f; }, "D");
    Schedule s = create_schedule({D});
    // Consumers first: where a producer runs decides which annotations it may take.
    Shuffled d = shuffle_loops(s, D, rng, true);
    std::string what = " D:" + d.what;
    Nest c_nest;
    if (rng() % 2) {
      std::vector<IterVar> leaves = s[D].leaf_iter_vars();
      IterVar at = leaves[rng() % leaves.size()];
      s[C].compute_at(s[D], at);
      c_nest = nest_at(d, {}, at);
      what += " | C at " + at.name();
    }
    Shuffled c = shuffle_loops(s, C, rng, true, c_nest);
    what += " | C:" + c.what;
    if (rng() % 2) {
      std::vector<IterVar> leaves = s[C].leaf_iter_vars();
      IterVar at = leaves[rng() % leaves.size()];
      s[B].compute_at(s[C], at);
      what += " | B at " + at.name();
    }
    LoweredFunc f = lower(s, {A, D}, "reduce");
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {4, 7}, {7, 3}}) {
      NDArray a = input({rows, cols}, trial), d = output({rows});
      if (trial % 8 == 0)
        run_backends(f, {a, d});
      else
        interpret(f, {a, d});
      auto av = a.to_vector<float>();
      std::vector<float> want;
      for (int64_t i = 0; i < rows; ++i) {
        float acc = 0;
        for (int64_t j = 0; j < cols; ++j)
          acc += av[static_cast<size_t>(i * cols + j)] * av[static_cast<size_t>(i * cols + j)];
        want.push_back(acc + 1.0f);
      }
      expect_close(d.to_vector<float>(), want, 1e-5f, "trial " + std::to_string(trial) + ":" + what);
      if (HasFailure()) {
        ADD_FAILURE() << f;
        return;
      }
    }
  }
}

TEST(LowerRandom, ThreadBoundPipelines) {
  // Every combination of block size, where B is computed (root, per block, per thread)
  // and whether the block's threads fetch B together.
  for (int threads : {4, 8}) {
    for (int where = 0; where < 3; ++where) {
      for (bool cooperative : {false, true}) {
        if (cooperative && where != 1) continue;
        Var m("m"), n("n");
        Tensor A = placeholder({m, n + 1}, Float(32), "A");
        Tensor B = compute(
            {m, n + 1}, [&](Expr i, Expr j) { return A(i, j) * 2.0f + 1.0f; }, "B");
        Tensor C = compute(
            {m, n}, [&](Expr i, Expr j) { return B(i, j) + B(i, j + 1); }, "C");
        Schedule s = create_schedule({C});
        IterVar tx = thread_axis("threadIdx.x");
        IterVar fused = s[C].fuse(C.axis(0), C.axis(1));
        auto [bo, bi] = s[C].split(fused, threads);
        s[C].bind(bo, thread_axis("blockIdx.x"));
        s[C].bind(bi, tx);
        if (where == 1) s[B].compute_at(s[C], bo);
        if (where == 2) s[B].compute_at(s[C], bi);
        if (cooperative) {
          IterVar bf = s[B].fuse(B.axis(0), B.axis(1));
          auto [t, rest] = s[B].split_nparts(bf, threads);
          s[B].bind(t, tx);
        }
        std::string what = "threads " + std::to_string(threads) + " where " + std::to_string(where) +
                           (cooperative ? " cooperative" : "");
        LoweredFunc f = lower(s, {A, C}, "gpu_pipeline");
        for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 7}, {6, 5}}) {
          NDArray a = input({rows, cols + 1}, threads + where), c = output({rows, cols});
          run_backends(f, {a, c});
          auto av = a.to_vector<float>();
          std::vector<float> want;
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
              want.push_back(av[static_cast<size_t>(i * (cols + 1) + j)] * 2.0f + 1.0f +
                             av[static_cast<size_t>(i * (cols + 1) + j + 1)] * 2.0f + 1.0f);
          expect_close(c.to_vector<float>(), want, 1e-6f, what);
          if (HasFailure()) {
            ADD_FAILURE() << f;
            return;
          }
        }
      }
    }
  }
}
