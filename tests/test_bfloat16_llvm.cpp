// bfloat16 through the LLVM backend: stored as i16, computed in float32 registers, rounded
// (to nearest even, in integer operations) after every operation, so every result equals
// interpret()'s bit for bit, vectorized or not; and bfloat16 in the AOT C interface.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "bfloat16_util.h"
#include "test_llvm_util.h"
#include "test_util.h"

namespace te {
namespace {

using llvm_test::exact_options;

// Splits the only (or last) axis of each stage by `lanes` and vectorizes the inner part.
Schedule vectorized(const std::vector<Tensor>& outputs, int lanes) {
  Schedule s = create_schedule(outputs);
  for (const Tensor& t : outputs) {
    auto [o, i] = s[t].split(t.axis(t.ndim() - 1), lanes);
    (void)o;
    s[t].vectorize(i);
  }
  return s;
}

// Runs f natively and through interpret() on copies of args; expects every array the same
// (bfloat16 bit for bit, NaN matching NaN). Returns the native results.
std::vector<Argument> expect_same_as_interpret(const LoweredFunc& f, const std::vector<Argument>& args,
                                               const BuildOptions& options = exact_options()) {
  std::vector<Argument> native = llvm_test::copy_arguments(args), reference = llvm_test::copy_arguments(args);
  build(f, options)(f.name).call(native);
  interpret(f, reference);
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k].is_array()) continue;
    const std::string what = f.name + " argument " + f.params[k].name();
    if (args[k].array().dtype() == BFloat(16))
      bf16_test::expect_same_bits(reference[k].array(), native[k].array(), what);
    else
      llvm_test::expect_arrays_equal(reference[k].array(), native[k].array(), 0, what);
  }
  return native;
}

TEST(BFloat16Llvm, VectorizedArithmeticMatchesPyTorchAndInterpret) {
  bf16_test::GoldenOps g = bf16_test::golden_ops();
  LoweredFunc f = lower(vectorized(g.outputs(), 8), g.args(), "golden_ops_vec");
  // Contraction allowed (the default): the rounding between operations keeps them apart.
  std::vector<Argument> out = expect_same_as_interpret(f, bf16_test::golden_ops_args(), BuildOptions());
  for (int k = 0; k < 4; ++k)
    bf16_test::expect_same_bits(bf16_test::load_golden(bf16_test::kGoldenOutputs[k]), out[2 + k].array(),
                                bf16_test::kGoldenOutputs[k]);
  // Vector code: 8 bfloat16 lanes loaded as i16, computed as float.
  const std::string ir = llvm_ir(f);
  EXPECT_NE(ir.find("<8 x i16>"), std::string::npos);
  EXPECT_NE(ir.find("<8 x float>"), std::string::npos);
}

TEST(BFloat16Llvm, ConversionsAndMathMatchInterpretAndPlainCpp) {
  for (int lanes : {1, 4, 8}) {
    bf16_test::ConversionOps c = bf16_test::conversion_ops(32);
    Schedule s = lanes == 1 ? create_schedule(c.outputs) : vectorized(c.outputs, lanes);
    LoweredFunc f = lower(s, c.args(), "conversions_" + std::to_string(lanes));
    std::vector<Argument> out = expect_same_as_interpret(f, bf16_test::conversion_args(c));
    bf16_test::expect_conversions_match_reference(out, f.name);
  }
}

TEST(BFloat16Llvm, ContractionNeverFusesAcrossARounding) {
  Tensor a = placeholder({1024}, BFloat(16), "a"), b = placeholder({1024}, BFloat(16), "b");
  Tensor c = compute(
      {1024}, [&](Expr i) { return a(i) * b(i) + a(i); }, "c");
  Schedule s = vectorized({c}, 16);
  LoweredFunc f = lower(s, {a, b, c}, "muladd");
  std::vector<Argument> args = {llvm_test::random_array<bfloat16>({1024}, 1),
                                llvm_test::random_array<bfloat16>({1024}, 2), NDArray::empty({1024}, BFloat(16))};
  std::vector<Argument> out = expect_same_as_interpret(f, args, BuildOptions());
  std::vector<bfloat16> av = args[0].array().to_vector<bfloat16>(), bv = args[1].array().to_vector<bfloat16>();
  std::vector<bfloat16> cv = out[2].array().to_vector<bfloat16>();
  for (size_t i = 0; i < cv.size(); ++i) {
    const float x = static_cast<float>(av[i]), y = static_cast<float>(bv[i]);
    ASSERT_EQ(cv[i].bits, bfloat16(bf16_test::r16(x * y) + x).bits) << i;
  }
}

TEST(BFloat16Llvm, VectorizedReductionAccumulatesInFloat32) {
  const int K = 257, N = 64;
  Tensor a = placeholder({K, N}, BFloat(16), "a"), b = placeholder({K, N}, BFloat(16), "b");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor dot = compute(
      {N}, [&](Expr j) { return sum(cast(Float(32), a(k, j)) * cast(Float(32), b(k, j)), {k}); }, "dot");
  Tensor rounded = compute(
      {N}, [&](Expr j) { return cast(BFloat(16), dot(j)); }, "rounded");
  Schedule s = create_schedule({rounded});
  auto [jo, ji] = s[dot].split(dot.axis(0), 8);
  (void)jo;
  s[dot].reorder({jo, k, ji});
  s[dot].vectorize(ji);
  auto [ro, ri] = s[rounded].split(rounded.axis(0), 8);
  (void)ro;
  s[rounded].vectorize(ri);
  LoweredFunc f = lower(s, {a, b, rounded}, "bf16_dot");
  EXPECT_NE(llvm_ir(f, true, exact_options()).find("<8 x float>"), std::string::npos);
  std::vector<Argument> args = {llvm_test::random_array<bfloat16>({K, N}, 3, -2, 2),
                                llvm_test::random_array<bfloat16>({K, N}, 4, -2, 2), NDArray::empty({N}, BFloat(16))};
  std::vector<Argument> out = expect_same_as_interpret(f, args);
  std::vector<bfloat16> av = args[0].array().to_vector<bfloat16>(), bv = args[1].array().to_vector<bfloat16>();
  std::vector<bfloat16> r = out[2].array().to_vector<bfloat16>();
  for (int j = 0; j < N; ++j) {
    float acc = 0;
    for (int i = 0; i < K; ++i) acc += static_cast<float>(av[i * N + j]) * static_cast<float>(bv[i * N + j]);
    EXPECT_EQ(r[j].bits, bfloat16(acc).bits) << j;
  }
}

TEST(BFloat16Llvm, ParallelVectorLoopsOverALargeArray) {
  const int n = 100003;  // not a multiple of the vector: a tail
  Tensor a = placeholder({n}, BFloat(16), "a");
  Tensor b = compute(
      {n}, [&](Expr i) { return a(i) / make_const(BFloat(16), 3.0) - sqrt(abs(a(i))); }, "b");
  Schedule s = create_schedule({b});
  auto [o, i] = s[b].split(b.axis(0), 16);
  s[b].parallel(o);
  s[b].vectorize(i);
  LoweredFunc f = lower(s, {a, b}, "bf16_parallel");
  expect_same_as_interpret(f, {llvm_test::random_array<bfloat16>({n}, 9, -1e3, 1e3), NDArray::empty({n}, BFloat(16))});
}

TEST(BFloat16Llvm, ScalarParametersAreRoundedAsInterpretRoundsThem) {
  Var s("s", BFloat(16));
  Tensor A = placeholder({16}, BFloat(16), "A");
  Tensor B = compute(
      {16}, [&](Expr i) { return A(i) * s; }, "B");
  LoweredFunc f = lower(vectorized({B}, 8), {A, B}, "scale");
  NDArray a = llvm_test::random_array<bfloat16>({16}, 5);
  for (Argument v : {Argument(1.00390625), Argument(0.1), Argument(int64_t{16842753}), Argument(-3e38)})
    expect_same_as_interpret(f, {a, NDArray::empty({16}, BFloat(16)), v});
}

// ---- Ahead of time: bfloat16 buffers are uint16_t* (the bits), scalars float ----

TEST(BFloat16Aot, TheCInterfaceTakesTheBits) {
  Var s("s", BFloat(16));
  Tensor A = placeholder({8}, BFloat(16), "A");
  Tensor B = compute(
      {8}, [&](Expr i) { return A(i) * s + make_const(BFloat(16), 0.5); }, "B");
  LoweredFunc f = lower(create_schedule({B}), {A, B}, "bf16_axpb");
  EXPECT_EQ(c_prototype(f), "int32_t bf16_axpb(uint16_t* A, uint16_t* B, float s)");
  const std::string header = c_header({f}, "BF16_H");
  EXPECT_NE(header.find("A: bfloat16[8] (bfloat16 bits: a float32's upper half)"), std::string::npos) << header;
  EXPECT_NE(header.find("s: bfloat16 (passed as float, rounded to bfloat16)"), std::string::npos) << header;

  const std::string dir =
      (std::filesystem::temp_directory_path() / ("te_bf16_aot_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  export_library(f, dir + "/libbf16.so");
  void* lib = ::dlopen((dir + "/libbf16.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  using Fn = int32_t (*)(uint16_t*, uint16_t*, float);
  auto fn = reinterpret_cast<Fn>(::dlsym(lib, "bf16_axpb"));
  ASSERT_NE(fn, nullptr);
  NDArray a = llvm_test::random_array<bfloat16>({8}, 6), b = NDArray::empty({8}, BFloat(16));
  ASSERT_EQ(fn(static_cast<uint16_t*>(a.data()), static_cast<uint16_t*>(b.data()), 1.00390625f), 0);
  NDArray expected = NDArray::empty({8}, BFloat(16));
  interpret(f, {a, expected, 1.0});  // the kernel rounds s to bfloat16 (1.0) as interpret() does
  bf16_test::expect_same_bits(expected, b, "AOT bf16_axpb");
  ::dlclose(lib);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace te
