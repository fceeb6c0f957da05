// bfloat16 as a dtype: BFloat(16), te::bfloat16's conversions (against PyTorch's), NDArray
// and .npy (stored as uint16 bits), DLPack, the expression rules and the simplifier, and
// interpret() against PyTorch and against plain C++. The backends: test_bfloat16_llvm.cpp
// and test_bfloat16_cuda.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "bfloat16_util.h"
#include "te/ops/matmul.h"
#include "te/ops/normalization.h"
#include "test_util.h"

namespace te {
namespace {

using bf16_test::golden;
using bf16_test::load_golden;
using bf16_test::nearest_bfloat16_bits;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("te_bf16_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// ---- DataType ----

TEST(BFloat16Type, IsAFloatKindOfItsOwn) {
  constexpr DataType t = BFloat(16);
  static_assert(t.is_float() && t.is_bfloat() && !t.is_float16() && t.bits() == 16 && t.bytes() == 2);
  static_assert(Float(16).is_float16() && !Float(16).is_bfloat() && !Float(32).is_float16());
  EXPECT_NE(BFloat(16), Float(16));
  EXPECT_EQ(BFloat(), BFloat(16));
  EXPECT_EQ(t.to_string(), "bfloat16");
  EXPECT_EQ(BFloat(16, 8).to_string(), "bfloat16x8");
  EXPECT_EQ(DataType::parse("bfloat16"), BFloat(16));
  EXPECT_EQ(DataType::parse("bfloat16x8"), BFloat(16, 8));
  EXPECT_EQ(dtype_of<bfloat16>(), BFloat(16));
  expect_error([] { DataType::parse("bfloat32"); }, {"unknown data type 'bfloat32'"});
  expect_error([] { BFloat(32); }, {"BFloat(32): bfloat16 is the only bfloat type"});
}

// ---- te::bfloat16 ----

TEST(BFloat16Storage, EveryValueSurvivesATripThroughFloat) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float f = bfloat16::bfloat16_bits_to_float(bits);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    ASSERT_EQ(u, b << 16);  // exact: the float's upper half
    if (!bf16_test::is_nan_bits(bits)) {
      ASSERT_EQ(bfloat16::float_to_bfloat16_bits(f), bits) << std::hex << b;
    }
  }
}

TEST(BFloat16Storage, RoundsToNearestEven) {
  // Every midpoint between neighbours rounds to the even one; just off it, to the nearer.
  for (uint32_t lo = 0; lo < 0x7f80; lo += 7) {
    const uint32_t mid = (lo << 16) | 0x8000u;
    const uint16_t even = static_cast<uint16_t>((lo & 1) ? lo + 1 : lo);
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint16_t s = static_cast<uint16_t>(sign >> 16);
      ASSERT_EQ(bfloat16::float_to_bfloat16_bits(from_bits(sign | mid)), s | even) << std::hex << lo;
      ASSERT_EQ(bfloat16::float_to_bfloat16_bits(from_bits(sign | (mid - 1))), s | lo) << std::hex << lo;
      ASSERT_EQ(bfloat16::float_to_bfloat16_bits(from_bits(sign | (mid + 1))), s | (lo + 1)) << std::hex << lo;
    }
  }
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(bfloat16(-2.0f).bits, 0xc000);
  EXPECT_EQ(bfloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x4049)), 3.140625f);
}

TEST(BFloat16Storage, OverflowGivesInfinityAndNaNStaysAQuietNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits, 0x7f80);
  EXPECT_EQ(bfloat16(-std::numeric_limits<float>::max()).bits, 0xff80);
  EXPECT_EQ(bfloat16(from_bits(0x7f7f7fff)).bits, 0x7f7f);  // the largest that stays finite
  EXPECT_EQ(bfloat16(inf).bits, 0x7f80);
  EXPECT_EQ(bfloat16(-inf).bits, 0xff80);
  EXPECT_EQ(bfloat16(from_bits(0x00000001)).bits, 0x0000);  // subnormals round like the rest
  EXPECT_EQ(bfloat16(from_bits(0x007fffff)).bits, 0x0080);
  // NaN: sign and top payload kept, quieted, never infinity (a payload in the low bits only).
  EXPECT_EQ(bfloat16(from_bits(0x7fc00000)).bits, 0x7fc0);
  EXPECT_EQ(bfloat16(from_bits(0xffc00000)).bits, 0xffc0);
  EXPECT_EQ(bfloat16(from_bits(0x7f800001)).bits, 0x7fc0);  // signalling, payload below the kept bits
  EXPECT_EQ(bfloat16(from_bits(0x7fa50000)).bits, 0x7fe5);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(std::nanf("")))));
}

TEST(BFloat16Storage, MatchesPyTorchsConversions) {
  const std::vector<float> in = NDArray::load_npy(golden("convert_in.npy")).to_vector<float>();
  const std::vector<uint16_t> expected = bf16_test::bits_of(load_golden("convert_out.npy"));
  ASSERT_EQ(in.size(), expected.size());
  for (size_t k = 0; k < in.size(); ++k) {
    EXPECT_TRUE(bf16_test::same_bits(bfloat16(in[k]).bits, expected[k])) << k << ": " << in[k];
    EXPECT_TRUE(bf16_test::same_bits(nearest_bfloat16_bits(in[k]), expected[k])) << k << ": " << in[k];
  }
}

// ---- NDArray, .npy, DLPack ----

TEST(BFloat16Array, HoldsBFloat16Elements) {
  NDArray a = NDArray::from_vector(std::vector<bfloat16>{bfloat16(1.5f), bfloat16(-3.0f), bfloat16(0.1f)}, {3});
  EXPECT_EQ(a.dtype(), BFloat(16));
  EXPECT_EQ(a.nbytes(), 6u);
  EXPECT_EQ(a.to_vector<bfloat16>()[1].bits, 0xc040);
  EXPECT_EQ(a.at<bfloat16>({2}).bits, bfloat16(0.1f).bits);
  a.at<bfloat16>({0}) = bfloat16(2.0f);
  EXPECT_EQ(static_cast<float>(a.copy().to_vector<bfloat16>()[0]), 2.0f);
  expect_error([&] { a.to_vector<half>(); }, {"to_vector", "bfloat16"});
  expect_error([&] { a.to_vector<uint16_t>(); }, {"to_vector", "bfloat16"});
  const DataType bfloat32(DataType::Code::BFloat, 32);  // not a te type: BFloat(32) throws
  expect_error([&] { NDArray::empty({2}, bfloat32); }, {"unsupported dtype bfloat32", "bfloat16"});
  expect_error([] { NDArray::empty({2}, BFloat(16, 4)); }, {"unsupported dtype bfloat16x4"});
}

TEST(BFloat16Npy, SavesTheBitsAsUint16AndReadsThemBack) {
  NDArray a = load_golden("a.npy");
  const std::string path = temp_path("roundtrip.npy");
  a.save_npy(path);
  EXPECT_NE(read_bytes(path).find("'descr': '<u2'"), std::string::npos);
  NDArray raw = NDArray::load_npy(path);  // numpy's view of it: the bits
  EXPECT_EQ(raw.dtype(), UInt(16));
  NDArray back = NDArray::load_npy(path, BFloat(16));
  EXPECT_EQ(back.dtype(), BFloat(16));
  EXPECT_EQ(back.shape(), a.shape());
  EXPECT_EQ(bf16_test::bits_of(back), bf16_test::bits_of(a));
  EXPECT_EQ(raw.to_vector<uint16_t>(), bf16_test::bits_of(a));
  // The same bytes as the golden file, which PyTorch's bits made.
  EXPECT_EQ(read_bytes(path), read_bytes(golden("a.npy")));
  std::remove(path.c_str());
}

TEST(BFloat16Npy, ReadsInt16BitsAndTheFilesOwnType) {
  const std::string path = temp_path("int16.npy");
  NDArray::from_vector(std::vector<int16_t>{0x3f80, -16384 /* 0xc000 */}, {2}).save_npy(path);
  NDArray b = NDArray::load_npy(path, BFloat(16));
  EXPECT_EQ(static_cast<float>(b.to_vector<bfloat16>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(b.to_vector<bfloat16>()[1]), -2.0f);
  EXPECT_EQ(NDArray::load_npy(path, Int(16)).dtype(), Int(16));  // a file's own type is fine
  std::remove(path.c_str());
}

TEST(BFloat16Npy, RefusesFilesThatHoldNoBFloat16Bits) {
  const std::string f16 = temp_path("f16.npy"), f32 = temp_path("f32.npy");
  NDArray::from_vector(std::vector<half>{half(1.0f)}, {1}).save_npy(f16);
  NDArray::from_vector(std::vector<float>{1.0f}, {1}).save_npy(f32);
  expect_error([&] { NDArray::load_npy(f16, BFloat(16)); },
               {"NDArray::load_npy", f16.c_str(), "float16 values, not bfloat16 bits"});
  expect_error([&] { NDArray::load_npy(f32, BFloat(16)); },
               {f32.c_str(), "float32 elements of 4 bytes", "2-byte integers"});
  expect_error([&] { NDArray::load_npy(f32, Float(64)); }, {f32.c_str(), "holds float32 elements, not float64"});
  std::remove(f16.c_str());
  std::remove(f32.c_str());
}

TEST(BFloat16DLPack, ExportsAndImportsKDLBfloat) {
  NDArray a = load_golden("b.npy");
  dlpack::DLManagedTensorVersioned* t = a.to_dlpack_versioned();
  EXPECT_EQ(t->dl_tensor.dtype.code, dlpack::kDLBfloat);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 16);
  NDArray b = NDArray::from_dlpack(t);
  EXPECT_EQ(b.dtype(), BFloat(16));
  EXPECT_EQ(b.data(), a.data());
  dlpack::DLManagedTensor* old = a.to_dlpack();
  EXPECT_EQ(old->dl_tensor.dtype.code, dlpack::kDLBfloat);
  NDArray c = NDArray::borrow_dlpack(old->dl_tensor);
  EXPECT_EQ(c.dtype(), BFloat(16));
  EXPECT_EQ(bf16_test::bits_of(c), bf16_test::bits_of(a));
  // Another width of kDLBfloat is refused, naming what te has.
  dlpack::DLTensor bad = old->dl_tensor;
  bad.dtype = {dlpack::kDLBfloat, 8, 1};
  expect_error([&] { NDArray::borrow_dlpack(bad); }, {"width of 8 bits", "bfloat of 16"});
  old->deleter(old);
}

// ---- Expressions ----

TEST(BFloat16Expr, LiteralsRoundOnceToNearestEven) {
  auto value = [](const Expr& e) { return e.as<FloatImmNode>()->value; };
  EXPECT_EQ(value(make_const(BFloat(16), 1.00390625)), 1.0);       // a tie: to even
  EXPECT_EQ(value(make_const(BFloat(16), 1.01171875)), 1.015625);  // a tie: to even (up)
  EXPECT_EQ(value(make_const(BFloat(16), 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30))), 1.0078125);
  EXPECT_EQ(value(make_const(BFloat(16), int64_t{16842753})),
            16908288.0);  // 2^24 + 2^16 + 1: up (through float: a tie, down)
  EXPECT_TRUE(std::isinf(value(make_const(BFloat(16), 1e39))));
  EXPECT_EQ(value(cast(BFloat(16), Expr(16842753))), 16908288.0);  // folded by cast
  EXPECT_EQ(to_string(make_const(BFloat(16), 0.5)), "bfloat16(0.5)");
}

TEST(BFloat16Expr, TypeRules) {
  Var x("x", BFloat(16)), h("h", Float(16)), f("f", Float(32)), d("d", Float(64)), i("i", Int(32));
  EXPECT_EQ((x + h).dtype(), Float(32));  // neither holds the other (PyTorch's rule)
  EXPECT_EQ((h * x).dtype(), Float(32));
  EXPECT_EQ((x + f).dtype(), Float(32));
  EXPECT_EQ((x + d).dtype(), Float(64));
  EXPECT_EQ((x + i).dtype(), BFloat(16));  // as float16: the float wins
  EXPECT_EQ((x * 0.5).dtype(), BFloat(16));
  EXPECT_EQ((x + 1).dtype(), BFloat(16));
  EXPECT_EQ(exp(x).dtype(), BFloat(16));
  EXPECT_EQ(max(x, x).dtype(), BFloat(16));
  expect_error([&] { (void)(x % x); }, {"not defined for floating-point operands", "bfloat16"});
  expect_error([&] { call_extern(BFloat(16), "f", {x}); }, {"bfloat16 has no C type"});
  expect_error([&] { call_extern(Float(32), "f", {x}); }, {"bfloat16 has no C type", "cast to float32"});
}

TEST(BFloat16Expr, SimplifierFoldsWithBFloat16Rounding) {
  Expr a = make_const(BFloat(16), 1.0), b = make_const(BFloat(16), 0.00390625);  // 2^-8: half an ulp of 1
  EXPECT_EQ(simplify(a + b).as<FloatImmNode>()->value, 1.0);                     // a tie: to even
  EXPECT_EQ(simplify(a + b + b).as<FloatImmNode>()->value, 1.0);                 // one rounding a step
  EXPECT_EQ(simplify(a * make_const(BFloat(16), 3.0) / make_const(BFloat(16), 7.0)).as<FloatImmNode>()->value,
            static_cast<float>(bfloat16(3.0f / 7.0f)));
  // float16 <-> bfloat16 is exact neither way: the casts stay.
  Var h("h", Float(16)), x("x", BFloat(16));
  EXPECT_NE(to_string(simplify(cast(Float(32), cast(BFloat(16), h)))).find("bfloat16"), std::string::npos);
  EXPECT_NE(to_string(simplify(cast(Float(32), cast(Float(16), x)))).find("float16("), std::string::npos);
  // bfloat16 -> float32 -> float64 is exact: one cast is enough; int8 fits bfloat16 exactly.
  EXPECT_EQ(to_string(simplify(cast(Float(64), cast(Float(32), x)))), "float64(x)");
  Var c("c", Int(8)), s("s", Int(16));
  EXPECT_EQ(to_string(simplify(cast(Int(32), cast(BFloat(16), c)))), "int32(c)");
  EXPECT_NE(to_string(simplify(cast(Int(32), cast(BFloat(16), s)))).find("bfloat16"), std::string::npos);
}

// ---- interpret() ----

LoweredFunc lower_default(const std::vector<Tensor>& outputs, const std::vector<Tensor>& args,
                          const std::string& name) {
  Schedule s = create_schedule(outputs);
  return lower(s, args, name);
}

TEST(BFloat16Interpret, ArithmeticMatchesPyTorch) {
  bf16_test::GoldenOps g = bf16_test::golden_ops();
  LoweredFunc f = lower_default(g.outputs(), g.args(), "golden_ops");
  std::vector<Argument> args = bf16_test::golden_ops_args();
  interpret(f, args);
  for (int k = 0; k < 4; ++k)
    bf16_test::expect_same_bits(load_golden(bf16_test::kGoldenOutputs[k]), args[2 + k].array(),
                                bf16_test::kGoldenOutputs[k]);
}

TEST(BFloat16Interpret, ConversionsAndMathMatchPlainCpp) {
  bf16_test::ConversionOps c = bf16_test::conversion_ops(32);
  LoweredFunc f = lower_default(c.outputs, c.args(), "conversions");
  std::vector<Argument> args = bf16_test::conversion_args(c);
  interpret(f, args);
  bf16_test::expect_conversions_match_reference(args, "interpret");
}

TEST(BFloat16Interpret, ScalarParametersAreRoundedToBFloat16) {
  Var s("s", BFloat(16));
  Tensor A = placeholder({4}, BFloat(16), "A");
  Tensor B = compute(
      {4}, [&](Expr i) { return A(i) * s; }, "B");
  LoweredFunc f = lower_default({B}, {A, B}, "scale");
  NDArray a = NDArray::from_vector(std::vector<bfloat16>(4, bfloat16(1.0f)), {4});
  NDArray b = NDArray::empty({4}, BFloat(16));
  interpret(f, {a, b, 1.00390625});  // a tie: s is 1.0
  EXPECT_EQ(b.to_vector<bfloat16>()[0].bits, 0x3f80);
  interpret(f, {a, b, int64_t{16842753}});
  EXPECT_EQ(static_cast<float>(b.to_vector<bfloat16>()[0]), 16908288.0f);
}

TEST(BFloat16Interpret, ReductionAccumulatesInFloat32) {
  const int K = 300, N = 5;
  Tensor a = placeholder({K, N}, BFloat(16), "a"), b = placeholder({K, N}, BFloat(16), "b");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor dot = compute(
      {N}, [&](Expr j) { return sum(cast(Float(32), a(k, j)) * cast(Float(32), b(k, j)), {k}); }, "dot");
  IterVar k2 = reduce_axis({0, K}, "k2");
  Tensor narrow = compute(
      {N}, [&](Expr j) { return sum(a(k2, j) * b(k2, j), {k2}); }, "narrow");
  LoweredFunc f = lower_default({dot, narrow}, {a, b, dot, narrow}, "dots");
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  std::vector<bfloat16> av(K * N), bv(K * N);
  for (auto& v : av) v = bfloat16(u(rng));
  for (auto& v : bv) v = bfloat16(u(rng));
  NDArray A = NDArray::from_vector(av, {K, N}), B = NDArray::from_vector(bv, {K, N});
  NDArray D = NDArray::empty({N}, Float(32)), R = NDArray::empty({N}, BFloat(16));
  interpret(f, {A, B, D, R});
  for (int j = 0; j < N; ++j) {
    float acc = 0, acc16 = 0;
    for (int i = 0; i < K; ++i) {
      const float x = static_cast<float>(av[i * N + j]), y = static_cast<float>(bv[i * N + j]);
      acc += x * y;                                           // float32 all along
      acc16 = bf16_test::r16(acc16 + bf16_test::r16(x * y));  // bfloat16 every step
    }
    EXPECT_EQ(D.to_vector<float>()[j], acc) << j;
    EXPECT_EQ(R.to_vector<bfloat16>()[j].bits, bfloat16(acc16).bits) << j;
  }
}

// te::ops treat bfloat16 as float16: computed in float32, rounded once at the end.
TEST(BFloat16Ops, MatmulAndSoftmaxComputeInFloat32) {
  const int M = 3, K = 50, N = 4;
  Tensor A = placeholder({M, K}, BFloat(16), "A"), B = placeholder({K, N}, BFloat(16), "B");
  Tensor C = ops::matmul(A, B);
  EXPECT_EQ(C.dtype(), Float(32));
  Tensor X = placeholder({M, K}, BFloat(16), "X");
  Tensor Y = ops::softmax(X);
  EXPECT_EQ(Y.dtype(), BFloat(16));
  LoweredFunc f = lower_default({C, Y}, {A, B, X, C, Y}, "ops");
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-3, 3);
  auto random = [&](int64_t rows, int64_t cols) {
    std::vector<bfloat16> v(static_cast<size_t>(rows * cols));
    for (auto& x : v) x = bfloat16(u(rng));
    return NDArray::from_vector(v, {rows, cols});
  };
  NDArray a = random(M, K), b = random(K, N), x = random(M, K);
  NDArray c = NDArray::empty({M, N}, Float(32)), y = NDArray::empty({M, K}, BFloat(16));
  interpret(f, {a, b, x, c, y});
  std::vector<bfloat16> av = a.to_vector<bfloat16>(), bv = b.to_vector<bfloat16>(), xv = x.to_vector<bfloat16>();
  std::vector<bfloat16> yv = y.to_vector<bfloat16>();
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = 0; k < K; ++k) acc += static_cast<float>(av[i * K + k]) * static_cast<float>(bv[k * N + j]);
      EXPECT_EQ(c.to_vector<float>()[i * N + j], acc);
    }
    double m = -1e30, total = 0;
    for (int k = 0; k < K; ++k) m = std::max(m, double(static_cast<float>(xv[i * K + k])));
    for (int k = 0; k < K; ++k) total += std::exp(static_cast<float>(xv[i * K + k]) - m);
    for (int k = 0; k < K; ++k) {
      const double want = std::exp(static_cast<float>(xv[i * K + k]) - m) / total;
      EXPECT_NEAR(static_cast<float>(yv[i * K + k]), want, want * 0.0079) << i << ", " << k;  // half an ulp, and a bit
    }
  }
}

}  // namespace
}  // namespace te
