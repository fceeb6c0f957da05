#include "codegen_cuda_src/kernel_printer.h"

#include <fmt/format.h>

#include "codegen_cuda_src/c_types.h"
#include "codegen_cuda_src/code_writer.h"
#include "codegen_cuda_src/expr_printer.h"
#include "codegen_cuda_src/stmt_util.h"
#include "expr/buffer_util.h"
#include "expr/reads_memory.h"
#include "te/error.h"

namespace te::cuda {

namespace {

const char kAxes[] = {'x', 'y', 'z'};

class KernelPrinter {
 public:
  KernelPrinter(const KernelAnalysis& a, const VarRanges& host_ranges, const NameTable& globals,
                HelperSet& helpers, const CudaOptions& options)
      : analysis_(a),
        names_(globals),
        printer_(scope_, helpers, names_, PrintMode{a.index_64bit, false, options.fast_math}),
        w_(1) {
    for (const Buffer& b : a.buffers) {
      std::string name = names_.unique(b.name());
      scope_.buffers[b.get()] = name;
      scope_.buffers_by_name[b.name()] = name;
      bool read_only = !a.written.count(b.name());
      params_.push_back(CudaParam{name, fmt::format("{}{}* __restrict__", read_only ? "const " : "", c_type(b.dtype())),
                                  b, Var()});
    }
    for (const Var& v : a.free_vars) {
      std::string name = names_.unique(v.name());
      DataType declared = printer_.compute_type(v.dtype());
      scope_.vars[v.get()] = VarBinding{name, declared};
      if (auto it = host_ranges.find(v.get()); it != host_ranges.end()) scope_.ranges[v.get()] = it->second;
      params_.push_back(CudaParam{name, c_type(declared), Buffer(), v});
    }
  }

  KernelSource run(const ForNode* root, const std::string& name) {
    emit_for(root, false);
    int64_t threads = 1;
    bool constant_block = true;
    KernelSource out;
    for (int d = 0; d < 3; ++d) {
      out.info.grid[d] = analysis_.grid[d].defined() ? analysis_.grid[d] : Expr(1);
      out.info.block[d] = analysis_.block[d].defined() ? analysis_.block[d] : Expr(1);
      const int64_t* c = as_const_int(out.info.block[d]);
      if (c) threads *= *c;
      else constant_block = false;
    }
    std::string params;
    for (const CudaParam& p : params_) params += fmt::format("{}{} {}", params.empty() ? "" : ", ", p.c_type, p.name);
    std::string bounds = constant_block && threads >= 1 ? fmt::format("__launch_bounds__({}) ", threads) : "";
    out.text = fmt::format("extern \"C\" __global__ void {}{}({}) {{\n{}}}\n", bounds, name, params, w_.text());
    out.info.name = name;
    out.info.params = params_;
    out.info.shared_bytes = analysis_.shared_bytes;
    out.info.index_64bit = analysis_.index_64bit;
    return out;
  }

 private:
  void flush_hoisted() {
    for (const std::string& h : printer_.take_hoisted()) w_.line(h);
  }

  void bind_var(const Var& v, ValueRange r) {
    std::string name = names_.unique(v.name());
    scope_.vars[v.get()] = VarBinding{name, printer_.compute_type(v.dtype())};
    scope_.ranges[v.get()] = r;
  }
  const std::string& var_name(const Var& v) { return scope_.vars.at(v.get()).name; }

  void emit(const Stmt& s, bool in_seq) {
    switch (s->kind) {
      case StmtKind::For: return emit_for(s.as<ForNode>(), in_seq);
      case StmtKind::LetStmt: {
        auto* n = s.as<LetStmtNode>();
        if (uses_var(n->body, n->var.get())) {
          std::string value = printer_.print_bare(n->value);
          flush_hoisted();
          bind_var(n->var, value_range(n->value, scope_.ranges));
          note_let(scope_.data_vars, n->var.get(), n->value);
          w_.line(fmt::format("const {} {} = {};", printer_.compute_c_type(n->var.dtype()), var_name(n->var), value));
        }
        return emit(n->body, in_seq);
      }
      case StmtKind::Store: return emit_store(s.as<StoreNode>());
      case StmtKind::Allocate: return emit_allocate(s.as<AllocateNode>(), in_seq);
      case StmtKind::IfThenElse: {
        auto* n = s.as<IfThenElseNode>();
        std::string cond = printer_.print_bare(n->cond);
        flush_hoisted();
        w_.open(fmt::format("if ({})", cond));
        emit(n->then_case, false);
        emit_else(n->else_case);
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& c : s.as<SeqNode>()->seq) emit(c, true);
        return;
      case StmtKind::Evaluate: return;  // te expressions have no side effects
      case StmtKind::Barrier: w_.line("__syncthreads();"); return;
      case StmtKind::Assert: {
        auto* n = s.as<AssertNode>();
        std::string cond = printer_.print(n->cond);
        flush_hoisted();
        w_.line(fmt::format("if (!{}) __trap();  // assert: {}", cond, comment_text(n->message)));
        return emit(n->body, in_seq);
      }
    }
    TE_ICHECK(false, "unknown statement kind");
  }

  void emit_else(const Stmt& else_case) {
    if (!else_case.defined()) {
      w_.close();
      return;
    }
    if (auto* nested = else_case.as<IfThenElseNode>()) {
      std::string cond = printer_.print_bare(nested->cond);
      std::vector<std::string> hoisted = printer_.take_hoisted();
      if (hoisted.empty()) {
        w_.close(fmt::format("}} else if ({}) {{", cond));
        w_.indent();
        emit(nested->then_case, false);
        emit_else(nested->else_case);
        return;
      }
      // Declarations the condition needs cannot sit between `}` and `else if`.
      w_.close("} else {");
      w_.indent();
      for (const std::string& h : hoisted) w_.line(h);
      w_.open(fmt::format("if ({})", cond));
      emit(nested->then_case, false);
      emit_else(nested->else_case);
      w_.close();
      return;
    }
    w_.close("} else {");
    w_.indent();
    emit(else_case, false);
    w_.close();
  }

  void emit_for(const ForNode* n, bool in_seq) {
    if (n->for_kind == ForKind::ThreadBinding) {
      ThreadTag tag = parse_thread_tag(n->thread_tag, n->var.name());
      bool used = uses_var(n->body, n->var.get());
      // Sibling thread loops get a block each: it shows where each one ends.
      if (in_seq) w_.open_block();
      if (used) {
        std::string type = printer_.compute_c_type(n->var.dtype());
        std::string min = is_zero(n->min) ? "" : " + " + printer_.print(n->min);
        flush_hoisted();
        bind_var(n->var, loop_var_range(n->min, n->extent, scope_.ranges));
        w_.line(fmt::format("const {0} {1} = ({0}){2}.{3}{4};", type, var_name(n->var),
                            tag.is_block ? "blockIdx" : "threadIdx", kAxes[tag.dim], min));
      }
      emit(n->body, false);
      if (in_seq) w_.close();
      return;
    }
    std::string type = printer_.compute_c_type(n->var.dtype());
    std::string min = printer_.print_bare(n->min);
    Expr end = is_zero(n->min) ? n->extent : make_binary(BinOp::Add, n->min, n->extent);
    std::string end_text = printer_.print_bare(end);
    flush_hoisted();
    bind_var(n->var, loop_var_range(n->min, n->extent, scope_.ranges));
    const std::string& v = var_name(n->var);
    if (reads_memory(n->min) || reads_memory(n->extent)) {
      // The bounds read memory the body may write: compute them once, as te does.
      std::string end_name = names_.unique(n->var.name() + "_end");
      w_.line(fmt::format("const {} {} = {};", type, end_name, end_text));
      end_text = end_name;
    }
    if (n->for_kind == ForKind::Unrolled || n->for_kind == ForKind::Vectorized) w_.line("#pragma unroll");
    w_.open(fmt::format("for ({} {} = {}; {} < {}; ++{})", type, v, min, v, end_text, v));
    emit(n->body, false);
    w_.close();
  }

  void emit_store(const StoreNode* n) {
    if (n->indices.size() != 1)
      throw Error(fmt::format("CUDA codegen: store to '{}' has {} indices; the CUDA backend takes flattened "
                              "loop IR (one index per access)",
                              n->buffer.name(), n->indices.size()));
    int lanes = std::max(n->value.dtype().lanes(), n->indices[0].dtype().lanes());
    if (n->predicate.defined()) lanes = std::max(lanes, n->predicate.dtype().lanes());
    if (lanes > 1) printer_.set_lane("te_lane");
    std::string line = store_text(n);
    if (lanes == 1) {
      flush_hoisted();
      w_.line(line);
      return;
    }
    // Vector stores run lane by lane; the compiler unrolls the loop.
    w_.line("#pragma unroll");
    w_.open(fmt::format("for (int te_lane = 0; te_lane < {}; ++te_lane)", lanes));
    flush_hoisted();
    w_.line(line);
    w_.close();
    printer_.set_lane("");
  }

  std::string store_text(const StoreNode* n) {
    DataType t = n->buffer.dtype();
    std::string index = printer_.checked_index(n->buffer, n->indices[0]);
    std::string value = printer_.print_bare(n->value);
    if (printer_.compute_type(t) != t) value = fmt::format("({})({})", c_type(t), value);
    std::string target = fmt::format("{}[{}] = {};", scope_buffer(n->buffer), index, value);
    if (!n->predicate.defined()) return target;
    return fmt::format("if ({}) {}", printer_.print_bare(n->predicate), target);
  }

  std::string scope_buffer(const Buffer& b) {
    if (auto it = scope_.buffers.find(b.get()); it != scope_.buffers.end()) return it->second;
    if (auto it = scope_.buffers_by_name.find(b.name()); it != scope_.buffers_by_name.end()) return it->second;
    throw Error(fmt::format("CUDA codegen: buffer '{}' is accessed but is neither a parameter nor allocated",
                            b.name()));
  }

  void emit_allocate(const AllocateNode* n, bool in_seq) {
    const Buffer& b = n->buffer;
    if (uses_buffer(n->body, b)) {
      std::optional<int64_t> count = constant_elements(b);
      TE_ICHECK(count.has_value(), "CUDA: an array size the kernel analysis did not check");
      std::string name = names_.unique(b.name());
      scope_.buffers[b.get()] = name;
      scope_.buffers_by_name[b.name()] = name;
      w_.line(fmt::format("{}{} {}[{}];", b.scope() == MemoryScope::Shared ? "__shared__ " : "", c_type(b.dtype()),
                          name, std::max<int64_t>(*count, 1)));
    }
    emit(n->body, in_seq);
  }

  const KernelAnalysis& analysis_;
  NameTable names_;
  PrintScope scope_;
  ExprPrinter printer_;
  CodeWriter w_;
  std::vector<CudaParam> params_;
};

}  // namespace

KernelSource print_kernel(const ForNode* root, const std::string& name, const KernelAnalysis& analysis,
                          const VarRanges& host_ranges, const NameTable& globals, HelperSet& helpers,
                          const CudaOptions& options) {
  return KernelPrinter(analysis, host_ranges, globals, helpers, options).run(root, name);
}

}  // namespace te::cuda
