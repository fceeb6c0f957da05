// double_buffer: marks an intermediate stage for the inject_double_buffer pass (where it
// is computed is checked when lowering: compute_at may come after this call).
#include <fmt/format.h>

#include "schedule/messages.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

void Stage::double_buffer() {
  StageNode& s = *node_;
  if (s.op->kind != OpKind::Compute)
    throw Error(
        fmt::format("double_buffer: stage {} is a placeholder, which te never copies; double-buffer a "
                    "copy of it (cache_read) computed at the loop that fetches tiles",
                    quote(name())));
  if (s.is_output)
    throw Error(
        fmt::format("double_buffer: stage {} is an output, whose buffer is the caller's array; "
                    "double-buffer an intermediate stage (cache_read or cache_write)",
                    quote(name())));
  s.double_buffer = true;
}

}  // namespace te
