// Matching a stage's loop nest against a tensor intrinsic's declaration.
#pragma once
#include <string>
#include <vector>

#include "te/ir.h"
#include "te/simplify.h"
#include "te/tensorize.h"

namespace te::tensorize {

// The loops of the nest under the tensorized axis (the axis first) and the statement
// they run (the stage's update store).
struct Nest {
  std::vector<const ForNode*> loops;
  std::vector<bool> reduce;  // per loop: whether it runs a reduction axis
  const StoreNode* store = nullptr;
};

// What a match gives: per declaration tensor (inputs, then output), the stage's buffer,
// the element offset of the region in it and the region's stride along each dimension.
struct Binding {
  std::vector<Buffer> buffers;
  std::vector<Expr> offsets;
  std::vector<std::vector<Expr>> strides;
};

// Matches nest against the declaration; te::Error starting with `where` ("tensorize:
// stage 'C' at axis 'k.inner' does not match intrinsic 'x'") and naming the part that
// differs. known: constant bounds of shape variables (loop extents simplify with them).
Binding match(const Nest& nest, const TensorIntrinsicNode& in, const VarBounds& known, const std::string& where);

}  // namespace te::tensorize
