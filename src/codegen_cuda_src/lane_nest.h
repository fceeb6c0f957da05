// Warp fragments element by element. A loop nest at warp level (outside every threadIdx.x
// loop) that reads or writes "warp" buffers by plain loads and stores, e.g. an epilogue
// on mma accumulators (relu(C + bias) straight from the registers to global memory) or
// the accumulators of one mma made the A operand of the next, runs in each lane as the
// steps whose fragment elements that lane holds: no shared-memory staging, no shuffle.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "codegen_cuda_src/tensor_intrinsics.h"
#include "te/ir.h"

namespace te::cuda {

// How a warp's lanes hold a warp buffer: as the fragments (kind and tile) that its tensor
// intrinsics take, in rows of `row` elements.
struct FragmentLayout {
  Fragment kind = Fragment::C;
  FragmentShape shape;
  int64_t row = 0;
  std::string intrinsic;  // the intrinsic that laid it out (for messages)
};

// Where element `element` of a buffer laid out so lives: the lane (4 g + t of the PTX
// ISA's fragment figures) and the slot of that lane's array.
struct FragmentPlace {
  int lane = 0;
  int64_t slot = 0;
};
FragmentPlace fragment_place(const FragmentLayout& layout, int64_t element);

// A value of a nest's loop in one lane's step: base + per_g * g + per_t * t, where the
// lane is 4 g + t.
struct LaneAffine {
  int64_t base = 0, per_g = 0, per_t = 0;
};

// A lane nest as each lane runs it: the same steps in every lane, step k being one run of
// a store of the nest whose warp-buffer elements the lane holds.
struct LaneNest {
  struct Step {
    const StoreNode* store = nullptr;
    std::vector<const StmtNode*> path;  // the For and LetStmt statements around the store, outermost first
    std::vector<LaneAffine> loop_values;             // per For of path, in order
    std::map<const LoadNode*, int64_t> load_slots;   // the warp buffers' loads
    int64_t store_slot = -1;                         // when the store writes a warp buffer
  };
  std::vector<Step> steps;
  int64_t elements = 0;  // the warp buffers' elements the nest touches, for the comment
};

// Whether root is a loop nest of For, LetStmt, Seq and Store statements only that loads or
// stores a warp buffer (a candidate lane nest).
bool is_lane_nest(const ForNode* root);

// Plans the lane nest `root` (is_lane_nest) of kernel `kernel` over the warp buffers'
// layouts. te::Error when a lane would touch an element another lane holds, when an
// index is not a number the nest's loops fix, or when the lanes' steps differ in shape.
LaneNest plan_lane_nest(const ForNode* root, const std::map<const BufferNode*, FragmentLayout>& layouts,
                        const std::string& kernel);

}  // namespace te::cuda
