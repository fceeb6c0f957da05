#include "lower/dump_ir.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace te::lowering {

IrDump::IrDump(const LowerOptions& options, const std::string& func_name) : timer_("lower '" + func_name + "'") {
  TE_LOG(Debug, "lower '" + func_name + "': start");
  selected_ = options.dump_ir;
  if (selected_.empty())
    if (const char* env = std::getenv("TE_DUMP_IR")) selected_ = env;
  if (selected_.empty() || selected_ == "all") return;
  std::vector<std::string> names = lower_pass_names();
  if (std::find(names.begin(), names.end(), selected_) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error(fmt::format("TE_DUMP_IR: unknown pass '{}'; the passes are: all, {}", selected_, list));
  }
}

IrDump IrDump::recorder() { return IrDump(); }

void IrDump::finish(const LoweredFunc& f) {
  if (recording_) return;
  timer_.finish();
  TE_LOG(Info, fmt::format("lowered '{}' ({} parameters)", f.name, f.params.size()));
}

bool IrDump::wants(const char* pass) const { return selected_ == "all" || selected_ == pass; }

void IrDump::print(const char* pass, const std::string& text) const {
  std::cerr << "// ---- IR after " << pass << " ----\n" << text;
  if (!text.empty() && text.back() != '\n') std::cerr << '\n';
}

namespace {

std::string attach_text(const Stage& st) {
  switch (st.attach_type()) {
    case AttachType::Root: return "root";
    case AttachType::Inline: return "inline";
    case AttachType::Scope: return fmt::format("at {}.{}", st.attach_stage().name(), st.attach_ivar().name());
  }
  return "";
}

}  // namespace

std::string IrDump::text(const Schedule& s) {
  std::ostringstream os;
  for (const Stage& st : s.stages()) {
    if (st.op()->kind != OpKind::Compute) continue;
    os << "stage " << st.name() << " (" << attach_text(st) << ", " << scope_name(st.scope()) << "): " << st.name()
       << "(";
    for (size_t i = 0; i < st.op()->axis.size(); ++i) os << (i ? ", " : "") << st.op()->axis[i].name();
    os << ") = " << st.op()->body << "\n";
  }
  return os.str();
}

std::string IrDump::text(const LowerContext& ctx) {
  std::ostringstream os;
  for (const Stage& st : ctx.sched.stages()) {
    if (st.op()->kind != OpKind::Compute || st.attach_type() == AttachType::Inline) continue;
    os << "stage " << st.name() << ":";
    for (const IterVar& iv : st.all_iter_vars()) {
      const Range& r = ctx.bounds.at(iv);
      os << " " << iv.name() << "[" << r.min << ", +" << r.extent << ")";
    }
    os << "\n";
  }
  return os.str();
}

std::string IrDump::text(const std::vector<StageNest>& nests) {
  std::ostringstream os;
  for (const StageNest& n : nests) os << "// stage " << n.stage->op->name << "\n" << assemble_nest(n);
  return os.str();
}

std::string IrDump::text(const Stmt& s) { return to_string(s); }

}  // namespace te::lowering
