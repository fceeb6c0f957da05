// Binary operators with te's semantics (expr.h, interpret/lane_ops.h): wrapping integer
// arithmetic, floor and truncating division where x / 0 == 0 and INT_MIN / -1 wraps
// (never LLVM's undefined behaviour), C comparisons, and float min/max as
// `a < b ? a : b`.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"

namespace te::codegen {

llvm::Value* CodeGen::emit_binary(const BinaryNode* n) {
  DataType t = n->a.dtype();
  int lanes = std::max(n->a.dtype().lanes(), n->b.dtype().lanes());
  llvm::Value* a = splat_if_vector(emit(n->a), lanes);
  llvm::Value* b = splat_if_vector(emit(n->b), lanes);
  t = t.with_lanes(lanes);
  if (is_logical(n->op)) {
    a = to_bool(a, t);
    b = to_bool(b, n->b.dtype().with_lanes(lanes));
    return n->op == BinOp::And ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
  }
  if (t.is_float()) return emit_float_binary(n->op, a, b, t);
  return emit_int_binary(n->op, a, b, t);
}

llvm::Value* CodeGen::emit_int_binary(BinOp op, llvm::Value* a, llvm::Value* b, DataType t) {
  bool is_signed = t.is_int();
  switch (op) {
    case BinOp::Add: return b_.CreateAdd(a, b);
    case BinOp::Sub: return b_.CreateSub(a, b);
    case BinOp::Mul: return b_.CreateMul(a, b);
    case BinOp::Div:
    case BinOp::Mod:
    case BinOp::TruncDiv:
    case BinOp::TruncMod: return emit_int_division(op, a, b, t);
    case BinOp::Min: return b_.CreateSelect(is_signed ? b_.CreateICmpSLT(b, a) : b_.CreateICmpULT(b, a), b, a);
    case BinOp::Max: return b_.CreateSelect(is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), b, a);
    case BinOp::EQ: return b_.CreateICmpEQ(a, b);
    case BinOp::NE: return b_.CreateICmpNE(a, b);
    case BinOp::LT: return is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case BinOp::LE: return is_signed ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case BinOp::GT: return is_signed ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    case BinOp::GE: return is_signed ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
    case BinOp::And:
    case BinOp::Or: break;
  }
  TE_ICHECK(false, "emit_int_binary: unexpected operator");
  return nullptr;
}

// A divisor LLVM's udiv/sdiv are defined on: 1 in place of 0 (and, when signed, of -1,
// so INT_MIN / -1 cannot trap); the caller puts the right answers for those back.
// Built from arithmetic, not a select: InstSimplify threads a division over a select
// arm by arm, and an arm that is a constant vector with a zero lane folds to poison,
// which lets it drop that arm for every lane. umax/add/sub fold lane by lane, so no
// rewrite of them can make a zero lane.
llvm::Value* CodeGen::safe_divisor(llvm::Value* b, bool is_signed) {
  llvm::Type* type = b->getType();
  llvm::Value* one = llvm::ConstantInt::get(type, 1);
  if (!is_signed) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, b, one);
  // b + 1 (wrapping) is 0 or 1 exactly for b == -1 or 0: raise it to 2 and step back.
  llvm::Value* two = llvm::ConstantInt::get(type, 2);
  return b_.CreateSub(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, b_.CreateAdd(b, one), two), one);
}

llvm::Value* CodeGen::emit_int_division(BinOp op, llvm::Value* a, llvm::Value* b, DataType t) {
  llvm::Type* type = a->getType();
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  llvm::Value* b_is_zero = b_.CreateICmpEQ(b, zero);
  if (!t.is_int()) {
    llvm::Value* safe = safe_divisor(b, false);
    bool is_div = op == BinOp::Div || op == BinOp::TruncDiv;
    llvm::Value* r = is_div ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe);
    return b_.CreateSelect(b_is_zero, zero, r);
  }
  // The selects below put the right answers back for the divisors safe_divisor
  // replaced (x / 0 == 0, x % 0 == 0, x / -1 == -x wrapping, x % -1 == 0).
  llvm::Value* b_is_minus_one = b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(type));
  llvm::Value* safe = safe_divisor(b, true);
  llvm::Value* q = b_.CreateSDiv(a, safe);
  llvm::Value* r = b_.CreateSRem(a, safe);
  llvm::Value* negated = b_.CreateSub(zero, a);
  // Floor semantics: a nonzero remainder whose sign differs from the divisor's moves the
  // quotient down by one and the remainder up by the divisor.
  auto needs_floor_fix = [&] {
    return b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, safe), zero));
  };
  llvm::Value* result = nullptr;
  switch (op) {
    case BinOp::TruncDiv: result = b_.CreateSelect(b_is_minus_one, negated, q); break;
    case BinOp::TruncMod: result = r; break;
    case BinOp::Div: {
      llvm::Value* floor_q = b_.CreateSub(q, b_.CreateZExt(needs_floor_fix(), type));
      result = b_.CreateSelect(b_is_minus_one, negated, floor_q);
      break;
    }
    case BinOp::Mod: result = b_.CreateAdd(r, b_.CreateSelect(needs_floor_fix(), safe, zero)); break;
    default: TE_ICHECK(false, "emit_int_division: not a division");
  }
  return b_.CreateSelect(b_is_zero, zero, result);
}

// te's float min(a, b) is `a < b ? a : b` and max(a, b) `b < a ? a : b`. float16 values
// are held in float: LLVM 14's InstCombine narrows `fptrunc(select(fcmp olt float -0.0,
// x), -0.0, x)` to half wrongly (it picks -0.0 for x == +0.0), so float16 compares and
// selects in half, which it leaves alone; the truncations are exact. (bfloat16 has no
// fptrunc to narrow: it compares in float.)
llvm::Value* CodeGen::emit_float_min_max(BinOp op, llvm::Value* a, llvm::Value* b, bool half) {
  if (half) {
    llvm::Type* wide = a->getType();
    llvm::Type* h = b_.getHalfTy();
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(wide)) h = llvm::FixedVectorType::get(h, vt->getNumElements());
    return b_.CreateFPExt(emit_float_min_max(op, b_.CreateFPTrunc(a, h), b_.CreateFPTrunc(b, h), false), wide);
  }
  llvm::Value* a_wins = op == BinOp::Min ? b_.CreateFCmpOLT(a, b) : b_.CreateFCmpOLT(b, a);
  return b_.CreateSelect(a_wins, a, b);
}

llvm::Value* CodeGen::emit_float_binary(BinOp op, llvm::Value* a, llvm::Value* b, DataType t) {
  auto finish = [&](llvm::Value* r) { return round_to(r, t); };
  switch (op) {
    case BinOp::Add: return finish(b_.CreateFAdd(a, b));
    case BinOp::Sub: return finish(b_.CreateFSub(a, b));
    case BinOp::Mul: return finish(b_.CreateFMul(a, b));
    case BinOp::Div:
    case BinOp::TruncDiv: return finish(b_.CreateFDiv(a, b));
    case BinOp::Mod: {
      // a - b * floor(a / b), each step rounded as the interpreter does (no contraction).
      llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
      b_.setFastMathFlags(llvm::FastMathFlags());
      llvm::Value* q = b_.CreateFDiv(a, b);
      llvm::Value* fq = b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::floor, {q->getType()}), {q});
      return finish(b_.CreateFSub(a, b_.CreateFMul(b, fq)));
    }
    case BinOp::TruncMod: return finish(b_.CreateFRem(a, b));
    case BinOp::Min:
    case BinOp::Max:
      // Picks an operand: a float16/bfloat16 result needs no rounding.
      return emit_float_min_max(op, a, b, t.is_float16());
    case BinOp::EQ: return b_.CreateFCmpOEQ(a, b);
    case BinOp::NE: return b_.CreateFCmpUNE(a, b);
    case BinOp::LT: return b_.CreateFCmpOLT(a, b);
    case BinOp::LE: return b_.CreateFCmpOLE(a, b);
    case BinOp::GT: return b_.CreateFCmpOGT(a, b);
    case BinOp::GE: return b_.CreateFCmpOGE(a, b);
    case BinOp::And:
    case BinOp::Or: break;
  }
  TE_ICHECK(false, "emit_float_binary: unexpected operator");
  return nullptr;
}

}  // namespace te::codegen
