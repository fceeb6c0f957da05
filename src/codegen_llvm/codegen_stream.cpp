// Streaming (non-temporal) stores. A store into a line the cache does not hold first
// reads the line from memory (write-allocate): writing an output larger than the caches
// moves its bytes twice. x86's non-temporal stores write whole lines without reading
// them, but need addresses aligned to the vector and bypass the caches, so they are used
// only for outputs the function never reads that are at least as large as the last-level
// cache, for stores whose index is a multiple of the vector, and only where the output's
// start is aligned at run time.
#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/index_analysis.h"
#include "expr/analysis.h"
#include "expr/buffer_util.h"
#include "codegen_llvm/llvm_compat.h"

namespace te::codegen {
namespace {}  // namespace

void CodeGen::find_streamable_outputs(const LoweredFunc& f, const KernelSignature& sig) {
  streamable_.clear();
  if (options_.streaming_store_min_bytes <= 0) return;
  const BufferUse use = buffer_use(f.body);
  for (const KernelArg& a : sig.args)
    if (a.buffer.defined() && !use.loads(a.buffer.get())) streamable_.insert(a.buffer.get());
}

bool CodeGen::emit_streaming_store(const Buffer& buf, const BufferInfo& info, llvm::Value* value, llvm::Value* ptr,
                                   const Expr& index, llvm::Align align) {
  if (!streamable_.count(buf.get())) return false;
  auto* type = llvm::dyn_cast<llvm::FixedVectorType>(value->getType());
  if (type == nullptr) return false;
  const uint64_t bytes = compat::fixed_size(module_.getDataLayout().getTypeStoreSize(type));
  if (bytes != 16 && bytes != 32 && bytes != 64) return false;
  // Every store of the loop streams or none does: the index must be a multiple of the
  // vector, and the buffer's start is checked (once: LLVM hoists it). Mixing the two kinds
  // on neighbouring addresses made a 41 MB grid_sample output slower, not faster.
  if (info.dtype.bytes() * known_power_of_two_factor(index, let_factors_) < static_cast<int64_t>(bytes)) return false;

  // Large enough: decided now for constant shapes, at run time for symbolic ones.
  const int64_t elem = info.dtype.bytes();
  const int64_t min_elements = (options_.streaming_store_min_bytes + elem - 1) / elem;
  llvm::Value* stream = nullptr;  // i1; null: always
  if (std::optional<int64_t> count = constant_elements(buf)) {
    if (*count < min_elements) return false;
  } else {
    // The array exists in memory, so its element count fits in int64 (and a wrong answer
    // would only choose the other kind of store, never change the result).
    llvm::Value* elements = b_.getInt64(1);
    for (const Expr& extent : buf.shape()) elements = b_.CreateMul(elements, to_i64(emit(extent), extent.dtype()));
    stream = b_.CreateICmpUGE(elements, b_.getInt64(static_cast<uint64_t>(min_elements)));
  }
  if (info.base_align < static_cast<int64_t>(bytes)) {
    llvm::Value* addr = b_.CreatePtrToInt(info.ptr, b_.getInt64Ty());
    llvm::Value* aligned = b_.CreateICmpEQ(b_.CreateAnd(addr, b_.getInt64(bytes - 1)), b_.getInt64(0));
    stream = stream == nullptr ? aligned : b_.CreateAnd(stream, aligned);
  }
  auto streaming_store = [&] {
    llvm::StoreInst* st = b_.CreateAlignedStore(value, ptr, llvm::Align(bytes));
    llvm::MDNode* one = llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))});
    st->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
    annotate(st, info);
  };
  fs_.streamed = true;
  if (stream == nullptr) {
    streaming_store();
    return true;
  }
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* nt_bb = llvm::BasicBlock::Create(ctx_, "store.stream", fn);
  llvm::BasicBlock* plain_bb = llvm::BasicBlock::Create(ctx_, "store.plain", fn);
  llvm::BasicBlock* done_bb = llvm::BasicBlock::Create(ctx_, "store.done", fn);
  b_.CreateCondBr(stream, nt_bb, plain_bb);
  b_.SetInsertPoint(nt_bb);
  streaming_store();
  b_.CreateBr(done_bb);
  b_.SetInsertPoint(plain_bb);
  annotate(b_.CreateAlignedStore(value, ptr, align), info);
  b_.CreateBr(done_bb);
  b_.SetInsertPoint(done_bb);
  return true;
}

void CodeGen::emit_stream_fence() {
  if (!fs_.streamed) return;
  b_.CreateCall(llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_sse_sfence));
}

}  // namespace te::codegen
