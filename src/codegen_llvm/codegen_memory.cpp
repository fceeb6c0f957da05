// Loads, stores and allocations. Vector accesses become one contiguous (masked) load or
// store when the index is base + lane, a scalar access and a broadcast when it is the
// same for every lane, and per-lane loads (a masked gather) or a scatter otherwise. Masked-off lanes
// read as zero and are never touched in memory.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/MDBuilder.h>

#include <optional>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/index_analysis.h"
#include "codegen_llvm/llvm_compat.h"
#include "expr/analysis.h"
#include "expr/buffer_util.h"

namespace te::codegen {
namespace {

// Allocations of a constant size up to this many bytes live on the stack.
constexpr int64_t kMaxStackBytes = 32 * 1024;
// Alignment of allocations (stack and heap) and the most te ever assumes.
constexpr int64_t kAllocAlignment = 64;
// Vector loads with a constant stride up to this read the span densely and shuffle.
constexpr int64_t kMaxDenseStride = 4;

llvm::Value* all_true(llvm::IRBuilder<>& b, int lanes) {
  return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(static_cast<unsigned>(lanes)), b.getTrue());
}

}  // namespace

const CodeGen::BufferInfo& CodeGen::buffer(const Buffer& b) {
  auto it = buffers_.find(b.get());
  if (it == buffers_.end())
    fail_build(fmt::format("buffer '{}' is accessed but is neither a parameter nor allocated", b.name()));
  return it->second;
}

llvm::Align CodeGen::contiguous_alignment(const BufferInfo& info, const Expr& base) {
  int64_t elem = info.dtype.bytes();
  int64_t align = std::min<int64_t>(info.base_align, elem * known_power_of_two_factor(base, let_factors_));
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
    fail_build(
        fmt::format("a load of {} from buffer '{}' of {}", t.to_string(), n->buffer.name(), info.dtype.to_string()));
  Expr index = flatten_index(n->buffer, n->indices);
  llvm::Type* elem_mem = memory_type(info.dtype);
  llvm::Align elem_align(static_cast<uint64_t>(info.dtype.bytes()));
  llvm::Value* active = n->predicate.defined() ? to_bool(emit(n->predicate), n->predicate.dtype()) : nullptr;
  llvm::Value* in_bounds = nullptr;  // a checked strided vector's lanes, if it is one
  if (auto pre = prechecked_.find(n); pre != prechecked_.end()) {
    index = pre->second.index;
    in_bounds = pre->second.lane_mask;
  } else if (needs_index_check(n->buffer, index)) {
    index = checked_index(n->buffer, index, and_masks(active, mask_), /*is_store=*/false, &in_bounds);
  }
  if (t.is_scalar()) {
    // A scalar load inside a vector branch runs when any lane takes the branch.
    if (mask_ != nullptr) active = and_masks(active, any_lane(mask_));
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
    if (active == nullptr) return from_memory(annotate(b_.CreateAlignedLoad(elem_mem, ptr, elem_align), info), t);
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* load_bb = llvm::BasicBlock::Create(ctx_, "load.guarded", fn);
    llvm::BasicBlock* done_bb = llvm::BasicBlock::Create(ctx_, "load.done", fn);
    llvm::BasicBlock* from = b_.GetInsertBlock();
    b_.CreateCondBr(active, load_bb, done_bb);
    b_.SetInsertPoint(load_bb);
    llvm::Value* v = from_memory(annotate(b_.CreateAlignedLoad(elem_mem, ptr, elem_align), info), t);
    llvm::BasicBlock* load_end = b_.GetInsertBlock();
    b_.CreateBr(done_bb);
    b_.SetInsertPoint(done_bb);
    llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
    phi->addIncoming(v, load_end);
    phi->addIncoming(llvm::Constant::getNullValue(v->getType()), from);
    return phi;
  }
  if (active != nullptr) active = splat_if_vector(active, t.lanes());
  active = and_masks(and_masks(active, mask_), in_bounds);
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
  if (strided && stride >= 2 && stride <= kMaxDenseStride && active == nullptr)
    return from_memory(emit_strided_load(info, base, stride, vec_mem, lanes), t);
  if (active == nullptr) return from_memory(emit_lane_loads(info, index, vec_mem, lanes), t);
  llvm::Value* ptrs = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
  llvm::Value* v = annotate(
      b_.CreateMaskedGather(vec_mem, ptrs, elem_align, active == nullptr ? all_true(b_, lanes) : active, zero), info);
  return from_memory(v, t);
}

// An index read from memory that the loops' bounds do not prove inside the buffer, when
// the options ask for checks.
bool CodeGen::needs_index_check(const Buffer& buf, const Expr& index) const {
  return options_.check_data_indices && reads_memory(index, data_vars_) && !provably_in_bounds(buf, index);
}

// True when the enclosing loops' constant bounds and the index's own clamps (min/max, as
// grid_sample clamps its taps into the image) keep every lane inside the buffer, so an
// index read from memory needs no run-time check.
bool CodeGen::provably_in_bounds(const Buffer& buf, const Expr& index) const {
  std::optional<int64_t> size = constant_elements(buf);
  Interval range{0, 0};
  return size && const_bounds(index, loop_bounds_, &range) && range.min >= 0 && range.max < *size;
}

// Bounds inference proves every index te computes from loop variables in range, and
// the call checks the shapes; an index read from memory (a gather, A[B[i]]) can be
// anything. Such an index is replaced by 0 where it is outside the buffer, so the load
// stays inside, and a flag of the function records it (only for lanes that load: a
// guarded gather's guard still protects it); the function then fails with a te::Error
// instead of returning success. No branch in the loop: gathers stay as fast as they were.
// A strided vector index (base + stride * lane, as a vectorized loop over a row at a
// gathered position makes) is checked at its first and last lanes only, and kept a
// stride: when they are outside, *lane_mask turns every lane off (the access becomes a
// masked one that touches nothing), so a dense row stays one vector load or store.
Expr CodeGen::checked_index(const Buffer& buf, const Expr& index, llvm::Value* active, bool is_store,
                            llvm::Value** lane_mask) {
  DataType it = index.dtype().element_of();
  Expr size = element_count(buf, it);
  int lanes = index.dtype().lanes();
  Expr zero = make_const(it, 0);
  Expr base;
  int64_t stride = 0;
  const bool strided = lanes > 1 && as_strided(index, &base, &stride) && stride != 0;
  Expr inside;
  if (strided) {
    // One unsigned compare: the lowest lane at least 0 and the highest below size.
    int64_t span = std::abs(stride) * (lanes - 1);
    Expr low = stride > 0 ? base : base - make_const(it, span);
    DataType ut = UInt(it.bits());
    inside = cast(ut, low) < cast(ut, max(size - make_const(it, span), zero));
  } else {
    if (lanes > 1) size = broadcast(size, lanes), zero = broadcast(zero, lanes);
    inside = index >= zero && index < size;
  }
  llvm::Value* ok = to_bool(emit(inside), inside.dtype());
  llvm::Value* bad = b_.CreateNot(ok);
  if (active != nullptr) bad = b_.CreateAnd(bad, strided ? any_lane(active) : splat_if_vector(active, lanes));
  record_bad_index(buf, is_store, any_lane(bad), {to_string(index)});
  if (!strided) return select(inside, index, zero);
  // Outside, a load reads from a base clamped to 0 when the buffer is known to hold the
  // whole vector there (a plain vector load, cheaper than a masked one); otherwise, and
  // for stores (which must not write where they were not meant to), no lane is accessed.
  Expr clamped_base = select(inside, base, make_const(it, stride > 0 ? 0 : std::abs(stride) * (lanes - 1)));
  std::optional<int64_t> elements = constant_elements(buf);
  if (is_store || !elements || *elements <= std::abs(stride) * (lanes - 1)) *lane_mask = splat_if_vector(ok, lanes);
  return ramp(clamped_base, make_const(it, stride), lanes);
}

void CodeGen::record_bad_index(const Buffer& buf, bool is_store, llvm::Value* bad,
                               const std::vector<std::string>& indices) {
  std::string head =
      fmt::format("{}: out-of-bounds {} buffer '{}'", func_name_, is_store ? "store to" : "load from", buf.name());
  FunctionState::BadIndexFlag* slot = nullptr;
  for (auto& f : fs_.bad_index_flags)
    if (f.head == head) slot = &f;
  if (slot == nullptr) {
    llvm::BasicBlock& entry = fs_.fn->getEntryBlock();
    llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
    llvm::Value* flag = at_entry.CreateAlloca(b_.getInt1Ty());
    at_entry.CreateStore(b_.getFalse(), flag);
    fs_.bad_index_flags.push_back({head, {}, flag});
    slot = &fs_.bad_index_flags.back();
  }
  for (const std::string& text : indices)
    if (std::find(slot->indices.begin(), slot->indices.end(), text) == slot->indices.end())
      slot->indices.push_back(text);
  b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), slot->flag), bad), slot->flag);
}

void CodeGen::emit_success_return() {
  for (const auto& f : fs_.bad_index_flags) {
    const size_t shown = std::min<size_t>(f.indices.size(), 3);
    std::string list;
    for (size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + f.indices[i];
    if (shown < f.indices.size()) list += fmt::format(" and {} more", f.indices.size() - shown);
    const std::string message = fmt::format(
        "{}: an index read from memory or returned by an extern function is outside the buffer "
        "(the checked {}: {})",
        f.head, f.indices.size() == 1 ? "index" : "indices", list);
    llvm::Value* flag = f.flag;
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "index.ok", fn);
    llvm::BasicBlock* fail_bb = llvm::BasicBlock::Create(ctx_, "index.bad", fn);
    b_.CreateCondBr(b_.CreateLoad(b_.getInt1Ty(), flag), fail_bb, ok_bb);
    b_.SetInsertPoint(fail_bb);
    emit_fail(message);
    b_.SetInsertPoint(ok_bb);
  }
  emit_stream_fence();
  b_.CreateRet(b_.getInt32(0));
}

// An unmasked gather as one scalar load per lane. x86's gather instructions are
// microcoded on AMD Zen (on Zen 5, te's bilinear grid_sample ran 2-3x slower with them on
// a rotated grid) and slowed by Intel's gather-data-sampling mitigation; Halide, too,
// scalarizes gathers on x86. Masked gathers stay gathers: they must not touch inactive lanes.
llvm::Value* CodeGen::emit_lane_loads(const BufferInfo& info, const Expr& index, llvm::Type* vec_mem, int lanes) {
  llvm::Type* elem_mem = memory_type(info.dtype);
  llvm::Align elem_align(static_cast<uint64_t>(info.dtype.bytes()));
  // base + uniform part first: when only that changes in a loop (a channel loop over
  // precomputed taps), the lanes' offsets are loop invariant and can leave the loop.
  llvm::Value* base = info.ptr;
  Expr uniform, varying = index;
  if (split_uniform(index, &uniform, &varying))
    base = b_.CreateInBoundsGEP(elem_mem, base, to_i64(emit(uniform), uniform.dtype()));
  llvm::Value* offsets = emit(varying);
  DataType offset_type = varying.dtype().element_of();
  llvm::Value* v = llvm::UndefValue::get(vec_mem);
  for (int i = 0; i < lanes; ++i) {
    llvm::Value* lane = b_.getInt64(static_cast<uint64_t>(i));
    llvm::Value* offset = to_i64(b_.CreateExtractElement(offsets, lane), offset_type);
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, base, offset);
    llvm::Value* x = annotate(b_.CreateAlignedLoad(elem_mem, ptr, elem_align), info);
    v = b_.CreateInsertElement(v, x, lane);
  }
  return v;
}

// base + stride * lane for a small stride (a stride-2 convolution's row of inputs): the
// span from the first lane to the last read as vectors of `lanes` (the last one ending at
// the last lane, so nothing past it is touched), then one shuffle picks the lanes. LLVM
// turns that into a few permutes, where lane-by-lane loads cost a load and an insert each.
llvm::Value* CodeGen::emit_strided_load(const BufferInfo& info, const Expr& base, int64_t stride, llvm::Type* vec_mem,
                                        int lanes) {
  llvm::Type* elem_mem = memory_type(info.dtype);
  llvm::Align elem_align(static_cast<uint64_t>(info.dtype.bytes()));
  llvm::Value* first = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(base), base.dtype()));
  const int64_t span = stride * (lanes - 1) + 1;
  const int64_t pieces = (span + lanes - 1) / lanes;
  std::vector<llvm::Value*> parts;
  std::vector<int64_t> starts;
  for (int64_t p = 0; p < pieces; ++p) {
    int64_t start = std::min<int64_t>(p * lanes, span - lanes);
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, first, b_.getInt64(static_cast<uint64_t>(start)));
    ptr = b_.CreateBitCast(ptr, compat::pointer_to(vec_mem));
    parts.push_back(annotate(b_.CreateAlignedLoad(vec_mem, ptr, elem_align), info));
    starts.push_back(start);
  }
  // Concatenate the pieces (shuffles of two vectors each), then pick every stride-th
  // element: element e of the span lies in the first piece whose range holds it.
  llvm::Value* joined = parts[0];
  int64_t width = lanes;
  for (size_t p = 1; p < parts.size(); ++p) {
    llvm::Value* next = parts[p];
    if (width > lanes) {  // widen the piece to the joined vector's width (undef beyond)
      std::vector<int> widen(static_cast<size_t>(width));
      for (int64_t i = 0; i < width; ++i) widen[static_cast<size_t>(i)] = i < lanes ? static_cast<int>(i) : -1;
      next = b_.CreateShuffleVector(next, llvm::UndefValue::get(next->getType()), widen);
    }
    std::vector<int> concat(static_cast<size_t>(width + lanes));
    for (int64_t i = 0; i < width + lanes; ++i) concat[static_cast<size_t>(i)] = static_cast<int>(i);
    joined = b_.CreateShuffleVector(joined, next, concat);
    width += lanes;
  }
  std::vector<int> pick(static_cast<size_t>(lanes));
  for (int i = 0; i < lanes; ++i) {
    const int64_t e = stride * i;
    size_t p = 0;
    while (e >= starts[p] + lanes) ++p;
    pick[static_cast<size_t>(i)] = static_cast<int>(static_cast<int64_t>(p) * lanes + (e - starts[p]));
  }
  return b_.CreateShuffleVector(joined, llvm::UndefValue::get(joined->getType()), pick);
}

void CodeGen::emit_store(const StoreNode* n) {
  const BufferInfo& info = buffer(n->buffer);
  DataType t = n->value.dtype();
  if (t.element_of() != info.dtype)
    fail_build(
        fmt::format("a store of {} into buffer '{}' of {}", t.to_string(), n->buffer.name(), info.dtype.to_string()));
  Expr index = flatten_index(n->buffer, n->indices);
  llvm::Type* elem_mem = memory_type(info.dtype);
  llvm::Align elem_align(static_cast<uint64_t>(info.dtype.bytes()));
  llvm::Value* active = n->predicate.defined() ? to_bool(emit(n->predicate), n->predicate.dtype()) : nullptr;
  // The value is computed for the stored lanes only, as interpret() does (it matters for
  // extern calls): a scalar store computes it behind the predicate's branch, a vector
  // store's extern calls run for the predicate's lanes.
  llvm::BasicBlock* done_bb = nullptr;
  if (t.is_scalar() && active != nullptr) {
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* store_bb = llvm::BasicBlock::Create(ctx_, "store.guarded", fn);
    done_bb = llvm::BasicBlock::Create(ctx_, "store.done", fn);
    b_.CreateCondBr(any_lane(active), store_bb, done_bb);
    b_.SetInsertPoint(store_bb);
  }
  if (active != nullptr && t.is_vector()) active = splat_if_vector(active, t.lanes());
  llvm::Value* outer_extern_mask = extern_mask_;
  if (t.is_vector()) extern_mask_ = and_masks(outer_extern_mask, active);
  llvm::Value* value = to_memory(emit(n->value), t);
  extern_mask_ = outer_extern_mask;
  // A scatter through indices read from memory (te::scatter, or a store at a gathered
  // position) writes element 0 instead of outside the buffer, and the call fails.
  llvm::Value* in_bounds = nullptr;  // a checked strided vector's lanes, if it is one
  if (needs_index_check(n->buffer, index))
    index = checked_index(n->buffer, index, and_masks(t.is_scalar() ? nullptr : active, mask_), /*is_store=*/true,
                          &in_bounds);
  active = and_masks(active, in_bounds);
  if (n->atomic_add) {
    emit_atomic_add(info, value, index, active, t);
    if (done_bb != nullptr) {
      b_.CreateBr(done_bb);
      b_.SetInsertPoint(done_bb);
    }
    return;
  }
  if (t.is_scalar()) {
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
    annotate(b_.CreateAlignedStore(value, ptr, elem_align), info);
    if (done_bb != nullptr) {
      b_.CreateBr(done_bb);
      b_.SetInsertPoint(done_bb);
    }
    return;
  }
  Expr base;
  int64_t stride = 0;
  if (as_strided(index, &base, &stride) && stride == 1) {
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(base), base.dtype()));
    ptr = b_.CreateBitCast(ptr, compat::pointer_to(value->getType()));
    llvm::Align align = contiguous_alignment(info, base);
    if (active == nullptr && emit_streaming_store(n->buffer, info, value, ptr, base, align)) return;
    if (active == nullptr)
      annotate(b_.CreateAlignedStore(value, ptr, align), info);
    else
      annotate(b_.CreateMaskedStore(value, ptr, align, active), info);
    return;
  }
  // Scatter: lanes are written in order, so the last of several equal indices wins.
  llvm::Value* ptrs = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(emit(index), index.dtype()));
  annotate(b_.CreateMaskedScatter(value, ptrs, elem_align, active == nullptr ? all_true(b_, t.lanes()) : active), info);
}

void CodeGen::emit_atomic_add(const BufferInfo& info, llvm::Value* value, const Expr& index, llvm::Value* active,
                              DataType t) {
  const DataType e = info.dtype;  // float32, float64, int32 or int64: te::atomic_add checked
  llvm::Type* elem_mem = memory_type(e);
  const llvm::Align align(static_cast<uint64_t>(e.bytes()));
  const auto op = e.is_float() ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
  llvm::Value* offsets = emit(index);
  const DataType index_lane = index.dtype().element_of();
  auto add_at = [&](llvm::Value* offset, llvm::Value* x) {
    llvm::Value* ptr = b_.CreateInBoundsGEP(elem_mem, info.ptr, to_i64(offset, index_lane));
    annotate(b_.CreateAtomicRMW(op, ptr, x, llvm::MaybeAlign(align), llvm::AtomicOrdering::Monotonic), info);
  };
  if (t.is_scalar()) return add_at(offsets, value);
  // Lane by lane, in order: lanes that meet one element add up instead of the last winning.
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  for (int lane = 0; lane < t.lanes(); ++lane) {
    llvm::Value* offset = index.dtype().is_vector() ? b_.CreateExtractElement(offsets, lane) : offsets;
    llvm::Value* x = b_.CreateExtractElement(value, lane);
    if (active == nullptr) {
      add_at(offset, x);
      continue;
    }
    llvm::BasicBlock* add_bb = llvm::BasicBlock::Create(ctx_, "atomic.lane", fn);
    llvm::BasicBlock* next_bb = llvm::BasicBlock::Create(ctx_, "atomic.next", fn);
    b_.CreateCondBr(b_.CreateExtractElement(active, lane), add_bb, next_bb);
    b_.SetInsertPoint(add_bb);
    add_at(offset, x);
    b_.CreateBr(next_bb);
    b_.SetInsertPoint(next_bb);
  }
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
    if (c != nullptr && *c < 0) fail_build(fmt::format("allocation '{}' has negative extent {}", buf.name(), *c));
    constant = constant && c != nullptr && !__builtin_mul_overflow(bytes, *c, &bytes);
  }
  bool on_stack = constant && bytes <= kMaxStackBytes;
  // Zero-filled like the interpreter's storage, unless the body never loads an element
  // before storing it (then no load could tell).
  const bool zero_fill = !loads_only_stored_elements(*n);
  llvm::Value* raw = on_stack ? stack_allocation(bytes, zero_fill) : heap_allocation(buf, zero_fill);
  ScopedBinding bind(buffers_, buf.get(),
                     BufferInfo{b_.CreateBitCast(raw, compat::pointer_to(memory_type(t))), t, kAllocAlignment,
                                scope_of_[buf.get()], noalias_of_[buf.get()]});
  if (!on_stack) fs_.heap_allocs.push_back(raw);
  emit(n->body);
  if (!on_stack) {
    fs_.heap_allocs.pop_back();
    b_.CreateCall(runtime_function("te_free"), {raw});
  }
}

llvm::Value* CodeGen::stack_allocation(int64_t bytes, bool zero_fill) {
  // In the entry block (once per call, not per loop iteration), zero-filled (when asked)
  // on every entry into the Allocate.
  uint64_t size = static_cast<uint64_t>(std::max<int64_t>(bytes, 1));
  llvm::AllocaInst* slot = entry_alloca(llvm::ArrayType::get(b_.getInt8Ty(), size), kAllocAlignment);
  if (zero_fill) b_.CreateMemSet(slot, b_.getInt8(0), size, llvm::MaybeAlign(kAllocAlignment));
  return slot;
}

llvm::Value* CodeGen::heap_allocation(const Buffer& buf, bool zero_fill) {
  // The size in i64 at run time, failing cleanly on a negative extent or a size beyond
  // the address space; te_alloc zero-fills.
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Function* mul_overflow = compat::intrinsic(&module_, llvm::Intrinsic::smul_with_overflow, {i64});
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
  llvm::Value* raw = b_.CreateCall(runtime_function(zero_fill ? "te_alloc" : "te_alloc_uninitialized"), {bytes});
  llvm::BasicBlock* no_memory_bb = llvm::BasicBlock::Create(ctx_, "alloc.no_memory", fn);
  llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "alloc.ok", fn);
  b_.CreateCondBr(b_.CreateIsNull(raw), no_memory_bb, ok_bb);
  b_.SetInsertPoint(no_memory_bb);
  emit_fail(message);
  b_.SetInsertPoint(ok_bb);
  return raw;
}

}  // namespace te::codegen
