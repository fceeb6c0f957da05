// Vector math without libm (BuildOptions::fast_vector_math): libm has no vector entry
// points that every target links, so a vector exp would be one scalar call per lane.
// exp(x) = 2^n * exp(r) with n = round(x / ln 2) and r = x - n ln 2 in [-ln2/2, ln2/2]
// (ln 2 split in two constants so that r is exact), exp(r) by Cephes' degree-6
// polynomial (relative error under 2 ulp there), 2^n built in the exponent field in two
// halves so that results down to the subnormals come out (on AVX-512, vscalefps scales
// by 2^n in one instruction, rounding once as the second half's multiply does). Outside
// [-104, 88.8] the result is 0 or infinity, as expf's; NaN stays NaN.
#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsX86.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"
#include "codegen_llvm/tensor_intrinsics.h"

namespace te::codegen {

llvm::Value* CodeGen::emit_vector_exp(llvm::Value* x) {
  auto* vt = llvm::cast<llvm::FixedVectorType>(x->getType());
  llvm::Type* i32v = llvm::FixedVectorType::get(b_.getInt32Ty(), vt->getNumElements());
  auto c = [&](double v) { return llvm::ConstantFP::get(vt, v); };
  auto ci = [&](int v) { return llvm::ConstantInt::get(i32v, static_cast<uint64_t>(static_cast<int64_t>(v)), true); };
  auto fma = [&](llvm::Value* a, llvm::Value* m, llvm::Value* add) {
    return b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::fma, {vt}), {a, m, add});
  };
  // The clamp keeps n in range; the selects at the end give the true results outside it.
  // As compare-and-selects (x86's minps / maxps, one instruction each: a NaN becomes the
  // bound, and the last select restores it) rather than minnum / maxnum, whose NaN rule
  // costs a compare and a blend each.
  llvm::Value* below = b_.CreateSelect(b_.CreateFCmpOLT(x, c(88.8)), x, c(88.8));
  llvm::Value* xc = b_.CreateSelect(b_.CreateFCmpOGT(below, c(-104.0)), below, c(-104.0));
  llvm::Value* n = b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::roundeven, {vt}),
                                 {b_.CreateFMul(xc, c(1.44269504088896341))});
  llvm::Value* r = fma(n, c(-0.693359375), xc);
  r = fma(n, c(2.12194440e-4), r);
  llvm::Value* p = c(1.9875691500e-4);
  for (double k : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1})
    p = fma(p, r, c(k));
  llvm::Value* r2 = b_.CreateFMul(r, r);
  llvm::Value* e = fma(p, r2, b_.CreateFAdd(r, c(1.0)));
  llvm::Value* y = nullptr;
  if (vt->getNumElements() == 16 &&
      TensorIntrinsicTarget{&module_, options_.subtarget, options_.cpu}.has("x86", "avx512f")) {
    // e * 2^n, all lanes (mask), the current rounding mode (4). Past expf's overflow
    // threshold n is 128 and e at least 1, so the product is already infinity.
    y = b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::x86_avx512_mask_scalef_ps_512),
                      {e, n, llvm::UndefValue::get(vt), b_.getInt16(0xffff), b_.getInt32(4)});
  } else {
    // 2^n = 2^(n/2) * 2^(n - n/2): each half within the normal exponents for n in [-150, 128].
    llvm::Value* ni = b_.CreateFPToSI(n, i32v);
    llvm::Value* half = b_.CreateAShr(ni, ci(1));
    auto pow2 = [&](llvm::Value* k) { return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(k, ci(127)), ci(23)), vt); };
    y = b_.CreateFMul(b_.CreateFMul(e, pow2(half)), pow2(b_.CreateSub(ni, half)));
    y = b_.CreateSelect(b_.CreateFCmpOGT(x, c(88.72283935546875)), llvm::ConstantFP::getInfinity(vt), y);
  }
  y = b_.CreateSelect(b_.CreateFCmpOLT(x, c(-103.972084045410)), llvm::ConstantFP::get(vt, 0.0), y);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, y);
}

}  // namespace te::codegen
