// double_buffer, pipeline: mark an intermediate stage for the inject_double_buffer pass
// (where it is computed is checked when lowering: compute_at may come after this call).
#include <fmt/format.h>

#include "schedule/messages.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

namespace {

void set_buffers(StageNode& s, const std::string& stage, int buffers, const char* primitive) {
  if (s.op->kind != OpKind::Compute)
    throw Error(
        fmt::format("{}: stage {} is a placeholder, which te never copies; {} a copy of it (cache_read) "
                    "computed at the loop that fetches tiles",
                    primitive, quote(stage), buffers == 2 ? "double-buffer" : "pipeline"));
  if (s.is_output)
    throw Error(
        fmt::format("{}: stage {} is an output, whose buffer is the caller's array; {} an intermediate "
                    "stage (cache_read or cache_write)",
                    primitive, quote(stage), buffers == 2 ? "double-buffer" : "pipeline"));
  s.buffers = buffers;
}

}  // namespace

void Stage::double_buffer() { set_buffers(*node_, name(), 2, "double_buffer"); }

void Stage::pipeline(int buffers) {
  if (buffers < 2 || buffers > 8)
    throw Error(fmt::format("pipeline: stage {}: {} buffers; a pipeline has 2 to 8", quote(name()), buffers));
  set_buffers(*node_, name(), buffers, "pipeline");
}

}  // namespace te
