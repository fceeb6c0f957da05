#include "schedule/messages.h"

namespace te::sched {

std::string quote(const std::string& name) { return "'" + name + "'"; }

std::string describe_attr(const IterVarAttr& attr) {
  switch (attr.kind) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::ThreadBinding: return "bound to " + attr.thread->thread_tag;
  }
  return "annotated";
}

}  // namespace te::sched
