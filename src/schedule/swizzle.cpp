// swizzle: the XOR layout of a stage's CUDA shared-memory buffer (applied by the
// storage_flatten pass, printed by the CUDA backend).
#include <fmt/format.h>

#include "schedule/messages.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

void Stage::swizzle(int bytes) {
  StageNode& s = *node_;
  if (s.op->kind != OpKind::Compute)
    throw Error(fmt::format("swizzle: stage {} is a placeholder; its layout is the caller's array", quote(name())));
  if (s.is_output)
    throw Error(
        fmt::format("swizzle: stage {} is an output, whose layout is the caller's array; swizzle a shared "
                    "copy instead (cache_read or cache_write with \"shared\")",
                    quote(name())));
  if (bytes != 32 && bytes != 64 && bytes != 128)
    throw Error(fmt::format("swizzle: stage {}: a swizzle is 32, 64 or 128 bytes wide, not {}", quote(name()), bytes));
  s.swizzle_bytes = bytes;
}

}  // namespace te
