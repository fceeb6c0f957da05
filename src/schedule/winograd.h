// What Schedule::winograd finds in a stage: the convolution's reads and axes, or why the
// stage is not one it rewrites. auto_schedule's Winograd rule asks before applying it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "te/schedule.h"

namespace te::sched {

struct WinogradPlan {
  // The convolution found in the stage's body.
  struct Convolution {
    const TensorReadNode* input = nullptr;    // d
    const TensorReadNode* weights = nullptr;  // g
    IterVar taps[2];                          // rh, rw
    IterVar channel;                          // rc
    int input_dim[2] = {-1, -1};              // d's dimensions read at h + rh + c, w + rw + c'
    int64_t offset[2] = {0, 0};               // c, c'
    int axis[2] = {-1, -1};                   // h, w: the stage's axes
    int input_channel_dim = -1;
    int weight_dim[2] = {-1, -1};  // g's dimensions read at rh, rw
    int weight_channel_dim = -1;   // g's dimension read at rc
  };
  std::string refusal;  // why winograd() would refuse (without "winograd: "); empty: it applies
  Convolution conv;
  int64_t tiles[2] = {0, 0};       // ceil(output extent / 2) along h and w
  int64_t input_rows[2] = {0, 0};  // the input's extents along h and w
  int64_t in_channels = 0;         // the sum's channel extent
  int64_t out_channels = 0;        // the product of the output-channel axes' extents
};
WinogradPlan plan_winograd(const ScheduleNode& s, const StageNode& stage);

// e as a variable, or null.
const VarNode* as_var(const Expr& e);
// The index of op's axis whose variable is v, or -1.
int axis_of(const OperationNode& op, const VarNode* v);
// Why the stage cannot be rewritten at all (a placeholder, not a float, scheduled, stages
// computed at its loops); empty: it can. Both Winograd planners ask it first.
std::string unrewritable_stage(const ScheduleNode& s, const StageNode& stage);
// Why op's body is not a sum of a product of two tensor reads over reduction axes of
// constant extents from 0; empty: it is, and red, a and b are set.
std::string sum_of_two_reads(const OperationNode& op, const ReduceNode*& red, const TensorReadNode*& a,
                             const TensorReadNode*& b);

// What Schedule::winograd_1d finds: the window's reads, its phases, or why not.
struct Winograd1dPlan {
  std::string refusal;                    // why winograd_1d() would refuse (without "winograd_1d: "); empty: it applies
  const TensorReadNode* input = nullptr;  // d, read at stride * x + dilation * k + offset along input_dim
  const TensorReadNode* weights = nullptr;  // g, read at k along weight_dim
  int input_dim = -1, weight_dim = -1;
  int axis = -1;  // x: the stage's axis
  int64_t stride = 1, dilation = 1, offset = 0;
  int64_t taps = 0;          // r: the window's extent
  int64_t outputs = 0;       // m: outputs per tile
  int64_t tiles = 0;         // ceil(x's extent / m)
  int64_t input_extent = 0;  // d's extent along input_dim
  // The window's taps by phase: tap k reads the tile's input at stride * (i + q) + p
  // (output i of the tile) for its phase p and place q; phase_taps[p][q] = k, q from 0.
  std::vector<std::vector<int64_t>> phase_taps;  // indexed by p in [0, stride); empty: no taps
  int64_t points = 0;                            // the sum over phases of m + r_p - 1
  int64_t multiplications_saved_x100 = 0;        // 100 * m * r / points: direct products per transformed one
  int64_t most_phase_points = 0;                 // the largest m + r_p - 1
  int64_t other_steps = 1;                       // the product of the other reduction axes' extents
  int64_t out_channels = 1;                      // the product of the output-channel axes' extents
};
Winograd1dPlan plan_winograd_1d(const ScheduleNode& s, const StageNode& stage, const IterVar& window,
                                int64_t outputs_per_tile);
// Whether the weights' dimension k of the plan is read at an output channel: an axis of
// op that the input does not read.
bool reads_output_channel(const Winograd1dPlan& plan, const OperationNode& op, size_t k);

}  // namespace te::sched
