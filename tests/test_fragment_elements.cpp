// mma fragments element by element (lane nests): a loop nest at warp level that reads or
// writes "warp" buffers runs, in each lane, the elements that lane holds. The emulation
// runs the kernels against interpret() bit for bit, and interpret() against plain C++.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <random>

#include "cuda_emulation/fragment_kernels.h"
#include "cuda_emulation/harness.h"
#include "te/ops/matmul.h"
#include "te/te.h"
#include "test_util.h"

namespace te {
namespace {

// Small integers (every product and sum exact, in any order) or values in [-2, 2)
// rounded to the 16-bit type t.
NDArray matrix(int rows, int cols, DataType t, unsigned seed, bool integers, std::vector<float>* values) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  std::uniform_int_distribution<int> small(-3, 3);
  NDArray a = NDArray::empty({rows, cols}, t);
  values->clear();
  for (int i = 0; i < rows * cols; ++i) {
    const float v = integers ? static_cast<float>(small(rng)) : real(rng);
    if (t == Float(16)) {
      static_cast<half*>(a.data())[i] = half(v);
      values->push_back(static_cast<float>(half(v)));
    } else {
      static_cast<bfloat16*>(a.data())[i] = bfloat16(v);
      values->push_back(static_cast<float>(bfloat16(v)));
    }
  }
  return a;
}

// a (M x K) b (K x N) in float, k in order.
std::vector<float> product(const std::vector<float>& a, const std::vector<float>& b, int M, int N, int K) {
  std::vector<float> c(size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        volatile float p = a[size_t(i) * K + k] * b[size_t(k) * N + j];  // exact, never fused
        acc = acc + p;
      }
      c[size_t(i) * N + j] = acc;
    }
  return c;
}

struct EpilogueCase {
  const char* name;
  int M, N, K, warps;
  DataType t;
};
const EpilogueCase kEpilogues[] = {{"mma_epilogue", 64, 32, 32, 2, Float(16)},
                                   {"mma_epilogue_bf16", 32, 16, 48, 1, BFloat(16)}};

struct BackToBackCase {
  const char* name;
  int M, N, K, P;
  DataType t;
};
const BackToBackCase kBackToBack[] = {{"back_to_back", 32, 32, 32, 16, Float(16)},
                                      {"back_to_back_bf16", 16, 16, 32, 24, BFloat(16)}};

struct TailCase {
  const char* name;
  int rows, N, column_split;
  DataType t;
};
const TailCase kTails[] = {{"tail_rows", 5, 16, 0, Float(16)},
                           {"tail_columns", 16, 16, 12, BFloat(16)},
                           {"tail_rows_and_columns", 11, 16, 12, Float(16)}};

class FragmentElements : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    suite_ = std::make_unique<cuda_test::EmulatedSuite>();
    for (const EpilogueCase& c : kEpilogues)
      suite_->add([c] { return cuda_test::mma_epilogue_func(c.M, c.N, c.K, c.t, c.name, c.warps); });
    for (const BackToBackCase& c : kBackToBack)
      suite_->add([c] { return cuda_test::back_to_back_gemm_func(c.M, c.N, c.K, c.P, c.t, c.name); });
    suite_->add([] { return cuda_test::gemm_softmax_func(32, 32, 16, Float(16), "gemm_softmax"); });
    suite_->add([] { return cuda_test::gemm_softmax_func(16, 8, 32, BFloat(16), "gemm_softmax_bf16"); });
    for (const TailCase& c : kTails)
      suite_->add([c] { return cuda_test::tail_epilogue_func(c.rows, c.N, c.column_split, c.t, c.name); });
    suite_->build();
  }
  static void TearDownTestSuite() { suite_.reset(); }

  static std::unique_ptr<cuda_test::EmulatedSuite> suite_;
};

std::unique_ptr<cuda_test::EmulatedSuite> FragmentElements::suite_;

// max(A B + bias, 0) from the accumulators straight to global memory, each lane its own
// elements: interpret() as C++ computes it, the emulated kernel as interpret().
TEST_F(FragmentElements, EpilogueOnTheAccumulators) {
  ASSERT_TRUE(suite_->ready()) << suite_->log();
  for (const EpilogueCase& c : kEpilogues)
    for (bool integers : {true, false}) {
      SCOPED_TRACE(std::string(c.name) + (integers ? " integers" : " reals"));
      std::vector<float> av, bv;
      NDArray a = matrix(c.M, c.K, c.t, 7, integers, &av), b = matrix(c.K, c.N, c.t, 11, integers, &bv);
      std::vector<float> bias_values;
      for (int j = 0; j < c.N; ++j) bias_values.push_back(static_cast<float>(j % 5) - 2.0f);
      NDArray bias = NDArray::from_vector(bias_values, {c.N});
      std::vector<float> want = product(av, bv, c.M, c.N, c.K);
      for (int i = 0; i < c.M; ++i)
        for (int j = 0; j < c.N; ++j) {
          float& w = want[size_t(i) * c.N + j];
          w = std::max(w + bias_values[size_t(j)], 0.0f);
        }
      const LoweredFunc& f = suite_->func(c.name);
      NDArray out = NDArray::empty({c.M, c.N}, Float(32));
      interpret(f, {a, b, bias, out});
      EXPECT_EQ(out.to_vector<float>(), want) << "interpret() against C++";
      cuda_test::EmulatedRun r = suite_->run(c.name, {a, b, bias, NDArray::empty({c.M, c.N}, Float(32))});
      ASSERT_EQ(r.error, 0) << r.output;
      ASSERT_EQ(r.arrays.size(), 4u);
      EXPECT_EQ(cuda_test::compare_arrays(out, r.arrays[3]), "") << "the emulated kernel against interpret()";
      ASSERT_EQ(r.launches.size(), 1u);
      EXPECT_EQ(r.launches[0],
                (std::array<unsigned, 6>{unsigned(c.M / (16 * c.warps)), 1, 1, 32, unsigned(c.warps), 1}));
    }
}

// max(A B, 0) E with the intermediate in registers: the first mma's accumulators become
// the second's A fragments, element by element, in the lanes that hold them.
TEST_F(FragmentElements, BackToBackGemmKeepsTheIntermediateInRegisters) {
  ASSERT_TRUE(suite_->ready()) << suite_->log();
  for (const BackToBackCase& c : kBackToBack)
    for (bool integers : {true, false}) {
      SCOPED_TRACE(std::string(c.name) + (integers ? " integers" : " reals"));
      std::vector<float> av, bv, ev;
      NDArray a = matrix(c.M, c.K, c.t, 3, integers, &av), b = matrix(c.K, c.N, c.t, 5, integers, &bv);
      NDArray e = matrix(c.N, c.P, c.t, 9, integers, &ev);
      const LoweredFunc& f = suite_->func(c.name);
      NDArray out = NDArray::empty({c.M, c.P}, Float(32));
      interpret(f, {a, b, e, out});
      if (integers) {  // H's values (at most 96 in size) are exact in either type
        std::vector<float> h = product(av, bv, c.M, c.N, c.K);
        for (float& x : h) x = std::max(x, 0.0f);
        EXPECT_EQ(out.to_vector<float>(), product(h, ev, c.M, c.P, c.N)) << "interpret() against C++";
      }
      cuda_test::EmulatedRun r = suite_->run(c.name, {a, b, e, NDArray::empty({c.M, c.P}, Float(32))});
      ASSERT_EQ(r.error, 0) << r.output;
      EXPECT_EQ(cuda_test::compare_arrays(out, r.arrays[3]), "") << "the emulated kernel against interpret()";
    }
}

// softmax(A B) along rows in registers: each lane's part of a row's max and sum, then
// two shuffles across the row's four lanes. The max is exact, so the exponentials are
// interpret()'s bit for bit; the sums add in another order (within 1e-6).
TEST_F(FragmentElements, RowSoftmaxOfTheAccumulatorsReducesAcrossTheRowsLanes) {
  ASSERT_TRUE(suite_->ready()) << suite_->log();
  struct Case {
    const char* name;
    int M, N, K;
    DataType t;
  };
  for (const Case& c :
       {Case{"gemm_softmax", 32, 32, 16, Float(16)}, Case{"gemm_softmax_bf16", 16, 8, 32, BFloat(16)}}) {
    SCOPED_TRACE(c.name);
    std::vector<float> av, bv;
    NDArray a = matrix(c.M, c.K, c.t, 21, false, &av), b = matrix(c.K, c.N, c.t, 23, false, &bv);
    const std::vector<float> s = product(av, bv, c.M, c.N, c.K);
    const LoweredFunc& f = suite_->func(c.name);
    NDArray out = NDArray::empty({c.M, c.N}, Float(32));
    interpret(f, {a, b, out});
    cuda_test::EmulatedRun r = suite_->run(c.name, {a, b, NDArray::empty({c.M, c.N}, Float(32))});
    ASSERT_EQ(r.error, 0) << r.output;
    const std::vector<float> want = out.to_vector<float>(), got = r.arrays[2].to_vector<float>();
    for (int i = 0; i < c.M; ++i) {
      float row_max = -std::numeric_limits<float>::infinity(), row_sum = 0.0f;
      for (int j = 0; j < c.N; ++j) row_max = std::max(row_max, s[size_t(i) * c.N + j]);
      for (int j = 0; j < c.N; ++j) row_sum += std::exp(s[size_t(i) * c.N + j] - row_max);
      for (int j = 0; j < c.N; ++j) {
        const size_t x = size_t(i) * c.N + j;
        EXPECT_NEAR(want[x], std::exp(s[x] - row_max) / row_sum, 1e-6f) << "interpret() at " << i << ", " << j;
        EXPECT_NEAR(got[x], want[x], 1e-6f * std::abs(want[x]) + 1e-12f) << "emulated at " << i << ", " << j;
      }
    }
  }
}

// Nests over part of the fragments: D = C + 1 for the first rows of a 16-row tile, its
// columns split by 12 (a condition on the split's tail inside the nest). Each lane skips
// the rows and columns it holds past their loops' ends.
TEST_F(FragmentElements, NestsOverPartOfTheFragmentsSkipWhatIsPastTheEnd) {
  ASSERT_TRUE(suite_->ready()) << suite_->log();
  for (const TailCase& c : kTails) {
    SCOPED_TRACE(c.name);
    std::vector<float> av, bv;
    NDArray a = matrix(16, 16, c.t, 31, true, &av), b = matrix(16, c.N, c.t, 37, true, &bv);
    const std::vector<float> s = product(av, bv, 16, c.N, 16);
    std::vector<float> want(s.begin(), s.begin() + size_t(c.rows) * c.N);
    for (float& w : want) w += 1.0f;
    NDArray out = NDArray::empty({c.rows, c.N}, Float(32));
    interpret(suite_->func(c.name), {a, b, out});
    EXPECT_EQ(out.to_vector<float>(), want) << "interpret() against C++";
    // The emulated kernel writes D into an array of the whole tile's 16 rows: the rows
    // past D's end must stay as they were.
    const size_t size = size_t(c.rows) * c.N, tile = size_t(16) * c.N;
    cuda_test::EmulatedRun r =
        suite_->run(c.name, {a, b, NDArray::from_vector(std::vector<float>(tile, -7.0f), {16, c.N})});
    ASSERT_EQ(r.error, 0) << r.output;
    const std::vector<float> got = r.arrays[2].to_vector<float>();
    ASSERT_EQ(got.size(), tile);
    EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + long(size)), want) << "the emulated kernel";
    EXPECT_EQ(std::vector<float>(got.begin() + long(size), got.end()), std::vector<float>(tile - size, -7.0f))
        << "nothing written past D's end";
  }
  const std::string both = build_cuda(cuda_test::tail_epilogue_func(5, 16, 12, Float(16), "both")).source();
  for (const char* line : {"// Each lane runs 0 to 4 of these loops' 80 stores", "const int32_t i_inner = g;",
                           "if (i_inner < 5) {", "const int32_t j_inner = 2 * t + 8;", "if (j_inner < 12) {",
                           "const int32_t j_inner = 2 * t - 4;", "if (j_inner >= 0) {"})
    EXPECT_NE(both.find(line), std::string::npos) << line << "\n" << both;
  EXPECT_EQ(both.find("g + 8"), std::string::npos) << "rows 8 to 15 are past the end in every lane:\n" << both;
}

// The CUDA each lane runs: the fragments' slots as constants (registers), no shared
// memory, the lane's row and column from threadIdx.x only where a global index needs them.
TEST(FragmentElementsCode, SlotsAreConstantsAndNothingGoesThroughSharedMemory) {
  const std::string epilogue = build_cuda(cuda_test::mma_epilogue_func(64, 32, 32, Float(16), "epi")).source();
  EXPECT_EQ(epilogue.find("__shared__"), std::string::npos) << epilogue;
  for (const char* line :
       {"// Each lane runs 16 of these loops' 512 stores: those on the fragment elements it holds (the PTX "
        "ISA's mma fragment layouts; lane = 4 g + t).",
        "const int g = (int)(threadIdx.x >> 2);", "const int t = (int)(threadIdx.x & 3u);",
        "const int32_t j = 2 * t + 9;", "= te_max_f32(C[5] + bias[j], 0.0f);"})
    EXPECT_NE(epilogue.find(line), std::string::npos) << line << "\n" << epilogue;
  const std::string b2b = build_cuda(cuda_test::back_to_back_gemm_func(32, 32, 32, 16, Float(16), "b2b")).source();
  EXPECT_EQ(b2b.find("__shared__"), std::string::npos) << b2b;
  EXPECT_EQ(b2b.find("threadIdx.x >> 2"), std::string::npos) << "H's steps need no lane index:\n" << b2b;
  for (const char* line :
       {"H[0] = __float2half_rn(te_max_f32(C[0], 0.0f));", "H[13] = __float2half_rn(te_max_f32(C[13], 0.0f));",
        // H's second 16 x 16 tile from C's third and fourth 16 x 8 ones
        "H[8] = __float2half_rn(te_max_f32(C[8], 0.0f));"})
    EXPECT_NE(b2b.find(line), std::string::npos) << line << "\n" << b2b;
  const std::string softmax = build_cuda(cuda_test::gemm_softmax_func(32, 32, 16, Float(16), "sm")).source();
  EXPECT_EQ(softmax.find("__shared__"), std::string::npos) << softmax;
  for (const char* line :
       {"alignas(16) float row_max[2];  // this lane's part of a warp's 16 elements (one per row "
        "of 'S')",
        "row_max[1] = te_max_f32(row_max[1], S[15]);",
        "row_max[0] = te_max_f32(row_max[0], __shfl_xor_sync(0xffffffffu, row_max[0], 2));",
        "p[14] = expf(S[14] - row_max[1]);", "row_sum[1] = row_sum[1] + __shfl_xor_sync(0xffffffffu, row_sum[1], 1);"})
    EXPECT_NE(softmax.find(line), std::string::npos) << line << "\n" << softmax;
}

// nvcc compiles both for sm_80 and sm_90 without spills or warnings.
TEST(FragmentElementsCode, NvccCompilesWithoutSpills) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  cuda_test::TempDir dir;
  for (const LoweredFunc& f : {cuda_test::mma_epilogue_func(64, 32, 32, Float(16), "epi"),
                               cuda_test::back_to_back_gemm_func(32, 32, 32, 16, BFloat(16), "b2b")}) {
    const std::string cu = dir.path() + "/" + f.name + ".cu";
    cuda_test::write_file(cu, build_cuda(f).source());
    for (const char* arch : {"sm_80", "sm_90"}) {
      SCOPED_TRACE(f.name + " " + arch);
      cuda_test::CommandResult r = cuda_test::run_command(
          fmt::format("{} -std=c++17 -arch={} -cubin --resource-usage -Werror all-warnings {} -o {}",
                      cuda_test::quote(nvcc), arch, cuda_test::quote(cu), cuda_test::quote(cu + ".cubin")));
      ASSERT_EQ(r.status, 0) << r.output;
      EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
    }
  }
}

// D = epilogue(B, C) with C = A B (A 16 x 16, B 16 x n, float16) on one warp, C's mma at
// D's block loop; `more` schedules what else a case needs (at D's block and row loops).
LoweredFunc one_warp_epilogue(
    int n, const std::string& name, const std::function<Tensor(const Tensor& B, const Tensor& C)>& epilogue,
    const std::function<void(Schedule&, const Tensor& D, const IterVar& block, const IterVar& row)>& more = {}) {
  const DataType t = Float(16);
  Tensor A = placeholder({16, 16}, t, "A"), B = placeholder({16, n}, t, "B");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = epilogue(B, C);
  Schedule s = create_schedule({D});
  Tensor AF = s.cache_read(A, "warp", {C}), BF = s.cache_read(B, "warp", {C});
  auto [block, row] = s[D].split(D.axis(0), 16);
  s[D].bind(block, thread_axis("blockIdx.x"));
  if (more) more(s, D, block, row);
  cuda_test::mma_stage(s, C, AF, BF, t, s[D], block);
  return lower(s, {A, B, D}, name);
}

// D = C(i, j) - C(i, (j + 2) % 16): the second element is another lane's.
LoweredFunc crossing_lanes_func() {
  return one_warp_epilogue(16, "crossing", [](const Tensor&, const Tensor& C) {
    return compute(
        {16, 16}, [&](Expr i, Expr j) { return C(i, j) - C(i, (j + 2) % 16); }, "D");
  });
}

// D = G + C with G = float(B) in "warp" scope: G is computed from global memory, not from
// fragments, so nothing gives it a layout.
LoweredFunc unlaid_warp_buffer_func() {
  Tensor G;
  return one_warp_epilogue(
      8, "unlaid",
      [&](const Tensor& B, const Tensor& C) {
        G = compute(
            {16, 8}, [&](Expr i, Expr j) { return cast(Float(32), B(i, j)); }, "G");
        return compute(
            {16, 8}, [&](Expr i, Expr j) { return G(i, j) + C(i, j); }, "D");
      },
      [&](Schedule& s, const Tensor& D, const IterVar& block, const IterVar&) {
        s[G].set_scope("warp");
        s[G].compute_at(s[D], block);
      });
}

// D = C + 1 over columns split by 6: each lane's columns (2t, 2t + 1, 2t + 8, 2t + 9)
// fall in two of the three parts, which two differing by lane.
LoweredFunc split_by_six_func() {
  return one_warp_epilogue(
      16, "split6",
      [](const Tensor&, const Tensor& C) {
        return compute(
            {16, 16}, [&](Expr i, Expr j) { return C(i, j) + 1.0f; }, "D");
      },
      [](Schedule& s, const Tensor& D, const IterVar&, const IterVar&) { s[D].split(D.axis(1), 6); });
}

// exp(C - row_max) with the row max computed inside D's row loop: its buffer is allocated
// inside that loop, which makes the loop no lane nest.
LoweredFunc fused_row_max_func() {
  Tensor m;
  return one_warp_epilogue(
      16, "fused",
      [&](const Tensor&, const Tensor& C) {
        IterVar j1 = reduce_axis({0, 16}, "j");
        m = compute(
            {16}, [&](Expr i) { return max(C(i, j1), {j1}); }, "row_max");
        return compute(
            {16, 16}, [&](Expr i, Expr j) { return exp(C(i, j) - m(i)); }, "D");
      },
      [&](Schedule& s, const Tensor& D, const IterVar&, const IterVar& row) {
        s[m].set_scope("warp");
        s[m].compute_at(s[D], row);
      });
}

// gemm_softmax's loop IR with each store to `buffer` rewritten by `edit` (what a schedule
// cannot make, a hand-written or transformed loop IR can).
LoweredFunc softmax_with_edited_stores(const std::string& buffer, const std::function<Expr(const StoreNode*)>& edit) {
  struct Editor : IRMutator {
    std::string buffer;
    std::function<Expr(const StoreNode*)> edit;
    Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
      if (n->buffer.name() != buffer) return IRMutator::mutate_store(s, n);
      return store(n->buffer, edit(n), n->indices, n->predicate);
    }
  } editor;
  editor.buffer = buffer;
  editor.edit = edit;
  LoweredFunc f = cuda_test::gemm_softmax_func(16, 16, 16, Float(16), "edited");
  f.body = editor.mutate(f.body);
  return f;
}

// A row reduction's lanes each start from its initial value, then combine: it must be the
// identity, and the update a combination by +, *, min or max.
TEST(FragmentElementsErrors, RowReductionsStartFromTheIdentityAndCombine) {
  auto zero_start = [](const StoreNode* n) { return as_const_float(n->value) ? Expr(0.0f) : n->value; };
  expect_error([&] { build_cuda(softmax_with_edited_stores("row_max", zero_start)); },
               {"CUDA: in kernel 'edited_kernel0', the row reduction into 'row_max' at 0 does not start from the "
                "type's lowest value in its loop nest: each lane reduces its part from there, and the parts combine"});
  auto subtract = [](const StoreNode* n) {
    const auto* b = n->value.as<BinaryNode>();
    return b && b->op == BinOp::Add ? b->a - b->b : n->value;
  };
  expect_error([&] { build_cuda(softmax_with_edited_stores("row_sum", subtract)); },
               {"CUDA: in kernel 'edited_kernel0', the store to 'row_sum' at 0 runs in lane 0 of the lanes 0 to 3 "
                "that hold the element: only a row reduction (the element combined by +, *, min or max with a value "
                "of that lane) may, its lanes' parts then combined"});
}

// Every lane must run the same steps: a row max that reads only column 0 of each row puts
// all of a row's updates in the lane holding that column.
TEST(FragmentElementsErrors, EveryLaneRunsTheSameSteps) {
  auto first_column = [](const StoreNode* n) {
    struct FirstColumn : IRMutator {
      Expr mutate_load(const Expr& e, const LoadNode* l) override {
        if (l->buffer.name() != "S") return IRMutator::mutate_load(e, l);
        return load(l->buffer, {l->indices[0] / 16 * 16});
      }
    } m;
    return m.mutate(n->value);
  };
  expect_error([&] { build_cuda(softmax_with_edited_stores("row_max", first_column)); },
               {"CUDA: in kernel 'edited_kernel0', a loop nest over warp fragments runs differently in lane 0 and lane "
                "1: each lane must run the same steps on the elements it holds, their loops' values differing with "
                "the lane's row and column in its fragments only (a lane skips only iterations its values put past "
                "the loop's range)"});
}

TEST(FragmentElementsErrors, EachLaneMayTouchOnlyTheElementsItHolds) {
  expect_error([] { build_cuda(fused_row_max_func()); },
               {"CUDA: kernel 'fused_kernel0' writes warp buffer 'row_max' element by element",
                "or a loop nest at warp level whose lanes each run the elements they hold"});
  expect_error([] { build_cuda(crossing_lanes_func()); },
               {"CUDA: in kernel 'crossing_kernel0', one step of the loop nest over warp fragments touches 'C' at 0, "
                "which lane 0 holds, and 'C' at 2, which lane 1 holds: a step must stay in one lane"});
  expect_error([] { build_cuda(unlaid_warp_buffer_func()); },
               {"CUDA: in kernel 'unlaid_kernel0', warp buffer 'G' is accessed element by element, but no tensor "
                "intrinsic reads or writes it and it is not computed from fragments that one does, so no fragment "
                "layout says which lane holds which element"});
  // A vector of 4 columns spans two lanes' elements.
  expect_error([] { build_cuda(cuda_test::mma_epilogue_func(16, 32, 16, Float(16), "vectors", 1, true)); },
               {"CUDA: in kernel 'vectors_kernel0', the store to 'D' in a loop nest over warp fragments is "
                "predicated, atomic or a vector; each lane stores its elements one by one"});
  // A split whose parts hold different lanes' columns in different shapes.
  expect_error([] { build_cuda(split_by_six_func()); },
               {"CUDA: in kernel 'split6_kernel0', a loop nest over warp fragments runs differently in lane 0 and "
                "lane 3: each lane must run the same steps on the elements it holds",
                "(a lane skips only iterations its values put past the loop's range)"});
}

}  // namespace
}  // namespace te
