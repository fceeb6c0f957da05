// warp_specialize: marks a pipelined TMA-copied stage's copies as the producer warpgroup's
// (what the stage is, pipelined and TMA-copied, is checked when lowering: pipeline and
// tensorize may come after this call).
#include <fmt/format.h>

#include <algorithm>

#include "schedule/messages.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

namespace {

void check_registers(const std::string& stage, const char* side, int registers) {
  if (registers == 0 || (registers >= 24 && registers <= 256 && registers % 8 == 0)) return;
  throw Error(
      fmt::format("warp_specialize: stage {}: {} registers {}; setmaxnreg takes 24 to 256, a multiple of 8 "
                  "(or 0 to keep the compiled count)",
                  quote(stage), side, registers));
}

}  // namespace

int WarpSpecialization::launch_registers(int64_t threads) {
  if (threads <= 0) return 256;
  return static_cast<int>(std::min<int64_t>(256, 64 * 1024 / threads / 8 * 8));
}

WarpSpecialization WarpSpecialization::balanced(int consumer_warpgroups) {
  if (consumer_warpgroups <= 1) return {0, 0};
  const int producer = 40;
  const int launch = launch_registers(int64_t{128} * (consumer_warpgroups + 1));
  const int share = (launch - producer) / consumer_warpgroups / 8 * 8;
  return {producer, std::min(256, launch + share)};
}

void Stage::warp_specialize(WarpSpecialization registers) {
  const bool balanced = registers.producer_registers == WarpSpecialization::kBalanced;
  if (balanced != (registers.consumer_registers == WarpSpecialization::kBalanced))
    throw Error(fmt::format("warp_specialize: stage {}: registers {{{}, {}}}; give both counts, or kBalanced for both",
                            quote(name()), registers.producer_registers, registers.consumer_registers));
  if (!balanced) {
    check_registers(name(), "producer", registers.producer_registers);
    check_registers(name(), "consumer", registers.consumer_registers);
  }
  if (node_->op->kind != OpKind::Compute || node_->is_output)
    throw Error(
        fmt::format("warp_specialize: stage {} is {}; warp-specialize the shared copy of an input (cache_read) "
                    "that TMA fills",
                    quote(name()), node_->is_output ? "an output" : "a placeholder"));
  node_->warp_specialization = registers;
}

}  // namespace te
