// The IR printer's text (golden strings) and structural equality.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include <te/te.h>

using namespace te;

namespace {
std::string str(const Expr& e) { return to_string(e); }
}  // namespace

TEST(PrintExpr, Immediates) {
  EXPECT_EQ(str(Expr(5)), "5");
  EXPECT_EQ(str(Expr(-5)), "-5");
  EXPECT_EQ(str(Expr(int64_t{5})), "int64(5)");
  EXPECT_EQ(str(make_const(Int(8), -3)), "int8(-3)");
  EXPECT_EQ(str(make_const(UInt(8), 255)), "uint8(255)");
  EXPECT_EQ(str(max_value(UInt(64))), "uint64(18446744073709551615)");
  EXPECT_EQ(str(min_value(Int(64))), "int64(-9223372036854775808)");
  EXPECT_EQ(str(const_true()), "true");
  EXPECT_EQ(str(const_false()), "false");
  EXPECT_EQ(str(Expr(0.5f)), "0.5f");
  EXPECT_EQ(str(Expr(1.0f)), "1.0f");
  EXPECT_EQ(str(Expr(-2.0f)), "-2.0f");
  EXPECT_EQ(str(Expr(0.1f)), "0.1f");  // shortest text that reads back as the float
  EXPECT_EQ(str(Expr(1e20f)), "1e+20f");
  EXPECT_EQ(str(Expr(0.5)), "0.5");
  EXPECT_EQ(str(Expr(1.0)), "1.0");
  EXPECT_EQ(str(Expr(0.1)), "0.1");
  EXPECT_EQ(str(Expr(-0.0)), "-0.0");
  EXPECT_EQ(str(make_const(Float(16), 0.5)), "float16(0.5)");
  EXPECT_EQ(str(make_const(Float(16), 3.0)), "float16(3.0)");
  EXPECT_EQ(str(max_value(Float(32))), "float32(inf)");
  EXPECT_EQ(str(min_value(Float(64))), "float64(-inf)");
  EXPECT_EQ(str(make_const(Float(32), std::nan(""))), "float32(nan)");
}

TEST(PrintExpr, FloatTextReadsBackExactly) {
  for (float f : {0.1f, 1.0f / 3.0f, 123456.789f, 1e-30f, 3.4028235e38f, 1.17549435e-38f, 16777217.0f}) {
    std::string s = str(Expr(f));
    ASSERT_EQ(s.back(), 'f') << s;
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), f) << s;
  }
  for (double d : {0.1, 1.0 / 3.0, 1e300, 5e-324, 2.0 / 7.0}) {
    std::string s = str(Expr(d));
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), d) << s;
  }
}

TEST(PrintExpr, Arithmetic) {
  Var x("x"), y("y");
  EXPECT_EQ(str(x + y), "(x + y)");
  EXPECT_EQ(str(x - y * 2), "(x - (y * 2))");
  EXPECT_EQ(str((x + y) * (x - 1)), "((x + y) * (x - 1))");
  EXPECT_EQ(str(x / 4), "(x / 4)");  // floor division
  EXPECT_EQ(str(x % 4), "(x % 4)");  // floor modulo
  EXPECT_EQ(str(truncdiv(x, y)), "truncdiv(x, y)");
  EXPECT_EQ(str(truncmod(x, 3)), "truncmod(x, 3)");
  EXPECT_EQ(str(min(x, y)), "min(x, y)");
  EXPECT_EQ(str(max(x, 0)), "max(x, 0)");
  EXPECT_EQ(str(-x), "(0 - x)");
  Var i("i.outer");
  EXPECT_EQ(str(i * 64 + x), "((i.outer * 64) + x)");
  Var l("l", Int(64));
  EXPECT_EQ(str(l + 1), "(l + int64(1))");
}

TEST(PrintExpr, LogicAndComparisons) {
  Var x("x"), y("y");
  Var p("p", Bool()), q("q", Bool());
  EXPECT_EQ(str(x < y), "(x < y)");
  EXPECT_EQ(str(x <= y), "(x <= y)");
  EXPECT_EQ(str(x > y), "(x > y)");
  EXPECT_EQ(str(x >= 3), "(x >= 3)");
  EXPECT_EQ(str(x == y), "(x == y)");
  EXPECT_EQ(str(x != y), "(x != y)");
  EXPECT_EQ(str(p && q), "(p && q)");
  EXPECT_EQ(str(p || !q), "(p || !q)");
  EXPECT_EQ(str(!(x < y)), "!(x < y)");
  EXPECT_EQ(str(select(x < y, x, y)), "select((x < y), x, y)");
  EXPECT_EQ(str(if_then_else(x < 4, x, 0)), "if_then_else((x < 4), x, 0)");
}

TEST(PrintExpr, CastsCallsAndLet) {
  Var x("x"), t("t");
  Var f("f", Float(32));
  EXPECT_EQ(str(cast(Float(32), x)), "float32(x)");
  EXPECT_EQ(str(cast(Int(64), x) * cast(Int(64), t)), "(int64(x) * int64(t))");
  EXPECT_EQ(str(floor(f)), "floor(f)");
  EXPECT_EQ(str(exp(f) + sqrt(f)), "(exp(f) + sqrt(f))");
  EXPECT_EQ(str(pow(f, 2.0f)), "pow(f, 2.0f)");
  EXPECT_EQ(str(fma(f, f, 1.0f)), "fma(f, f, 1.0f)");
  EXPECT_EQ(str(likely(x < 3)), "likely((x < 3))");
  EXPECT_EQ(str(f * 0.5f), "(f * 0.5f)");
  EXPECT_EQ(str(let(t, x + 1, t * t)), "(let t = (x + 1) in (t * t))");
}

TEST(PrintExpr, VectorsAndMemory) {
  Var i("i"), j("j");
  Buffer a("A", Float(32), {16, 16});
  Buffer flat("B", Float(32), {256});
  EXPECT_EQ(str(ramp(i, 1, 8)), "ramp(i, 1, 8)");
  EXPECT_EQ(str(broadcast(i, 4)), "broadcast(i, 4)");
  EXPECT_EQ(str(load(a, {i, j})), "A[i, j]");
  EXPECT_EQ(str(load(flat, {i * 16 + j})), "B[((i * 16) + j)]");
  Expr pred = ramp(i, 1, 8) < broadcast(Expr(100), 8);
  EXPECT_EQ(str(load(flat, {ramp(i, 1, 8)}, pred)), "B[ramp(i, 1, 8) if (ramp(i, 1, 8) < broadcast(100, 8))]");
  EXPECT_EQ(str(broadcast(Expr(1.5f), 4)), "broadcast(1.5f, 4)");
  EXPECT_EQ(str(cast(Float(32, 4), ramp(i, 2, 4))), "float32x4(ramp(i, 2, 4))");
}

TEST(PrintExpr, TensorsAndReductions) {
  Var n("n");
  Tensor A = placeholder({n, n}, Float(32), "A");
  IterVar k = reduce_axis({0, n}, "k");
  Var i("i");
  EXPECT_EQ(str(A(i, k)), "A(i, k)");
  EXPECT_EQ(str(sum(A(i, k), {k})), "sum(A(i, k), axis=[k])");
  EXPECT_EQ(str(max(A(i, k) * 2.0f, {k}, k < 4)), "max((A(i, k) * 2.0f), axis=[k], where=(k < 4))");
  Tensor B = compute(
      {n}, [&](Expr x) { return sum(A(x, k), {k}); }, "B");
  EXPECT_EQ(str(B.op()->body), "sum(A(i, k), axis=[k])");
}

TEST(PrintExpr, StreamOperatorMatchesToString) {
  Var x("x");
  std::ostringstream os;
  os << (x + 1) << ";" << Expr();
  EXPECT_EQ(os.str(), "(x + 1);<undefined>");
}

TEST(PrintStmt, LoopNest) {
  Var i("i"), j("j");
  Buffer a("A", Float(32), {64}), b("B", Float(32), {64}), c("C", Float(32), {64});
  Stmt body = store(c, load(a, {i * 8 + j}) + load(b, {i * 8 + j}), {i * 8 + j});
  Stmt s = for_loop(i, 0, 8, ForKind::Serial, for_loop(j, 0, 8, ForKind::Serial, body));
  EXPECT_EQ(to_string(s),
            "for (i, 0, 8) {\n"
            "  for (j, 0, 8) {\n"
            "    C[((i * 8) + j)] = (A[((i * 8) + j)] + B[((i * 8) + j)]);\n"
            "  }\n"
            "}\n");
}

TEST(PrintStmt, LoopKinds) {
  Var i("i"), tx("tx"), bx("bx");
  Buffer c("C", Int(32), {64});
  Stmt st = store(c, i, {i});
  EXPECT_EQ(to_string(for_loop(i, 0, 4, ForKind::Parallel, st)), "parallel for (i, 0, 4) {\n  C[i] = i;\n}\n");
  EXPECT_EQ(to_string(for_loop(i, 0, 4, ForKind::Vectorized, st)), "vectorized for (i, 0, 4) {\n  C[i] = i;\n}\n");
  EXPECT_EQ(to_string(for_loop(i, 0, 4, ForKind::Unrolled, st)), "unrolled for (i, 0, 4) {\n  C[i] = i;\n}\n");
  Stmt gpu = for_loop(bx, 0, 16, ForKind::ThreadBinding,
                      for_loop(tx, 0, 64, ForKind::ThreadBinding, store(c, tx, {tx}), "threadIdx.x"), "blockIdx.x");
  EXPECT_EQ(to_string(gpu),
            "launch_thread blockIdx.x (bx, 0, 16) {\n"
            "  launch_thread threadIdx.x (tx, 0, 64) {\n"
            "    C[tx] = tx;\n"
            "  }\n"
            "}\n");
  Var n("n");
  EXPECT_EQ(to_string(for_loop(i, n - 1, n * 2, ForKind::Serial, st)), "for (i, (n - 1), (n * 2)) {\n  C[i] = i;\n}\n");
}

TEST(PrintStmt, BranchesLetsAllocationsAndMore) {
  Var i("i"), x("x");
  Buffer c("C", Float(32), {16});
  Buffer sh("S", Float(32), {16, 16}, MemoryScope::Shared);
  Buffer loc("L", Int(8), {4}, MemoryScope::Local);
  Stmt st = store(c, 1.0f, {i});
  EXPECT_EQ(to_string(if_then_else(i < 4, st)), "if ((i < 4)) {\n  C[i] = 1.0f;\n}\n");
  EXPECT_EQ(to_string(if_then_else(i < 4, st, store(c, 2.0f, {i}))),
            "if ((i < 4)) {\n  C[i] = 1.0f;\n} else {\n  C[i] = 2.0f;\n}\n");
  EXPECT_EQ(to_string(if_then_else(i < 4, st, if_then_else(i < 8, barrier(), evaluate(i)))),
            "if ((i < 4)) {\n  C[i] = 1.0f;\n} else if ((i < 8)) {\n  barrier();\n} else {\n  evaluate(i);\n}\n");
  EXPECT_EQ(to_string(let_stmt(x, i * 2, store(c, cast(Float(32), x), {x}))), "let x = (i * 2);\nC[x] = float32(x);\n");
  EXPECT_EQ(to_string(allocate(sh, seq({store(sh, 0.0f, {i, i}), barrier()}))),
            "allocate S[float32 * 16 * 16] in shared {\n  S[i, i] = 0.0f;\n  barrier();\n}\n");
  EXPECT_EQ(to_string(allocate(loc, evaluate(0))), "allocate L[int8 * 4] in local {\n  evaluate(0);\n}\n");
  EXPECT_EQ(to_string(assert_stmt(i >= 0, "i must be \"non-negative\"\n", st)),
            "assert((i >= 0), \"i must be \\\"non-negative\\\"\\n\");\nC[i] = 1.0f;\n");
  Expr pred = ramp(i, 1, 4) < broadcast(Expr(10), 4);
  EXPECT_EQ(to_string(store(c, broadcast(Expr(0.0f), 4), {ramp(i, 1, 4)}, pred)),
            "C[ramp(i, 1, 4) if (ramp(i, 1, 4) < broadcast(10, 4))] = broadcast(0.0f, 4);\n");
}

TEST(PrintStmt, LoweredFunc) {
  Var n("n"), m("m"), i("i");
  Buffer a("A", Float(32), {n}), b("B", Float(32), {n}), c("C", Float(32), {n, 4});
  LoweredFunc f;
  f.name = "vadd";
  f.params = {Param{a, Var()}, Param{b, Var()}, Param{c, Var()}, Param{Buffer(), m}};
  f.body = for_loop(i, 0, n, ForKind::Serial, store(c, load(a, {i}) + load(b, {i}), {i, m}));
  EXPECT_EQ(to_string(f),
            "func vadd(A: float32[n], B: float32[n], C: float32[n, 4], m: int32) {\n"
            "  for (i, 0, n) {\n"
            "    C[i, m] = (A[i] + B[i]);\n"
            "  }\n"
            "}\n");
  std::ostringstream os;
  os << f;
  EXPECT_EQ(os.str(), to_string(f));
}

TEST(PrintStmt, DistinctVariablesWithOneNameGetSuffixes) {
  Var n("n"), loop_n("n"), inner_n("n");
  Buffer a("A", Float(32), {n});
  LoweredFunc f;
  f.name = "f";
  f.params = {Param{a, Var()}};
  f.body = for_loop(loop_n, 0, n, ForKind::Serial,
                    for_loop(inner_n, 0, 1, ForKind::Serial, store(a, load(a, {loop_n + inner_n}), {loop_n})));
  EXPECT_EQ(to_string(f),
            "func f(A: float32[n]) {\n"
            "  for (n_1, 0, n) {\n"
            "    for (n_2, 0, 1) {\n"
            "      A[n_1] = A[(n_1 + n_2)];\n"
            "    }\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(to_string(loop_n + n), "(n + n_1)");  // first seen keeps the name
}

TEST(Equality, Expressions) {
  Var x("x"), y("y");
  Var x2("x");  // same name, another variable
  EXPECT_TRUE(equal(x + y * 2, x + y * 2));
  EXPECT_FALSE(equal(x + y, y + x));
  EXPECT_FALSE(equal(x + 1, x2 + 1));
  EXPECT_FALSE(equal(x + 1, x + 2));
  EXPECT_FALSE(equal(x + 1, x - 1));
  EXPECT_FALSE(equal(Expr(1), Expr(int64_t{1})));  // types differ
  EXPECT_FALSE(equal(Expr(1.0f), Expr(1.0)));
  EXPECT_TRUE(equal(Expr(0.5f), Expr(0.5f)));
  EXPECT_FALSE(equal(Expr(0.0), Expr(-0.0)));
  EXPECT_TRUE(equal(make_const(Float(32), std::nan("")), make_const(Float(32), std::nan(""))));
  EXPECT_TRUE(equal(Expr(), Expr()));
  EXPECT_FALSE(equal(x, Expr()));
  EXPECT_TRUE(equal(cast(Float(32), x), cast(Float(32), x)));
  EXPECT_FALSE(equal(cast(Float(32), x), cast(Float(64), x)));
  EXPECT_TRUE(equal(select(x < y, x, y), select(x < y, x, y)));
  EXPECT_FALSE(equal(select(x < y, x, y), select(x <= y, x, y)));
  EXPECT_TRUE(equal(ramp(x, 1, 4), ramp(x, 1, 4)));
  EXPECT_FALSE(equal(ramp(x, 1, 4), ramp(x, 1, 8)));
  EXPECT_FALSE(equal(broadcast(x, 4), broadcast(x, 8)));
  EXPECT_TRUE(equal(min(x, y), min(x, y)));
  EXPECT_FALSE(equal(min(x, y), max(x, y)));
  EXPECT_FALSE(equal(x / y, truncdiv(x, y)));
  EXPECT_TRUE(equal(!(x < y), !(x < y)));
  EXPECT_FALSE(equal(if_then_else(x < 1, x, y), select(x < 1, x, y)));
  Var t("t");
  EXPECT_TRUE(equal(let(t, x, t + 1), let(t, x, t + 1)));
  EXPECT_FALSE(equal(let(t, x, t + 1), let(x2, x, x2 + 1)));
}

TEST(Equality, MemoryTensorsAndReductions) {
  Var i("i");
  Buffer a("A", Float(32), {16}), a2("A", Float(32), {16});
  EXPECT_TRUE(equal(load(a, {i}), load(a, {i})));
  EXPECT_FALSE(equal(load(a, {i}), load(a2, {i})));  // buffers by identity
  EXPECT_FALSE(equal(load(a, {ramp(i, 1, 4)}), load(a, {ramp(i, 1, 4)}, const_true(4))));
  Tensor A = placeholder({16}, Float(32), "A"), B = placeholder({16}, Float(32), "A");
  EXPECT_TRUE(equal(A(i), A(i)));
  EXPECT_FALSE(equal(A(i), B(i)));
  IterVar k = reduce_axis({0, 16}, "k"), k2 = reduce_axis({0, 16}, "k");
  EXPECT_TRUE(equal(sum(A(k), {k}), sum(A(k), {k})));
  EXPECT_FALSE(equal(sum(A(k), {k}), prod(A(k), {k})));
  EXPECT_FALSE(equal(sum(A(k), {k}), sum(A(k), {k2})));
  EXPECT_FALSE(equal(sum(A(k), {k}), sum(A(k), {k}, k < 3)));
}

TEST(Equality, Statements) {
  Var i("i"), j("j");
  Buffer c("C", Int(32), {16});
  auto loop = [&](Var v, int ext, ForKind kind) { return for_loop(v, 0, ext, kind, store(c, v, {v})); };
  EXPECT_TRUE(equal(loop(i, 4, ForKind::Serial), loop(i, 4, ForKind::Serial)));
  EXPECT_FALSE(equal(loop(i, 4, ForKind::Serial), loop(j, 4, ForKind::Serial)));
  EXPECT_FALSE(equal(loop(i, 4, ForKind::Serial), loop(i, 8, ForKind::Serial)));
  EXPECT_FALSE(equal(loop(i, 4, ForKind::Serial), loop(i, 4, ForKind::Parallel)));
  EXPECT_TRUE(equal(seq({barrier(), evaluate(i)}), seq({barrier(), evaluate(i)})));
  EXPECT_FALSE(equal(seq({barrier(), evaluate(i)}), seq({evaluate(i), barrier()})));
  EXPECT_FALSE(equal(seq({barrier(), evaluate(i)}), seq({barrier(), evaluate(i), barrier()})));
  EXPECT_TRUE(equal(if_then_else(i < 2, barrier()), if_then_else(i < 2, barrier())));
  EXPECT_FALSE(equal(if_then_else(i < 2, barrier()), if_then_else(i < 2, barrier(), barrier())));
  EXPECT_TRUE(equal(assert_stmt(i > 0, "m", barrier()), assert_stmt(i > 0, "m", barrier())));
  EXPECT_FALSE(equal(assert_stmt(i > 0, "m", barrier()), assert_stmt(i > 0, "n", barrier())));
  EXPECT_TRUE(equal(let_stmt(j, i, barrier()), let_stmt(j, i, barrier())));
  EXPECT_FALSE(equal(let_stmt(j, i, barrier()), let_stmt(j, i + 0, barrier())));
  Buffer s("S", Int(32), {4}, MemoryScope::Shared);
  EXPECT_TRUE(equal(allocate(s, barrier()), allocate(s, barrier())));
  EXPECT_FALSE(equal(allocate(s, barrier()), allocate(c, barrier())));
  EXPECT_FALSE(equal(Stmt(), barrier()));
  EXPECT_TRUE(equal(Stmt(), Stmt()));
}
