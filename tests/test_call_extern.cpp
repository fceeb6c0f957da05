// call_extern: a C function outside te, called from the loop IR. Each backend is
// compared with interpret() (which runs the host functions registered with
// register_extern) and with plain C++: the JIT resolving functions from this executable
// (linked with ENABLE_EXPORTS) and from a library it never links (tests/extern_lib,
// named in BuildOptions::extern_libraries), objects and shared libraries linked by `cc`,
// and the CUDA source with a user header. Every error path is checked by its message.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_emulation/extern_kernels.h"
#include "cuda_emulation/harness.h"
#include "te/runtime/c_runtime_api.h"
#include "te/te.h"
#include "c_program_util.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;
using namespace te::c_program_test;

// ---- The functions the JIT finds in this executable (exported: ENABLE_EXPORTS) ----

namespace {
std::atomic<int> g_negative_sqrt_calls{0};  // ext_checked_sqrt called on x < 0
std::atomic<int> g_counted_calls{0};        // ext_counted called at all
}  // namespace

extern "C" {
float ext_leaky_relu(float x, float slope) { return x > 0.0f ? x : slope * x; }
double ext_poly(double x, int32_t k) { return x * static_cast<double>(k) + 1.0; }
// One parameter of every narrow type: the C ABI's widening must reach the function.
int64_t ext_mix(int8_t a, uint8_t b, int16_t c, uint16_t d, bool e, uint32_t f) {
  return static_cast<int64_t>(a) * 1000000 + static_cast<int64_t>(b) * 10000 + static_cast<int64_t>(c) * 7 +
         static_cast<int64_t>(d) * 3 + (e ? 5 : -5) + static_cast<int64_t>(f);
}
int8_t ext_negate_i8(int8_t v) { return static_cast<int8_t>(-v); }
uint16_t ext_swap_bytes(uint16_t v) { return static_cast<uint16_t>((v >> 8) | (v << 8)); }
bool ext_is_odd(int64_t v) { return (v & 1) != 0; }
uint64_t ext_hash(uint64_t v) { return (v ^ (v >> 31)) * 0x9E3779B97F4A7C15ull; }
int32_t ext_seven() { return 7; }
float ext_checked_sqrt(float x) {
  if (x < 0) g_negative_sqrt_calls.fetch_add(1);
  return std::sqrt(x);
}
float ext_counted(float x) {
  g_counted_calls.fetch_add(1);
  return x + 1.0f;
}
// The library's ext_priority returns x + 2000: given the library, the JIT takes its.
int32_t ext_priority(int32_t x) { return x + 1000; }
}

namespace {

// interpret() runs the same functions.
void register_all() {
  register_extern("ext_leaky_relu", ext_leaky_relu);
  register_extern("ext_poly", ext_poly);
  register_extern("ext_mix", ext_mix);
  register_extern("ext_negate_i8", ext_negate_i8);
  register_extern("ext_swap_bytes", ext_swap_bytes);
  register_extern("ext_is_odd", ext_is_odd);
  register_extern("ext_hash", ext_hash);
  register_extern("ext_seven", ext_seven);
  register_extern("ext_checked_sqrt", ext_checked_sqrt);
  register_extern("ext_counted", ext_counted);
}

class CallExtern : public ::testing::Test {
 protected:
  void SetUp() override { register_all(); }
};

// ---- The expression ----

TEST_F(CallExtern, PrintsWithItsTypeAndNameAndComparesByName) {
  Var x("x", Float(32));
  Expr c = call_extern(Float(32), "ext_leaky_relu", {x, 0.5f});
  EXPECT_EQ(to_string(c), "call_extern(float32, \"ext_leaky_relu\", x, 0.5f)");
  EXPECT_EQ(c.dtype(), Float(32));
  EXPECT_TRUE(equal(c, call_extern(Float(32), "ext_leaky_relu", {x, 0.5f})));
  EXPECT_FALSE(equal(c, call_extern(Float(32), "ext_other", {x, 0.5f})));
  EXPECT_FALSE(equal(c, call_extern(Float(32), "ext_leaky_relu", {x, 0.25f})));
  EXPECT_EQ(to_string(call_extern(Int(32), "ext_seven", {})), "call_extern(int32, \"ext_seven\")");
  // Simplification reaches the arguments and keeps the call (and its name).
  Var i("i");
  Expr s = simplify(call_extern(Int(64), "ext_hash2", {i + 1 - 1, cast(Int(64), i) * 1}));
  EXPECT_EQ(to_string(s), "call_extern(int64, \"ext_hash2\", i, int64(i))");
  // Nothing is folded: the value of a constant call is unknown.
  EXPECT_EQ(to_string(simplify(call_extern(Int(32), "ext_seven", {}) + 0)), "call_extern(int32, \"ext_seven\")");
  // Substitution (every IRMutator) keeps the name.
  Expr sub = substitute(call_extern(Float(32), "ext_leaky_relu", {x, x}), {{x, Expr(2.0f)}});
  EXPECT_EQ(to_string(sub), "call_extern(float32, \"ext_leaky_relu\", 2.0f, 2.0f)");
}

TEST_F(CallExtern, BuilderErrorsNameTheProblem) {
  Var x("x", Float(32)), h("h", Float(16));
  expect_error([&] { call_extern(Float(32), "1abc", {x}); }, {"call_extern", "'1abc'", "not a C identifier"});
  expect_error([&] { call_extern(Float(32), "my-func", {x}); }, {"'my-func'", "not a C identifier"});
  expect_error([&] { call_extern(Float(32), "", {x}); }, {"call_extern", "not a C identifier"});
  expect_error([&] { call_extern(Float(16), "f", {x}); }, {"call_extern 'f'", "result type float16", "float32"});
  expect_error([&] { call_extern(Float(32), "f", {x, h}); }, {"call_extern 'f'", "argument 1", "float16"});
  expect_error([&] { call_extern(Float(32, 4), "f", {x}); }, {"call_extern 'f'", "float32x4", "vector"});
  expect_error([&] { call_extern(Float(32), "f", {broadcast(x, 4)}); }, {"argument 0", "float32x4", "vector"});
  expect_error([&] { call_extern(Float(32), "f", {x, Expr()}); }, {"call_extern 'f'", "argument 1 is undefined"});
  expect_error([&] { call_extern(Handle(), "f", {x}); }, {"call_extern 'f'", "result type handle"});
  expect_error([&] { call_extern(Void(), "f", {x}); }, {"call_extern 'f'", "result type"});
  expect_error([&] { call_extern(Int(24), "f", {x}); }, {"call_extern 'f'", "result type int24"});
}

// ---- interpret() ----

// C[i] = leaky_relu(A[i], slope) over n elements.
LoweredFunc leaky_func(const std::string& name = "leaky", ForKind kind = ForKind::Serial) {
  Var n("n"), i("i"), slope("slope", Float(32));
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Stmt body = for_loop(i, 0, n, kind, store(C, call_extern(Float(32), "ext_leaky_relu", {load(A, {i}), slope}), {i}));
  return make_func(name, {buffer_param(A), buffer_param(C), scalar_param(slope)}, body);
}

std::vector<float> leaky_reference(const std::vector<float>& a, float slope) {
  std::vector<float> c;
  for (float x : a) c.push_back(x > 0 ? x : slope * x);
  return c;
}

TEST_F(CallExtern, InterpretCallsTheRegisteredHostFunction) {
  NDArray a = random_array<float>({33}, 1), c = NDArray::empty({33}, Float(32));
  interpret(leaky_func(), {a, c, 0.25f});
  EXPECT_EQ(c.to_vector<float>(), leaky_reference(a.to_vector<float>(), 0.25f));
  // Any callable: a lambda replaces the earlier registration.
  register_extern("ext_leaky_relu", [](float x, float s) { return x > 0 ? x * 2.0f : s; });
  interpret(leaky_func(), {a, c, 0.25f});
  for (int64_t k = 0; k < 33; ++k) {
    float x = a.to_vector<float>()[k];
    EXPECT_EQ(c.to_vector<float>()[k], x > 0 ? x * 2.0f : 0.25f);
  }
  register_extern("ext_leaky_relu", ext_leaky_relu);
}

TEST_F(CallExtern, HostFunctionResultsAreBroughtToTheCallsType) {
  // The raw form: a float32 result computed in double is rounded; an int8 one wrapped.
  HostFunction third;
  third.ret = Float(32);
  third.params = {Float(32)};
  third.fn = [](const ExternValue* args) {
    ExternValue r;
    r.f = args[0].f / 3.0;
    return r;
  };
  register_extern("ext_third", third);
  HostFunction wide;
  wide.ret = Int(8);
  wide.params = {Int(32)};
  wide.fn = [](const ExternValue* args) {
    ExternValue r;
    r.i = args[0].i;
    return r;
  };
  register_extern("ext_wide", wide);
  Var i("i");
  Buffer F("F", Float(32), {4}), B("B", Int(8), {4});
  LoweredFunc f = make_func("rounding", {buffer_param(F), buffer_param(B)},
                            serial(i, 0, 4,
                                   seq({store(F, call_extern(Float(32), "ext_third", {cast(Float(32), i + 1)}), {i}),
                                        store(B, call_extern(Int(8), "ext_wide", {i * 100}), {i})})));
  NDArray fo = NDArray::empty({4}, Float(32)), bo = NDArray::empty({4}, Int(8));
  interpret(f, {fo, bo});
  EXPECT_EQ(fo.to_vector<float>(), (std::vector<float>{static_cast<float>(1 / 3.0), static_cast<float>(2 / 3.0), 1.0f,
                                                       static_cast<float>(4 / 3.0)}));
  EXPECT_EQ(bo.to_vector<int8_t>(), (std::vector<int8_t>{0, 100, static_cast<int8_t>(200), 44}));
  EXPECT_TRUE(unregister_extern("ext_third"));
  EXPECT_FALSE(unregister_extern("ext_third"));
  EXPECT_TRUE(unregister_extern("ext_wide"));
}

TEST_F(CallExtern, InterpretErrors) {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  auto one_call = [&](Expr value) {
    return make_func("calls", {buffer_param(A), buffer_param(C)}, serial(i, 0, n, store(C, value, {i})));
  };
  NDArray a = random_array<float>({4}, 2), c = NDArray::empty({4}, Float(32));
  expect_error(
      [&] {
        interpret(one_call(call_extern(Float(32), "ext_nowhere", {load(A, {i})})), {a, c});
      },
      {"interpret 'calls'", "call_extern 'ext_nowhere' has no host function registered with te::register_extern",
       "float32(float32)"});
  // A registered function of another signature: the call's types are checked.
  expect_error(
      [&] {
        interpret(one_call(call_extern(Float(32), "ext_poly", {load(A, {i}), i})), {a, c});
      },
      {"call_extern 'ext_poly' is called as float32(float32, int32)",
       "registered with te::register_extern is float64(float64, int32)"});
  // Checked before anything runs, even where no iteration reaches the call.
  LoweredFunc never = make_func("never", {buffer_param(A), buffer_param(C)},
                                serial(i, 0, 0, store(C, call_extern(Float(32), "ext_nowhere", {}), {i})));
  expect_error([&] { interpret(never, {a, c}); }, {"'ext_nowhere'", "register_extern"});
  expect_error([] { register_extern("2x", [](float x) { return x; }); }, {"register_extern", "'2x'", "C identifier"});
  HostFunction empty;
  empty.ret = Float(32);
  expect_error([&] { register_extern("ext_empty", empty); }, {"register_extern 'ext_empty'", "empty"});
  HostFunction half_fn;
  half_fn.ret = Float(16);
  half_fn.fn = [](const ExternValue*) { return ExternValue{}; };
  expect_error([&] { register_extern("ext_half", half_fn); }, {"register_extern 'ext_half'", "result type float16"});
}

// ---- The JIT: functions of this executable ----

TEST_F(CallExtern, JitCallsAFunctionOfTheProcess) {
  for (ForKind kind : {ForKind::Serial, ForKind::Parallel}) {
    LoweredFunc f = leaky_func(kind == ForKind::Serial ? "leaky" : "leaky_parallel", kind);
    for (int64_t n : {1, 17, 1000}) {
      NDArray a = random_array<float>({n}, static_cast<uint32_t>(n));
      std::vector<Argument> out = expect_matches_interpreter(f, {a, NDArray::empty({n}, Float(32)), 0.125f});
      EXPECT_EQ(out[1].array().to_vector<float>(), leaky_reference(a.to_vector<float>(), 0.125f));
    }
  }
}

// Every scalar type through the C ABI, both ways: narrow arguments are widened by the
// caller (a negative int8 stays negative, a uint16 above 32767 stays positive).
TEST_F(CallExtern, JitPassesEveryScalarTypeAsC) {
  Var n("n"), i("i");
  Buffer I8("i8", Int(8), {n}), U8("u8", UInt(8), {n}), I16("i16", Int(16), {n}), U16("u16", UInt(16), {n}),
      B("b", Bool(), {n}), U32("u32", UInt(32), {n}), I64("i64", Int(64), {n}), U64("u64", UInt(64), {n}),
      D("d", Float(64), {n});
  Buffer Mix("mix", Int(64), {n}), Neg("neg", Int(8), {n}), Swap("swap", UInt(16), {n}), Odd("odd", Bool(), {n}),
      Hash("hash", UInt(64), {n}), Poly("poly", Float(64), {n}), Seven("seven", Int(32), {n});
  Stmt body = serial(i, 0, n,
                     seq({store(Mix,
                                call_extern(Int(64), "ext_mix",
                                            {load(I8, {i}), load(U8, {i}), load(I16, {i}), load(U16, {i}), load(B, {i}),
                                             load(U32, {i})}),
                                {i}),
                          store(Neg, call_extern(Int(8), "ext_negate_i8", {load(I8, {i})}), {i}),
                          store(Swap, call_extern(UInt(16), "ext_swap_bytes", {load(U16, {i})}), {i}),
                          store(Odd, call_extern(Bool(), "ext_is_odd", {load(I64, {i})}), {i}),
                          store(Hash, call_extern(UInt(64), "ext_hash", {load(U64, {i})}), {i}),
                          store(Poly, call_extern(Float(64), "ext_poly", {load(D, {i}), cast(Int(32), i) - 3}), {i}),
                          store(Seven, call_extern(Int(32), "ext_seven", {}) + i, {i})}));
  std::vector<Param> params;
  for (const Buffer& b : {I8, U8, I16, U16, B, U32, I64, U64, D, Mix, Neg, Swap, Odd, Hash, Poly, Seven})
    params.push_back(buffer_param(b));
  LoweredFunc f = make_func("types", params, body);
  const int64_t len = 64;
  std::vector<Argument> args = {
      random_array<int8_t>({len}, 1),   random_array<uint8_t>({len}, 2),  random_array<int16_t>({len}, 3),
      random_array<uint16_t>({len}, 4), random_array<bool>({len}, 5),     random_array<uint32_t>({len}, 6),
      random_array<int64_t>({len}, 7),  random_array<uint64_t>({len}, 8), random_array<double>({len}, 9)};
  for (DataType t : {Int(64), Int(8), UInt(16), Bool(), UInt(64), Float(64), Int(32)})
    args.emplace_back(NDArray::empty({len}, t));
  std::vector<Argument> out = expect_matches_interpreter(f, args);
  // Plain C++.
  auto i8 = args[0].array().to_vector<int8_t>();
  auto u8 = args[1].array().to_vector<uint8_t>();
  auto i16 = args[2].array().to_vector<int16_t>();
  auto u16 = args[3].array().to_vector<uint16_t>();
  auto b = args[4].array().to_vector<bool>();
  auto u32 = args[5].array().to_vector<uint32_t>();
  auto i64 = args[6].array().to_vector<int64_t>();
  auto u64 = args[7].array().to_vector<uint64_t>();
  auto d = args[8].array().to_vector<double>();
  for (int64_t k = 0; k < len; ++k) {
    size_t s = static_cast<size_t>(k);
    EXPECT_EQ(out[9].array().to_vector<int64_t>()[s], ext_mix(i8[s], u8[s], i16[s], u16[s], b[s], u32[s])) << k;
    EXPECT_EQ(out[10].array().to_vector<int8_t>()[s], ext_negate_i8(i8[s])) << k;
    EXPECT_EQ(out[11].array().to_vector<uint16_t>()[s], ext_swap_bytes(u16[s])) << k;
    EXPECT_EQ(out[12].array().to_vector<bool>()[s], ext_is_odd(i64[s])) << k;
    EXPECT_EQ(out[13].array().to_vector<uint64_t>()[s], ext_hash(u64[s])) << k;
    EXPECT_EQ(out[14].array().to_vector<double>()[s], ext_poly(d[s], static_cast<int32_t>(k) - 3)) << k;
    EXPECT_EQ(out[15].array().to_vector<int32_t>()[s], 7 + k) << k;
  }
}

// A stage whose body calls an extern function, vectorized: one call per lane. Under a
// vector if_then_else only the lanes that take a side call it (interpret() too).
TEST_F(CallExtern, VectorizedLoopsCallOncePerLiveLane) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor C = compute(
      {n},
      [&](Expr i) {
        return call_extern(Float(32), "ext_leaky_relu", {A(i), 0.5f});
      },
      "C");
  Tensor R = compute(
      {n},
      [&](Expr i) { return if_then_else(A(i) >= 0.0f, call_extern(Float(32), "ext_checked_sqrt", {A(i)}), -1.0f); },
      "R");
  Schedule s = create_schedule({C, R});
  s[C].vectorize(s[C].split(C.axis(0), 8).second);
  s[R].vectorize(s[R].split(R.axis(0), 8).second);
  LoweredFunc f = lower(s, {A, C, R}, "vector_calls");
  std::string ir = to_string(f);
  EXPECT_NE(ir.find("call_extern(float32x8, \"ext_leaky_relu\""), std::string::npos) << ir;
  EXPECT_NE(ir.find("call_extern(float32x8, \"ext_checked_sqrt\""), std::string::npos) << ir;
  for (int64_t len : {64, 29}) {
    NDArray a = random_array<float>({len}, 11);
    g_negative_sqrt_calls = 0;
    std::vector<Argument> out =
        expect_matches_interpreter(f, {a, NDArray::empty({len}, Float(32)), NDArray::empty({len}, Float(32))});
    EXPECT_EQ(g_negative_sqrt_calls.load(), 0) << "a lane not taking the if_then_else side called the function";
    EXPECT_EQ(out[1].array().to_vector<float>(), leaky_reference(a.to_vector<float>(), 0.5f));
    std::vector<float> r = out[2].array().to_vector<float>(), av = a.to_vector<float>();
    for (int64_t k = 0; k < len; ++k) EXPECT_EQ(r[k], av[k] >= 0 ? std::sqrt(av[k]) : -1.0f) << k;
  }
}

// Predicated stores (hand-built IR) compute their value only for the lanes they store:
// a scalar store behind its predicate, a vector store's extern calls lane by lane.
TEST_F(CallExtern, PredicatedStoresCallOnlyForStoredLanes) {
  Var n("n"), i("i"), v("v");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Expr even = truncmod(i, 2) == 0;
  LoweredFunc scalar =
      make_func("every_other", {buffer_param(A), buffer_param(C)},
                serial(i, 0, n, store(C, call_extern(Float(32), "ext_counted", {load(A, {i})}), {i}, even)));
  Expr idx = ramp(v * 8, 1, 8), live = idx < broadcast(n, 8);
  Expr call(std::make_shared<const CallNode>(Float(32, 8), Intrinsic::Extern, std::vector<Expr>{load(A, {idx}, live)},
                                             "ext_counted"));
  LoweredFunc vec = make_func("vector_tail", {buffer_param(A), buffer_param(C)},
                              serial(v, 0, (n + 7) / 8, store(C, call, {idx}, live)));
  const int64_t len = 21;
  NDArray a = random_array<float>({len}, 3);
  for (bool jit : {false, true}) {
    NDArray c = NDArray::empty({len}, Float(32));
    g_counted_calls = 0;
    if (jit)
      build(scalar)("every_other")(a, c);
    else
      interpret(scalar, {a, c});
    EXPECT_EQ(g_counted_calls.load(), 11) << (jit ? "JIT" : "interpret");
    g_counted_calls = 0;
    if (jit)
      build(vec)("vector_tail")(a, c);
    else
      interpret(vec, {a, c});
    EXPECT_EQ(g_counted_calls.load(), len) << (jit ? "JIT" : "interpret");
    EXPECT_EQ(c.to_vector<float>()[20], a.to_vector<float>()[20] + 1.0f);
  }
}

// An index an extern function computes is checked at run time, as a gather's is.
TEST_F(CallExtern, IndicesFromExternCallsAreChecked) {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  LoweredFunc f =
      make_func("gather", {buffer_param(A), buffer_param(C)},
                serial(i, 0, n, store(C, load(A, {call_extern(Int(32), "ext_priority", {i})}), {i})));  // i + 1000
  NDArray a = random_array<float>({10}, 1), c = NDArray::empty({10}, Float(32));
  expect_error([&] { build(f)("gather")(a, c); }, {"gather", "out-of-bounds load from buffer 'A'"});
}

// ---- The JIT: a named library ----

TEST_F(CallExtern, JitCallsFunctionsOfANamedLibrary) {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), X("X", Int(32), {n}), Y("Y", Int(32), {n});
  Buffer C("C", Float(32), {n}), G("G", Int(32), {n}), P("P", Int(32), {n});
  LoweredFunc f =
      make_func("lib_calls",
                {buffer_param(A), buffer_param(X), buffer_param(Y), buffer_param(C), buffer_param(G), buffer_param(P)},
                serial(i, 0, n,
                       seq({store(C, call_extern(Float(32), "ext_lib_affine", {load(A, {i})}), {i}),
                            store(G, call_extern(Int(32), "ext_lib_gcd", {load(X, {i}), load(Y, {i})}), {i}),
                            store(P, call_extern(Int(32), "ext_priority", {i}), {i})})));
  BuildOptions options = exact_options();
  options.extern_libraries = {TE_EXTERN_LIB};
  const int64_t len = 40;
  NDArray a = random_array<float>({len}, 1);
  std::vector<int32_t> x, y;
  for (int64_t k = 0; k < len; ++k) {
    x.push_back(static_cast<int32_t>(k * 12 - 200));
    y.push_back(static_cast<int32_t>(k * 18 + 6));
  }
  NDArray c = NDArray::empty({len}, Float(32)), g = NDArray::empty({len}, Int(32)), p = NDArray::empty({len}, Int(32));
  Module m = build(f, options);
  m("lib_calls")(a, NDArray::from_vector(x, {len}), NDArray::from_vector(y, {len}), c, g, p);
  for (int64_t k = 0; k < len; ++k) {
    size_t s = static_cast<size_t>(k);
    EXPECT_EQ(c.to_vector<float>()[s], 3.0f * a.to_vector<float>()[s] + 0.5f) << k;
    int32_t u = std::abs(x[s]), w = std::abs(y[s]);
    while (w != 0) std::swap(u, w), w %= u;
    EXPECT_EQ(g.to_vector<int32_t>()[s], u) << k;
    EXPECT_EQ(p.to_vector<int32_t>()[s], static_cast<int32_t>(k) + 2000) << "the library comes before the process";
  }
  // The same kernel without the library: ext_priority comes from this executable, and
  // the library's own functions are nowhere.
  LoweredFunc own = make_func("own_priority", {buffer_param(P)},
                              serial(i, 0, n, store(P, call_extern(Int(32), "ext_priority", {i}), {i})));
  NDArray q = NDArray::empty({3}, Int(32));
  build(own)("own_priority")(q);
  EXPECT_EQ(q.to_vector<int32_t>(), (std::vector<int32_t>{1000, 1001, 1002}));
  expect_error([&] { build(f, exact_options()); }, {"call_extern 'ext_lib_affine'", "not defined in the process"});
}

// A bare file name is found by the dynamic loader's search, as dlopen does.
TEST_F(CallExtern, JitLoadsALibraryByFileName) {
  Var n("n"), i("i");
  Buffer A("A", Float(64), {n}), C("C", Float(64), {n});
  LoweredFunc f = make_func("cube_roots", {buffer_param(A), buffer_param(C)},
                            serial(i, 0, n, store(C, call_extern(Float(64), "cbrt", {load(A, {i})}), {i})));
  BuildOptions options;
  options.extern_libraries = {"libm.so.6"};
  NDArray a = NDArray::from_vector(std::vector<double>{-27, 0, 8, 2}, {4}), c = NDArray::empty({4}, Float(64));
  build(f, options)("cube_roots")(a, c);
  // libm's cbrt at run time (the compiler would fold cbrt(-27.0) to the exact -3; glibc
  // gives -3.0000000000000004).
  volatile double inputs[] = {-27, 0, 8, 2};
  std::vector<double> expected;
  for (double x : inputs) expected.push_back(std::cbrt(x));
  EXPECT_EQ(c.to_vector<double>(), expected);
}

TEST_F(CallExtern, JitErrorsAtBuildTime) {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  auto one_call = [&](const std::string& name, Expr value) {
    return make_func(name, {buffer_param(A), buffer_param(C)}, serial(i, 0, n, store(C, value, {i})));
  };
  LoweredFunc nowhere = one_call("nowhere", call_extern(Float(32), "ext_nowhere", {load(A, {i})}));
  expect_error([&] { build(nowhere); }, {"build: call_extern 'ext_nowhere' (called by 'nowhere' as float32(float32))",
                                         "not defined in the process", "extern \"C\"", "-rdynamic"});
  BuildOptions with_lib;
  with_lib.extern_libraries = {TE_EXTERN_LIB};
  expect_error([&] { build(nowhere, with_lib); },
               {"call_extern 'ext_nowhere'", "defined neither in", TE_EXTERN_LIB, "nor in the process"});
  BuildOptions missing;
  missing.extern_libraries = {"/nonexistent/libte_nothing.so"};
  expect_error([&] { build(leaky_func(), missing); },
               {"build: cannot load '/nonexistent/libte_nothing.so' (BuildOptions::extern_libraries)"});
  // One name, two C signatures.
  Expr twice = call_extern(Float(32), "ext_leaky_relu", {load(A, {i}), 0.5f}) +
               call_extern(Float(32), "ext_leaky_relu", {load(A, {i}), 0.5});
  expect_error([&] { build(one_call("twice", twice)); },
               {"call_extern 'ext_leaky_relu' is called as float32(float32, float32)", "float32(float32, float64)",
                "one signature"});
  // A kernel's own name.
  LoweredFunc self = one_call("ext_counted", call_extern(Float(32), "ext_counted", {load(A, {i})}));
  expect_error([&] { build(self); }, {"call_extern 'ext_counted'", "the name of a function of this build"});
  expect_error([&] { export_object(self, "/tmp/te_never_written.o"); }, {"the name of a function of this build"});
  // In an object an extern call names the C symbol itself: `expf` as double(double)
  // beside te's exp() on float32, which calls libm's float expf(float), in either order.
  for (bool extern_first : {true, false}) {
    Expr te_exp = exp(load(A, {i}));
    Expr mine = cast(Float(32), call_extern(Float(64), "expf", {cast(Float(64), load(A, {i}))}));
    LoweredFunc both = one_call("both", extern_first ? mine + te_exp : te_exp + mine);
    expect_error([&] { export_object(both, "/tmp/te_never_written.o"); }, {"build", "'expf'", "libm"});
  }
  // The failed builds left nothing behind: the good kernel still builds and runs.
  NDArray a = random_array<float>({5}, 4), c = NDArray::empty({5}, Float(32));
  build(leaky_func())("leaky")(a, c, 0.5f);
  EXPECT_EQ(c.to_vector<float>(), leaky_reference(a.to_vector<float>(), 0.5f));
}

// A build is cached with its libraries: the same IR with another library list compiles again.
TEST_F(CallExtern, TheCacheKeepsLibrariesApart) {
  Var n("n"), i("i");
  Buffer P("P", Int(32), {n});
  LoweredFunc f = make_func("priority", {buffer_param(P)},
                            serial(i, 0, n, store(P, call_extern(Int(32), "ext_priority", {i}), {i})));
  BuildOptions lib;
  lib.extern_libraries = {TE_EXTERN_LIB};
  Module own = build(f), from_lib = build(f, lib);
  NDArray p = NDArray::empty({2}, Int(32)), q = NDArray::empty({2}, Int(32));
  own("priority")(p);
  from_lib("priority")(q);
  EXPECT_EQ(p.to_vector<int32_t>(), (std::vector<int32_t>{1000, 1001}));
  EXPECT_EQ(q.to_vector<int32_t>(), (std::vector<int32_t>{2000, 2001}));
}

// ---- Ahead of time ----

// The object leaves the extern function undefined; a C program that defines it links
// the object and libte_runtime and gets what interpret() gets.
TEST_F(CallExtern, ObjectCallsAFunctionTheProgramDefines) {
  ScratchDir scratch("te_extern");
  const std::string& dir = scratch.path();
  LoweredFunc f = leaky_func("leaky_aot");
  export_object(f, dir + "/kernel.o", exact_options());
  export_header(f, dir + "/kernel.h");
  ASSERT_EQ(run("nm -u " + dir + "/kernel.o", dir + "/nm.log"), 0);
  EXPECT_NE(read(dir + "/nm.log").find("ext_leaky_relu"), std::string::npos) << read(dir + "/nm.log");
  std::ofstream(dir + "/main.c") << R"(
#include <stdio.h>
#include "kernel.h"
float ext_leaky_relu(float x, float slope) { return x > 0.0f ? x : slope * x; }
int main(void) {
  float a[9], c[9];
  for (int i = 0; i < 9; ++i) a[i] = (float)i - 4.5f;
  if (leaky_aot(a, c, 9, 0.25f) != 0) { printf("failed: %s\n", te_get_last_error()); return 1; }
  for (int i = 0; i < 9; ++i) printf("%.9g\n", c[i]);
  return 0;
}
)";
  std::string rt = runtime_dir();
  std::string cc = std::string("cc") + kSanitize + " -std=c99 -Wall -Werror -I" + dir + " " + dir + "/main.c " + dir +
                   "/kernel.o -L" + rt + " -lte_runtime -Wl,-rpath," + rt + " -lm -o " + dir + "/prog";
  ASSERT_EQ(run(cc, dir + "/cc.log"), 0) << cc << "\n" << read(dir + "/cc.log");
  ASSERT_EQ(run(dir + "/prog", dir + "/run.log"), 0) << read(dir + "/run.log");
  std::vector<float> a;
  for (int k = 0; k < 9; ++k) a.push_back(static_cast<float>(k) - 4.5f);
  NDArray c = NDArray::empty({9}, Float(32));
  interpret(f, {NDArray::from_vector(a, {9}), c, 0.25f});
  std::string expected;
  for (float x : c.to_vector<float>()) expected += fmt::format("{:.9g}\n", x);
  EXPECT_EQ(read(dir + "/run.log"), expected);
}

// export_library links the named libraries (found again through its rpath); a name no
// library defines stays undefined for the loading process: this executable exports
// ext_leaky_relu.
TEST_F(CallExtern, SharedLibraryLinksTheNamedLibraries) {
  ScratchDir scratch("te_extern");
  const std::string& dir = scratch.path();
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n}), D("D", Float(32), {n});
  LoweredFunc f =
      make_func("lib_kernel", {buffer_param(A), buffer_param(C), buffer_param(D)},
                serial(i, 0, n,
                       seq({store(C, call_extern(Float(32), "ext_lib_affine", {load(A, {i})}), {i}),
                            store(D, call_extern(Float(32), "ext_leaky_relu", {load(A, {i}), 0.5f}), {i})})));
  BuildOptions options = exact_options();
  options.extern_libraries = {TE_EXTERN_LIB};
  export_library(f, dir + "/libkernel.so", options);
  ASSERT_EQ(run("readelf -d " + dir + "/libkernel.so", dir + "/readelf.log"), 0);
  std::string dynamic = read(dir + "/readelf.log");
  EXPECT_NE(dynamic.find("libte_test_extern_lib.so"), std::string::npos) << dynamic;
  void* handle = dlopen((dir + "/libkernel.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using Kernel = int32_t (*)(float*, float*, float*, int32_t);
  auto kernel = reinterpret_cast<Kernel>(dlsym(handle, "lib_kernel"));
  ASSERT_NE(kernel, nullptr);
  std::vector<float> a = {-2.0f, -0.5f, 0.0f, 1.5f}, c(4), d(4);
  ASSERT_EQ(kernel(a.data(), c.data(), d.data(), 4), 0);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(c[k], 3.0f * a[k] + 0.5f);
    EXPECT_EQ(d[k], ext_leaky_relu(a[k], 0.5f));
  }
  dlclose(handle);
  // Without the library, its function stays undefined and the library cannot load here.
  export_library(f, dir + "/libnolib.so", exact_options());
  EXPECT_EQ(dlopen((dir + "/libnolib.so").c_str(), RTLD_NOW | RTLD_LOCAL), nullptr);
  expect_error(
      [&] {
        BuildOptions bad = exact_options();
        bad.extern_libraries = {"libte_no_such_library_anywhere.so"};
        export_library(f, dir + "/libbad.so", bad);
      },
      {"export_library"});
}

// Cross targets load nothing: the libraries are the target's, not the host's.
TEST_F(CallExtern, ForeignObjectsLoadNothing) {
  BuildOptions cross;
  cross.target.triple = "aarch64-linux-gnu";
  cross.extern_libraries = {"/nonexistent/aarch64/libmine.so"};
  try {
    describe_target(cross);
  } catch (const Error&) {
    GTEST_SKIP() << "LLVM has no AArch64 target here";
  }
  ScratchDir scratch("te_extern");
  const std::string& dir = scratch.path();
  export_object(leaky_func(), dir + "/k.o", cross);
  ASSERT_EQ(run("nm -u " + dir + "/k.o", dir + "/nm.log"), 0);
  EXPECT_NE(read(dir + "/nm.log").find("ext_leaky_relu"), std::string::npos);
}

// ---- CUDA source ----

LoweredFunc gpu_leaky(const std::string& name = "gpu_leaky") {
  Var n("n"), slope("slope", Float(32));
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Stmt body = cuda_test::grid_1d(n, 64, [&](Expr i) {
    return store(C, call_extern(Float(32), "ext_leaky_relu", {load(A, {i}), slope}), {i});
  });
  return make_func(name, {buffer_param(A), buffer_param(C), scalar_param(slope)}, body);
}

TEST_F(CallExtern, CudaSourceCopiesTheHeaderInAndCallsTheFunction) {
  CudaModule m = build_cuda(gpu_leaky(), cuda_test::extern_options());
  const std::string& src = m.source();
  std::string header = cuda_test::read_file(cuda_test::extern_device_header());
  EXPECT_NE(src.find("// ---- CudaOptions::extern_headers: " + cuda_test::extern_device_header()), std::string::npos);
  EXPECT_NE(src.find("__device__ inline float ext_leaky_relu(float x, float slope)"), std::string::npos) << src;
  EXPECT_EQ(src.find("#pragma once"), std::string::npos) << "an inlined header must not keep #pragma once";
  EXPECT_NE(src.find("C[(bx * 64) + tx] = ext_leaky_relu(A[(bx * 64) + tx], slope);"), std::string::npos) << src;
  // Before the kernels, after te's preamble.
  EXPECT_LT(src.find("#include <cstdint>"), src.find("ext_leaky_relu(float x"));
  EXPECT_LT(src.find("ext_leaky_relu(float x"), src.find("__global__"));
  // In 64-bit index code an int32 argument is passed as an int32.
  Var n("n");
  Buffer O("O", Int(32), {n});
  LoweredFunc idx = make_func("gpu_idx", {buffer_param(O)}, cuda_test::grid_1d(n, 32, [&](Expr i) {
                                return store(O, call_extern(Int(32), "ext_absdiff", {i, n}), {i});
                              }));
  std::string wide = build_cuda(idx, cuda_test::extern_options(CudaOptions::IndexWidth::Int64)).source();
  EXPECT_NE(wide.find("ext_absdiff((int32_t)("), std::string::npos) << wide;
  // extern_code, and CUDA's own functions by name.
  CudaOptions code;
  code.extern_code = "__device__ float ext_leaky_relu(float x, float s) { return x > 0 ? x : s * x; }";
  EXPECT_NE(build_cuda(gpu_leaky(), code).source().find("// ---- CudaOptions::extern_code ----"), std::string::npos);
  Buffer H("H", Float(32), {n});
  LoweredFunc hyp = make_func("gpu_hypot", {buffer_param(H)}, cuda_test::grid_1d(n, 32, [&](Expr i) {
                                return store(H, call_extern(Float(32), "hypotf", {load(H, {i}), 1.0f}), {i});
                              }));
  CudaOptions builtin;
  builtin.extern_builtins = {"hypotf"};
  EXPECT_NE(build_cuda(hyp, builtin).source().find("hypotf(H[(bx * 32) + tx], 1.0f)"), std::string::npos);
}

TEST_F(CallExtern, CudaErrorsAtBuildTime) {
  expect_error([] { build_cuda(gpu_leaky()); },
               {"build_cuda: 'gpu_leaky' calls call_extern 'ext_leaky_relu' (float32(float32, float32))",
                "no header is given", "CudaOptions::extern_headers"});
  cuda_test::TempDir dir;
  std::string other = dir.path() + "/other.cuh";
  cuda_test::write_file(other,
                        "// ext_leaky_relu(x) is only mentioned here\n"
                        "/* ext_leaky_relu( */\n"
                        "const char* s = \"ext_leaky_relu(\";\n"
                        "__device__ float my_ext_leaky_relu(float x) { return x; }\n");
  CudaOptions o;
  o.extern_headers = {other};
  std::string not_declared = "is not declared in '" + other + "'";
  expect_error([&] { build_cuda(gpu_leaky(), o); },
               {"build_cuda: call_extern 'ext_leaky_relu' (called by 'gpu_leaky' as float32(float32, float32))",
                not_declared.c_str(), "__device__"});
  o.extern_headers = {dir.path() + "/missing.cuh"};
  expect_error([&] { build_cuda(gpu_leaky(), o); }, {"build_cuda: cannot read '", "missing.cuh", "extern_headers"});
  // Host code (outside every kernel) cannot call a __device__ function.
  Var n("n"), t("t");
  Buffer A("A", Int(32), {n});
  Stmt host = let_stmt(t, call_extern(Int(32), "ext_absdiff", {n, 3}),
                       cuda_test::grid_1d(n, 32, [&](Expr k) { return store(A, t, {k}); }));
  expect_error([&] { build_cuda(make_func("host_call", {buffer_param(A)}, host), cuda_test::extern_options()); },
               {"call_extern 'ext_absdiff'", "outside every kernel"});
}

TEST_F(CallExtern, HeaderCheckIsTextual) {
  EXPECT_TRUE(cuda_test::read_file(cuda_test::extern_device_header()).find("ext_in_unit") != std::string::npos);
  CudaOptions o;
  o.extern_code = "#define ext_leaky_relu(x, s) ((x) > 0 ? (x) : (s) * (x))\n";  // a macro counts
  EXPECT_NO_THROW(build_cuda(gpu_leaky(), o));
  o.extern_code = "__device__ float ext_leaky_relu (float x, float s);";  // a declaration, with a space
  EXPECT_NO_THROW(build_cuda(gpu_leaky(), o));
}

}  // namespace
