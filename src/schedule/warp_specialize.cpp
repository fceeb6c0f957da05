// warp_specialize: marks a pipelined TMA-copied stage's copies as the producer warpgroup's
// (what the stage is, pipelined and TMA-copied, is checked when lowering: pipeline and
// tensorize may come after this call).
#include <fmt/format.h>

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

void Stage::warp_specialize(WarpSpecialization registers) {
  check_registers(name(), "producer", registers.producer_registers);
  check_registers(name(), "consumer", registers.consumer_registers);
  if (node_->op->kind != OpKind::Compute || node_->is_output)
    throw Error(
        fmt::format("warp_specialize: stage {} is {}; warp-specialize the shared copy of an input (cache_read) "
                    "that TMA fills",
                    quote(name()), node_->is_output ? "an output" : "a placeholder"));
  node_->warp_specialization = registers;
}

}  // namespace te
