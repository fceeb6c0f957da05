// Type mapping and the small value conversions every part of CodeGen uses.
#include <llvm/IR/Constants.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"

namespace te::codegen {

llvm::Type* CodeGen::value_type(DataType t) {
  llvm::Type* e = nullptr;
  if (t.is_bool())
    e = b_.getInt1Ty();
  else if (t.is_float())
    e = t.bits() == 64 ? b_.getDoubleTy() : b_.getFloatTy();
  else if (t.is_handle())
    fail_build("a handle-typed value cannot be computed on the CPU");
  else
    e = b_.getIntNTy(static_cast<unsigned>(t.bits()));
  return t.is_vector() ? llvm::FixedVectorType::get(e, static_cast<unsigned>(t.lanes())) : e;
}

llvm::Type* CodeGen::memory_type(DataType t) {
  llvm::Type* e = nullptr;
  if (t.is_bool())
    e = b_.getInt8Ty();
  else if (t.is_bfloat())
    e = b_.getInt16Ty();  // the bits: LLVM 14 has no bfloat arithmetic on x86
  else if (t.is_float16())
    e = b_.getHalfTy();
  else
    return value_type(t);
  return t.is_vector() ? llvm::FixedVectorType::get(e, static_cast<unsigned>(t.lanes())) : e;
}

llvm::Type* CodeGen::abi_type(DataType t) {
  if (t.is_bool()) return b_.getInt8Ty();
  return value_type(t);
}

llvm::Value* CodeGen::to_memory(llvm::Value* v, DataType t) {
  if (t.is_bool()) return b_.CreateZExt(v, memory_type(t));
  if (t.is_float16()) return b_.CreateFPTrunc(v, memory_type(t));  // exact
  if (t.is_bfloat()) {
    // The value is a bfloat16 already: its float's upper half is the stored form.
    llvm::Value* bits = b_.CreateBitCast(v, same_shape(v->getType(), b_.getInt32Ty()));
    return b_.CreateTrunc(b_.CreateLShr(bits, 16), memory_type(t));
  }
  return v;
}

llvm::Value* CodeGen::from_memory(llvm::Value* v, DataType t) {
  if (t.is_bool()) return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  if (t.is_float16()) return b_.CreateFPExt(v, value_type(t));
  if (t.is_bfloat()) {
    llvm::Value* bits = b_.CreateShl(b_.CreateZExt(v, same_shape(v->getType(), b_.getInt32Ty())), 16);
    return b_.CreateBitCast(bits, value_type(t));
  }
  return v;
}

llvm::Type* CodeGen::same_shape(llvm::Type* like, llvm::Type* scalar) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like))
    return llvm::FixedVectorType::get(scalar, vt->getNumElements());
  return scalar;
}

// Round to nearest even on the float's low 16 bits, in integer arithmetic (it vectorizes
// and equals te::bfloat16's conversion bit for bit): add 0x7fff plus the kept part's
// lowest bit, clear the low half. A NaN is quieted instead, keeping its sign and payload.
llvm::Value* CodeGen::round_to_bfloat16(llvm::Value* v) {
  llvm::Type* i32 = same_shape(v->getType(), b_.getInt32Ty());
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(i32, x); };
  llvm::Value* bits = b_.CreateBitCast(v, i32);
  llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), c(1));
  llvm::Value* rounded = b_.CreateAnd(b_.CreateAdd(bits, b_.CreateAdd(lsb, c(0x7fff))), c(0xffff0000u));
  llvm::Value* quiet_nan = b_.CreateAnd(b_.CreateOr(bits, c(0x00400000u)), c(0xffff0000u));
  llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(bits, c(0x7fffffffu)), c(0x7f800000u));
  return b_.CreateBitCast(b_.CreateSelect(is_nan, quiet_nan, rounded), v->getType());
}

llvm::Value* CodeGen::round_to(llvm::Value* v, DataType t) {
  if (t.is_bfloat()) return round_to_bfloat16(v);
  if (t.is_float16()) return round_to_half(v);
  return v;
}

llvm::Value* CodeGen::round_to_half(llvm::Value* v) {
  llvm::Type* half = b_.getHalfTy();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType()))
    half = llvm::FixedVectorType::get(half, vt->getNumElements());
  return b_.CreateFPExt(b_.CreateFPTrunc(v, half), v->getType());
}

llvm::Value* CodeGen::int_const(DataType t, int64_t v) {
  return llvm::ConstantInt::get(value_type(t), static_cast<uint64_t>(v), /*isSigned=*/t.is_int());
}

llvm::Value* CodeGen::splat_if_vector(llvm::Value* scalar, int lanes) {
  if (lanes <= 1 || scalar->getType()->isVectorTy()) return scalar;
  return b_.CreateVectorSplat(static_cast<unsigned>(lanes), scalar);
}

llvm::Value* CodeGen::to_i64(llvm::Value* v, DataType t) {
  llvm::Type* i64 = b_.getInt64Ty();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType()))
    i64 = llvm::FixedVectorType::get(i64, vt->getNumElements());
  if (t.is_uint() || t.is_bool()) return b_.CreateZExtOrTrunc(v, i64);
  return b_.CreateSExtOrTrunc(v, i64);
}

llvm::Value* CodeGen::to_bool(llvm::Value* v, DataType t) {
  if (t.is_bool()) return v;
  if (t.is_float()) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
  return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
}

llvm::Value* CodeGen::any_lane(llvm::Value* mask) {
  if (!mask->getType()->isVectorTy()) return mask;
  return b_.CreateOrReduce(mask);
}

llvm::Value* CodeGen::and_masks(llvm::Value* a, llvm::Value* b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  return b_.CreateAnd(a, b);
}

}  // namespace te::codegen
