#include "codegen_cuda_src/host_printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "codegen_cuda_src/c_types.h"
#include "codegen_cuda_src/code_writer.h"
#include "codegen_cuda_src/expr_printer.h"
#include "codegen_cuda_src/kernel_analysis.h"
#include "codegen_cuda_src/kernel_printer.h"
#include "codegen_cuda_src/stmt_util.h"
#include "codegen_cuda_src/tma.h"
#include "te/error.h"
#include "te/tensorize.h"

namespace te::cuda {

namespace {

// Variables of an expression as Var handles, in order of first appearance.
class VarListCollector : public IRVisitor {
 public:
  std::vector<Var> vars;
  void visit(const Expr& e) override {
    if (e.defined() && e->kind == ExprKind::Var) {
      auto* n = e.as<VarNode>();
      for (const Var& v : vars)
        if (v.get() == n) return;
      vars.push_back(Var(std::static_pointer_cast<const VarNode>(e.node())));
      return;
    }
    IRVisitor::visit(e);
  }
  using IRVisitor::visit;
};

// Thread-bound loops not nested in another: one kernel each.
int count_kernels(const Stmt& s) {
  struct Counter : IRVisitor {
    int count = 0;
    void visit_for(const ForNode* n) override {
      if (n->for_kind == ForKind::ThreadBinding)
        ++count;
      else
        IRVisitor::visit_for(n);
    }
  } c;
  if (s.defined()) c.visit(s);
  return c.count;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

class HostPrinter {
 public:
  HostPrinter(const LoweredFunc& f, const CudaOptions& options, HelperSet& helpers)
      : f_(f),
        options_(options),
        helpers_(helpers),
        printer_(scope_, helpers, names_, PrintMode{false, true, options.fast_math}),
        wide_printer_(scope_, helpers, names_, PrintMode{true, true, options.fast_math}),
        w_(1) {
    if (f.name.empty()) throw Error("build_cuda: the function has no name");
    out_.launcher_name = globals_.unique(f.name);
    int kernels = count_kernels(f.body);
    for (int k = 0; k < kernels; ++k)
      kernel_names_.push_back(globals_.unique(fmt::format("{}_kernel{}", out_.launcher_name, k)));
    names_ = globals_;
    bind_params();
  }

  HostProgram run() {
    if (f_.body.defined()) emit(f_.body);
    std::string params;
    for (const CudaParam& p : out_.launcher_params) params += fmt::format("{} {}, ", p.c_type, p.name);
    CodeWriter head(1);
    for (const CudaParam& p : out_.launcher_params) {
      bool used = p.is_buffer() ? (f_.body.defined() && uses_buffer(f_.body, p.buffer))
                                : (f_.body.defined() && uses_var(f_.body, p.var.get()));
      if (!used) head.line(fmt::format("(void){};", p.name));
    }
    out_.launcher_text =
        fmt::format("extern \"C\" cudaError_t {}({}cudaStream_t stream) {{\n{}{}  return cudaSuccess;\n}}\n",
                    out_.launcher_name, params, head.text(), w_.text());
    return std::move(out_);
  }

 private:
  void bind_params() {
    std::vector<Var> vars;
    std::set<const VarNode*> shape_dims;  // variables that are a whole extent: never negative
    for (const Param& p : f_.params) {
      if (!p.is_buffer()) continue;
      const Buffer& b = p.buffer;
      std::string name = names_.unique(b.name());
      scope_.buffers[b.get()] = name;
      scope_.buffers_by_name[b.name()] = name;
      declared(b);
      out_.launcher_params.push_back(CudaParam{name, c_type(b.dtype()) + "*", b, Var()});
      VarListCollector c;
      for (const Expr& d : b.shape()) {
        c.visit(d);
        if (auto* v = d.as<VarNode>()) shape_dims.insert(v);
      }
      for (const Var& v : c.vars) add_unique(vars, v);
    }
    for (const Param& p : f_.params)
      if (!p.is_buffer()) add_unique(vars, p.var);
    for (const Var& v : vars) {
      std::string name = names_.unique(v.name());
      scope_.vars[v.get()] = VarBinding{name, v.dtype()};
      host_vars_[v.get()] = v;
      var_order_[v.get()] = var_order_.size();
      ValueRange r = type_range(v.dtype());
      if (shape_dims.count(v.get())) r.lo = std::max<int64_t>(r.lo, 0);
      scope_.ranges[v.get()] = r;
      out_.launcher_params.push_back(CudaParam{name, c_type(v.dtype()), Buffer(), v});
    }
  }

  static void add_unique(std::vector<Var>& vars, const Var& v) {
    for (const Var& x : vars)
      if (x.same_as(v)) return;
    vars.push_back(v);
  }

  void flush(ExprPrinter& p) {
    for (const std::string& h : p.take_hoisted()) w_.line(h);
  }

  void bind_var(const Var& v, ValueRange r) {
    std::string name = names_.unique(v.name());
    scope_.vars[v.get()] = VarBinding{name, v.dtype()};
    scope_.ranges[v.get()] = r;
    host_vars_[v.get()] = v;
    var_order_[v.get()] = var_order_.size();
  }

  // Kernels take buffers and variables in the launcher's order (the user's), then those
  // the host code defines, in the order it defines them.
  void declared(const Buffer& b) {
    buffer_order_.emplace(b.get(), buffer_order_.size());
    buffer_order_by_name_.emplace(b.name(), buffer_order_by_name_.size());
  }
  size_t order_of(const Buffer& b) const {
    if (auto it = buffer_order_.find(b.get()); it != buffer_order_.end()) return it->second;
    auto it = buffer_order_by_name_.find(b.name());
    return it != buffer_order_by_name_.end() ? it->second : buffer_order_.size();
  }
  void sort_parameters(KernelAnalysis& a) const {
    std::stable_sort(a.buffers.begin(), a.buffers.end(),
                     [&](const Buffer& x, const Buffer& y) { return order_of(x) < order_of(y); });
    std::stable_sort(a.free_vars.begin(), a.free_vars.end(),
                     [&](const Var& x, const Var& y) { return var_order_.at(x.get()) < var_order_.at(y.get()); });
  }

  [[noreturn]] void outside_kernel(const std::string& what) {
    throw Error(
        fmt::format("CUDA: {} is outside every kernel; on a GPU it must run inside a loop nest bound to "
                    "blockIdx/threadIdx (bind the loops around it with bind())",
                    what));
  }

  void emit(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* n = s.as<ForNode>();
        if (n->for_kind == ForKind::ThreadBinding) return emit_kernel(n);
        return emit_for(n);
      }
      case StmtKind::LetStmt: {
        auto* n = s.as<LetStmtNode>();
        if (!uses_var(n->body, n->var.get())) return emit(n->body);
        std::string value = printer_.print_bare(n->value);
        flush(printer_);
        bind_var(n->var, value_range(n->value, scope_.ranges));
        w_.line(fmt::format("const {} {} = {};", c_type(n->var.dtype()), scope_.vars.at(n->var.get()).name, value));
        lets_.emplace_back(n->var, n->value);
        emit(n->body);
        lets_.pop_back();
        return;
      }
      case StmtKind::Store: outside_kernel(fmt::format("the store to '{}'", s.as<StoreNode>()->buffer.name()));
      case StmtKind::Barrier: outside_kernel("a barrier");
      case StmtKind::Allocate: return emit_allocate(s.as<AllocateNode>());
      case StmtKind::IfThenElse: {
        auto* n = s.as<IfThenElseNode>();
        std::string cond = printer_.print_bare(n->cond);
        flush(printer_);
        w_.open(fmt::format("if ({})", cond));
        emit(n->then_case);
        if (n->else_case.defined()) {
          w_.close("} else {");
          w_.indent();
          emit(n->else_case);
        }
        w_.close();
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& c : s.as<SeqNode>()->seq) emit(c);
        return;
      case StmtKind::Evaluate: return;  // no side effects
      case StmtKind::Assert: {
        auto* n = s.as<AssertNode>();
        std::string cond = printer_.print(n->cond);
        flush(printer_);
        w_.line(fmt::format("if (!{}) return cudaErrorInvalidValue;  // assert: {}", cond, comment_text(n->message)));
        return emit(n->body);
      }
      case StmtKind::TensorIntrinsicCall:
        throw Error(
            fmt::format("CUDA: tensor intrinsic '{}' is called outside every kernel (host code); a warp "
                        "runs it: compute its stage under the kernel's blockIdx and threadIdx.y/z loops",
                        s.as<TensorIntrinsicCallNode>()->intrinsic->name));
    }
    TE_ICHECK(false, "unknown statement kind");
  }

  void emit_for(const ForNode* n) {
    std::string type = c_type(n->var.dtype());
    std::string min = printer_.print_bare(n->min);
    Expr end = is_zero(n->min) ? n->extent : make_binary(BinOp::Add, n->min, n->extent);
    std::string end_text = printer_.print_bare(end);
    flush(printer_);
    bind_var(n->var, loop_var_range(n->min, n->extent, scope_.ranges));
    const std::string& v = scope_.vars.at(n->var.get()).name;
    w_.open(fmt::format("for ({} {} = {}; {} < {}; ++{})", type, v, min, v, end_text, v));
    emit(n->body);
    w_.close();
  }

  void emit_allocate(const AllocateNode* n) {
    const Buffer& b = n->buffer;
    if (b.scope() != MemoryScope::Global)
      outside_kernel(fmt::format("the {} allocation of '{}'", scope_name(b.scope()), b.name()));
    if (!uses_buffer(n->body, b)) return emit(n->body);
    std::vector<std::string> dims;
    for (const Expr& d : b.shape()) dims.push_back(wide_printer_.print(d));
    std::string count = dims.empty() ? "1" : ExprPrinter::strip_parens(join(dims, " * "));
    flush(wide_printer_);
    std::string name = names_.unique(b.name());
    scope_.buffers[b.get()] = name;
    scope_.buffers_by_name[b.name()] = name;
    declared(b);
    std::string T = c_type(b.dtype());
    // A global buffer between kernels: stream-ordered allocation, freed after the body.
    w_.line(fmt::format("{{  // {}: global scratch buffer", comment_text(b.name())));
    w_.indent();
    w_.line(fmt::format("{}* {} = nullptr;", T, name));
    w_.line(fmt::format("const int64_t te_count = {};", count));
    w_.line(
        fmt::format("cudaError_t te_err = cudaMallocAsync((void**)&{}, te_count > 0 ? (size_t)te_count * "
                    "sizeof({}) : 1, stream);",
                    name, T));
    w_.line("if (te_err != cudaSuccess) return te_err;");
    w_.open("te_err = [&]() -> cudaError_t");
    emit(n->body);
    w_.line("return cudaSuccess;");
    w_.close("}();");
    w_.line(fmt::format("const cudaError_t te_free_err = cudaFreeAsync({}, stream);", name));
    w_.line("if (te_err != cudaSuccess) return te_err;");
    w_.line("if (te_free_err != cudaSuccess) return te_free_err;");
    w_.close();
  }

  // The host lets in scope substituted into e: launch sizes over the launcher's arguments.
  Expr over_arguments(Expr e) const {
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) e = substitute(e, {{it->first, it->second}});
    return e;
  }

  void emit_kernel(const ForNode* n) {
    TE_ICHECK(next_kernel_ < kernel_names_.size(), "more kernels than counted");
    const std::string& name = kernel_names_[next_kernel_++];
    KernelAnalysis a = analyze_kernel(n, name, host_vars_, scope_.ranges, options_.index_width);
    sort_parameters(a);
    KernelSource ks = print_kernel(n, name, a, scope_.ranges, globals_, helpers_, options_);
    out_.kernel_texts.push_back(ks.text);
    CudaKernel info = ks.info;
    for (int d = 0; d < 3; ++d) {
      info.grid[d] = over_arguments(info.grid[d]);
      info.block[d] = over_arguments(info.block[d]);
    }
    out_.kernels.push_back(info);
    emit_launch(ks.info);
  }

  void emit_launch(const CudaKernel& k) {
    w_.line(fmt::format("{{  // {}", k.name));
    w_.indent();
    std::vector<std::string> positive, over_limit, dims[2];
    std::vector<std::string> block_terms;
    bool empty = false;
    for (int g = 0; g < 2; ++g) {
      for (int d = 0; d < 3; ++d) {
        const Expr& e = g == 0 ? k.grid[d] : k.block[d];
        if (const int64_t* c = as_const_int(e)) {
          empty |= *c <= 0;
          dims[g].push_back(std::to_string(*c));
          if (g == 1) block_terms.push_back(std::to_string(*c));
          continue;
        }
        std::string var = fmt::format("te_{}_{}", g == 0 ? "grid" : "block", kAxes[d]);
        std::string value = wide_printer_.print_bare(e);
        flush(wide_printer_);
        w_.line(fmt::format("const int64_t {} = {};", var, value));
        // Checks only what the argument types leave possible.
        ValueRange r = value_range(e, scope_.ranges);
        int64_t limit = g == 0 ? kMaxGridDim[d] : kMaxBlockDim[d];
        if (r.lo <= 0) positive.push_back(var + " > 0");
        if (r.hi > limit) over_limit.push_back(fmt::format("{} > {}", var, limit));
        dims[g].push_back("(unsigned int)" + var);
        if (g == 1) block_terms.push_back(var);
      }
    }
    if (empty) {
      w_.line("// The grid or the block is empty: nothing to launch.");
      w_.close();
      return;
    }
    bool symbolic_block = false;
    for (const std::string& t : block_terms) symbolic_block |= t.rfind("te_", 0) == 0;
    if (symbolic_block) over_limit.push_back(fmt::format("{} > {}", join(block_terms, " * "), kMaxThreadsPerBlock));
    if (!positive.empty()) w_.open(fmt::format("if ({})", join(positive, " && ")));
    if (!over_limit.empty())
      w_.line(fmt::format("if ({}) return cudaErrorInvalidConfiguration;", join(over_limit, " || ")));
    std::vector<std::string> args;
    for (size_t i = 0; i < k.params.size(); ++i) {
      const CudaParam& p = k.params[i];
      if (p.is_tensor_map()) {
        args.push_back("(void*)&" + encode_tensor_map(p));
        continue;
      }
      if (p.is_buffer()) {
        args.push_back(fmt::format("(void*)&{}", host_buffer(p.buffer)));
        continue;
      }
      const VarBinding& b = scope_.vars.at(p.var.get());
      if (c_type(b.declared) == p.c_type) {
        args.push_back(fmt::format("(void*)&{}", b.name));
        continue;
      }
      // The kernel computes indices in 64 bits and takes this argument widened.
      std::string tmp = fmt::format("te_arg{}", i);
      w_.line(fmt::format("{} {} = {};", p.c_type, tmp, b.name));
      args.push_back("(void*)&" + tmp);
    }
    std::string arg_array = "nullptr";
    if (!args.empty()) {
      std::string one_line = fmt::format("void* te_args[] = {{{}}};", join(args, ", "));
      if (one_line.size() <= 100) {
        w_.line(one_line);
      } else {  // one argument per line: a long list stays readable
        w_.open("void* te_args[] =");
        for (size_t a = 0; a < args.size(); ++a) w_.line(args[a] + (a + 1 < args.size() ? "," : ""));
        w_.close("};");
      }
      arg_array = "te_args";
    }
    if (k.dynamic_shared) {
      // More than 48 KiB of shared memory: the kernel's limit is raised first.
      w_.line(
          fmt::format("cudaError_t te_err = cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, {});",
                      k.name, k.shared_bytes));
      w_.line("if (te_err != cudaSuccess) return te_err;");
      w_.line(fmt::format("te_err = cudaLaunchKernel({}, dim3({}), dim3({}), {}, {}, stream);", k.name,
                          join(dims[0], ", "), join(dims[1], ", "), arg_array, k.shared_bytes));
    } else {
      w_.line(fmt::format("const cudaError_t te_err = cudaLaunchKernel({}, dim3({}), dim3({}), {}, 0, stream);", k.name,
                          join(dims[0], ", "), join(dims[1], ", "), arg_array));
    }
    w_.line("if (te_err != cudaSuccess) return te_err;");
    if (!positive.empty()) w_.close();
    w_.close();
  }

  // Encodes a kernel's TMA tensor map before its launch; returns the map's variable.
  std::string encode_tensor_map(const CudaParam& p) {
    const TmaMap map{p.buffer, p.tensor_map_box[0], p.tensor_map_box[1], p.tensor_map_box[2]};
    const std::string var = names_.unique(p.name);
    const std::string rows = wide_printer_.print_bare(tma_matrix_rows(p.buffer));
    const std::string cols = wide_printer_.print_bare(tma_matrix_cols(p.buffer));
    flush(wide_printer_);
    for (const std::string& line : tma_encode_lines(helpers_, map, var, host_buffer(p.buffer), rows, cols))
      w_.line(line);
    return var;
  }

  std::string host_buffer(const Buffer& b) const {
    if (auto it = scope_.buffers.find(b.get()); it != scope_.buffers.end()) return it->second;
    if (auto it = scope_.buffers_by_name.find(b.name()); it != scope_.buffers_by_name.end()) return it->second;
    throw Error(
        fmt::format("CUDA codegen: buffer '{}' is accessed in a kernel but is neither a parameter nor "
                    "allocated",
                    b.name()));
  }

  const LoweredFunc& f_;
  CudaOptions options_;
  HelperSet& helpers_;
  NameTable globals_, names_;
  PrintScope scope_;
  ExprPrinter printer_, wide_printer_;
  HostVars host_vars_;
  std::map<const VarNode*, size_t> var_order_;
  std::map<const BufferNode*, size_t> buffer_order_;
  std::map<std::string, size_t> buffer_order_by_name_;
  std::vector<std::pair<Var, Expr>> lets_;
  std::vector<std::string> kernel_names_;
  size_t next_kernel_ = 0;
  CodeWriter w_;
  HostProgram out_;
};

}  // namespace

HostProgram split_host_and_kernels(const LoweredFunc& f, const CudaOptions& options, HelperSet& helpers) {
  return HostPrinter(f, options, helpers).run();
}

}  // namespace te::cuda
