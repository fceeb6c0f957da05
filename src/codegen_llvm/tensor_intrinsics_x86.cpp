// x86 tensor intrinsics: the 16 x 4 uint8 x int8 -> int32 dot (te::intrinsics::
// x86_dot_16x4_u8s8), as vpdpbusd where the target CPU has avx512vnni, else as generic
// vector IR that any target lowers (x86-64 of every level, aarch64): widen, multiply, add
// the four products of each lane. Both wrap as int32, as the declaration does.
#include <fmt/format.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <cstring>

#include "codegen_llvm/llvm_compat.h"
#include "codegen_llvm/tensor_intrinsics.h"

namespace te::codegen {

namespace {

constexpr unsigned kLanes = 16;  // int32 accumulators (one zmm)
constexpr unsigned kDepth = 4;   // bytes reduced into each

// C[0..16) += sum_k A[k] * B[i*4 + k] with A: u8[4], B: s8[16*4], C: i32[16] (dense).
void dot_vnni(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& r, const TensorIntrinsicTarget& t) {
  llvm::Type* i32 = b.getInt32Ty();
  auto* v16 = llvm::FixedVectorType::get(i32, kLanes);
  // The four bytes of A as one int32, in every lane; B's 64 bytes as 16 int32; C.
  llvm::Value* a_word = b.CreateAlignedLoad(i32, b.CreateBitCast(r[0], compat::pointer_to(i32)), llvm::Align(1));
  llvm::Value* a = b.CreateVectorSplat(kLanes, a_word);
  llvm::Value* bv = b.CreateAlignedLoad(v16, b.CreateBitCast(r[1], compat::pointer_to(v16)), llvm::Align(1));
  llvm::Value* cp = b.CreateBitCast(r[2], compat::pointer_to(v16));
  llvm::Value* c = b.CreateAlignedLoad(v16, cp, llvm::Align(4));
  llvm::Function* f = compat::intrinsic(t.module, llvm::Intrinsic::x86_avx512_vpdpbusd_512);
  // The operands' types as this LLVM declares them (<16 x i32> or <64 x i8>).
  llvm::FunctionType* ft = f->getFunctionType();
  llvm::Value* sum = b.CreateCall(f, {b.CreateBitCast(c, ft->getParamType(0)), b.CreateBitCast(a, ft->getParamType(1)),
                                      b.CreateBitCast(bv, ft->getParamType(2))});
  b.CreateAlignedStore(b.CreateBitCast(sum, v16), cp, llvm::Align(4));
}

// Shuffle mask picking lanes first, first + step, ... (count of them).
std::vector<int> strided(unsigned count, unsigned first, unsigned step) {
  std::vector<int> m(count);
  for (unsigned i = 0; i < count; ++i) m[i] = static_cast<int>(first + i * step);
  return m;
}

// In int16, then pairs summed into int32 (the shape x86's pmaddwd has, which LLVM selects
// on SSE2/AVX2/AVX-512 and other targets lower as widening multiply-adds): u8 and s8 fit
// int16 exactly, and so does each product (-32640 .. 32385), but not a sum of two, which
// is why the pairs are added in int32.
void dot_generic(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& r) {
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Type* i16 = b.getInt16Ty();
  llvm::Type* i32 = b.getInt32Ty();
  constexpr unsigned kAll = kLanes * kDepth;
  auto* a_ty = llvm::FixedVectorType::get(i8, kDepth);
  auto* b_ty = llvm::FixedVectorType::get(i8, kAll);
  auto* v16 = llvm::FixedVectorType::get(i32, kLanes);
  llvm::Value* a4 = b.CreateAlignedLoad(a_ty, b.CreateBitCast(r[0], compat::pointer_to(a_ty)), llvm::Align(1));
  llvm::Value* bytes = b.CreateAlignedLoad(b_ty, b.CreateBitCast(r[1], compat::pointer_to(b_ty)), llvm::Align(1));
  // A's four bytes repeated for every lane: element j of the 64 pairs with A[j % 4].
  std::vector<int> repeat(kAll);
  for (unsigned j = 0; j < kAll; ++j) repeat[j] = static_cast<int>(j % kDepth);
  llvm::Value* a = b.CreateZExt(b.CreateShuffleVector(a4, a4, repeat), llvm::FixedVectorType::get(i16, kAll));
  llvm::Value* bw = b.CreateSExt(bytes, llvm::FixedVectorType::get(i16, kAll));
  auto* half = llvm::FixedVectorType::get(i32, kAll / 2);
  // Products 2j and 2j + 1 summed: 32 int32 pair sums.
  auto pair_product = [&](unsigned first) {
    std::vector<int> m = strided(kAll / 2, first, 2);
    return b.CreateMul(b.CreateSExt(b.CreateShuffleVector(a, a, m), half),
                       b.CreateSExt(b.CreateShuffleVector(bw, bw, m), half));
  };
  llvm::Value* pairs = b.CreateAdd(pair_product(0), pair_product(1));
  // Lane i: pair sums 2i and 2i + 1.
  llvm::Value* dots = b.CreateAdd(b.CreateShuffleVector(pairs, pairs, strided(kLanes, 0, 2)),
                                  b.CreateShuffleVector(pairs, pairs, strided(kLanes, 1, 2)));
  llvm::Value* cp = b.CreateBitCast(r[2], compat::pointer_to(v16));
  llvm::Value* acc = b.CreateAlignedLoad(v16, cp, llvm::Align(4));
  b.CreateAlignedStore(b.CreateAdd(acc, dots), cp, llvm::Align(4));
}

void x86_dot_16x4_u8s8(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& regions,
                       const TensorIntrinsicTarget& target, const std::function<void(const std::string&)>&) {
  if (target.has("x86", "avx512vnni")) dot_vnni(b, regions, target);
  else dot_generic(b, regions);
}

void x86_vnni_dot_16x4_u8s8(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& regions,
                            const TensorIntrinsicTarget& target, const std::function<void(const std::string&)>& fail) {
  if (!target.has("x86", "avx512vnni"))
    fail(fmt::format("needs the CPU feature avx512vnni (vpdpbusd), which the target CPU '{}' lacks; build for "
                     "a CPU that has it (BuildOptions' cpu or features), or use intrinsics::x86_dot_16x4_u8s8(), "
                     "which falls back to generic vector code",
                     target.cpu));
  dot_vnni(b, regions, target);
}

}  // namespace

TensorIntrinsicEmitter find_tensor_intrinsic_emitter(const std::string& name) {
  struct Entry {
    const char* name;
    TensorIntrinsicEmitter emit;
  };
  static const Entry kEmitters[] = {
      {"x86_dot_16x4_u8s8", x86_dot_16x4_u8s8},
      {"x86_vnni_dot_16x4_u8s8", x86_vnni_dot_16x4_u8s8},
  };
  for (const Entry& e : kEmitters)
    if (name == e.name) return e.emit;
  return nullptr;
}

}  // namespace te::codegen
