#include "codegen_cuda_src/warp_specialization.h"

#include <fmt/format.h>

#include "codegen_cuda_src/ptx_hopper.h"
#include "codegen_cuda_src/stmt_util.h"
#include "te/error.h"

namespace te::cuda {

Stmt producer_part(const Stmt& s) {
  if (!s.defined()) return Stmt();
  switch (s.kind()) {
    case StmtKind::TensorIntrinsicCall: return s.as<TensorIntrinsicCallNode>()->producer ? s : Stmt();
    case StmtKind::Seq: {
      std::vector<Stmt> kept;
      for (const Stmt& c : s.as<SeqNode>()->seq)
        if (Stmt p = producer_part(c); p.defined()) kept.push_back(p);
      return kept.empty() ? Stmt() : seq(kept);
    }
    case StmtKind::For: {
      auto* n = s.as<ForNode>();
      Stmt body = producer_part(n->body);
      if (!body.defined()) return Stmt();
      if (n->for_kind == ForKind::ThreadBinding && n->thread_tag.rfind("threadIdx", 0) == 0) {
        TE_ICHECK(!uses_var(body, n->var.get()), "CUDA: a warp-specialized copy depends on a thread index");
        return body;
      }
      return for_loop(n->var, n->min, n->extent, n->for_kind, body, n->thread_tag);
    }
    case StmtKind::LetStmt: {
      auto* n = s.as<LetStmtNode>();
      Stmt body = producer_part(n->body);
      if (!body.defined() || !uses_var(body, n->var.get())) return body;
      return let_stmt(n->var, n->value, body);
    }
    case StmtKind::IfThenElse: {
      auto* n = s.as<IfThenElseNode>();
      Stmt then_case = producer_part(n->then_case), else_case = producer_part(n->else_case);
      if (!then_case.defined() && !else_case.defined()) return Stmt();
      if (!then_case.defined()) return if_then_else(!n->cond, else_case);
      return if_then_else(n->cond, then_case, else_case);
    }
    case StmtKind::Allocate: {
      // A shared buffer the kernel uses keeps its allocation, so the buffers after it in
      // the dynamic shared memory lie where the consumers have them.
      auto* n = s.as<AllocateNode>();
      Stmt body = producer_part(n->body);
      if (!body.defined()) return body;
      const bool keep =
          n->buffer.scope() == MemoryScope::Shared ? uses_buffer(n->body, n->buffer) : uses_buffer(body, n->buffer);
      return keep ? allocate(n->buffer, body) : body;
    }
    case StmtKind::Assert: {
      auto* n = s.as<AssertNode>();
      Stmt body = producer_part(n->body);
      return body.defined() ? assert_stmt(n->cond, n->message, body) : Stmt();
    }
    case StmtKind::Store:
    case StmtKind::Evaluate:
    case StmtKind::Barrier: return Stmt();
  }
  return Stmt();
}

bool has_producer_copy(const Stmt& s) {
  for (const TensorIntrinsicCallNode* n : tensor_intrinsic_calls(s))
    if (n->producer) return true;
  return false;
}

bool is_producer_part(const Stmt& s) {
  if (!s.defined()) return true;
  switch (s.kind()) {
    case StmtKind::TensorIntrinsicCall: return s.as<TensorIntrinsicCallNode>()->producer.has_value();
    case StmtKind::Seq:
      for (const Stmt& c : s.as<SeqNode>()->seq)
        if (!is_producer_part(c)) return false;
      return true;
    case StmtKind::For:
      return s.as<ForNode>()->for_kind != ForKind::ThreadBinding && is_producer_part(s.as<ForNode>()->body);
    case StmtKind::LetStmt: return is_producer_part(s.as<LetStmtNode>()->body);
    case StmtKind::IfThenElse: {
      auto* n = s.as<IfThenElseNode>();
      return is_producer_part(n->then_case) && is_producer_part(n->else_case);
    }
    default: return false;
  }
}

namespace {
// How each consumer barrier statement starts (bar.sync 1, ...).
constexpr std::string_view kConsumerBarrierStart = "te_ptx_bar_sync(1, ";
}  // namespace

std::string consumer_barrier_statement(HelperSet& helpers, int64_t consumer_threads) {
  const std::string name = use_hopper_ptx(helpers, HopperInstruction::NamedBarrierSync);
  TE_ICHECK(kConsumerBarrierStart == name + "(1, ", "CUDA: the named barrier's helper is " + name);
  return fmt::format("{}{});  // the consumer warpgroups' barrier", kConsumerBarrierStart, consumer_threads);
}

bool is_consumer_barrier(std::string_view statement) {
  return statement.substr(0, kConsumerBarrierStart.size()) == kConsumerBarrierStart;
}

std::vector<std::string> producer_branch_lines(HelperSet& helpers, const WarpSpecialization& ws) {
  std::vector<std::string> lines;
  if (ws.producer_registers != 0)
    lines.push_back(
        fmt::format("{}<{}>();", use_hopper_ptx(helpers, HopperInstruction::SetmaxnregDec), ws.producer_registers));
  return lines;
}

std::vector<std::string> consumer_branch_lines(HelperSet& helpers, const WarpSpecialization& ws) {
  std::vector<std::string> lines;
  if (ws.consumer_registers != 0)
    lines.push_back(
        fmt::format("{}<{}>();", use_hopper_ptx(helpers, HopperInstruction::SetmaxnregInc), ws.consumer_registers));
  lines.push_back("unsigned te_tma_filled = 0;  // per TMA destination: filled before (its release then arrives)");
  return lines;
}

}  // namespace te::cuda
