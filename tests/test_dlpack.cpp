// DLPack interchange: zero-copy round trips both ways, ownership (each deleter runs
// exactly once), strides, dtypes, devices, versions, and DLPack tensors passed straight
// to interpret() and to JIT-built functions.
#include <gtest/gtest.h>

#include <cstddef>
#include <numeric>
#include <vector>

#include "te/te.h"
#include "test_util.h"

// Where DLPack's own header is installed, te's declarations must match its layout.
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
static_assert(sizeof(::DLTensor) == sizeof(te::dlpack::DLTensor));
static_assert(offsetof(::DLTensor, byte_offset) == offsetof(te::dlpack::DLTensor, byte_offset));
static_assert(offsetof(::DLTensor, strides) == offsetof(te::dlpack::DLTensor, strides));
static_assert(offsetof(::DLTensor, dtype) == offsetof(te::dlpack::DLTensor, dtype));
static_assert(sizeof(::DLManagedTensor) == sizeof(te::dlpack::DLManagedTensor));
static_assert(offsetof(::DLManagedTensor, deleter) == offsetof(te::dlpack::DLManagedTensor, deleter));
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
static_assert(sizeof(::DLManagedTensorVersioned) == sizeof(te::dlpack::DLManagedTensorVersioned));
static_assert(offsetof(::DLManagedTensorVersioned, flags) == offsetof(te::dlpack::DLManagedTensorVersioned, flags));
static_assert(offsetof(::DLManagedTensorVersioned, dl_tensor) ==
              offsetof(te::dlpack::DLManagedTensorVersioned, dl_tensor));
#endif
#endif

using namespace te;

namespace {
// te's declarations; in this namespace they hide DLPack's own (global) ones.
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;
using dlpack::DLTensor;

// A producer in the test: owns a float buffer and counts how often its deleter runs.
struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int deletions = 0;
  DLManagedTensor managed{};
  DLManagedTensorVersioned versioned{};

  Producer(std::vector<int64_t> shape_, std::vector<float> values) : data(std::move(values)), shape(std::move(shape_)) {
    fill(managed.dl_tensor);
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deletions; };
    fill(versioned.dl_tensor);
    versioned.version = {1, 0};
    versioned.manager_ctx = this;
    versioned.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deletions; };
  }
  void fill(DLTensor& t) {
    t.data = data.data();
    t.device = {dlpack::kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = {dlpack::kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
  }
  void set_strides(std::vector<int64_t> s) {
    strides = std::move(s);
    managed.dl_tensor.strides = strides.data();
    versioned.dl_tensor.strides = strides.data();
  }
};

std::vector<float> iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(DLPack, FromManagedIsZeroCopyAndCallsTheDeleterOnceAtTheLastReference) {
  Producer p({2, 3}, iota(6));
  {
    NDArray a = NDArray::from_dlpack(&p.managed);
    EXPECT_EQ(a.data(), p.data.data());
    EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.dtype(), Float(32));
    EXPECT_EQ(a.to_vector<float>(), iota(6));
    NDArray shared = a;  // copies share the storage and the ownership
    a = NDArray();
    EXPECT_EQ(p.deletions, 0);
    shared.at<float>({1, 2}) = 42.0f;  // writes go to the producer's memory
    EXPECT_EQ(p.data[5], 42.0f);
  }
  EXPECT_EQ(p.deletions, 1);
}

TEST(DLPack, FromVersionedIsZeroCopyAndCallsTheDeleterOnce) {
  Producer p({4}, iota(4, 1));
  {
    NDArray a = NDArray::from_dlpack(&p.versioned);
    EXPECT_EQ(a.data(), p.data.data());
    EXPECT_EQ(a.to_vector<float>(), iota(4, 1));
  }
  EXPECT_EQ(p.deletions, 1);
}

TEST(DLPack, ByteOffsetAndNullDeleterAreHonoured) {
  Producer p({2}, iota(4));
  p.managed.dl_tensor.byte_offset = 2 * sizeof(float);
  p.managed.deleter = nullptr;  // allowed by the spec: nothing to release
  NDArray a = NDArray::from_dlpack(&p.managed);
  EXPECT_EQ(a.data(), p.data.data() + 2);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{2, 3}));
}

TEST(DLPack, ToManagedIsZeroCopyAndKeepsTheStorageAliveUntilTheDeleter) {
  NDArray a = NDArray::from_vector(iota(6), {3, 2});
  void* data = a.data();
  DLManagedTensor* t = a.to_dlpack();
  a = NDArray();  // te's last NDArray is gone; the DLPack tensor still holds the data
  EXPECT_EQ(t->dl_tensor.data, data);
  EXPECT_EQ(t->dl_tensor.device.device_type, dlpack::kDLCPU);
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[0], 3);
  EXPECT_EQ(t->dl_tensor.shape[1], 2);
  ASSERT_NE(t->dl_tensor.strides, nullptr);
  EXPECT_EQ(t->dl_tensor.strides[0], 2);
  EXPECT_EQ(t->dl_tensor.strides[1], 1);
  EXPECT_EQ(t->dl_tensor.byte_offset, 0u);
  EXPECT_EQ(t->dl_tensor.dtype.code, dlpack::kDLFloat);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(t->dl_tensor.dtype.lanes, 1);
  EXPECT_EQ(static_cast<float*>(t->dl_tensor.data)[5], 5.0f);
  t->deleter(t);  // frees the storage (LeakSanitizer checks that it does)
}

TEST(DLPack, RoundTripThroughTeKeepsTheSamePointerBothWays) {
  // te -> DLPack -> te: the same storage.
  NDArray a = NDArray::from_vector(iota(5), {5});
  NDArray b = NDArray::from_dlpack(a.to_dlpack_versioned());
  EXPECT_EQ(b.data(), a.data());
  a = NDArray();
  EXPECT_EQ(b.to_vector<float>(), iota(5));  // b's ownership keeps the data alive

  // DLPack -> te -> DLPack: the producer's memory, deleter once after both releases.
  Producer p({5}, iota(5));
  DLManagedTensor* back = nullptr;
  {
    NDArray c = NDArray::from_dlpack(&p.managed);
    back = c.to_dlpack();
  }
  EXPECT_EQ(back->dl_tensor.data, p.data.data());
  EXPECT_EQ(p.deletions, 0);
  back->deleter(back);
  EXPECT_EQ(p.deletions, 1);
}

TEST(DLPack, VersionedExportCarriesVersionAndFlags) {
  NDArray a = NDArray::from_vector(std::vector<int16_t>{1, 2, 3}, {3});
  DLManagedTensorVersioned* t = a.to_dlpack_versioned();
  EXPECT_EQ(t->version.major, 1u);
  EXPECT_EQ(t->version.minor, dlpack::kMinorVersion);
  EXPECT_EQ(t->flags, 0u);
  EXPECT_EQ(t->dl_tensor.dtype.code, dlpack::kDLInt);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 16);
  EXPECT_EQ(t->dl_tensor.data, a.data());
  t->deleter(t);
}

TEST(DLPack, DtypesMapBothWaysIncludingFloat16AndBool) {
  struct Case {
    DataType te;
    uint8_t code, bits;
  };
  const Case cases[] = {
      {Bool(), dlpack::kDLBool, 8},      {Int(8), dlpack::kDLInt, 8},       {Int(16), dlpack::kDLInt, 16},
      {Int(32), dlpack::kDLInt, 32},     {Int(64), dlpack::kDLInt, 64},     {UInt(8), dlpack::kDLUInt, 8},
      {UInt(16), dlpack::kDLUInt, 16},   {UInt(32), dlpack::kDLUInt, 32},   {UInt(64), dlpack::kDLUInt, 64},
      {Float(16), dlpack::kDLFloat, 16}, {Float(32), dlpack::kDLFloat, 32}, {Float(64), dlpack::kDLFloat, 64}};
  for (const Case& c : cases) {
    NDArray a = NDArray::empty({2}, c.te);
    DLManagedTensor* t = a.to_dlpack();
    EXPECT_EQ(t->dl_tensor.dtype.code, c.code) << c.te;
    EXPECT_EQ(t->dl_tensor.dtype.bits, c.bits) << c.te;
    NDArray back = NDArray::from_dlpack(t);
    EXPECT_EQ(back.dtype(), c.te);
    EXPECT_EQ(back.data(), a.data());
  }
  // Values survive too: float16 bits and bools.
  NDArray h = NDArray::from_vector(std::vector<half>{half(1.5f), half(-2.0f)}, {2});
  NDArray h2 = NDArray::from_dlpack(h.to_dlpack());
  EXPECT_EQ(static_cast<float>(h2.to_vector<half>()[1]), -2.0f);
  NDArray b = NDArray::from_vector(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(NDArray::from_dlpack(b.to_dlpack()).to_vector<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(DLPack, StridesOfCompactLayoutsAreAcceptedOthersRejected) {
  Producer p({2, 3}, iota(6));
  p.set_strides({3, 1});
  EXPECT_EQ(NDArray::from_dlpack(&p.managed).data(), p.data.data());
  EXPECT_EQ(p.deletions, 1);

  // A dimension of extent 1 may have any stride (PyTorch gives such strides).
  Producer q({3, 1}, iota(3));
  q.set_strides({1, 7});
  EXPECT_EQ(NDArray::from_dlpack(&q.managed).to_vector<float>(), iota(3));

  // A transposed view: rejected, and the tensor stays the caller's (no deleter call).
  Producer r({2, 3}, iota(6));
  r.set_strides({1, 2});
  expect_error([&] { NDArray::from_dlpack(&r.managed); }, {"NDArray::from_dlpack", "strides (1, 2)", "shape (2, 3)",
                                                           "not compact row-major", "expected (3, 1)", "contiguous"});
  EXPECT_EQ(r.deletions, 0);
}

TEST(DLPack, NonCpuDevicesAreRejectedWithTheDevice) {
  Producer p({4}, iota(4));
  p.managed.dl_tensor.device = {dlpack::kDLCUDA, 1};
  expect_error([&] { NDArray::from_dlpack(&p.managed); },
               {"NDArray::from_dlpack", "device kDLCUDA (id 1)", "host memory", "kDLCPU"});
  EXPECT_EQ(p.deletions, 0);
  expect_error([&] { NDArray::borrow_dlpack(p.managed.dl_tensor); }, {"DLPack argument", "kDLCUDA"});
}

TEST(DLPack, UnsupportedTypesAreRejectedWithTheReason) {
  Producer p({4}, iota(4));
  DLTensor& t = p.managed.dl_tensor;
  t.dtype = {dlpack::kDLBfloat, 32, 1};
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"width of 32 bits", "bfloat of 16"});
  t.dtype = {dlpack::kDLComplex, 64, 1};
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"complex"});
  t.dtype = {dlpack::kDLFloat, 32, 4};
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"4 lanes", "lanes 1"});
  t.dtype = {dlpack::kDLInt, 4, 1};
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"width of 4 bits"});
  t.dtype = {dlpack::kDLBool, 1, 1};
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"width of 1 bits", "bool of 8 bits"});
  t.dtype = {99, 32, 1};
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"unknown DLPack type code 99"});
  EXPECT_EQ(p.deletions, 0);
}

TEST(DLPack, MalformedTensorsAreRejected) {
  Producer p({2, 2}, iota(4));
  DLTensor& t = p.managed.dl_tensor;
  t.byte_offset = 2;  // not a multiple of 4
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"not aligned", "4-byte float32"});
  t.byte_offset = 0;
  t.data = nullptr;
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"data pointer is null", "4 elements"});
  t.data = p.data.data();
  p.shape[1] = -1;
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"dimension 1", "negative extent -1"});
  t.shape = nullptr;
  expect_error([&] { NDArray::from_dlpack(&p.managed); }, {"shape pointer is null"});
  expect_error([] { NDArray::from_dlpack(static_cast<DLManagedTensor*>(nullptr)); }, {"null DLManagedTensor"});
  EXPECT_EQ(p.deletions, 0);
}

TEST(DLPack, EmptyTensorWithNullDataIsAccepted) {
  std::vector<int64_t> shape{0, 3};
  DLManagedTensor t{};
  t.dl_tensor.device = {dlpack::kDLCPU, 0};
  t.dl_tensor.ndim = 2;
  t.dl_tensor.dtype = {dlpack::kDLFloat, 64, 1};
  t.dl_tensor.shape = shape.data();
  NDArray a = NDArray::from_dlpack(&t);
  EXPECT_TRUE(a.defined());
  EXPECT_NE(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0);
}

TEST(DLPack, VersionedTensorsCheckVersionAndReadOnly) {
  Producer p({2}, iota(2));
  p.versioned.version = {2, 0};
  expect_error([&] { NDArray::from_dlpack(&p.versioned); }, {"DLPack version 2.0 is not supported"});
  p.versioned.version = {1, 3};  // later minor versions are compatible
  p.versioned.flags = dlpack::kFlagReadOnly;
  expect_error([&] { NDArray::from_dlpack(&p.versioned); }, {"read-only", "writable"});
  EXPECT_EQ(p.deletions, 0);
  p.versioned.flags = dlpack::kFlagIsCopied;
  NDArray::from_dlpack(&p.versioned);
  EXPECT_EQ(p.deletions, 1);
}

TEST(DLPack, UndefinedArrayCannotBeExported) {
  expect_error([] { NDArray().to_dlpack(); }, {"NDArray::to_dlpack", "undefined"});
  expect_error([] { NDArray().to_dlpack_versioned(); }, {"NDArray::to_dlpack_versioned", "undefined"});
}

// C = A * 2 + B, split and vectorized, over a symbolic n.
LoweredFunc saxpy_like() {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f + B(i); }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 4);
  s[C].vectorize(xi);
  (void)xo;
  return lower(s, {A, B, C}, "saxpy_like");
}

TEST(DLPack, BuiltFunctionsAndInterpretTakeDLPackTensorsWithoutOwningThem) {
  LoweredFunc f = saxpy_like();
  Module m = build(f);
  Producer a({10}, iota(10)), b({10}, iota(10, 100)), c({10}, std::vector<float>(10, -1.0f));
  // DLTensor*, DLManagedTensor* and DLManagedTensorVersioned* all work, mixed with NDArray.
  m("saxpy_like")(&a.managed.dl_tensor, &b.managed, &c.versioned);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c.data[i], 2.0f * i + (100 + i)) << i;

  std::fill(c.data.begin(), c.data.end(), -1.0f);
  NDArray b_nd = NDArray::from_vector(iota(10, 100), {10});
  interpret(f, {&a.managed.dl_tensor, b_nd, &c.managed.dl_tensor});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c.data[i], 2.0f * i + (100 + i)) << i;
  EXPECT_EQ(a.deletions + b.deletions + c.deletions, 0);  // calls borrow
}

TEST(DLPack, BuiltFunctionsCheckDLPackArgumentsLikeArrays) {
  Module m = build(saxpy_like());
  Function f = m("saxpy_like");
  Producer a({10}, iota(10)), b({9}, iota(9)), c({10}, iota(10));
  expect_error([&] { f(&a.managed.dl_tensor, &b.managed.dl_tensor, &c.managed.dl_tensor); },
               {"argument 2 ('B')", "dimension 0 must be n = 10"});
  c.managed.dl_tensor.device = {dlpack::kDLCUDA, 0};
  expect_error([&] { f(&a.managed.dl_tensor, &a.managed.dl_tensor, &c.managed.dl_tensor); },
               {"DLPack argument", "kDLCUDA"});
  c.managed.dl_tensor.device = {dlpack::kDLCPU, 0};
  c.versioned.flags = dlpack::kFlagReadOnly;
  expect_error([&] { f(&a.managed.dl_tensor, &a.managed.dl_tensor, &c.versioned); }, {"read-only"});
  expect_error([&] { f(static_cast<const DLTensor*>(nullptr), &a.managed, &a.managed); },
               {"null DLPack tensor pointer"});
  Producer i({10}, iota(10));
  i.managed.dl_tensor.dtype = {dlpack::kDLInt, 32, 1};
  expect_error([&] { f(&i.managed.dl_tensor, &a.managed, &c.managed); },
               {"argument 1 ('A')", "dtype int32, expected float32"});
}

TEST(DLPack, FromCReinterpretsLayoutIdenticalStructs) {
  // A stand-in for DLPack's own C struct: the same layout under another name.
  struct CManaged {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(CManaged*);
  };
  CManaged c{};
  EXPECT_EQ(dlpack::from_c<DLManagedTensor>(&c), reinterpret_cast<DLManagedTensor*>(&c));
  EXPECT_EQ(dlpack::to_c<CManaged>(dlpack::from_c<DLManagedTensor>(&c)), &c);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, dl_tensor), 32u);
  EXPECT_EQ(offsetof(DLTensor, byte_offset), 40u);
}

}  // namespace
