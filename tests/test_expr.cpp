// Expression construction, the type rules and their error messages; tensors and graphs.
#include <gtest/gtest.h>

#include <cmath>

#include <te/te.h>

#include "expr/int_arith.h"
#include "test_util.h"

using namespace te;

TEST(DataType, NamesAndParse) {
  EXPECT_EQ(Float(32).to_string(), "float32");
  EXPECT_EQ(Int(64).to_string(), "int64");
  EXPECT_EQ(UInt(8).to_string(), "uint8");
  EXPECT_EQ(Bool().to_string(), "bool");
  EXPECT_EQ(Float(16, 8).to_string(), "float16x8");
  for (DataType t : {Float(16), Float(32), Float(64), Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32),
                     UInt(64), Bool(), Float(32, 4), Int(8, 64)})
    EXPECT_EQ(DataType::parse(t.to_string()), t);
  expect_error([] { DataType::parse("float8"); }, {"unknown data type 'float8'"});
  expect_error([] { DataType::parse("int32x0"); }, {"unknown data type 'int32x0'"});
  expect_error([] { DataType::parse("complex64"); }, {"complex64"});
  EXPECT_EQ(Bool().bytes(), 1);
  EXPECT_EQ(Float(16).bytes(), 2);
  EXPECT_EQ(Int(64, 4).element_of(), Int(64));
}

TEST(Expr, ImmediatesHaveTheirTypes) {
  EXPECT_EQ(Expr(1).dtype(), Int(32));
  EXPECT_EQ(Expr(int64_t{1}).dtype(), Int(64));
  EXPECT_EQ(Expr(1.5f).dtype(), Float(32));
  EXPECT_EQ(Expr(1.5).dtype(), Float(64));
  EXPECT_EQ(const_true().dtype(), Bool());
  EXPECT_EQ(*as_const_int(make_const(UInt(8), 300)), 300 - 256);
  EXPECT_EQ(*as_const_int(max_value(Int(8))), 127);
  EXPECT_EQ(*as_const_int(min_value(Int(16))), -32768);
  EXPECT_EQ(*as_const_int(max_value(UInt(64))), -1);  // all bits set
  EXPECT_TRUE(std::isinf(*as_const_float(max_value(Float(32)))));
  EXPECT_EQ(*as_const_float(make_const(Float(32), 0.1)), static_cast<double>(0.1f));
}

TEST(Expr, VarsDefaultToInt32) {
  Var n("n");
  EXPECT_EQ(n.dtype(), Int(32));
  EXPECT_EQ(n.name(), "n");
  Var m("m", Int(64));
  EXPECT_EQ(m.dtype(), Int(64));
  EXPECT_FALSE(Var("n").same_as(n));  // identity, not name
  expect_error([] { Var("v", Float(32, 4)); }, {"Var 'v'", "scalar", "float32x4"});
}

TEST(Expr, LiteralsTakeTheOtherOperandsType) {
  Var x("x", Int(16));
  EXPECT_EQ((x + 1).dtype(), Int(16));
  EXPECT_EQ((1 + x).dtype(), Int(16));
  Var f("f", Float(32));
  EXPECT_EQ((f * 0.5).dtype(), Float(32));  // double literal adapts to float32
  EXPECT_EQ((f + 2).dtype(), Float(32));
  Var u("u", UInt(8));
  EXPECT_EQ((u + 255).dtype(), UInt(8));
  expect_error([&] { (void)(u + 256); }, {"operator +", "literal 256", "uint8"});
  expect_error([&] { (void)(x * 70000); }, {"operator *", "70000", "int16"});
  // A float literal with an integer expression makes the result the literal's type.
  EXPECT_EQ((x * 0.5).dtype(), Float(64));
  EXPECT_EQ((x * 0.5f).dtype(), Float(32));
}

TEST(Expr, PromotionRules) {
  Var i8("a", Int(8)), i32("b", Int(32)), u16("c", UInt(16)), u32("d", UInt(32));
  Var f16("e", Float(16)), f32("f", Float(32)), f64("g", Float(64));
  EXPECT_EQ((i8 + i32).dtype(), Int(32));
  EXPECT_EQ((u16 + u32).dtype(), UInt(32));
  EXPECT_EQ((i8 + u16).dtype(), Int(16));
  EXPECT_EQ((u32 + i8).dtype(), Int(32));
  EXPECT_EQ((f32 + i32).dtype(), Float(32));
  EXPECT_EQ((u16 * f16).dtype(), Float(16));
  EXPECT_EQ((f32 + f64).dtype(), Float(64));
  EXPECT_EQ((f16 - f32).dtype(), Float(32));
  EXPECT_EQ((i32 < f32).dtype(), Bool());
  EXPECT_EQ(min(i8, i32).dtype(), Int(32));
  // The narrower side gets an explicit cast node.
  Expr sum8_32 = i8 + i32;
  auto* b = sum8_32.as<BinaryNode>();
  ASSERT_NE(b, nullptr);
  EXPECT_NE(b->a.as<CastNode>(), nullptr);
  EXPECT_TRUE(b->b.same_as(i32));
}

TEST(Expr, TypeErrorsNameBothTypes) {
  Var f("f", Float(32)), i("i"), p("p", Bool()), q("q", Bool());
  expect_error([&] { (void)(p + q); }, {"operator +", "bool", "arithmetic"});
  expect_error([&] { (void)(p + i); }, {"operator +", "bool", "int32"});
  expect_error([&] { (void)(i * p); }, {"operator *", "int32", "bool"});
  expect_error([&] { (void)(f % f); }, {"operator %", "float32 and float32"});
  expect_error([&] { (void)truncmod(f, 2); }, {"operator truncmod", "float32"});
  expect_error([&] { (void)(i && p); }, {"operator &&", "bool", "int32 and bool"});
  expect_error([&] { (void)(f || p); }, {"operator ||", "float32 and bool"});
  expect_error([&] { (void)!i; }, {"operator !", "int32"});
  expect_error([&] { (void)(p < q); }, {"operator <", "bool and bool"});
  expect_error([&] { (void)-p; }, {"unary -", "bool"});
  expect_error([&] { (void)(Expr() + 1); }, {"operator +", "undefined"});
  Var v4("v", Float(32));
  expect_error([&] { (void)(broadcast(v4, 4) + broadcast(v4, 8)); }, {"lane counts", "float32x4", "float32x8"});
}

TEST(Expr, CallsCheckTheirArguments) {
  Var f("f", Float(32)), i("i"), p("p", Bool());
  EXPECT_EQ(exp(f).dtype(), Float(32));
  EXPECT_EQ(pow(f, 2).dtype(), Float(32));
  EXPECT_EQ(fma(f, f, 1).dtype(), Float(32));
  EXPECT_TRUE(floor(i).same_as(i));  // rounding is the identity on integers
  EXPECT_EQ(abs(i).dtype(), Int(32));
  expect_error([&] { (void)exp(i); }, {"exp", "floating-point", "int32"});
  expect_error([&] { (void)sqrt(p); }, {"sqrt", "bool"});
  expect_error([&] { (void)pow(i, i); }, {"pow", "int32 and int32"});
  expect_error([&] { (void)select(i, f, f); }, {"select", "condition must be bool", "int32"});
  expect_error([&] { (void)if_then_else(f, 1, 2); }, {"if_then_else", "float32"});
  expect_error([&] { (void)likely(i); }, {"likely", "int32"});
  expect_error([&] { (void)abs(p); }, {"abs", "bool"});
  EXPECT_EQ(select(p, i, 2).dtype(), Int(32));
  EXPECT_EQ(if_then_else(i < 3, f, 0).dtype(), Float(32));
  EXPECT_EQ(if_then_else(i < 3, f, 0).as<CallNode>()->op, Intrinsic::IfThenElse);
  expect_error([&] { (void)let(Var("t", Int(64)), i, i); }, {"let t", "int64", "int32"});
}

TEST(Expr, CastsAndVectors) {
  Var i("i");
  EXPECT_EQ(cast(Float(32), i).dtype(), Float(32));
  EXPECT_TRUE(cast(Int(32), i).same_as(i));
  EXPECT_EQ(*as_const_int(cast(Int(8), Expr(200))), -56);
  EXPECT_EQ(*as_const_float(cast(Float(32), make_const(UInt(32), int64_t{4000000000}))), 4e9);
  Expr r = ramp(i, 1, 8);
  EXPECT_EQ(r.dtype(), Int(32, 8));
  EXPECT_EQ((r + 1).dtype(), Int(32, 8));  // scalar broadcast
  EXPECT_EQ(cast(Float(32), r).dtype(), Float(32, 8));
  EXPECT_EQ(broadcast(Expr(1.0f), 4).dtype(), Float(32, 4));
  expect_error([&] { (void)ramp(i, 1, 0); }, {"ramp", "lanes"});
  expect_error([&] { (void)broadcast(r, 2); }, {"broadcast", "scalar", "int32x8"});
  expect_error([&] { (void)cast(Float(32, 4), r); }, {"cast", "int32x8", "float32x4"});
  Buffer b("B", Float(32), {Expr(16)});
  EXPECT_EQ(load(b, {r}).dtype(), Float(32, 8));
  expect_error([&] { (void)load(b, {Var("x", Float(32))}); }, {"load from 'B'", "integers", "float32"});
}

TEST(Expr, IntegerConstantsFoldWithDefinedSemantics) {
  EXPECT_EQ(*as_const_int(Expr(-7) / Expr(2)), -4);  // floor division
  EXPECT_EQ(*as_const_int(Expr(-7) % Expr(2)), 1);   // floor modulo
  EXPECT_EQ(*as_const_int(truncdiv(-7, 2)), -3);
  EXPECT_EQ(*as_const_int(truncmod(-7, 2)), -1);
  EXPECT_EQ(*as_const_int(Expr(7) / Expr(0)), 0);
  EXPECT_EQ(*as_const_int(Expr(7) % Expr(0)), 0);
  Expr int_min = make_const(Int(32), int64_t{INT32_MIN});
  EXPECT_EQ(*as_const_int(int_min / Expr(-1)), INT32_MIN);
  EXPECT_EQ(*as_const_int(int_min % Expr(-1)), 0);
  EXPECT_EQ(*as_const_int(make_const(Int(32), int64_t{INT32_MAX}) + 1), INT32_MIN);  // wraps
  EXPECT_EQ(*as_const_int(min(Expr(3), Expr(-2))), -2);
}

TEST(IntArith, MatchesReferenceOnAllSmallInt8Pairs) {
  for (int a = -128; a < 128; ++a)
    for (int b = -128; b < 128; ++b) {
      DataType t = Int(8);
      int64_t fd = arith::floordiv(a, b, t), fm = arith::floormod(a, b, t);
      if (b == 0) {
        EXPECT_EQ(fd, 0);
        EXPECT_EQ(fm, 0);
        continue;
      }
      // floor identity a == b*q + r with r in [0, |b|) having b's sign, modulo wrapping.
      EXPECT_EQ(arith::wrap(b * fd + fm, t), a) << a << " " << b;
      if (fm != 0) {
        EXPECT_EQ(fm < 0, b < 0) << a << " " << b;
      }
      EXPECT_EQ(arith::truncdiv(a, b, t), arith::wrap(a / b, t));
      EXPECT_EQ(arith::truncmod(a, b, t), arith::wrap(a % b, t));
    }
  DataType u = UInt(64);
  EXPECT_EQ(arith::as_unsigned(arith::floordiv(-1, 2, u), u), UINT64_MAX / 2);
}

TEST(Tensor, PlaceholderAndCompute) {
  Var n("n");
  Tensor A = placeholder({n, 4}, Float(32), "A");
  EXPECT_EQ(A.ndim(), 2);
  EXPECT_EQ(A.dtype(), Float(32));
  EXPECT_TRUE(A.is_placeholder());
  Tensor B = compute(
      {n, 4}, [&](Expr i, Expr j) { return A(i, j) * 2; }, "B");
  EXPECT_EQ(B.dtype(), Float(32));
  EXPECT_EQ(B.axis(0).name(), "i");
  EXPECT_EQ(B.axis(1).name(), "j");
  ASSERT_EQ(B.op()->inputs.size(), 1u);
  EXPECT_EQ(B.op()->inputs[0], A.op());
  Tensor C = compute(
      {n}, [&](const std::vector<Var>& v) { return B(v[0], 0) + A(v[0], 1); }, "C");
  auto order = topo_sort({C});
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], A.op());
  EXPECT_EQ(order[1], B.op());
  EXPECT_EQ(order[2], C.op());
  Tensor D =
      compute({2, 3, 4, 5, 6, 7}, [](Expr a, Expr b, Expr c, Expr d, Expr e, Expr f) { return a + b + c + d + e + f; },
              "D", {"a", "b", "c", "d", "e", "f"});
  EXPECT_EQ(D.axis(5).name(), "f");
  EXPECT_EQ(D.dtype(), Int(32));
}

TEST(Tensor, Reductions) {
  Var n("n"), m("m");
  Tensor A = placeholder({n, m}, Float(32), "A");
  IterVar k = reduce_axis({0, m}, "k");
  Tensor S = compute(
      {n}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
  EXPECT_EQ(S.reduce_axis(0).name(), "k");
  EXPECT_EQ(S.op()->body.as<ReduceNode>()->reducer, Reducer::Sum);
  Tensor Mx = compute(
      {n}, [&](Expr i) { return max(A(i, k), {k}, k < 3); }, "Mx");
  EXPECT_EQ(Mx.op()->body.as<ReduceNode>()->reducer, Reducer::Max);
  EXPECT_TRUE(Mx.op()->body.as<ReduceNode>()->condition.defined());
  Tensor Mn = compute(
      {n}, [&](Expr i) { return min(A(i, k), {k}); }, "Mn");
  EXPECT_EQ(Mn.op()->body.as<ReduceNode>()->reducer, Reducer::Min);
  IterVar r1 = reduce_axis({0, 3}, "r1"), r2 = reduce_axis({0, 3}, "r2");
  Tensor P = compute(
      {n},
      [&](Expr i) {
        return prod(A(i + r1, r2), {r1, r2});
      },
      "P");
  EXPECT_EQ(P.op()->reduce_axis.size(), 2u);
  EXPECT_EQ(*as_const_int(reducer_identity(Reducer::Prod, Int(32))), 1);
}

TEST(Tensor, Errors) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  IterVar k = reduce_axis({0, n}, "k");
  expect_error([&] { (void)A(1, 2); }, {"tensor 'A'", "2 indices", "1 dimensions"});
  expect_error([&] { (void)A(Var("x", Float(32))); }, {"tensor 'A'", "index 0", "float32"});
  expect_error([&] { (void)placeholder({-1}, Float(32), "P"); }, {"placeholder 'P'", "negative"});
  expect_error([&] { (void)placeholder({Expr(1.5f)}, Float(32), "P"); }, {"placeholder 'P'", "float32"});
  expect_error([&] { (void)A.axis(0); }, {"tensor 'A'", "placeholder"});
  // An undefined (default-constructed) tensor: every accessor says so instead of crashing.
  const Tensor undefined;
  expect_error([&] { (void)undefined.shape(); }, {"Tensor::shape: the tensor is undefined (default-constructed)"});
  expect_error([&] { (void)undefined.name(); }, {"Tensor::name: the tensor is undefined"});
  expect_error([&] { (void)undefined.dtype(); }, {"Tensor::dtype: the tensor is undefined"});
  expect_error([&] { (void)undefined.ndim(); }, {"Tensor::shape: the tensor is undefined"});
  expect_error([&] { (void)undefined.is_placeholder(); }, {"Tensor::is_placeholder: the tensor is undefined"});
  expect_error([&] { (void)undefined.axis(0); }, {"Tensor::axis: the tensor is undefined"});
  expect_error([&] { (void)undefined.reduce_axis(0); }, {"Tensor::reduce_axis: the tensor is undefined"});
  expect_error(
      [&] {
        compute(
            {n}, [&](Expr i) { return sum(A(k), {k}) + A(i); }, "R");
      },
      {"compute 'R'", "whole body"});
  expect_error(
      [&] {
        compute(
            {n}, [&](Expr i) { return sum(A(i), {IterVar(Range(0, 4), Var("z"), IterVarType::DataPar)}); }, "R");
      },
      {"sum", "'z'", "not a reduction axis"});
  expect_error([&] { (void)sum(A(k), {}); }, {"sum", "at least one"});
  expect_error([&] { (void)sum(A(k), {k, k}); }, {"sum", "'k'", "listed twice"});
  expect_error([&] { (void)sum(A(k) > 0.0f, {k}); }, {"sum", "bool"});
  expect_error([&] { (void)reduce_axis({0.0f, 1.0f}, "kk"); }, {"reduce_axis 'kk'", "integer"});
  expect_error([&] { (void)thread_axis("threadIdx.w"); }, {"unknown thread tag 'threadIdx.w'"});
  expect_error(
      [&] {
        compute(
            {n}, [](const std::vector<Var>&) { return Expr(); }, "U");
      },
      {"compute 'U'", "undefined"});
  expect_error(
      [&] {
        compute(
            {n, n}, [&](Expr i) { return A(i); }, "W");
      },
      {"takes 1 index arguments", "2 dimensions"});
  EXPECT_EQ(parse_scope("shared"), MemoryScope::Shared);
  expect_error([] { parse_scope("texture"); }, {"unknown memory scope 'texture'"});
}

TEST(Stmt, BuildersCheckTypes) {
  Buffer b("B", Float(32), {Expr(4)});
  Var i("i");
  expect_error([&] { (void)store(b, Expr(1), {i}); }, {"store to 'B'", "int32", "float32"});
  expect_error([&] { (void)for_loop(i, 0, 4, ForKind::ThreadBinding, evaluate(0)); }, {"for i", "thread tag"});
  expect_error([&] { (void)if_then_else(i, evaluate(0)); }, {"if", "bool", "int32"});
  Stmt s = seq({store(b, Expr(1.0f), {0}), Stmt(), seq({store(b, Expr(2.0f), {1}), barrier()})});
  ASSERT_NE(s.as<SeqNode>(), nullptr);
  EXPECT_EQ(s.as<SeqNode>()->seq.size(), 3u);  // flattened, undefined dropped
}

TEST(Stmt, SubstituteAndMutatorSharing) {
  Var i("i"), j("j");
  Expr e = i * 4 + j;
  Expr r = substitute(e, {{j, Expr(3)}});
  auto* add = r.as<BinaryNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(is_const_int(add->b, 3));
  EXPECT_TRUE(add->a.same_as(e.as<BinaryNode>()->a));  // unchanged subtree stays shared
  Expr same = substitute(e, {{Var("k"), Expr(1)}});
  EXPECT_TRUE(same.same_as(e));
}

TEST(Error, InternalErrorsSayInternal) {
  try {
    TE_ICHECK(1 + 1 == 3, "arithmetic is broken");
    FAIL();
  } catch (const InternalError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("internal error"), std::string::npos);
    EXPECT_NE(m.find("test_expr.cpp"), std::string::npos);
    EXPECT_NE(m.find("arithmetic is broken"), std::string::npos);
  }
}
