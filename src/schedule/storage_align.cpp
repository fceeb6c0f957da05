// storage_align: padded strides of an intermediate stage's buffer (applied by the
// storage_flatten pass).
#include <fmt/format.h>

#include "schedule/messages.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

void Stage::storage_align(const IterVar& axis, int factor, int offset) {
  StageNode& s = *node_;
  if (s.op->kind != OpKind::Compute)
    throw Error(
        fmt::format("storage_align: stage {} is a placeholder; its layout is the caller's array", quote(name())));
  if (s.is_output)
    throw Error(
        fmt::format("storage_align: stage {} is an output, whose layout is the caller's array; pad a "
                    "copy instead (cache_write or cache_read)",
                    quote(name())));
  int dim = -1;
  for (size_t d = 0; d < s.op->axis.size(); ++d)
    if (s.op->axis[d].same_as(axis)) dim = static_cast<int>(d);
  if (dim < 0)
    throw Error(
        fmt::format("storage_align: {} is not an axis of stage {}; pass one of its tensor's axes "
                    "(T.axis(d)), which name the buffer's dimensions",
                    axis.defined() ? quote(axis.name()) : "the undefined axis", quote(name())));
  if (factor < 1 || offset < 0 || offset >= factor)
    throw Error(
        fmt::format("storage_align: stage {}, axis {}: factor {} and offset {} must satisfy factor >= 1 "
                    "and 0 <= offset < factor",
                    quote(name()), quote(axis.name()), factor, offset));
  for (StorageAlign& a : s.storage_align)
    if (a.dim == dim) {
      a.factor = factor;
      a.offset = offset;
      return;
    }
  s.storage_align.push_back(StorageAlign{dim, factor, offset});
}

}  // namespace te
