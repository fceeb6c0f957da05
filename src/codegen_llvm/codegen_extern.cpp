// call_extern: a call of a C function outside te, declared with the C ABI of its types.
//
// The JIT emits calls to a per-build alias of the name (extern_symbol) that jit.cpp binds
// to the address it resolved at build time, so one build's libraries never answer for
// another's; objects call the C name itself, left undefined for the linker.
//
// The calls are opaque: no memory attributes (the function may read tables, allocate,
// keep statistics) and `nobuiltin` (a function named like libm's, `expf`, must not be
// folded or rewritten by LLVM as if it were libm's). They are `nounwind`: te's code has
// no unwind tables, and the function must not throw (include/te/expr.h).
#include <fmt/format.h>
#include <llvm/IR/Constants.h>

#include "codegen_llvm/codegen.h"
#include "expr/extern_calls.h"

namespace te::codegen {

std::string extern_symbol(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "extern." + name;
}

llvm::FunctionCallee CodeGen::extern_function(const std::string& name, DataType ret,
                                              const std::vector<DataType>& params) {
  std::vector<llvm::Type*> types;
  for (DataType t : params) types.push_back(value_type(t));
  llvm::FunctionType* type = llvm::FunctionType::get(value_type(ret), types, false);
  std::string symbol = extern_symbol(options_.symbol_prefix, name);
  if (llvm::Function* existing = module_.getFunction(symbol)) {
    // In an object, `exp` may already be libm's exp that te's own exp() calls.
    if (existing->getFunctionType() != type)
      fail_build(
          fmt::format("call_extern '{}' is called with a C signature other than the one this module "
                      "already declares for '{}' (te's math functions call libm's of their names); "
                      "give the function another name or call it with the types it takes",
                      name, symbol));
    return llvm::FunctionCallee(type, existing);
  }
  llvm::Function* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, symbol, &module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // C passes bool, char and short widened: the caller extends them (as clang does), so the
  // function finds a proper int whichever compiler built it. Results are used by their
  // own width only (no ext attribute): compilers disagree on who widens those.
  for (unsigned k = 0; k < params.size(); ++k) {
    DataType t = params[k];
    if (t.is_bool() || (t.is_uint() && t.bits() < 32))
      fn->addParamAttr(k, llvm::Attribute::ZExt);
    else if (t.is_int() && t.bits() < 32)
      fn->addParamAttr(k, llvm::Attribute::SExt);
  }
  return llvm::FunctionCallee(type, fn);
}

llvm::Value* CodeGen::emit_extern_call(const CallNode* n) {
  const ExternSignature sig = extern_signature(n);
  llvm::FunctionCallee fn = extern_function(n->extern_name, sig.ret, sig.params);
  const int lanes = n->dtype.lanes();
  std::vector<llvm::Value*> args;
  for (const Expr& a : n->args) args.push_back(splat_if_vector(emit(a), lanes));
  auto call = [&](const std::vector<llvm::Value*>& scalars) -> llvm::Value* {
    llvm::CallInst* c = b_.CreateCall(fn, scalars);
    // Code generation reads the extension attributes at the call site.
    if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) c->setAttributes(f->getAttributes());
    c->addFnAttr(llvm::Attribute::NoBuiltin);
    c->setDoesNotThrow();
    return c;
  };
  if (lanes == 1) return call(args);
  // One call per lane, only for the lanes that run: a vector if_then_else's side or a
  // predicated store's lanes (interpret() calls no others). Lanes not run are 0.
  llvm::Value* live = and_masks(mask_, extern_mask_);
  TE_ICHECK(
      !live || llvm::cast<llvm::FixedVectorType>(live->getType())->getNumElements() == static_cast<unsigned>(lanes),
      "emit_extern_call: a lane mask of another width");
  llvm::Value* r = llvm::Constant::getNullValue(value_type(n->dtype));
  for (int k = 0; k < lanes; ++k) {
    std::vector<llvm::Value*> lane;
    for (llvm::Value* a : args) lane.push_back(b_.CreateExtractElement(a, static_cast<uint64_t>(k)));
    if (live == nullptr) {
      r = b_.CreateInsertElement(r, call(lane), static_cast<uint64_t>(k));
      continue;
    }
    llvm::Function* parent = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* from = b_.GetInsertBlock();
    llvm::BasicBlock* call_bb = llvm::BasicBlock::Create(ctx_, "extern.lane", parent);
    llvm::BasicBlock* next_bb = llvm::BasicBlock::Create(ctx_, "extern.next", parent);
    b_.CreateCondBr(b_.CreateExtractElement(live, static_cast<uint64_t>(k)), call_bb, next_bb);
    b_.SetInsertPoint(call_bb);
    llvm::Value* with = b_.CreateInsertElement(r, call(lane), static_cast<uint64_t>(k));
    b_.CreateBr(next_bb);
    b_.SetInsertPoint(next_bb);
    llvm::PHINode* phi = b_.CreatePHI(r->getType(), 2);
    phi->addIncoming(with, call_bb);
    phi->addIncoming(r, from);
    r = phi;
  }
  return r;
}

}  // namespace te::codegen
