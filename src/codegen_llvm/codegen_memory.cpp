// Loads, stores and allocations. Vector accesses become one contiguous (masked) load or
// store when the index is base + lane, a scalar access and a broadcast when it is the
// same for every lane, and a (masked) gather or scatter otherwise. Masked-off lanes
// read as zero and are never touched in memory.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>

#include <optional>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/index_analysis.h"
#include "codegen_llvm/llvm_compat.h"

namespace te::codegen {
namespace {

// Allocations of a constant size up to this many bytes live on the stack.
constexpr int64_t kMaxStackBytes = 32 * 1024;
// Alignment of allocations (stack and heap) and the most te ever assumes.
constexpr int64_t kAllocAlignment = 64;

llvm::Value* all_true(llvm::IRBuilder<>& b, int lanes) {
  return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(static_cast<unsigned>(lanes)),
                                        b.getTrue());
}

}  // namespace

const CodeGen::BufferInfo& CodeGen::buffer(const Buffer& b) {
  auto it = buffers_.find(b.get());
  if (it == buffers_.end())
    fail_build(
        fmt::format("buffer '{}' is accessed but is neither a parameter nor allocated", b.name()));
  return it->second;
}

llvm::Align CodeGen::contiguous_alignment(const BufferInfo& info, const Expr& base) {
  int64_t elem = info.dtype.bytes();
  int64_t align = std::min<int64_t>(info.base_align, elem * known_power_of_two_factor(base));
  return llvm::Align(static_cast<uint64_t>(std::max<int64_t>(align, elem)));
}

llvm::Value* CodeGen::annotate(llvm::Value* access, const BufferInfo& info) {
  if (info.alias_scope == nullptr) return access;
  auto* inst = llvm::cast<llvm::Instruction>(access);
  inst->setMetadata(llvm::LLVMContext::MD_alias_scope, info.alias_scope);
  inst->setMetadata(llvm::LLVMContext::MD_noalias, info.noalias);
  return access;
}

llvm::Value* CodeGen::emit_load(const LoadNode* n) {
  const BufferInfo& info = buffer(n->buffer);
  DataType t = n->dtype;
  if (t.element_of() != info.dtype)
    fail_build(fmt::format("a load of {} from buffer '{}' of {}", t.to_string(), n->buffer.name(),
                           info.dtype.to_string()));
  Expr index = flatten_index(n->buffer, n->indices);
  llvm::Type* elem_mem = memory_type(info.dtype);
  llvm::Align elem_align(static_cast<uint64_t>(info.dtype.bytes()));
  llvm::Value* active =
      n->predicate.defined() ? to_bool(emit(n->predicate), n->predicate.dtype()) : nullptr;
  if (t.is_scalar()) {
    // A scalar load inside a vector branch runs when any lane takes the branch.
    if (mask_ != nullptr) active = and_masks(active, any_lane(mask_));
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
    if (active == nullptr)
      return from_memory(annotate(b_.CreateAlignedLoad(elem_mem, ptr, elem_align), info), t);
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* load_bb = llvm::BasicBlock::Create(ctx_, "load.guarded", fn);
    llvm::BasicBlock* done_bb = llvm::BasicBlock::Create(ctx_, "load.done", fn);
    llvm::BasicBlock* from = b_.GetInsertBlock();
    b_.CreateCondBr(active, load_bb, done_bb);
    b_.SetInsertPoint(load_bb);
    llvm::Value* v =
        from_memory(annotate(b_.CreateAlignedLoad(elem_mem, ptr, elem_align), info), t);
    llvm::BasicBlock* load_end = b_.GetInsertBlock();
    b_.CreateBr(done_bb);
    b_.SetInsertPoint(done_bb);
    llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
    phi->addIncoming(v, load_end);
    phi->addIncoming(llvm::Constant::getNullValue(v->getType()), from);
    return phi;
  }
  if (active != nullptr) active = splat_if_vector(active, t.lanes());
  active = and_masks(active, mask_);
  int lanes = t.lanes();
  llvm::Type* vec_mem = memory_type(t);
  llvm::Value* zero = llvm::Constant::getNullValue(vec_mem);
  Expr base;
  int64_t stride = 0;
  bool strided = as_strided(index, &base, &stride);
  if (strided && stride == 1) {
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(base), base.dtype()));
    ptr = b_.CreateBitCast(ptr, compat::pointer_to(vec_mem));
    llvm::Align align = contiguous_alignment(info, base);
    llvm::Value* v = nullptr;
    if (active == nullptr)
      v = annotate(b_.CreateAlignedLoad(vec_mem, ptr, align), info);
    else
      v = annotate(b_.CreateMaskedLoad(vec_mem, ptr, align, active, zero), info);
    return from_memory(v, t);
  }
  if (strided && stride == 0 && active == nullptr) {
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(base), base.dtype()));
    llvm::Value* v = annotate(b_.CreateAlignedLoad(elem_mem, ptr, elem_align), info);
    return from_memory(b_.CreateVectorSplat(static_cast<unsigned>(lanes), v), t);
  }
  llvm::Value* ptrs = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
  llvm::Value* v =
      annotate(b_.CreateMaskedGather(vec_mem, ptrs, elem_align,
                                     active == nullptr ? all_true(b_, lanes) : active, zero),
               info);
  return from_memory(v, t);
}

void CodeGen::emit_store(const StoreNode* n) {
  const BufferInfo& info = buffer(n->buffer);
  DataType t = n->value.dtype();
  if (t.element_of() != info.dtype)
    fail_build(fmt::format("a store of {} into buffer '{}' of {}", t.to_string(), n->buffer.name(),
                           info.dtype.to_string()));
  Expr index = flatten_index(n->buffer, n->indices);
  llvm::Type* elem_mem = memory_type(info.dtype);
  llvm::Align elem_align(static_cast<uint64_t>(info.dtype.bytes()));
  llvm::Value* value = to_memory(emit(n->value), t);
  llvm::Value* active =
      n->predicate.defined() ? to_bool(emit(n->predicate), n->predicate.dtype()) : nullptr;
  if (t.is_scalar()) {
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
    if (active == nullptr) {
      annotate(b_.CreateAlignedStore(value, ptr, elem_align), info);
      return;
    }
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* store_bb = llvm::BasicBlock::Create(ctx_, "store.guarded", fn);
    llvm::BasicBlock* done_bb = llvm::BasicBlock::Create(ctx_, "store.done", fn);
    b_.CreateCondBr(any_lane(active), store_bb, done_bb);
    b_.SetInsertPoint(store_bb);
    annotate(b_.CreateAlignedStore(value, ptr, elem_align), info);
    b_.CreateBr(done_bb);
    b_.SetInsertPoint(done_bb);
    return;
  }
  if (active != nullptr) active = splat_if_vector(active, t.lanes());
  Expr base;
  int64_t stride = 0;
  if (as_strided(index, &base, &stride) && stride == 1) {
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(base), base.dtype()));
    ptr = b_.CreateBitCast(ptr, compat::pointer_to(value->getType()));
    llvm::Align align = contiguous_alignment(info, base);
    if (active == nullptr)
      annotate(b_.CreateAlignedStore(value, ptr, align), info);
    else
      annotate(b_.CreateMaskedStore(value, ptr, align, active), info);
    return;
  }
  // Scatter: lanes are written in order, so the last of several equal indices wins.
  llvm::Value* ptrs = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
  annotate(b_.CreateMaskedScatter(value, ptrs, elem_align,
                                  active == nullptr ? all_true(b_, t.lanes()) : active),
           info);
}

void CodeGen::emit_allocate(const AllocateNode* n) {
  const Buffer& buf = n->buffer;
  DataType t = buf.dtype();
  if (!t.is_scalar() || t.is_handle() || t.bits() == 0)
    fail_build(fmt::format("allocation '{}' has element type {}", buf.name(), t.to_string()));
  // The size in bytes, if it is a constant.
  bool constant = true;
  int64_t bytes = t.bytes();
  for (const Expr& extent : buf.shape()) {
    const int64_t* c = as_const_int(extent);
    if (c != nullptr && *c < 0)
      fail_build(fmt::format("allocation '{}' has negative extent {}", buf.name(), *c));
    constant = constant && c != nullptr && !__builtin_mul_overflow(bytes, *c, &bytes);
  }
  bool on_stack = constant && bytes <= kMaxStackBytes;
  llvm::Value* raw = on_stack ? stack_allocation(bytes) : heap_allocation(buf);
  auto outer = buffers_.find(buf.get());
  std::optional<BufferInfo> saved;
  if (outer != buffers_.end()) saved = outer->second;
  buffers_[buf.get()] = BufferInfo{b_.CreateBitCast(raw, compat::pointer_to(memory_type(t))), t,
                                   kAllocAlignment, scope_of_[buf.get()], noalias_of_[buf.get()]};
  if (!on_stack) fs_.heap_allocs.push_back(raw);
  emit(n->body);
  if (!on_stack) {
    fs_.heap_allocs.pop_back();
    b_.CreateCall(runtime_function("te_free"), {raw});
  }
  if (saved)
    buffers_[buf.get()] = *saved;
  else
    buffers_.erase(buf.get());
}

llvm::Value* CodeGen::stack_allocation(int64_t bytes) {
  // In the entry block (once per call, not per loop iteration), zero-filled on every
  // entry into the Allocate like the interpreter's storage.
  uint64_t size = static_cast<uint64_t>(std::max<int64_t>(bytes, 1));
  llvm::AllocaInst* slot =
      entry_alloca(llvm::ArrayType::get(b_.getInt8Ty(), size), kAllocAlignment);
  b_.CreateMemSet(slot, b_.getInt8(0), size, llvm::MaybeAlign(kAllocAlignment));
  return slot;
}

llvm::Value* CodeGen::heap_allocation(const Buffer& buf) {
  // The size in i64 at run time, failing cleanly on a negative extent or a size beyond
  // the address space; te_alloc zero-fills.
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Function* mul_overflow =
      compat::intrinsic(&module_, llvm::Intrinsic::smul_with_overflow, {i64});
  llvm::Value* bytes = llvm::ConstantInt::get(i64, static_cast<uint64_t>(buf.dtype().bytes()));
  llvm::Value* bad = b_.getFalse();
  for (const Expr& extent : buf.shape()) {
    llvm::Value* e = to_i64(emit(extent), extent.dtype());
    bad = b_.CreateOr(bad, b_.CreateICmpSLT(e, llvm::ConstantInt::get(i64, 0)));
    llvm::Value* product = b_.CreateCall(mul_overflow, {bytes, e});
    bad = b_.CreateOr(bad, b_.CreateExtractValue(product, 1));
    bytes = b_.CreateExtractValue(product, 0);
  }
  std::string message = fmt::format(
      "{}: cannot allocate buffer '{}' (a negative size, a size beyond the address space, or out "
      "of memory)",
      func_name_, buf.name());
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* bad_size_bb = llvm::BasicBlock::Create(ctx_, "alloc.bad_size", fn);
  llvm::BasicBlock* alloc_bb = llvm::BasicBlock::Create(ctx_, "alloc", fn);
  b_.CreateCondBr(bad, bad_size_bb, alloc_bb);
  b_.SetInsertPoint(bad_size_bb);
  emit_fail(message);
  b_.SetInsertPoint(alloc_bb);
  llvm::Value* raw = b_.CreateCall(runtime_function("te_alloc"), {bytes});
  llvm::BasicBlock* no_memory_bb = llvm::BasicBlock::Create(ctx_, "alloc.no_memory", fn);
  llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "alloc.ok", fn);
  b_.CreateCondBr(b_.CreateIsNull(raw), no_memory_bb, ok_bb);
  b_.SetInsertPoint(no_memory_bb);
  emit_fail(message);
  b_.SetInsertPoint(ok_bb);
  return raw;
}

}  // namespace te::codegen
