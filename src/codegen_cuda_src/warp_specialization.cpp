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

std::string consumer_barrier_statement(HelperSet& helpers, int64_t consumer_threads) {
  return fmt::format("{}(1, {});  // the consumer warpgroups' barrier",
                     use_hopper_ptx(helpers, HopperInstruction::NamedBarrierSync), consumer_threads);
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
