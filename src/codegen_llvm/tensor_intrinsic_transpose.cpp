// intrinsics::transpose: T[i, j] = S[j, i] over an n x n block, in registers. S's n rows
// are loaded as n vectors; round s (s = 1, 2, 4, ... n/2) swaps, in every 2s x 2s block,
// the two off-diagonal s x s blocks: rows a and a + s (bit s of a clear) exchange the
// elements whose lane has bit s set in row a with those whose lane has it clear in row
// a + s, one two-vector shuffle per row. After the log2(n) rounds each row is a column of
// S; the n rows are stored to T. Generic vector IR: x86 selects unpack / permute
// instructions (vpermt2ps on AVX-512), other targets theirs.
#include <llvm/IR/DerivedTypes.h>

#include "codegen_llvm/llvm_compat.h"
#include "codegen_llvm/tensor_intrinsics.h"

namespace te::codegen {

namespace {

// The shuffle masks of round s over n lanes: the new row a (low) and row a + s (high), as
// indices into the concatenation (row a, row a + s).
std::vector<int> low_mask(unsigned n, unsigned s) {
  std::vector<int> m(n);
  for (unsigned l = 0; l < n; ++l) m[l] = static_cast<int>((l & s) ? n + l - s : l);
  return m;
}

std::vector<int> high_mask(unsigned n, unsigned s) {
  std::vector<int> m(n);
  for (unsigned l = 0; l < n; ++l) m[l] = static_cast<int>((l & s) ? n + l : l + s);
  return m;
}

// Row r of the region at ptr with row stride `stride` (elements), as a pointer to a vector.
llvm::Value* row(llvm::IRBuilder<>& b, llvm::Type* elem, llvm::Type* vec, llvm::Value* ptr, llvm::Value* stride,
                 unsigned r) {
  llvm::Value* at = b.CreateInBoundsGEP(elem, ptr, b.CreateMul(stride, b.getInt64(r)));
  return b.CreateBitCast(at, compat::pointer_to(vec));
}

}  // namespace

void emit_transpose(llvm::IRBuilder<>& b, const TensorIntrinsicRegions& regions, const TensorIntrinsicTarget&,
                    const std::function<void(const std::string&)>& fail) {
  if (regions.ptrs.size() != 2 || regions.shapes[0].size() != 2 || regions.shapes[0][0] != regions.shapes[0][1])
    fail("the LLVM 'transpose' implementation takes an n x n block and its transpose (intrinsics::transpose)");
  const auto n = static_cast<unsigned>(regions.shapes[0][0]);
  llvm::Type* elem = regions.types[0];
  auto* vec = llvm::FixedVectorType::get(elem, n);
  const llvm::Align align(compat::fixed_size(b.GetInsertBlock()->getModule()->getDataLayout().getTypeStoreSize(elem)));
  std::vector<llvm::Value*> rows(n);
  for (unsigned r = 0; r < n; ++r)
    rows[r] = b.CreateAlignedLoad(vec, row(b, elem, vec, regions.ptrs[0], regions.strides[0][0], r), align);
  for (unsigned s = 1; s < n; s *= 2) {
    const std::vector<int> low = low_mask(n, s), high = high_mask(n, s);
    for (unsigned a = 0; a < n; ++a) {
      if (a & s) continue;
      llvm::Value* x = rows[a];
      llvm::Value* y = rows[a + s];
      rows[a] = b.CreateShuffleVector(x, y, low);
      rows[a + s] = b.CreateShuffleVector(x, y, high);
    }
  }
  for (unsigned r = 0; r < n; ++r)
    b.CreateAlignedStore(rows[r], row(b, elem, vec, regions.ptrs[1], regions.strides[1][0], r), align);
}

}  // namespace te::codegen
