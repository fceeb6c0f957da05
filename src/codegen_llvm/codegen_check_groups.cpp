// Checked gathers of rows, grouped: when the statements of one sequence load several
// vectors from one buffer at the same gathered position plus constant offsets (a feature
// row split into vectors, as bev_pool reads `feat[ranks_feat[j] * C + c]` for every
// channel vector c), one range check of the whole span [lowest offset, highest offset +
// vector) replaces a check per vector. Each load then reads at its base, or at a clamped
// base inside the buffer where the span is outside (the function fails afterwards, as
// for every checked index).
#include <fmt/format.h>

#include <map>
#include <memory>

#include "codegen_llvm/check_analysis.h"
#include "expr/analysis.h"
#include "codegen_llvm/codegen.h"
#include "codegen_llvm/index_analysis.h"
#include "codegen_llvm/llvm_compat.h"
#include "expr/buffer_util.h"

namespace te::codegen {
namespace {

// base = rest + offset with a constant offset (0 when there is none).
void split_offset(const Expr& base, Expr* rest, int64_t* offset) {
  if (const auto* add = base.as<BinaryNode>(); add != nullptr && add->op == BinOp::Add)
    if (const int64_t* c = as_const_int(add->b)) {
      *rest = add->a;
      *offset = *c;
      return;
    }
  *rest = base;
  *offset = 0;
}

struct Member {
  const LoadNode* load;
  Expr index;
  int64_t offset;
};

}  // namespace

void CodeGen::emit_seq(const Stmt& s) {
  const auto* n = s.as<SeqNode>();
  // Inside a vector branch the loads are masked: each keeps its own check.
  if (mask_ != nullptr || !options_.check_data_indices) {
    for (const Stmt& x : n->seq) emit(x);
    return;
  }
  // Loads of the sequence's stores, grouped by buffer, gathered position, stride, lanes.
  std::map<std::string, std::vector<Member>> groups;
  std::map<std::string, Expr> rest_of;
  std::map<std::string, int64_t> stride_of;
  const std::set<const BufferNode*> stored = buffer_use(s).stored;
  std::vector<std::pair<Var, Expr>> lets;
  for (const LoadNode* ld : loads_always_run(s, &lets)) {
    const int lanes = ld->dtype.lanes();
    // The checks run before the sequence: its members' lets are written out.
    Expr index = substitute(flatten_index(ld->buffer, ld->indices), lets), base, rest;
    int64_t stride = 0, offset = 0;
    if (lanes < 2 || prechecked_.count(ld) != 0 || !as_strided(index, &base, &stride) || stride == 0 ||
        !needs_index_check(ld->buffer, index))
      continue;
    split_offset(base, &rest, &offset);
    std::string key =
        fmt::format("{}|{}|{}|{}", static_cast<const void*>(ld->buffer.get()), to_string(rest), stride, lanes);
    groups[key].push_back({ld, index, offset});
    rest_of[key] = rest;
    stride_of[key] = stride;
  }
  std::vector<std::unique_ptr<PrecheckBinding>> bindings;
  std::vector<std::unique_ptr<ScopedVar>> scoped_vars;
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    const Expr& rest = rest_of[key];
    // The gathered position must be the same when every member runs: nothing it reads
    // may be stored by the sequence.
    bool written = false;
    for (const BufferNode* b : buffer_use(rest).loaded) written = written || stored.count(b) != 0;
    if (written) continue;
    const Buffer& buf = members.front().load->buffer;
    const int64_t stride = stride_of[key];
    const int lanes = members.front().load->dtype.lanes();
    int64_t lo = members.front().offset, hi = lo;
    for (const Member& m : members) lo = std::min(lo, m.offset), hi = std::max(hi, m.offset);
    const int64_t span = std::abs(stride) * (lanes - 1);
    const int64_t below = stride > 0 ? 0 : span;  // a member's lowest lane is base - below
    const int64_t total = hi - lo + span;         // elements from the lowest lane to the highest
    DataType it = rest.dtype().element_of();
    Expr size = element_count(buf, it);
    DataType ut = UInt(it.bits());
    Expr low = rest + make_const(it, lo - below);
    Expr inside = cast(ut, low) < cast(ut, max(size - make_const(it, total), make_const(it, 0)));
    llvm::Value* ok = to_bool(emit(inside), inside.dtype());
    std::vector<std::string> texts;
    for (const Member& m : members) texts.push_back(to_string(m.index));
    record_bad_index(buf, /*is_store=*/false, b_.CreateNot(ok), texts);
    Var ok_var("check.ok", Bool());
    scoped_vars.push_back(std::make_unique<ScopedVar>(vars_, ok_var.get(), ok));
    std::optional<int64_t> elements = constant_elements(buf);
    llvm::Value* lane_mask =
        elements && *elements >= total + 1 ? nullptr : b_.CreateVectorSplat(static_cast<unsigned>(lanes), ok);
    // Where the span is outside, the gathered position moves so that the span starts at 0.
    // It is emitted once, as a 64-bit value, so that the members' constant offsets fold
    // into their addresses instead of each member selecting its own position.
    Expr clamped = select(ok_var, rest, make_const(it, below - lo));
    Var position("check.position", Int(64));
    scoped_vars.push_back(std::make_unique<ScopedVar>(vars_, position.get(), to_i64(emit(clamped), it)));
    for (const Member& m : members) {
      Expr index = ramp(position + make_const(Int(64), m.offset), make_const(Int(64), stride), lanes);
      bindings.push_back(std::make_unique<PrecheckBinding>(prechecked_, m.load, PrecheckedLoad{index, lane_mask}));
    }
  }
  for (const Stmt& x : n->seq) emit(x);
}

}  // namespace te::codegen
