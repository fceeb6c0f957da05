// x86 tensor intrinsics: the 16 x 4 uint8 x int8 -> int32 dot (te::intrinsics::
// x86_dot_16x4_u8s8), as vpdpbusd where the target CPU has avx512vnni, else as int16
// multiply-adds of byte pairs: x86's pmaddwd on the widest registers the target has, and
// generic vector IR on other architectures (aarch64), so one schedule runs everywhere.
// All wrap as int32, as the declaration does.
#include <fmt/format.h>
#include <llvm/IR/IntrinsicsX86.h>

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

// x86's pmaddwd shape, which LLVM selects on SSE2, AVX2 and AVX-512 and other targets
// lower as widening multiply-adds: lane i of madd(x, y) is x[2i] * y[2i] + x[2i+1] *
// y[2i+1], from int16 into int32. u8 and s8 fit int16 exactly; so does each product, but
// not a sum of two, which is why pairs are summed in int32.
llvm::Value* madd(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, unsigned lanes) {
  auto* wide = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  auto half = [&](llvm::Value* v, unsigned first) {
    return b.CreateSExt(b.CreateShuffleVector(v, v, strided(lanes, first, 2)), wide);
  };
  return b.CreateAdd(b.CreateMul(half(x, 0), half(y, 0)), b.CreateMul(half(x, 1), half(y, 1)));
}

// madd on x86 as the instruction itself (pmaddwd: SSE2 is every x86-64's baseline), on the
// widest registers the target has: LLVM does not always recognise the generic shape once
// an operand is a broadcast.
llvm::Value* madd_for(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, const TensorIntrinsicTarget& t) {
  llvm::Intrinsic::ID id;
  unsigned width;  // int16 lanes per instruction
  if (t.has("x86", "avx512bw")) {
    id = llvm::Intrinsic::x86_avx512_pmaddw_d_512;
    width = 32;
  } else if (t.has("x86", "avx2")) {
    id = llvm::Intrinsic::x86_avx2_pmadd_wd;
    width = 16;
  } else if (t.has("x86", "sse2")) {
    id = llvm::Intrinsic::x86_sse2_pmadd_wd;
    width = 8;
  } else {
    return madd(b, x, y, kLanes);
  }
  llvm::Function* f = compat::intrinsic(t.module, id);
  std::vector<llvm::Value*> parts;
  for (unsigned first = 0; first < 2 * kLanes; first += width) {
    std::vector<int> m = strided(width, first, 1);
    parts.push_back(b.CreateCall(f, {b.CreateShuffleVector(x, x, m), b.CreateShuffleVector(y, y, m)}));
  }
  // Concatenated: pairs of parts, then pairs of those.
  while (parts.size() > 1) {
    std::vector<llvm::Value*> joined;
    for (size_t i = 0; i < parts.size(); i += 2) {
      unsigned n = llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements();
      joined.push_back(b.CreateShuffleVector(parts[i], parts[i + 1], strided(2 * n, 0, 1)));
    }
    parts = joined;
  }
  return parts[0];
}

// Lane i adds (A[0], A[1]) . (B[i,0], B[i,1]) and (A[2], A[3]) . (B[i,2], B[i,3]): two
// madds on B's byte pairs regrouped by position. The regrouping depends on B alone, so
// where consecutive calls share B (the rows of a GEMM tile) LLVM computes it once.
void dot_generic(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& r, const TensorIntrinsicTarget& t) {
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Type* i16 = b.getInt16Ty();
  llvm::Type* i32 = b.getInt32Ty();
  constexpr unsigned kAll = kLanes * kDepth;
  auto* b_ty = llvm::FixedVectorType::get(i8, kAll);
  auto* v16 = llvm::FixedVectorType::get(i32, kLanes);
  // The int16 pairs (A[0], A[1]) and (A[2], A[3]), each repeated over all 16 lanes (a
  // broadcast of one 32-bit word on x86; built by lanes, so byte order does not matter).
  auto* a_ty = llvm::FixedVectorType::get(i8, kDepth);
  llvm::Value* a4 =
      b.CreateZExt(b.CreateAlignedLoad(a_ty, b.CreateBitCast(r[0], compat::pointer_to(a_ty)), llvm::Align(1)),
                   llvm::FixedVectorType::get(i16, kDepth));
  auto pair_repeated = [&](unsigned k) {
    std::vector<int> m(2 * kLanes);
    for (unsigned j = 0; j < m.size(); ++j) m[j] = static_cast<int>(k + j % 2);
    return b.CreateShuffleVector(a4, a4, m);
  };
  llvm::Value* bytes = b.CreateAlignedLoad(b_ty, b.CreateBitCast(r[1], compat::pointer_to(b_ty)), llvm::Align(1));
  llvm::Value* b16 = b.CreateSExt(bytes, llvm::FixedVectorType::get(i16, kAll));
  llvm::Value* acc_sum = nullptr;
  for (unsigned pair = 0; pair < 2; ++pair) {
    llvm::Value* a = pair_repeated(2 * pair);
    std::vector<int> b_mask(2 * kLanes);
    for (unsigned i = 0; i < kLanes; ++i)
      for (unsigned e = 0; e < 2; ++e) b_mask[2 * i + e] = static_cast<int>(kDepth * i + 2 * pair + e);
    llvm::Value* d = madd_for(b, a, b.CreateShuffleVector(b16, b16, b_mask), t);
    acc_sum = acc_sum == nullptr ? d : b.CreateAdd(acc_sum, d);
  }
  llvm::Value* cp = b.CreateBitCast(r[2], compat::pointer_to(v16));
  llvm::Value* acc = b.CreateAlignedLoad(v16, cp, llvm::Align(4));
  b.CreateAlignedStore(b.CreateAdd(acc, acc_sum), cp, llvm::Align(4));
}

}  // namespace

// The declarations' regions are dense (no free strides): only the pointers matter.
void emit_x86_dot_16x4_u8s8(llvm::IRBuilder<>& b, const TensorIntrinsicRegions& regions,
                            const TensorIntrinsicTarget& target, const std::function<void(const std::string&)>&) {
  if (target.has("x86", "avx512vnni"))
    dot_vnni(b, regions.ptrs, target);
  else
    dot_generic(b, regions.ptrs, target);
}

void emit_x86_vnni_dot_16x4_u8s8(llvm::IRBuilder<>& b, const TensorIntrinsicRegions& regions,
                                 const TensorIntrinsicTarget& target,
                                 const std::function<void(const std::string&)>& fail) {
  if (!target.has("x86", "avx512vnni"))
    fail(
        fmt::format("needs the CPU feature avx512vnni (vpdpbusd), which the target CPU '{}' lacks; build for "
                    "a CPU that has it (BuildOptions' cpu or features), or use intrinsics::x86_dot_16x4_u8s8(), "
                    "which falls back to generic vector code",
                    target.cpu));
  dot_vnni(b, regions.ptrs, target);
}

}  // namespace te::codegen
