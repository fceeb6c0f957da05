// What Schedule::winograd finds in a stage: the convolution's reads and axes, or why the
// stage is not one it rewrites. auto_schedule's Winograd rule asks before applying it.
#pragma once
#include <string>

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

}  // namespace te::sched
