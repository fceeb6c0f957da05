// Helpers for the lowering tests: deterministic inputs, running a lowered function with
// interpret() and the LLVM JIT, and looking for nodes in loop IR.
#pragma once
#include <gtest/gtest.h>

#include <te/te.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "test_llvm_util.h"

namespace lower_test {

// Deterministic float32 values in [-1, 1) that differ between arrays (seed) and elements.
inline std::vector<float> values(int64_t count, int seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(((i * 37 + seed * 11) % 64) - 32) / 32.0f;
  return v;
}

inline int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline te::NDArray input(const std::vector<int64_t>& shape, int seed) {
  return te::NDArray::from_vector(values(product(shape), seed), shape);
}

inline te::NDArray output(const std::vector<int64_t>& shape) { return te::NDArray::empty(shape, te::Float(32)); }

// Expects got == want element by element, within tol (relative to max(1, |want|)).
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    float scale = std::max(1.0f, std::fabs(want[i]));
    ASSERT_LE(std::fabs(got[i] - want[i]), tol * scale)
        << what << ": element " << i << " is " << got[i] << ", expected " << want[i];
  }
}

// C = A (M x K) * B (K x N), row-major, in plain C++.
inline std::vector<float> matmul_reference(const std::vector<float>& a, const std::vector<float>& b, int M, int N,
                                           int K) {
  std::vector<float> c(size_t(M * N), 0.0f);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int q = 0; q < K; ++q) c[size_t(i * N + j)] += a[size_t(i * K + q)] * b[size_t(q * N + j)];
  return c;
}

// Counts the nodes of loop IR that satisfy a predicate.
class StmtCounter : public te::IRVisitor {
 public:
  std::function<bool(const te::Stmt&)> stmt_pred;
  std::function<bool(const te::Expr&)> expr_pred;
  int count = 0;
  void visit(const te::Stmt& s) override {
    if (s.defined() && stmt_pred && stmt_pred(s)) ++count;
    te::IRVisitor::visit(s);
  }
  void visit(const te::Expr& e) override {
    if (e.defined() && expr_pred && expr_pred(e)) ++count;
    te::IRVisitor::visit(e);
  }
};

inline int count_stmts(const te::Stmt& s, std::function<bool(const te::Stmt&)> pred) {
  StmtCounter c;
  c.stmt_pred = std::move(pred);
  c.visit(s);
  return c.count;
}

inline int count_exprs(const te::Stmt& s, std::function<bool(const te::Expr&)> pred) {
  StmtCounter c;
  c.expr_pred = std::move(pred);
  c.visit(s);
  return c.count;
}

// An if whose condition is likely(...): a bound guard.
inline bool is_guard(const te::Stmt& s) {
  const auto* n = s.as<te::IfThenElseNode>();
  if (!n) return false;
  const auto* c = n->cond.as<te::CallNode>();
  return c && c->op == te::Intrinsic::Likely;
}

inline int count_guards(const te::Stmt& s) { return count_stmts(s, is_guard); }

inline int count_kind(const te::Stmt& s, te::StmtKind k) {
  return count_stmts(s, [k](const te::Stmt& x) { return x.kind() == k; });
}

// True if e mentions a variable named `name`.
inline bool mentions(const te::Expr& e, const std::string& name) {
  StmtCounter c;
  c.expr_pred = [&](const te::Expr& x) {
    const auto* v = x.as<te::VarNode>();
    return v && v->name == name;
  };
  c.visit(e);
  return c.count > 0;
}

// Runs f with interpret() on args (the tests then check args against plain C++), and
// first through the LLVM JIT on copies, which must match the interpreter exactly. Loop IR
// with barriers (GPU schedules with shared memory) runs only in the interpreter: the CPU
// backend rejects barriers.
inline void run_backends(const te::LoweredFunc& f, const std::vector<te::Argument>& args) {
  StmtCounter barriers;
  barriers.stmt_pred = [](const te::Stmt& s) { return s.as<te::BarrierNode>() != nullptr; };
  barriers.visit(f.body);
  if (barriers.count == 0) te::llvm_test::expect_matches_interpreter(f, args);
  te::interpret(f, args);
}

// Runs f, a vector add over (A, B, C), on both backends (run_backends) for each
// length and compares C with a + b computed in C++.
inline void check_vector_add(const te::LoweredFunc& f, const std::string& what, const std::vector<int64_t>& lengths) {
  for (int64_t len : lengths) {
    te::NDArray a = input({len}, 1), b = input({len}, 2), c = output({len});
    run_backends(f, {a, b, c});
    auto av = a.to_vector<float>(), bv = b.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = av[i] + bv[i];
    expect_close(c.to_vector<float>(), want, 0, what + " n=" + std::to_string(len));
  }
}

}  // namespace lower_test
