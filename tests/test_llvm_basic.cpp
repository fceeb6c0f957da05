// The LLVM backend on hand-built loop IR: scalar and vector loops, guarded loads,
// allocations, asserts and the Module API, against plain C++ and interpret().
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;

namespace {

// C[i] = A[i] + B[i] for i < n, float32.
LoweredFunc scalar_vadd() {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), C("C", Float(32), {n});
  Stmt body = serial(i, 0, n, store(C, load(A, {i}) + load(B, {i}), {i}));
  return make_func("vadd", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
}

// The same in 8-wide vectors, the last vector predicated on the lanes below n.
LoweredFunc vector_vadd(int lanes = 8) {
  Var n("n"), io("io");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), C("C", Float(32), {n});
  Expr idx = ramp(io * lanes, 1, lanes);
  Expr live = idx < broadcast(n, lanes);
  Stmt body =
      serial(io, 0, (n + (lanes - 1)) / lanes, store(C, load(A, {idx}, live) + load(B, {idx}, live), {idx}, live));
  return make_func("vadd", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
}

TEST(LlvmBasic, ScalarVectorAddMatchesReference) {
  Module m = build(scalar_vadd());
  for (int64_t n : {0, 1, 7, 1000}) {
    NDArray a = random_array<float>({n}, 1), b = random_array<float>({n}, 2);
    NDArray c = NDArray::empty({n}, Float(32));
    m("vadd")(a, b, c);
    auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(cv[k], av[k] + bv[k]) << "n " << n << " k " << k;
  }
}

TEST(LlvmBasic, VectorAddWithPredicatedTail) {
  for (int64_t n : {1, 3, 8, 9, 1001}) {
    SCOPED_TRACE(n);
    NDArray a = random_array<float>({n}, 3), b = random_array<float>({n}, 4);
    NDArray c = NDArray::empty({n}, Float(32));
    expect_matches_interpreter(vector_vadd(), {a, b, c});
  }
  std::string ir = llvm_ir(vector_vadd(), /*optimized=*/false);
  EXPECT_TRUE(contains(ir, "noalias")) << ir;
  EXPECT_TRUE(contains(ir, "<8 x float>")) << ir;
  EXPECT_TRUE(contains(ir, "llvm.masked.load")) << ir;
  EXPECT_TRUE(contains(ir, "llvm.masked.store")) << ir;
  // Buffers carry alias scopes, which survive the pointers' trip through a closure.
  EXPECT_TRUE(contains(ir, "!alias.scope")) << ir;
  EXPECT_TRUE(contains(ir, "!noalias")) << ir;
}

TEST(LlvmBasic, VectorIfThenElseOnlyLoadsTheTakenLanes) {
  // B[i] = A[i + 1] where i + 1 < n, else -1: the last lane must not read A[n]. The
  // array is exactly n long, so a stray read would be caught by ASan.
  Var n("n"), io("io");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  Expr idx = ramp(io * 8, 1, 8);
  Expr next = idx + broadcast(Expr(1), 8);
  Expr value = if_then_else(next < broadcast(n, 8), load(A, {next}), broadcast(Expr(-1.0f), 8));
  LoweredFunc f = make_func("shift", {buffer_param(A), buffer_param(B)}, serial(io, 0, n / 8, store(B, value, {idx})));
  NDArray a = random_array<float>({64}, 7);
  auto out = expect_matches_interpreter(f, {a, NDArray::empty({64}, Float(32))});
  auto av = a.to_vector<float>(), bv = out[1].array().to_vector<float>();
  for (int k = 0; k < 63; ++k) EXPECT_EQ(bv[k], av[k + 1]);
  EXPECT_EQ(bv[63], -1.0f);
  EXPECT_TRUE(contains(llvm_ir(f, false), "llvm.masked.load"));
}

TEST(LlvmBasic, ScalarIfThenElseBranches) {
  // C[i] = i < m ? A[i] : A[i - m], with only the taken side read.
  Var n("n"), m("m"), i("i");
  Buffer A("A", Int(32), {n}), C("C", Int(32), {n});
  Expr value = if_then_else(i < m, load(A, {i}), load(A, {i - m}) * 10);
  LoweredFunc f =
      make_func("ite", {buffer_param(A), buffer_param(C), scalar_param(m)}, serial(i, 0, n, store(C, value, {i})));
  expect_matches_interpreter(f, {random_array<int32_t>({50}, 8), NDArray::empty({50}, Int(32)), 20});
}

TEST(LlvmBasic, GatherAndScatterForStridedAndIndirectIndices) {
  // B[ramp(2i, 2)] = A[ramp(3i, 3)] + A[idx[ramp(i)]], and a broadcast index.
  Var n("n"), io("io");
  Buffer A("A", Float(32), {n * 3}), B("B", Float(32), {n * 2}), I("I", Int(32), {n});
  Buffer S("S", Float(32), {n});
  Expr lanes_i = ramp(io * 4, 1, 4);
  Expr gathered = load(A, {ramp(io * 12, 3, 4)}) + load(A, {load(I, {lanes_i})}) + load(S, {broadcast(io, 4)});
  LoweredFunc f = make_func("gs", {buffer_param(A), buffer_param(B), buffer_param(I), buffer_param(S)},
                            serial(io, 0, n / 4, store(B, gathered, {ramp(io * 8, 2, 4)})));
  std::vector<int32_t> idx;
  for (int k = 0; k < 16; ++k) idx.push_back((k * 7) % 48);
  expect_matches_interpreter(f, {random_array<float>({48}, 9), NDArray::empty({32}, Float(32)),
                                 NDArray::from_vector(idx, {16}), random_array<float>({16}, 10)});
  std::string ir = llvm_ir(f, false);
  // Unmasked gathers are one load per lane (x86's gather instructions are slow on AMD).
  EXPECT_FALSE(contains(ir, "llvm.masked.gather")) << ir;
  EXPECT_TRUE(contains(ir, "llvm.masked.scatter")) << ir;
}

TEST(LlvmBasic, SmallStridesLoadTheSpanAndShuffle) {
  // B[ramp(i * lanes, 1, lanes)] = A[ramp(i * lanes * stride, stride, lanes)]: the last
  // vector's last lane is A's last element, so a read past it shows under ASan. Each
  // such load is dense vector loads and one shuffle, not a load per lane.
  for (DataType t : {Float(32), Float(64), Float(16), Int(8), Bool()}) {
    for (int64_t stride : {2, 3, 4}) {
      for (int lanes : {4, 8, 16, 28}) {
        SCOPED_TRACE(t.to_string() + " stride " + std::to_string(stride) + " lanes " + std::to_string(lanes));
        const int64_t vectors = 3, n = vectors * lanes;
        Var io("io");
        Buffer A("A", t, {(n - 1) * stride + 1}), B("B", t, {n});
        Expr read = load(A, {ramp(io * (lanes * stride), make_const(Int(32), stride), lanes)});
        LoweredFunc f = make_func("strided", {buffer_param(A), buffer_param(B)},
                                  serial(io, 0, vectors, store(B, read, {ramp(io * lanes, 1, lanes)})));
        NDArray a = NDArray::empty({(n - 1) * stride + 1}, t);
        auto* bytes = static_cast<uint8_t*>(a.data());
        for (size_t k = 0; k < a.nbytes(); ++k) bytes[k] = static_cast<uint8_t>(t.is_bool() ? k % 2 : k * 37 + 11);
        expect_matches_interpreter(f, {a, NDArray::empty({n}, t)});
        std::string ir = llvm_ir(f, false);
        EXPECT_TRUE(contains(ir, "shufflevector")) << ir;
        EXPECT_FALSE(contains(ir, "gather")) << ir;
      }
    }
  }
}

TEST(LlvmBasic, MaskedGatherTouchesOnlyActiveLanes) {
  // B[ramp(4i)] = A[idx[ramp(4i)]] where idx >= 0, else 0: the inactive lanes' indices
  // are far outside A, so touching them would fault (ASan: report).
  Var n("n"), io("io");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), I("I", Int(32), {n});
  Expr lanes_i = ramp(io * 4, 1, 4);
  Expr idx = load(I, {lanes_i});
  Expr value = load(A, {idx}, idx >= broadcast(0, 4));
  LoweredFunc f = make_func("masked_gather", {buffer_param(A), buffer_param(B), buffer_param(I)},
                            serial(io, 0, n / 4, store(B, value, {lanes_i})));
  std::vector<int32_t> indices;
  for (int k = 0; k < 16; ++k) indices.push_back(k % 3 == 0 ? -1000000 : (k * 5) % 16);
  expect_matches_interpreter(
      f, {random_array<float>({16}, 12), NDArray::empty({16}, Float(32)), NDArray::from_vector(indices, {16})});
  EXPECT_TRUE(contains(llvm_ir(f, false), "llvm.masked.gather"));
}

TEST(LlvmBasic, MultiDimensionalIndicesAreFlattened) {
  Var h("h"), w("w"), y("y"), x("x");
  Buffer A("A", Float(64), {h, w}), B("B", Float(64), {w, h});
  LoweredFunc f = make_func("transpose", {buffer_param(A), buffer_param(B)},
                            serial(y, 0, h, serial(x, 0, w, store(B, load(A, {y, x}), {x, y}))));
  expect_matches_interpreter(f, {random_array<double>({5, 7}, 11), NDArray::empty({7, 5}, Float(64))});
}

TEST(LlvmBasic, BoolAndFloat16Storage) {
  Var n("n"), i("i");
  Buffer A("A", Float(16), {n}), M("M", Bool(), {n}), C("C", Float(16), {n}), D("D", Bool(), {n});
  Stmt body = serial(i, 0, n / 8,
                     seq({store(C,
                                select(load(M, {ramp(i * 8, 1, 8)}), load(A, {ramp(i * 8, 1, 8)}) * 3.0f,
                                       broadcast(make_const(Float(16), 0.1), 8)),
                                {ramp(i * 8, 1, 8)}),
                          store(D, !load(M, {ramp(i * 8, 1, 8)}), {ramp(i * 8, 1, 8)})}));
  LoweredFunc f = make_func("mixed", {buffer_param(A), buffer_param(M), buffer_param(C), buffer_param(D)}, body);
  expect_matches_interpreter(f, {random_array<half>({64}, 12), random_array<bool>({64}, 13),
                                 NDArray::empty({64}, Float(16)), NDArray::empty({64}, Bool())});
}

TEST(LlvmBasic, LetsSelectsConditionsAndLoopKinds) {
  Var n("n"), i("i"), j("j"), t("t"), u("u", Float(32));
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Stmt inner = for_loop(
      j, 0, 4, ForKind::Unrolled,
      let_stmt(t, i * 4 + j,
               if_then_else(t < n, store(C, let(u, load(A, {t}), select(u > 0.0f, u, -u) + cast(Float(32), j)), {t}),
                            evaluate(0))));
  Stmt body = for_loop(i, 0, (n + 3) / 4, ForKind::Vectorized, inner);
  LoweredFunc f = make_func("kinds", {buffer_param(A), buffer_param(C)}, body);
  expect_matches_interpreter(f, {random_array<float>({37}, 14), NDArray::empty({37}, Float(32))});
  // A thread-bound loop runs serially on the CPU.
  Var tx("tx");
  LoweredFunc g =
      make_func("threads", {buffer_param(A), buffer_param(C)},
                for_loop(tx, 0, n, ForKind::ThreadBinding, store(C, load(A, {tx}) + 1.0f, {tx}), "threadIdx.x"));
  expect_matches_interpreter(g, {random_array<float>({37}, 15), NDArray::empty({37}, Float(32))});
}

TEST(LlvmBasic, AllocationsOnStackAndHeap) {
  // tmp[k] = A[i * m + k] * 2 for a row, then C[i] = sum of the row, with tmp small and
  // constant (stack) or sized by m (heap).
  Var n("n"), m("m"), i("i"), k("k");
  Buffer A("A", Float(32), {n * m}), C("C", Float(32), {n});
  for (bool on_stack : {true, false}) {
    SCOPED_TRACE(on_stack ? "stack" : "heap");
    Expr size = on_stack ? Expr(16) : Expr(m);
    Buffer tmp("tmp", Float(32), {size}, MemoryScope::Local);
    Stmt row = allocate(tmp, seq({serial(k, 0, m, store(tmp, load(A, {i * m + k}) * 2.0f, {k})), store(C, 0.0f, {i}),
                                  serial(k, 0, m, store(C, load(C, {i}) + load(tmp, {k}), {i}))}));
    LoweredFunc f = make_func("rows", {buffer_param(A), buffer_param(C), scalar_param(m)}, serial(i, 0, n, row));
    expect_matches_interpreter(f, {random_array<float>({10 * 16}, 16), NDArray::empty({10}, Float(32)), 16});
    EXPECT_EQ(contains(llvm_ir(f, false), "te_alloc"), !on_stack);
  }
}

TEST(LlvmBasic, StackStorageIsZeroFilledUnlessEveryLoadFollowsAStore) {
  // Per row i, a stack buffer tmp[8] written and read by `body`; the row's 8 outputs are
  // what it reads. Storage is zero on each entry (as interpret() gives it), so a memset
  // is needed exactly when some load may come before its element's store.
  const int64_t rows = 6;
  Var m("m"), i("i"), k("k");
  Buffer A("A", Float(32), {rows * 8}), C("C", Float(32), {rows * 8});
  Buffer tmp("tmp", Float(32), {8}, MemoryScope::Local);
  Expr a = load(A, {i * 8 + k});
  Stmt fill = serial(k, 0, 8, store(tmp, a, {k}));
  Stmt read_back = serial(k, 0, 8, store(C, load(tmp, {7 - k}), {i * 8 + k}));
  Expr positive = load(A, {i * 8}) > 0.0f;
  struct Case {
    const char* what;
    Stmt body;
    bool zero_fill;
  };
  const std::vector<Case> cases = {
      {"every element stored, then read", seq({fill, read_back}), false},
      {"one vector store, then scalar loads",
       seq({store(tmp, load(A, {ramp(i * 8, 1, 8)}), {ramp(0, 1, 8)}), read_back}), false},
      {"an accumulator's init, updates and read",
       seq({store(tmp, 0.0f, {0}), serial(k, 0, 8, store(tmp, load(tmp, {0}) + a, {0})),
            serial(k, 0, 8, store(C, load(tmp, {0}), {i * 8 + k}))}),
       false},
      {"both sides of an unknown condition store",
       seq({if_then_else(positive, fill, serial(k, 0, 8, store(tmp, -a, {k}))), read_back}), false},
      {"a load before the store", serial(k, 0, 8, seq({store(C, load(tmp, {k}), {i * 8 + k}), store(tmp, a, {k})})),
       true},
      {"one element never stored", seq({serial(k, 0, 7, store(tmp, a, {k})), read_back}), true},
      {"stores under an unknown condition", seq({if_then_else(positive, fill), read_back}), true},
      {"a loop extent it cannot know", seq({serial(k, 0, m, store(tmp, a, {k})), read_back}), true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    LoweredFunc f = make_func("rows", {buffer_param(A), buffer_param(C), scalar_param(m)},
                              serial(i, 0, rows, allocate(tmp, c.body)));
    EXPECT_EQ(contains(llvm_ir(f, false), "llvm.memset"), c.zero_fill);
    expect_matches_interpreter(f, {random_array<float>({rows * 8}, 7), NDArray::empty({rows * 8}, Float(32)), 8});
  }
}

TEST(LlvmBasic, HeapStorageIsZeroFilledUnlessEveryLoadFollowsAStore) {
  // A heap buffer (past the stack's limit) of more elements than the analysis takes steps:
  // filled by vector stores, then read back reversed. Once every element is stored the
  // rest of the body is not followed, so te_alloc_uninitialized serves it; with one
  // vector left unstored, te_alloc (zero-filled) does.
  const int64_t n = 100000;
  Var k("k");
  Buffer A("A", Float(32), {n}), C("C", Float(32), {n});
  Buffer tmp("tmp", Float(32), {n}, MemoryScope::Local);
  for (int64_t filled : {n, n - 16}) {
    SCOPED_TRACE(filled == n ? "every element stored" : "one vector never stored");
    Stmt fill = serial(k, 0, filled / 16, store(tmp, load(A, {ramp(k * 16, 1, 16)}) * 2.0f, {ramp(k * 16, 1, 16)}));
    Stmt read_back = serial(k, 0, n, store(C, load(tmp, {n - 1 - k}), {k}));
    LoweredFunc f = make_func("fill", {buffer_param(A), buffer_param(C)}, allocate(tmp, seq({fill, read_back})));
    const std::string ir = llvm_ir(f, false);
    EXPECT_EQ(contains(ir, "@te_alloc_uninitialized("), filled == n);
    EXPECT_EQ(contains(ir, "@te_alloc("), filled != n);
    expect_matches_interpreter(f, {random_array<float>({n}, 3), NDArray::empty({n}, Float(32))});
  }
}

TEST(LlvmBasic, HeapAllocationOfABadSizeFails) {
  Var m("m"), k("k");
  Buffer A("A", Int(64), {1}), tmp("tmp", Int(64), {m, m}, MemoryScope::Local);
  LoweredFunc f = make_func(
      "sized", {buffer_param(A), scalar_param(m)},
      allocate(tmp, seq({serial(k, 0, m, store(tmp, cast(Int(64), k), {k})), store(A, load(tmp, {m - 1}), {0})})));
  Function fn = build(f)("sized");
  NDArray a = NDArray::empty({1}, Int(64));
  fn(a, 5);
  EXPECT_EQ(a.to_vector<int64_t>()[0], 4);
  expect_error([&] { fn(a, -2); }, {"sized: cannot allocate buffer 'tmp'"});
  expect_error([&] { fn(a, 2000000000); }, {"sized: cannot allocate buffer 'tmp'"});
}

TEST(LlvmBasic, FailedAssertThrowsItsMessageAndFreesMemory) {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), tmp("tmp", Float(32), {n}, MemoryScope::Local);
  Stmt body = allocate(
      tmp, serial(i, 0, n, assert_stmt(load(A, {i}) >= 0.0f, "A must be non-negative", store(tmp, load(A, {i}), {i}))));
  LoweredFunc f = make_func("checked", {buffer_param(A)}, body);
  Module m = build(f);
  m("checked")(NDArray::from_vector(std::vector<float>{1, 2, 3}, {3}));
  // The heap buffer is freed on the error path too (ASan's leak check would see it).
  expect_error(
      [&] {
        m("checked")(NDArray::from_vector(std::vector<float>{1, -2, 3}, {3}));
      },
      {"checked: A must be non-negative"});
}

TEST(LlvmBasic, RejectsWhatTheCpuCannotRun) {
  Var n("n"), i("i"), q("q");
  Buffer A("A", Float(32), {n});
  expect_error([&] { build(make_func("bar", {buffer_param(A)}, seq({barrier()}))); }, {"build: bar", "barrier"});
  expect_error([&] { build(make_func("free", {buffer_param(A)}, serial(i, 0, q, store(A, 1.0f, {i})))); },
               {"build: free", "variable 'q'"});
  Buffer B("B", Float(32), {n});
  expect_error([&] { build(make_func("nobuf", {buffer_param(A)}, serial(i, 0, n, store(B, 1.0f, {i})))); },
               {"build: nobuf", "buffer 'B'"});
  expect_error([&] { build(make_func("not-c", {buffer_param(A)}, evaluate(0))); }, {"'not-c' is not a C identifier"});
  expect_error(
      [&] {
        build(make_func("twice", {buffer_param(A), buffer_param(A)}, evaluate(0)));
      },
      {"twice", "'A' is listed twice"});
  expect_error([&] { build(std::vector<LoweredFunc>{}); }, {"no functions"});
  LoweredFunc g = make_func("dup", {buffer_param(A)}, evaluate(0));
  expect_error([&] { build(std::vector<LoweredFunc>{g, g}); }, {"two functions are named 'dup'"});
}

TEST(LlvmBasic, ModuleApi) {
  LoweredFunc add = scalar_vadd();
  LoweredFunc vec = vector_vadd();
  vec.name = "vadd8";
  Module m = build({add, vec});
  EXPECT_EQ(m.function_names(), (std::vector<std::string>{"vadd", "vadd8"}));
  EXPECT_EQ(m("vadd8").name(), "vadd8");
  EXPECT_EQ(m("vadd").signature(), "vadd(A: float32[n], B: float32[n], C: float32[n])");
  expect_error([&] { m("nope"); }, {"no function 'nope'", "vadd, vadd8"});
  expect_error([&] { Module()("vadd"); }, {"empty Module"});
  expect_error([&] { Function()(1); }, {"empty Function"});
  NDArray a = random_array<float>({20}, 17), b = random_array<float>({20}, 18);
  NDArray c1 = NDArray::empty({20}, Float(32)), c2 = NDArray::empty({20}, Float(32));
  Function f = m("vadd");
  Module().function_names();
  m = Module();  // a Function keeps the code alive on its own
  f(a, b, c1);
  interpret(add, {a, b, c2});
  EXPECT_EQ(c1.to_vector<float>(), c2.to_vector<float>());
}

TEST(LlvmBasic, ArgumentChecksNameTheParameter) {
  Var n("n"), m("m"), i("i"), s("s", Float(32)), k("k", Int(8));
  Buffer A("A", Float(32), {n, m}), B("B", Float(32), {m}), C("C", Float(32), {n * 2});
  LoweredFunc f =
      make_func("check", {buffer_param(A), buffer_param(B), buffer_param(C), scalar_param(s), scalar_param(k)},
                serial(i, 0, m, store(B, load(B, {i}) * s + cast(Float(32), k), {i})));
  Function fn = build(f)("check");
  NDArray a = NDArray::empty({3, 4}, Float(32)), b = NDArray::empty({4}, Float(32)), c = NDArray::empty({6}, Float(32));
  fn(a, b, c, 2.0f, 3);           // fine
  fn(a, b, c, 2, int64_t{-128});  // an integer for a float scalar is fine
  expect_error([&] { fn(a, b, c, 2.0f); }, {"check: expected 5 arguments (A, B, C, s, k), got 4"});
  expect_error([&] { fn(1, b, c, 2.0f, 3); }, {"argument 1 ('A')", "must be an NDArray of float32[n, m]"});
  expect_error([&] { fn(NDArray(), b, c, 2.0f, 3); }, {"argument 1 ('A')", "without storage"});
  expect_error(
      [&] {
        fn(NDArray::empty({3, 4}, Float(64)), b, c, 2.0f, 3);
      },
      {"argument 1 ('A')", "dtype float64, expected float32"});
  expect_error([&] { fn(NDArray::empty({12}, Float(32)), b, c, 2.0f, 3); },
               {"argument 1 ('A')", "rank 1", "expected rank 2"});
  expect_error([&] { fn(a, NDArray::empty({5}, Float(32)), c, 2.0f, 3); },
               {"argument 2 ('B')", "shape (5)", "dimension 0 must be m = 4", "bound by argument 'A'"});
  expect_error([&] { fn(a, b, NDArray::empty({7}, Float(32)), 2.0f, 3); },
               {"argument 3 ('C')", "dimension 0 must be (n * 2) = 6"});
  expect_error([&] { fn(a, b, c, a, 3); }, {"argument 4 ('s')", "float32 scalar, got an NDArray"});
  expect_error([&] { fn(a, b, c, 2.0f, 3.5); }, {"argument 5 ('k')", "int8 scalar, got the floating-point value 3.5"});
  expect_error([&] { fn(a, b, c, 2.0f, 300); }, {"argument 5 ('k')", "300, which does not fit int8"});
  // A written array may not share memory with another argument; read-only ones may.
  Buffer X("X", Float(32), {m}), Y("Y", Float(32), {m});
  LoweredFunc g = make_func("alias", {buffer_param(X), buffer_param(Y), buffer_param(B)},
                            serial(i, 0, m, store(Y, load(X, {i}) + load(B, {i}), {i})));
  Function gn = build(g)("alias");
  NDArray x = NDArray::empty({4}, Float(32)), y = NDArray::empty({4}, Float(32));
  gn(x, y, x);
  expect_error([&] { gn(x, x, b); }, {"alias: arguments 'X' and 'Y' share memory", "'Y' is written"});
  expect_error([&] { gn(x, y, y); }, {"arguments 'Y' and 'B' share memory", "'Y' is written"});
}

TEST(LlvmBasic, EveryOptimizationLevelComputesTheSame) {
  for (int level : {0, 1, 2, 3}) {
    SCOPED_TRACE(level);
    BuildOptions o = exact_options();
    o.opt_level = level;
    NDArray a = random_array<float>({29}, 19), b = random_array<float>({29}, 20);
    expect_matches_interpreter(vector_vadd(), {a, b, NDArray::empty({29}, Float(32))}, 0, o);
  }
  BuildOptions bad;
  bad.opt_level = 4;
  expect_error([&] { build(vector_vadd(), bad); }, {"opt_level is 4", "0..3"});
}

}  // namespace

TEST(LlvmBasic, IndirectIndexClampedIntoTheBufferNeedsNoRuntimeCheck) {
  // B[i] = A[clamp(I[i], 0, 15)]: the loop's constant bounds and the clamp keep the load
  // inside A, so no check; A[I[i]] keeps its run-time check.
  Var i("i");
  Buffer A("A", Float(32), {16}), B("B", Float(32), {8}), I("I", Int(32), {8});
  Expr idx = load(I, {i});
  auto func = [&](Expr index) {
    return make_func("indirect", {buffer_param(A), buffer_param(B), buffer_param(I)},
                     serial(i, 0, 8, store(B, load(A, {index}), {i})));
  };
  LoweredFunc clamped = func(min(max(idx, 0), 15)), raw = func(idx);
  std::vector<int32_t> indices{-3, 0, 5, 15, 16, 99, 7, 2};
  NDArray a = random_array<float>({16}, 13), ind = NDArray::from_vector(indices, {8});
  expect_matches_interpreter(clamped, {a, NDArray::empty({8}, Float(32)), ind});
  EXPECT_FALSE(contains(llvm_ir(clamped, false), "out-of-bounds load"));
  EXPECT_TRUE(contains(llvm_ir(raw, false), "out-of-bounds load"));
  expect_error([&] { build(raw)("indirect")(a, NDArray::empty({8}, Float(32)), ind); },
               {"out-of-bounds load from buffer 'A'"});
}

// Where te made vector code, LLVM's unrollers and vectorizers stay off (they only grew
// the code and its compile time); scalar code still gets them, as clang -O3 runs them.
TEST(LlvmBasic, LlvmLeavesTeVectorCodeAsTeMadeIt) {
  auto count = [](const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  Var io("io"), i("i");
  Buffer A("A", Float(32), {64}), B("B", Float(32), {64});
  Expr lanes = ramp(io * 8, 1, 8);
  LoweredFunc vec = make_func("twice_vec", {buffer_param(A), buffer_param(B)},
                              serial(io, 0, 8, store(B, load(A, {lanes}) * broadcast(Expr(2.0f), 8), {lanes})));
  std::string vec_ir = llvm_ir(vec, /*optimized=*/true);
  // The 8-iteration loop stays a loop: one vector store, not 8 (LLVM's full unroll).
  EXPECT_EQ(count(vec_ir, "store <8 x float>"), 1u) << vec_ir;
  LoweredFunc scalar =
      make_func("twice", {buffer_param(A), buffer_param(B)}, serial(i, 0, 64, store(B, load(A, {i}) * 2.0f, {i})));
  std::string scalar_ir = llvm_ir(scalar, /*optimized=*/true);
  EXPECT_TRUE(contains(scalar_ir, " x float>")) << scalar_ir;  // LLVM's loop vectorizer ran
  for (const LoweredFunc& f : {vec, scalar}) {
    auto out = expect_matches_interpreter(f, {random_array<float>({64}, 11), NDArray::empty({64}, Float(32))});
    auto av = out[0].array().to_vector<float>(), bv = out[1].array().to_vector<float>();
    for (int k = 0; k < 64; ++k) EXPECT_EQ(bv[k], 2.0f * av[k]);
  }
}
