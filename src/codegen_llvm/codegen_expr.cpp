// Expressions: immediates, variables, casts, select, vectors, let and intrinsic calls.
// Arithmetic operators are in codegen_arith.cpp, loads in codegen_memory.cpp.
#include <cmath>

#include <fmt/format.h>
#include <llvm/IR/Constants.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"
#include "expr/float_round.h"
#include "expr/intrinsic_info.h"

namespace te::codegen {

llvm::Value* CodeGen::emit(const Expr& e) {
  TE_ICHECK(e.defined(), "CodeGen: undefined expression");
  DataType t = e.dtype();
  switch (e->kind) {
    case ExprKind::IntImm: {
      const auto* n = e.as<IntImmNode>();
      return int_const(t, t.is_bool() ? (n->value != 0) : n->value);
    }
    case ExprKind::FloatImm: {
      // Immediates hold exactly what the interpreter computes with.
      double v = round_to_float_type(e.as<FloatImmNode>()->value, t);
      return llvm::ConstantFP::get(value_type(t), v);
    }
    case ExprKind::Var: return emit_var(e.as<VarNode>());
    case ExprKind::Cast: {
      const auto* n = e.as<CastNode>();
      return emit_cast(emit(n->value), n->value.dtype(), t);
    }
    case ExprKind::Binary: return emit_binary(e.as<BinaryNode>());
    case ExprKind::Not: {
      const auto* n = e.as<NotNode>();
      return b_.CreateNot(to_bool(emit(n->a), n->a.dtype()));
    }
    case ExprKind::Select: {
      const auto* n = e.as<SelectNode>();
      llvm::Value* c = to_bool(emit(n->cond), n->cond.dtype());
      llvm::Value* x = splat_if_vector(emit(n->true_value), t.lanes());
      llvm::Value* y = splat_if_vector(emit(n->false_value), t.lanes());
      return b_.CreateSelect(c, x, y);
    }
    case ExprKind::Load: return emit_load(e.as<LoadNode>());
    case ExprKind::Ramp: return emit_ramp(e.as<RampNode>());
    case ExprKind::Broadcast: {
      const auto* n = e.as<BroadcastNode>();
      return b_.CreateVectorSplat(static_cast<unsigned>(n->lanes), emit(n->value));
    }
    case ExprKind::Call: return emit_call(e.as<CallNode>());
    case ExprKind::Let: return emit_let(e.as<LetNode>());
    case ExprKind::TensorRead:
    case ExprKind::Reduce:
      fail_build(
          fmt::format("expression {} is not lowered (tensor reads and reductions must be "
                      "lowered to loads and loops before build)",
                      to_string(e)));
  }
  TE_ICHECK(false, "CodeGen: unknown expression kind");
  return nullptr;
}

llvm::Value* CodeGen::emit_var(const VarNode* n) {
  auto it = vars_.find(n);
  if (it == vars_.end())
    fail_build(
        fmt::format("variable '{}' is used but neither a parameter, a shape variable nor "
                    "bound by a loop or let",
                    n->name));
  return it->second;
}

llvm::Value* CodeGen::emit_let(const LetNode* n) {
  note_let(data_vars_, n->var.get(), n->value);
  ScopedVar bind(vars_, n->var.get(), emit(n->value));
  return emit(n->body);
}

llvm::Value* CodeGen::emit_ramp(const RampNode* n) {
  DataType t = n->dtype;
  llvm::Value* base = b_.CreateVectorSplat(static_cast<unsigned>(n->lanes), emit(n->base));
  llvm::Value* stride = b_.CreateVectorSplat(static_cast<unsigned>(n->lanes), emit(n->stride));
  std::vector<llvm::Constant*> lanes;
  llvm::Type* elem = value_type(t.element_of());
  for (int k = 0; k < n->lanes; ++k) {
    lanes.push_back(t.is_float() ? llvm::ConstantFP::get(elem, k)
                                 : llvm::ConstantInt::get(elem, static_cast<uint64_t>(k)));
  }
  llvm::Value* steps = llvm::ConstantVector::get(lanes);
  if (t.is_float()) {
    llvm::Value* r = b_.CreateFAdd(base, b_.CreateFMul(stride, steps));
    return round_to(r, t);
  }
  return b_.CreateAdd(base, b_.CreateMul(stride, steps));
}

// Saturating float -> int (NaN -> 0, out of range -> the type's minimum or maximum) as
// compares and selects around a plain conversion: unlike llvm.fptosi.sat, which LLVM 14
// scalarizes on x86, this stays one vector conversion per vector. The bounds are powers of
// two, exact in every float type; the plain conversion's result is used only in range.
llvm::Value* CodeGen::emit_saturating_float_to_int(llvm::Value* v, DataType to, llvm::Type* target) {
  llvm::Type* ft = v->getType();
  const int bits = to.bits();
  const bool is_signed = to.is_int();
  llvm::Value* lo = llvm::ConstantFP::get(ft, is_signed ? -std::ldexp(1.0, bits - 1) : 0.0);
  llvm::Value* hi = llvm::ConstantFP::get(ft, std::ldexp(1.0, is_signed ? bits - 1 : bits));
  llvm::Value* below = b_.CreateFCmpOLT(v, lo);
  llvm::Value* above = b_.CreateFCmpOGE(v, hi);
  llvm::Value* is_nan = b_.CreateFCmpUNO(v, v);
  llvm::Value* plain = is_signed ? b_.CreateFPToSI(v, target) : b_.CreateFPToUI(v, target);
  auto int_const = [&](const llvm::APInt& x) { return llvm::ConstantInt::get(target, x); };
  llvm::Value* min_v = int_const(is_signed ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt(bits, 0));
  llvm::Value* max_v = int_const(is_signed ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits));
  llvm::Value* r = b_.CreateSelect(above, max_v, plain);
  r = b_.CreateSelect(below, min_v, r);
  return b_.CreateSelect(is_nan, llvm::Constant::getNullValue(target), r);
}

llvm::Value* CodeGen::emit_cast(llvm::Value* v, DataType from, DataType to) {
  if (from.element_of() == to.element_of()) return v;
  llvm::Type* target = value_type(to);
  if (to.is_bool()) return to_bool(v, from);
  if (from.is_bool()) {
    return to.is_float() ? b_.CreateUIToFP(v, target) : b_.CreateZExt(v, target);
  }
  if (from.is_integer() && to.is_integer()) {
    return from.is_int() ? b_.CreateSExtOrTrunc(v, target) : b_.CreateZExtOrTrunc(v, target);
  }
  if (from.is_integer() && to.is_float()) {
    if (to.bits() == 16 && from.bits() > 16) {
      // Wide integers go through double (exact for 32 bits; 53 >= 2 * 24 + 2 digits for 64)
      // and round once from there, as the interpreter does: an int32 rounded to float
      // first could round twice on its way to bfloat16.
      llvm::Type* wide = same_shape(target, b_.getDoubleTy());
      llvm::Value* d = from.is_int() ? b_.CreateSIToFP(v, wide) : b_.CreateUIToFP(v, wide);
      return round_to(round_to_odd_float(d), to);
    }
    // Narrow integers are exact in float; float16 then rounds once.
    llvm::Value* r = from.is_int() ? b_.CreateSIToFP(v, target) : b_.CreateUIToFP(v, target);
    return round_to(r, to);
  }
  if (from.is_float() && to.is_integer()) {
    return emit_saturating_float_to_int(v, to, target);
  }
  TE_ICHECK(from.is_float() && to.is_float(), "emit_cast: unexpected types");
  if (to.bits() == 64) return b_.CreateFPExt(v, target);  // from a float: exact
  if (from.bits() == 64) {
    if (to.bits() == 32) return b_.CreateFPTrunc(v, target);
    return round_to(round_to_odd_float(v), to);
  }
  // float32 -> float16/bfloat16, and between the two 16-bit types (both held in float).
  return round_to(v, to);
}

// double -> float toward zero with a sticky last bit ("round to odd"): a 16-bit float type
// rounded from it gets the double's correctly rounded value, in one rounding.
llvm::Value* CodeGen::round_to_odd_float(llvm::Value* v) {
  llvm::Value* f = b_.CreateFPTrunc(v, same_shape(v->getType(), b_.getFloatTy()));
  llvm::Value* back = b_.CreateFPExt(f, v->getType());
  llvm::Function* fabs_f = compat::intrinsic(&module_, llvm::Intrinsic::fabs, {f->getType()});
  llvm::Function* fabs_d = compat::intrinsic(&module_, llvm::Intrinsic::fabs, {v->getType()});
  llvm::Value* abs_f = b_.CreateCall(fabs_f, {f});
  llvm::Value* inexact = b_.CreateFCmpONE(back, v);
  llvm::Value* finite = b_.CreateFCmpONE(abs_f, llvm::ConstantFP::getInfinity(f->getType()));
  llvm::Value* too_big = b_.CreateFCmpOGT(b_.CreateCall(fabs_d, {back}), b_.CreateCall(fabs_d, {v}));
  llvm::Type* bits_type = same_shape(f->getType(), b_.getInt32Ty());
  llvm::Value* bits = b_.CreateBitCast(f, bits_type);
  llvm::Value* one = llvm::ConstantInt::get(bits_type, 1);
  bits = b_.CreateSelect(too_big, b_.CreateSub(bits, one), bits);
  llvm::Value* odd = b_.CreateBitCast(b_.CreateOr(bits, one), f->getType());
  return b_.CreateSelect(b_.CreateAnd(inexact, finite), odd, f);
}

llvm::Value* CodeGen::emit_call(const CallNode* n) {
  DataType t = n->dtype;
  auto arg = [&](size_t k) { return splat_if_vector(emit(n->args[k]), t.lanes()); };
  switch (n->op) {
    case Intrinsic::IfThenElse: return emit_if_then_else(n);
    case Intrinsic::Extern: return emit_extern_call(n);
    case Intrinsic::WarpShuffleDown:
    case Intrinsic::ThreadAllreduce:
      fail_build(
          "contains a warp shuffle (a cross-thread reduction's: a reduction axis bound to "
          "threadIdx); the CPU backend runs thread-bound loops serially and cannot exchange "
          "values between threads: use build_cuda, or keep the reduction axis serial for the CPU");
    case Intrinsic::Likely: {
      llvm::Value* x = emit(n->args[0]);
      if (!n->args[0].dtype().is_bool() || x->getType()->isVectorTy()) return x;
      llvm::Function* expect = compat::intrinsic(&module_, llvm::Intrinsic::expect, {x->getType()});
      return b_.CreateCall(expect, {x, b_.getTrue()});
    }
    case Intrinsic::Pow:
    case Intrinsic::Atan2: {
      if (!t.is_float())
        fail_build(fmt::format("{} needs float arguments, got {}", intrinsic_name(n->op), t.to_string()));
      llvm::Value* r = emit_libm_call(intrinsic_name(n->op), {arg(0), arg(1)});
      return round_to(r, t);
    }
    case Intrinsic::IsNan:
    case Intrinsic::IsInf:
    case Intrinsic::IsFinite: return emit_classification(n->op, emit(n->args[0]), n->args[0].dtype());
    case Intrinsic::Fma: {
      llvm::Value* a = arg(0);
      llvm::Value* x = arg(1);
      llvm::Value* c = arg(2);
      if (!t.is_float()) return b_.CreateAdd(b_.CreateMul(a, x), c);
      llvm::Value* r = b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::fma, {a->getType()}), {a, x, c});
      return round_to(r, t);
    }
    default: break;
  }
  llvm::Value* x = arg(0);
  if (is_bitwise(n->op)) {
    if (!t.is_integer())
      fail_build(fmt::format("{} needs integer arguments, got {}", intrinsic_name(n->op), t.to_string()));
    return emit_bitwise(n->op, x, n->args.size() == 2 ? arg(1) : nullptr, t);
  }
  if (t.is_float()) return emit_float_intrinsic(n->op, x, t);
  switch (n->op) {
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round:
    case Intrinsic::NearbyInt:
    case Intrinsic::Trunc: return x;
    case Intrinsic::Abs: {
      if (!t.is_int()) return x;
      llvm::Value* zero = llvm::Constant::getNullValue(x->getType());
      return b_.CreateSelect(b_.CreateICmpSLT(x, zero), b_.CreateSub(zero, x), x);
    }
    default: fail_build(fmt::format("{} needs a float argument, got {}", intrinsic_name(n->op), t.to_string()));
  }
}

llvm::Value* CodeGen::emit_float_intrinsic(Intrinsic op, llvm::Value* x, DataType t) {
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  switch (op) {
    case Intrinsic::Floor: id = llvm::Intrinsic::floor; break;
    case Intrinsic::Ceil: id = llvm::Intrinsic::ceil; break;
    case Intrinsic::Round: id = llvm::Intrinsic::round; break;          // half away from zero
    case Intrinsic::NearbyInt: id = llvm::Intrinsic::roundeven; break;  // half to even
    case Intrinsic::Trunc: id = llvm::Intrinsic::trunc; break;
    case Intrinsic::Abs: id = llvm::Intrinsic::fabs; break;
    case Intrinsic::Sqrt: id = llvm::Intrinsic::sqrt; break;
    case Intrinsic::Sigmoid: {  // 1 / (1 + exp(-x)), each step in x's precision
      llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
      llvm::Value* e = emit_float_intrinsic(Intrinsic::Exp, b_.CreateFNeg(x), Float(32, t.lanes()));
      llvm::Value* r = b_.CreateFDiv(one, b_.CreateFAdd(one, e));
      return round_to(r, t);
    }
    case Intrinsic::Rsqrt: {  // 1 / sqrt(x): two IEEE roundings, as interpret()
      llvm::Value* root = b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::sqrt, {x->getType()}), {x});
      llvm::Value* r = b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), root);
      return round_to(r, t);
    }
    case Intrinsic::Exp:
    case Intrinsic::Log:
    case Intrinsic::Tanh:
    case Intrinsic::Sin:
    case Intrinsic::Cos:
    case Intrinsic::Tan:
    case Intrinsic::Asin:
    case Intrinsic::Acos:
    case Intrinsic::Atan:
    case Intrinsic::Sinh:
    case Intrinsic::Cosh:
    case Intrinsic::Erf:
    case Intrinsic::Exp2:
    case Intrinsic::Log2:
    case Intrinsic::Log10:
    case Intrinsic::Log1p:
    case Intrinsic::Expm1: break;
    default: TE_ICHECK(false, "emit_float_intrinsic: not a one-argument intrinsic");
  }
  llvm::Value* r = nullptr;
  if (op == Intrinsic::Exp && options_.fast_vector_math && x->getType()->isVectorTy() &&
      x->getType()->getScalarType()->isFloatTy())
    r = emit_vector_exp(x);
  else if (id != llvm::Intrinsic::not_intrinsic)
    r = b_.CreateCall(compat::intrinsic(&module_, id, {x->getType()}), {x});
  else
    r = emit_libm_call(intrinsic_name(op), {x});  // te's names are libm's
  return round_to(r, t);
}

// isnan / isinf / isfinite as comparisons (integers are neither NaN nor infinite). A
// float16 value is held in a float, whose class is the same.
llvm::Value* CodeGen::emit_classification(Intrinsic op, llvm::Value* x, DataType arg_type) {
  if (!arg_type.is_float()) {
    llvm::Type* bool_type = value_type(Bool(arg_type.lanes()));
    return op == Intrinsic::IsFinite ? llvm::Constant::getAllOnesValue(bool_type)
                                     : llvm::Constant::getNullValue(bool_type);
  }
  if (op == Intrinsic::IsNan) return b_.CreateFCmpUNO(x, x);
  llvm::Value* magnitude = b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::fabs, {x->getType()}), {x});
  llvm::Value* inf = llvm::ConstantFP::getInfinity(x->getType());
  return op == Intrinsic::IsInf ? b_.CreateFCmpOEQ(magnitude, inf) : b_.CreateFCmpOLT(magnitude, inf);
}

// te's bitwise operations (expr.h): shifts are defined for every amount. Amounts known to
// lie in [0, width) (constants, or anything LLVM's known-bits analysis bounds, such as
// 4 * (i & 7)) reduce to the plain shift once LLVM folds the range tests.
llvm::Value* CodeGen::emit_bitwise(Intrinsic op, llvm::Value* a, llvm::Value* b, DataType t) {
  switch (op) {
    case Intrinsic::BitAnd: return b_.CreateAnd(a, b);
    case Intrinsic::BitOr: return b_.CreateOr(a, b);
    case Intrinsic::BitXor: return b_.CreateXor(a, b);
    case Intrinsic::BitNot: return b_.CreateNot(a);
    case Intrinsic::Popcount:
      return b_.CreateCall(compat::intrinsic(&module_, llvm::Intrinsic::ctpop, {a->getType()}), {a});
    default: break;
  }
  llvm::Type* type = a->getType();
  llvm::Value* width = llvm::ConstantInt::get(type, static_cast<uint64_t>(t.bits()));
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  bool is_signed = t.is_int();
  // The magnitude k of the amount, and whether it is negative (signed amounts only).
  llvm::Value* negative = is_signed ? b_.CreateICmpSLT(b, zero) : nullptr;
  llvm::Value* k = is_signed ? b_.CreateSelect(negative, b_.CreateNeg(b), b) : b;  // -MIN stays MIN: >= width unsigned
  llvm::Value* too_far = b_.CreateICmpUGE(k, width);
  llvm::Value* last = llvm::ConstantInt::get(type, static_cast<uint64_t>(t.bits() - 1));
  llvm::Value* safe_k = b_.CreateSelect(too_far, last, k);
  // a * 2^k, 0 once k >= width.
  llvm::Value* left = b_.CreateSelect(too_far, zero, b_.CreateShl(a, safe_k));
  // floor(a / 2^k): the sign fill (or 0) once k >= width.
  llvm::Value* right = is_signed ? b_.CreateAShr(a, safe_k) : b_.CreateSelect(too_far, zero, b_.CreateLShr(a, safe_k));
  bool is_left = op == Intrinsic::ShiftLeft;
  if (!is_signed) return is_left ? left : right;
  return is_left ? b_.CreateSelect(negative, right, left) : b_.CreateSelect(negative, left, right);
}

// exp, log, pow and tanh call libm's exp/expf (...), lane by lane, the functions
// interpret() calls: the JIT gives their results bit for bit. The calls are `nobuiltin`
// so that LLVM neither folds them on constants (with the host's double-precision
// functions) nor rewrites them (pow(2^k, y) into exp2(k * y), pow(x, 3.0) into
// multiplications), each of which changes the last bits; `readnone` keeps them free to
// hoist and share like the intrinsics (te never reads errno).
llvm::Value* CodeGen::emit_libm_call(const std::string& name, std::vector<llvm::Value*> args) {
  llvm::Type* type = args[0]->getType();
  llvm::Type* elem = type->getScalarType();
  std::vector<llvm::Type*> params(args.size(), elem);
  llvm::FunctionCallee fn =
      module_.getOrInsertFunction(elem->isDoubleTy() ? name : name + "f", llvm::FunctionType::get(elem, params, false));
  auto call = [&](const std::vector<llvm::Value*>& scalars) {
    llvm::CallInst* c = b_.CreateCall(fn, scalars);
    c->addFnAttr(llvm::Attribute::NoBuiltin);
    c->setDoesNotAccessMemory();
    c->setDoesNotThrow();
    return c;
  };
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (vt == nullptr) return call(args);
  llvm::Value* r = llvm::UndefValue::get(vt);
  for (unsigned k = 0; k < vt->getNumElements(); ++k) {
    std::vector<llvm::Value*> lane;
    for (llvm::Value* a : args) lane.push_back(b_.CreateExtractElement(a, k));
    r = b_.CreateInsertElement(r, call(lane), k);
  }
  return r;
}

llvm::Value* CodeGen::emit_if_then_else(const CallNode* n) {
  DataType t = n->dtype;
  // A condition the same in every lane (a padding stage's bounds test, vectorized over
  // channels) takes the branch below: as a select, its loads are masked, and a masked
  // load whose lanes are all off costs a microcode assist on AMD when its address lies
  // outside mapped memory, as a pad stage's reads before its input do (C3D's pad over 3
  // channels: 40x slower on a Zen 5).
  const auto* broadcast = n->args[0].as<BroadcastNode>();
  const BroadcastNode* uniform = broadcast && broadcast->value.dtype().is_scalar() ? broadcast : nullptr;
  const Expr& condition = uniform ? uniform->value : n->args[0];
  llvm::Value* cond = to_bool(emit(condition), condition.dtype());
  if (cond->getType()->isVectorTy()) {
    // Lanes run both sides; loads on each side only touch the lanes that take it.
    llvm::Value* outer = mask_;
    mask_ = and_masks(outer, cond);
    llvm::Value* x = splat_if_vector(emit(n->args[1]), t.lanes());
    mask_ = and_masks(outer, b_.CreateNot(cond));
    llvm::Value* y = splat_if_vector(emit(n->args[2]), t.lanes());
    mask_ = outer;
    return b_.CreateSelect(cond, x, y);
  }
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "ite.then", fn);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx_, "ite.else", fn);
  llvm::BasicBlock* merge_bb = llvm::BasicBlock::Create(ctx_, "ite.end", fn);
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  llvm::Value* x = splat_if_vector(emit(n->args[1]), t.lanes());
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(merge_bb);
  b_.SetInsertPoint(else_bb);
  llvm::Value* y = splat_if_vector(emit(n->args[2]), t.lanes());
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(merge_bb);
  b_.SetInsertPoint(merge_bb);
  llvm::PHINode* phi = b_.CreatePHI(x->getType(), 2);
  phi->addIncoming(x, then_end);
  phi->addIncoming(y, else_end);
  return phi;
}

}  // namespace te::codegen
