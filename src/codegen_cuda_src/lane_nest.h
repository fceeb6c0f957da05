// Warp fragments element by element. A loop nest at warp level (outside every threadIdx.x
// loop) that reads or writes "warp" buffers by plain loads and stores, e.g. an epilogue
// on mma accumulators (relu(C + bias) straight from the registers to global memory), the
// accumulators of one mma made the A operand of the next, or a softmax's row max over
// them, runs in each lane as the steps on the fragment elements that lane holds: no
// shared-memory staging. A row reduction over fragments ends with a butterfly across the
// four lanes that share a row (two shuffles). "warpgroup" buffers (wgmma's fragments)
// the same way, in a warpgroup's 128 threads: warp w holds rows 16 w .. 16 w + 15 of
// each 64-row fragment as a warp holds mma.sync's.
#pragma once
#include <bitset>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen_cuda_src/tensor_intrinsics.h"
#include "te/ir.h"

namespace te::cuda {

// How a warp's lanes hold a warp buffer: as the fragments (kind and tile) that its tensor
// intrinsics take, in rows of `row` elements; or (rows_only) one element per row of such
// fragments (a row's max, sum...), which the four lanes holding the row each keep.
struct FragmentLayout {
  Fragment kind = Fragment::C;
  FragmentShape shape;
  int64_t row = 0;
  bool rows_only = false;
  std::string origin;  // the intrinsic that laid it out, or the buffer it was inferred from
};

// A set of a group's threads, a bit each: a warp's 32 lanes, or a warpgroup's 128 threads
// (thread 32 w + lane: warp w of the group holds rows 16 w .. 16 w + 15 of each 64-row
// wgmma fragment, as a warp holds an mma.sync fragment's 16).
using ThreadSet = std::bitset<128>;

// Where element `element` of a buffer laid out so lives: the threads holding it (one, or
// a row's four lanes) and its slot in each one's array.
struct FragmentPlace {
  ThreadSet lanes;
  int64_t slot = 0;
};
FragmentPlace fragment_place(const FragmentLayout& layout, int64_t element);

// The size of a lane's array for a warp buffer of `elements` elements laid out so.
int64_t lane_array_size(const FragmentLayout& layout, int64_t elements);

// The threads that hold a fragment buffer of this scope together: a "warp" buffer's 32
// lanes, a "warpgroup" buffer's 128 threads; and the words the printed comments and
// messages use for one of them and for the group.
int fragment_threads(MemoryScope scope);
inline const char* thread_word(int threads) { return threads == 32 ? "lane" : "thread"; }
inline const char* group_word(int threads) { return threads == 32 ? "warp" : "warpgroup"; }

// A value of a nest's loop in one thread: base + per_w * w + per_g * g + per_t * t, where
// the lane is 4 g + t (the PTX ISA's fragment figures) and w the warp within a warpgroup
// (0 for a warp's fragments).
struct LaneAffine {
  int64_t base = 0, per_g = 0, per_t = 0, per_w = 0;
};

// A lane's part of a nest, as a tree: the nest's statements with each loop unrolled into
// the iterations holding some of the lane's stores; the same shape in every lane, except
// for iterations that some lanes' values put outside their loop's range (guarded).
struct LaneTree {
  const StmtNode* stmt = nullptr;                 // a For (one iteration), LetStmt, IfThenElse or Store
  LaneAffine value;                               // For: the loop variable's value; IfThenElse: 0 then, 1 else
  int64_t begin = 0, end = 0;                     // For: its range
  bool guarded = false;                           // For: some lanes' value falls outside [begin, end)
  std::map<const LoadNode*, int64_t> load_slots;  // the warp loads of a LetStmt's value or a Store
  int64_t store_slot = -1;                        // a Store to a warp buffer: its slot
  std::vector<LaneTree> children;
};

// A row reduction across lanes: after the nest, slot `slot` of warp buffer `buffer`
// combines with the other three lanes of its row by `op`.
struct LaneReduction {
  Buffer buffer;
  int64_t slot = 0;
  BinOp op = BinOp::Add;
};

struct LaneNest {
  std::vector<LaneTree> trees;
  std::vector<LaneReduction> reductions;
  int64_t lane_stores = 0;         // the most stores a lane runs
  int64_t fewest_lane_stores = 0;  // the fewest (fewer where the nest covers part of the fragments)
  int64_t stores = 0;              // the stores of the whole nest, for the comment
  int threads = 32;                // the group whose fragments it runs on: 32 (a warp) or 128 (a warpgroup)
};

// Gives the warp buffers that no intrinsic lays out the layout of what the nests compute
// them from: the fragment it reads at the same element, or the rows of the fragment it
// reads along a row. `elements`: each warp buffer's size.
void infer_fragment_layouts(const std::vector<const ForNode*>& nests,
                            const std::map<const BufferNode*, int64_t>& elements,
                            std::map<const BufferNode*, FragmentLayout>* layouts);

// Plans the lane nest `root` (is_fragment_nest) of kernel `kernel` over the warp buffers'
// layouts. te::Error when a store would touch elements no lane holds together, when an
// index is not a number the nest's loops fix, or when the lanes' parts differ in shape.
LaneNest plan_lane_nest(const ForNode* root, const std::map<const BufferNode*, FragmentLayout>& layouts,
                        const std::string& kernel);

}  // namespace te::cuda
