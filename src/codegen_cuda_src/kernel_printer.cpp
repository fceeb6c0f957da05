#include "codegen_cuda_src/kernel_printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <set>

#include "codegen_cuda_src/async_copy.h"
#include "codegen_cuda_src/c_types.h"
#include "codegen_cuda_src/code_writer.h"
#include "codegen_cuda_src/expr_printer.h"
#include "codegen_cuda_src/kernel_analysis.h"
#include "codegen_cuda_src/stmt_util.h"
#include "codegen_cuda_src/swizzle.h"
#include "codegen_cuda_src/tensor_intrinsics.h"
#include "codegen_cuda_src/tma.h"
#include "codegen_cuda_src/warp_specialization.h"
#include "codegen_cuda_src/wgmma_helpers.h"
#include "expr/buffer_util.h"
#include "expr/reads_memory.h"
#include "te/error.h"
#include "te/simplify.h"

namespace te::cuda {

namespace {

// Bytes every array a kernel declares is aligned to: a float4, int4 or double2.
constexpr int kArrayAlignment = 16;

// A kernel's dynamic shared memory: the macro that declares it (one the CUDA emulation
// defines first stands) and the array's name.
constexpr const char* kDynamicSharedMacro = "TE_DYNAMIC_SHARED_MEMORY";
constexpr const char* kDynamicSharedArray = "te_shared_memory";
std::string dynamic_shared_macro() {
  return fmt::format(
      "// A block's shared memory above 48 KiB is dynamic: one array, each buffer a slice of it\n"
      "// (the launcher raises the kernel's limit and passes the size).\n"
      "#ifndef {0}\n"
      "#define {0}(name) extern __shared__ __align__({1}) unsigned char name[]\n"
      "#endif\n",
      kDynamicSharedMacro, kSwizzledAlignment);
}
// Vectors of 16-bit elements (8 or 16 bytes) move as one access of this aligned array.
const char* const kVectorTemplate =
    "// N elements of T moved as one access (8 or 16 bytes: ld/st .v2/.v4).\n"
    "template <typename T, int N>\n"
    "struct alignas(sizeof(T) * N) te_vec {\n"
    "  T v[N];\n"
    "};\n";

class KernelPrinter {
 public:
  KernelPrinter(const KernelAnalysis& a, const VarRanges& host_ranges, const NameTable& globals, HelperSet& helpers,
                const CudaOptions& options)
      : analysis_(a),
        names_(globals),
        printer_(scope_, helpers, names_, PrintMode{a.index_64bit, false, options.fast_math}),
        helpers_(helpers),
        async_copies_(options.async_copies),
        w_(1) {
    for (const Buffer& b : a.buffers) {
      std::string name = names_.unique(b.name());
      scope_.buffers[b.get()] = name;
      scope_.buffers_by_name[b.name()] = name;
      bool read_only = !a.written.count(b.name());
      params_.push_back(
          CudaParam{name, fmt::format("{}{}* __restrict__", read_only ? "const " : "", c_type(b.dtype())), b, Var()});
    }
    for (const Var& v : a.free_vars) {
      std::string name = names_.unique(v.name());
      DataType declared = printer_.compute_type(v.dtype());
      scope_.vars[v.get()] = VarBinding{name, declared};
      if (auto it = host_ranges.find(v.get()); it != host_ranges.end()) scope_.ranges[v.get()] = it->second;
      params_.push_back(CudaParam{name, c_type(declared), Buffer(), v});
    }
    for (const TmaMap& m : a.tma_maps) {
      std::string name = names_.unique(fmt::format("{}_map", m.source.name()));
      tma_map_names_.push_back(name);
      params_.push_back(CudaParam{name, tma_map_param_type(helpers), m.source, Var(), {{m.rows, m.cols, m.swizzle}}});
    }
  }

  KernelSource run(const ForNode* root, const std::string& name) {
    if (analysis_.warp_specialization)
      emit_warp_specialized(root);
    else
      emit_for(root, false);
    int64_t threads = 1;
    bool constant_block = true;
    KernelSource out;
    for (int d = 0; d < 3; ++d) {
      out.info.grid[d] = analysis_.grid[d].defined() ? analysis_.grid[d] : Expr(1);
      out.info.block[d] = analysis_.block[d].defined() ? analysis_.block[d] : Expr(1);
      const int64_t* c = as_const_int(out.info.block[d]);
      if (c)
        threads *= *c;
      else
        constant_block = false;
    }
    std::string params;
    for (const CudaParam& p : params_) params += fmt::format("{}{} {}", params.empty() ? "" : ", ", p.c_type, p.name);
    std::string bounds = constant_block && threads >= 1 ? fmt::format("__launch_bounds__({}) ", threads) : "";
    std::string body = used_async_ ? wait_for_async_copies_at_barriers(helpers_, w_.text()) : w_.text();
    if (used_wgmma_)  // the tiles in-flight wgmmas read may be refilled after a barrier
      body = before_each_barrier(body, use_wgmma_wait_all(helpers_) + "();");
    if (!analysis_.tma_destinations.empty()) {  // the mbarriers, ready before the first copy
      std::vector<std::string> names;
      for (const Buffer& b : analysis_.tma_destinations) names.push_back(scope_buffer(b));
      std::string prologue;
      for (const std::string& line :
           tma_kernel_prologue(helpers_, kDynamicSharedArray, analysis_.tma_barrier_offset, names, consumer_threads()))
        prologue += "  " + line + "\n";
      body = prologue + body;
    }
    if (analysis_.dynamic_shared) {
      // Above 48 KiB a block's shared memory is one dynamic array; each buffer is a slice.
      helpers_.use_text(kDynamicSharedMacro, dynamic_shared_macro());
      body = fmt::format("  {}({});\n", kDynamicSharedMacro, kDynamicSharedArray) + body;
    }
    out.text = fmt::format("extern \"C\" __global__ void {}{}({}) {{\n{}}}\n", bounds, name, params, body);
    out.info.name = name;
    out.info.params = params_;
    out.info.shared_bytes = analysis_.shared_bytes;
    out.info.dynamic_shared = analysis_.dynamic_shared;
    out.info.index_64bit = analysis_.index_64bit;
    return out;
  }

 private:
  // Which threads the code being printed runs in: the whole block, or a warp-specialized
  // kernel's producer warpgroup or consumer warpgroups.
  enum class Side { Block, Producer, Consumer };

  int64_t consumer_threads() const { return analysis_.warp_specialization ? 128 * analysis_.consumer_warpgroups : 0; }

  // The kernel body as two branches (warp_specialization.h): the producer warpgroup's
  // copies, issued by its first thread, and the consumers' program. Both branches print
  // with the same names, each in its scope.
  void emit_warp_specialized(const ForNode* root) {
    const WarpSpecialization& ws = *analysis_.warp_specialization;
    async_wgmma_ = false;
    for (const TensorIntrinsicCallNode* n : tensor_intrinsic_calls(root->body)) async_wgmma_ |= issues_async_wgmma(n);
    const NameTable names = names_;
    const PrintScope scope = scope_;
    w_.line(
        fmt::format("// Warp specialization: threadIdx.y {} is the producer warpgroup, which issues the TMA copies;",
                    analysis_.consumer_warpgroups));
    w_.line("// the warpgroups below it consume the tiles.");
    w_.open(fmt::format("if (threadIdx.y == {})", analysis_.consumer_warpgroups));
    for (const std::string& line : producer_branch_lines(helpers_, ws)) w_.line(line);
    w_.open("if (threadIdx.x == 0)");
    w_.line(
        "unsigned te_tma_filled = 0, te_tma_released = 0;  // per buffer: filled before; its empty mbarrier's parity");
    side_ = Side::Producer;
    emit(for_loop(root->var, root->min, root->extent, root->for_kind, producer_part(root->body), root->thread_tag),
         false);
    w_.close();
    w_.close("} else {");
    w_.indent();
    names_ = names;
    scope_ = scope;
    dynamic_offset_ = 0;
    for (const std::string& line : consumer_branch_lines(helpers_, ws)) w_.line(line);
    side_ = Side::Consumer;
    emit_for(root, false);
    side_ = Side::Block;
    w_.close();
  }

  // A consumer's wait for its wgmmas, before a release or barrier: none when none can be
  // in flight.
  void wait_for_wgmmas() {
    if (wgmma_in_flight_) print_wgmma_wait_all("");
  }

  // te_wgmma_wait_all() (with an optional `comment`): no wgmma is in flight after it.
  void print_wgmma_wait_all(const std::string& comment) {
    w_.line(use_wgmma_wait_all(helpers_) + "();" + (comment.empty() ? "" : "  // " + comment));
    wgmma_in_flight_ = false;
    wgmma_registers_.clear();
  }

  // Before a write to b's fragment at `offset` (undefined: anywhere): a register fragment
  // in-flight wgmmas read as A is not written until they complete.
  void protect_wgmma_registers(const BufferNode* b, const Expr& offset) {
    bool conflict = false;
    for (const auto& [read, at] : wgmma_registers_)
      conflict = conflict || (read == b && (!at.defined() || !offset.defined() || !can_prove(at != offset)));
    if (conflict) print_wgmma_wait_all("the wgmmas reading " + b->name + " as A");
  }

  // wgmmas in flight across k tiles: where a consumer's releases (seq[i], the refill of
  // the tiles the previous k tile read) come right before wgmmas that read other tiles,
  // it releases after issuing them, waiting only for the older ones. The number of those
  // wgmmas (0: release in place).
  size_t wgmmas_to_release_after(const std::vector<Stmt>& seq, size_t i) const {
    if (side_ != Side::Consumer || !async_wgmma_ || !is_producer_part(seq[i])) return 0;
    std::set<int> slots;
    for (const TensorIntrinsicCallNode* n : tensor_intrinsic_calls(seq[i]))
      slots.insert(analysis_.tma_slot(n->buffers[1]));
    size_t run = 0;
    for (size_t j = i + 1; j < seq.size(); ++j, ++run) {
      auto* n = seq[j].as<TensorIntrinsicCallNode>();
      if (n == nullptr || !issues_async_wgmma(n)) break;
      bool reads_released = false;
      for (const BufferNode* b : buffer_use(seq[j]).loaded) reads_released |= slots.count(analysis_.tma_slot(b)) > 0;
      if (reads_released) break;
    }
    return run;
  }

  // seq[i + 1 .. i + run] (wgmmas), then seq[i]'s releases once the wgmmas before them
  // are complete.
  void emit_release_after_wgmmas(const std::vector<Stmt>& seq, size_t i, size_t run) {
    for (size_t j = i + 1; j <= i + run; ++j) {
      frames_.back().index = j;
      emit(seq[j], true);
    }
    w_.line(fmt::format("{}<{}>();  // the wgmmas before these {}: they read the tiles released next",
                        use_wgmma_wait_older(helpers_), run, run));
    releases_safe_ = true;
    emit(seq[i], true);
    releases_safe_ = false;
  }

  // Consumers wait for a tile's copy where they read it (no barrier after the copy):
  // before statement s, for the destinations it reads that were not waited for since the
  // last loop boundary, condition or release of them.
  void wait_for_reads(const Stmt& s) {
    if (side_ != Side::Consumer) return;
    unsigned mask = 0;
    for (const BufferNode* b : buffer_use(s).loaded)
      if (const int slot = analysis_.tma_slot(b); slot >= 0) mask |= 1u << slot;
    mask &= ~waited_;
    if (mask == 0) return;
    w_.line(tma_wait_statement(helpers_, static_cast<int>(analysis_.tma_destinations.size()), mask));
    waited_ |= mask;
  }

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
      case StmtKind::For: {
        auto* n = s.as<ForNode>();
        if (auto nest = analysis_.lane_nests.find(n); nest != analysis_.lane_nests.end()) {
          wait_for_reads(s);
          return emit_lane_nest(nest->second);
        }
        const int64_t* extent = as_const_int(n->extent);
        // A loop that surely runs and releases nothing waits once before, not per iteration.
        if ((n->for_kind == ForKind::ThreadBinding || (extent && *extent > 0)) && !has_producer_copy(n->body))
          wait_for_reads(s);
        return emit_for(n, in_seq);
      }
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
      case StmtKind::Store:
        wait_for_reads(s);
        protect_wgmma_registers(s.as<StoreNode>()->buffer.get(), Expr());
        return emit_store(s.as<StoreNode>());
      case StmtKind::Allocate: return emit_allocate(s.as<AllocateNode>(), in_seq);
      case StmtKind::IfThenElse: {
        auto* n = s.as<IfThenElseNode>();
        std::string cond = printer_.print_bare(n->cond);
        flush_hoisted();
        w_.open(fmt::format("if ({})", cond));
        const unsigned waited = waited_;
        emit(n->then_case, false);
        waited_ = waited;
        emit_else(n->else_case);
        waited_ = 0;
        wgmma_in_flight_ = async_wgmma_;
        return;
      }
      case StmtKind::Seq: {
        const std::vector<Stmt>& seq = s.as<SeqNode>()->seq;
        frames_.push_back({&seq, 0, nullptr});
        for (size_t i = 0; i < seq.size(); ++i) {
          frames_.back().index = i;
          if (const size_t run = wgmmas_to_release_after(seq, i)) {
            emit_release_after_wgmmas(seq, i, run);
            i += run;
            continue;
          }
          emit(seq[i], true);
        }
        frames_.pop_back();
        return;
      }
      case StmtKind::Evaluate: return;  // te expressions have no side effects
      case StmtKind::Barrier:
        if (const unsigned mask = tma_reads_after_barrier())  // the copies they read land first
          w_.line(tma_wait_statement(helpers_, static_cast<int>(analysis_.tma_destinations.size()), mask));
        if (side_ == Side::Consumer) {  // (run() puts the wgmmas' wait before it)
          w_.line(consumer_barrier_statement(helpers_, consumer_threads()));
          wgmma_in_flight_ = false;
          return;
        }
        w_.line("__syncthreads();");
        return;
      case StmtKind::Assert: {
        auto* n = s.as<AssertNode>();
        std::string cond = printer_.print(n->cond);
        flush_hoisted();
        w_.line(fmt::format("if (!{}) __trap();  // assert: {}", cond, comment_text(n->message)));
        return emit(n->body, in_seq);
      }
      case StmtKind::TensorIntrinsicCall: {
        auto* n = s.as<TensorIntrinsicCallNode>();
        if (is_tma_load(n)) return emit_tma_load(n);
        wait_for_reads(s);
        protect_wgmma_registers(n->buffers.back().get(), n->offsets.back());
        std::vector<std::string> lines = print_tensor_intrinsic(
            n, [this](const Expr& e) { return printer_.print_bare(e); },
            [this](const Buffer& b) { return scope_buffer(b); }, helpers_);
        flush_hoisted();
        for (const std::string& l : lines) w_.line(l);
        if (issues_async_wgmma(n)) used_wgmma_ = wgmma_in_flight_ = true;
        if (const BufferNode* a = wgmma_register_operand(n)) wgmma_registers_.push_back({a, n->offsets[0]});
        return;
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

  // A loop nest over warp fragments (lane_nest.h): each lane runs, unrolled, the stores
  // on the fragment elements it holds, its loops' values set from its place in the
  // fragments; row reductions then combine across the row's four lanes.
  void emit_lane_nest(const LaneNest& nest) {
    // A wgmma writes its accumulators, and reads its A registers, until it completes.
    if (nest.threads != 32 && wgmma_in_flight_) print_wgmma_wait_all("the fragments' wgmmas, before each thread's own");
    w_.open_block();
    const std::string count = nest.fewest_lane_stores == nest.lane_stores
                                  ? std::to_string(nest.lane_stores)
                                  : fmt::format("{} to {}", nest.fewest_lane_stores, nest.lane_stores);
    const bool group = nest.threads != 32;  // a warpgroup's wgmma fragments
    if (group) {
      w_.line(fmt::format("// Each thread runs {} of these loops' {} stores: those on the fragment elements it holds",
                          count, nest.stores));
      w_.line(
          "// (the PTX ISA's wgmma fragment layouts; thread = 32 w + 4 g + t, warp w holding rows 16 w to 16 w + 15).");
    } else {
      w_.line(
          fmt::format("// Each lane runs {} of these loops' {} stores: those on the fragment elements it holds "
                      "(the PTX ISA's mma fragment layouts; lane = 4 g + t).",
                      count, nest.stores));
    }
    bool uses_g = false, uses_t = false, uses_w = false;
    for (const LaneTree& tree : nest.trees) lane_terms(tree, &uses_g, &uses_t, &uses_w);
    const std::string g = uses_g ? names_.unique("g") : "", t = uses_t ? names_.unique("t") : "";
    lane_warp_ = uses_w ? names_.unique("w") : "";
    if (uses_w) w_.line(fmt::format("const int {} = (int)(threadIdx.x >> 5);", lane_warp_));
    if (uses_g)
      w_.line(fmt::format(
          group ? "const int {} = (int)((threadIdx.x >> 2) & 7u);" : "const int {} = (int)(threadIdx.x >> 2);", g));
    if (uses_t) w_.line(fmt::format("const int {} = (int)(threadIdx.x & 3u);", t));
    std::set<const StmtNode*> named;  // one name per loop and let, the same in every iteration
    for (const LaneTree& tree : nest.trees) name_lane_vars(tree, &named);
    for (const LaneTree& tree : nest.trees) emit_lane_tree(tree, g, t);
    for (const LaneReduction& r : nest.reductions) emit_lane_butterfly(r);
    w_.close();
  }

  void name_lane_vars(const LaneTree& tree, std::set<const StmtNode*>* named) {
    if (named->insert(tree.stmt).second) {
      if (tree.stmt->kind == StmtKind::For) {
        auto* f = static_cast<const ForNode*>(tree.stmt);
        bind_var(f->var, loop_var_range(f->min, f->extent, scope_.ranges));
      } else if (tree.stmt->kind == StmtKind::LetStmt) {
        auto* l = static_cast<const LetStmtNode*>(tree.stmt);
        bind_var(l->var, value_range(l->value, scope_.ranges));
        note_let(scope_.data_vars, l->var.get(), l->value);
      }
    }
    for (const LaneTree& c : tree.children) name_lane_vars(c, named);
  }

  // Whether the loop values the tree prints use the lane's g and t.
  static void lane_terms(const LaneTree& tree, bool* uses_g, bool* uses_t, bool* uses_w) {
    if (tree.stmt->kind == StmtKind::For &&
        (tree.guarded || printed_vars(tree).count(static_cast<const ForNode*>(tree.stmt)->var.get()))) {
      *uses_g |= tree.value.per_g != 0;
      *uses_t |= tree.value.per_t != 0;
      *uses_w |= tree.value.per_w != 0;
    }
    for (const LaneTree& c : tree.children) lane_terms(c, uses_g, uses_t, uses_w);
  }

  // The variables the statements under a tree print (a fragment's load prints as its
  // slot, not its index).
  static std::set<const VarNode*> printed_vars(const LaneTree& tree) {
    struct Finder : IRVisitor {
      const std::map<const LoadNode*, int64_t>* slots = nullptr;
      std::set<const VarNode*> found;
      void visit_var(const VarNode* v) override { found.insert(v); }
      void visit_load(const LoadNode* n) override {
        if (!slots->count(n)) IRVisitor::visit_load(n);
      }
    } f;
    std::function<void(const LaneTree&)> walk = [&](const LaneTree& t) {
      for (const LaneTree& c : t.children) walk(c);
      f.slots = &t.load_slots;
      if (t.stmt->kind == StmtKind::Store) {
        auto* s = static_cast<const StoreNode*>(t.stmt);
        f.visit(s->value);
        if (t.store_slot < 0)
          for (const Expr& i : s->indices) f.visit(i);
      } else if (t.stmt->kind == StmtKind::LetStmt) {
        auto* l = static_cast<const LetStmtNode*>(t.stmt);
        if (f.found.count(l->var.get())) f.visit(l->value);
      } else if (t.stmt->kind == StmtKind::IfThenElse) {
        f.visit(static_cast<const IfThenElseNode*>(t.stmt)->cond);
      }
    };
    walk(tree);
    return f.found;
  }

  void emit_lane_tree(const LaneTree& tree, const std::string& g, const std::string& t) {
    switch (tree.stmt->kind) {
      case StmtKind::For: {
        auto* f = static_cast<const ForNode*>(tree.stmt);
        const std::set<const VarNode*> used = printed_vars(tree);
        bool declares = used.count(f->var.get()) != 0;  // nested loops open blocks of their own
        for (const LaneTree& c : tree.children) declares |= c.stmt->kind == StmtKind::LetStmt;
        if (declares) w_.open_block();
        if (used.count(f->var.get()))
          w_.line(fmt::format("const {} {} = {};", printer_.compute_c_type(f->var.dtype()), var_name(f->var),
                              lane_affine_text(tree.value, g, t)));
        if (tree.guarded)
          w_.open(fmt::format(
              "if ({})",
              lane_range_text(tree, used.count(f->var.get()) ? var_name(f->var) : lane_affine_text(tree.value, g, t))));
        for (const LaneTree& c : tree.children) emit_lane_tree(c, g, t);
        if (tree.guarded) w_.close();
        if (declares) w_.close();
        return;
      }
      case StmtKind::LetStmt: {
        auto* l = static_cast<const LetStmtNode*>(tree.stmt);
        if (printed_vars(tree).count(l->var.get())) {
          printer_.set_fragment_slots(tree.load_slots);
          std::string value = printer_.print_bare(l->value);
          printer_.set_fragment_slots({});
          flush_hoisted();
          w_.line(fmt::format("const {} {} = {};", printer_.compute_c_type(l->var.dtype()), var_name(l->var), value));
        }
        for (const LaneTree& c : tree.children) emit_lane_tree(c, g, t);
        return;
      }
      case StmtKind::IfThenElse: {  // the branch this tree node runs (its lets declare inside)
        auto* n = static_cast<const IfThenElseNode*>(tree.stmt);
        printer_.set_fragment_slots(tree.load_slots);
        std::string condition = printer_.print_bare(n->cond);
        printer_.set_fragment_slots({});
        flush_hoisted();
        w_.open(fmt::format(tree.value.base == 0 ? "if ({})" : "if (!({}))", condition));
        for (const LaneTree& c : tree.children) emit_lane_tree(c, g, t);
        w_.close();
        return;
      }
      case StmtKind::Store: {
        auto* n = static_cast<const StoreNode*>(tree.stmt);
        printer_.set_fragment_slots(tree.load_slots);
        if (tree.store_slot >= 0) {
          const DataType type = n->buffer.dtype();
          std::string value = printer_.print_bare(n->value);
          if (printer_.compute_type(type) != type) value = fmt::format("({})({})", c_type(type), value);
          flush_hoisted();
          w_.line(fmt::format("{}[{}] = {};", scope_buffer(n->buffer), tree.store_slot, value));
        } else {
          emit_store(n);
        }
        printer_.set_fragment_slots({});
        return;
      }
      default: TE_ICHECK(false, "a lane tree of loops, lets, branches and stores");
    }
  }

  // A row's four lanes combine their parts: two butterfly shuffles.
  void emit_lane_butterfly(const LaneReduction& r) {
    const std::string element = fmt::format("{}[{}]", scope_buffer(r.buffer), r.slot);
    const DataType type = r.buffer.dtype();
    Var mine("te_mine", type), theirs("te_theirs", type);
    scope_.vars[mine.get()] = VarBinding{element, printer_.compute_type(type)};
    for (int mask : {1, 2}) {
      scope_.vars[theirs.get()] =
          VarBinding{fmt::format("__shfl_xor_sync(0xffffffffu, {}, {})", element, mask), printer_.compute_type(type)};
      const std::string combined = printer_.print_bare(make_binary(r.op, mine, theirs));
      flush_hoisted();
      w_.line(fmt::format("{} = {};", element, combined));
    }
    scope_.vars.erase(mine.get());
    scope_.vars.erase(theirs.get());
  }

  // Whether a guarded iteration is the lane's: its value within the loop's range (only
  // the bounds some lane's value crosses are tested).
  static std::string lane_range_text(const LaneTree& tree, const std::string& value) {
    const LaneAffine& a = tree.value;
    const int64_t lowest = a.base + std::min<int64_t>(a.per_g, 0) * 7 + std::min<int64_t>(a.per_t, 0) * 3 +
                           std::min<int64_t>(a.per_w, 0) * 3;
    const int64_t highest = a.base + std::max<int64_t>(a.per_g, 0) * 7 + std::max<int64_t>(a.per_t, 0) * 3 +
                            std::max<int64_t>(a.per_w, 0) * 3;
    std::vector<std::string> tests;
    if (lowest < tree.begin) tests.push_back(fmt::format("{} >= {}", value, tree.begin));
    if (highest >= tree.end) tests.push_back(fmt::format("{} < {}", value, tree.end));
    return fmt::format("{}", fmt::join(tests, " && "));
  }

  // base + per_w * w + per_g * g + per_t * t as C.
  std::string lane_affine_text(const LaneAffine& a, const std::string& g, const std::string& t) const {
    std::vector<std::string> terms;
    auto term = [&](int64_t k, const std::string& name) {
      if (k != 0) terms.push_back(k == 1 ? name : k == -1 ? "-" + name : fmt::format("{} * {}", k, name));
    };
    term(a.per_w, lane_warp_);
    term(a.per_g, g);
    term(a.per_t, t);
    if (terms.empty()) return std::to_string(a.base);
    std::string text = fmt::format("{}", fmt::join(terms, " + "));
    if (a.base != 0) text += fmt::format(" {} {}", a.base < 0 ? '-' : '+', a.base < 0 ? -a.base : a.base);
    return text;
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
    frames_.push_back({nullptr, 0, n});
    const bool releases = side_ == Side::Consumer && !!has_producer_copy(n->body);
    if (releases) waited_ = 0;        // the previous iteration may have released what was waited for
    wgmma_in_flight_ = async_wgmma_;  // and issued wgmmas
    for (const TensorIntrinsicCallNode* c : tensor_intrinsic_calls(n->body))  // reading these registers
      if (const BufferNode* a = wgmma_register_operand(c)) wgmma_registers_.push_back({a, Expr()});
    emit(n->body, false);
    if (releases) waited_ = 0;
    wgmma_in_flight_ = async_wgmma_;
    frames_.pop_back();
    w_.close();
  }

  // The TMA destinations (bits of their slots) that the code after the barrier being
  // printed reads before the next barrier: the rest of each enclosing sequence, from the
  // innermost out, until one meets a barrier; at the end of a serial loop's body also
  // the body's start (its next iteration) and what follows the loop (its exit).
  unsigned tma_reads_after_barrier() const {
    if (analysis_.tma_destinations.empty()) return 0;
    const std::function<int(const BufferNode*)> slot = [this](const BufferNode* b) { return analysis_.tma_slot(b); };
    unsigned mask = 0;
    for (size_t f = frames_.size(); f-- > 0;) {
      const Frame& frame = frames_[f];
      if (frame.loop != nullptr) {
        mask |= tma_reads_before_barrier(frame.loop->body, slot).mask;
        continue;
      }
      for (size_t i = frame.index + 1; i < frame.seq->size(); ++i) {
        const ReadsBeforeBarrier r = tma_reads_before_barrier((*frame.seq)[i], slot);
        mask |= r.mask;
        if (r.barrier) return mask;
      }
    }
    return mask;
  }

  void emit_store(const StoreNode* n) {
    if (n->indices.size() != 1)
      throw Error(
          fmt::format("CUDA codegen: store to '{}' has {} indices; the CUDA backend takes flattened "
                      "loop IR (one index per access)",
                      n->buffer.name(), n->indices.size()));
    int lanes = std::max(n->value.dtype().lanes(), n->indices[0].dtype().lanes());
    if (n->predicate.defined()) lanes = std::max(lanes, n->predicate.dtype().lanes());
    if (lanes == 1) {
      std::string line = store_text(n);
      flush_hoisted();
      w_.line(line);
      return;
    }
    std::string vector_type = vector_c_type(n->buffer.dtype(), lanes);
    const bool vectorizable =
        !n->atomic_add && !vector_type.empty() && !n->predicate.defined() && dense_ramp(n->indices[0], lanes) &&
        !printer_.index_is_checked(n->buffer, n->indices[0]) && vector_fits_swizzle(n->buffer, n->indices[0], lanes);
    if (!vectorizable) return emit_lanes_reading_vectors(n, lanes);
    const std::string check = alignment_check(n, lanes);
    if (check.empty()) {  // a block of its own: its te_v* / te_vs names are local
      w_.open_block();
      emit_vector_store(n, lanes, vector_type);
      return w_.close();
    }
    w_.open(check);
    emit_vector_store(n, lanes, vector_type);
    w_.close("} else {");
    w_.indent();
    emit_lane_loop(n, lanes);
    w_.close();
  }

  // floatN / intN / uintN / double2 / __half2 for a vector of `lanes` elements of t, or
  // te_vec<T, N> (an aligned array: helpers.cpp) for 8 or 16 bytes of 16-bit elements ("" if
  // none).
  static std::string vector_c_type(DataType t, int lanes) {
    if (array_vector(t, lanes)) return fmt::format("te_vec<{}, {}>", c_type(t), lanes);
    if (lanes != 2 && lanes != 4) return "";
    if (t == Float(16) && lanes == 2) return "__half2";
    if (t == Float(32)) return fmt::format("float{}", lanes);
    if (t == Int(32)) return fmt::format("int{}", lanes);
    if (t == UInt(32)) return fmt::format("uint{}", lanes);
    if (t == Float(64) && lanes == 2) return "double2";
    return "";
  }

  // The loads of value that can be read as one vector each (dense, unpredicated, of a
  // vectorizable type, not bounds-checked), and always read: a load only if_then_else's
  // taken side or the right operand of && / || reads is left where it is.
  std::vector<const LoadNode*> vector_loads(const Expr& value, int lanes) {
    struct Finder : IRVisitor {
      std::vector<const LoadNode*> found;
      int lanes = 0;
      void visit_call(const CallNode* c) override {
        if (c->op == Intrinsic::IfThenElse) return visit(c->args[0]);
        IRVisitor::visit_call(c);
      }
      void visit_binary(const BinaryNode* b) override {
        if (is_logical(b->op)) return visit(b->a);
        IRVisitor::visit_binary(b);
      }
      void visit_load(const LoadNode* l) override {
        if (l->indices.size() == 1 && dense_ramp(l->indices[0], lanes) && !l->predicate.defined() &&
            !vector_c_type(l->buffer.dtype(), lanes).empty() && vector_fits_swizzle(l->buffer, l->indices[0], lanes))
          found.push_back(l);
        IRVisitor::visit_load(l);
      }
    } f;
    f.lanes = lanes;
    f.visit(value);
    std::vector<const LoadNode*> out;
    for (const LoadNode* l : f.found)
      if (!printer_.index_is_checked(l->buffer, l->indices[0])) out.push_back(l);
    return out;
  }

  // The first element of a vector access (a swizzled buffer's whole chunk moves together).
  std::string address(const Buffer& b, const Expr& ramp_index) {
    return fmt::format("({} + {})", printer_.name_of(b),
                       swizzled_index(helpers_, b, printer_.print(ramp_index.as<RampNode>()->base)));
  }

  // Vector accesses need addresses aligned to the vector's size. The kernel's own arrays
  // are declared aligned to kArrayAlignment, so an element offset that is provably a
  // multiple of the lanes is aligned; other addresses (a pointer argument may be offset)
  // are checked when the kernel runs, with the lane-by-lane loop as the fallback. The
  // condition ("" when every address is proven aligned):
  std::string alignment_check(const StoreNode* n, int lanes) {
    std::vector<std::string> unproven;
    auto note = [&](const Buffer& b, const Expr& ramp) {
      if (!proven_aligned(b, ramp, lanes)) unproven.push_back(fmt::format("(unsigned long long){}", address(b, ramp)));
    };
    note(n->buffer, n->indices[0]);
    for (const LoadNode* l : vector_loads(n->value, lanes)) note(l->buffer, l->indices[0]);
    flush_hoisted();
    if (unproven.empty()) return "";
    return fmt::format("if ((({}) % {}) == 0)", fmt::join(unproven, " | "), n->buffer.dtype().bytes() * lanes);
  }

  static bool proven_aligned(const Buffer& b, const Expr& ramp, int lanes) {
    if (b.scope() == MemoryScope::Global || b.dtype().bytes() * lanes > kArrayAlignment) return false;
    const Expr& base = ramp.as<RampNode>()->base;
    return can_prove(base % make_const(base.dtype(), lanes) == make_zero(base.dtype()));
  }

  // Whether vector_c_type is te_vec (lanes as `.v[k]`), not a CUDA vector (`.x .y .z .w`).
  static bool array_vector(DataType t, int lanes) { return t.bits() == 16 && (lanes == 4 || lanes == 8); }

  // vector_c_type, its te_vec template registered where it is one.
  std::string use_vector_type(DataType t, int lanes) {
    if (array_vector(t, lanes)) helpers_.use_text("te_vec", kVectorTemplate);
    return vector_c_type(t, lanes);
  }

  // Each load as one vector (te_v0, te_v1...), which the printer then reads lane by lane.
  void declare_vector_loads(const std::vector<const LoadNode*>& loads, int lanes) {
    std::map<const LoadNode*, ExprPrinter::VectorLoad> names;
    for (const LoadNode* l : loads) {
      std::string name = fmt::format("te_v{}", names.size());  // read-only buffers: ld.global.nc
      const std::string load_type = use_vector_type(l->buffer.dtype(), lanes);
      w_.line(
          fmt::format("const {} {} = *(const {}*){};", load_type, name, load_type, address(l->buffer, l->indices[0])));
      names[l] = {name, array_vector(l->buffer.dtype(), lanes)};
    }
    printer_.set_vector_loads(names);
  }

  void emit_vector_store(const StoreNode* n, int lanes, const std::string& type) {
    // A copy into shared memory, under conditions too: every barrier first waits for the
    // thread's copies, and te's barriers order the tiles' writes and reads (a double
    // buffer's guarded prefetch of the next tile overlaps this tile's work as the
    // unguarded one does).
    if (const LoadNode* src = async_copies_ ? async_copy_source(n, lanes) : nullptr;
        src != nullptr && !printer_.index_is_checked(src->buffer, src->indices[0])) {
      std::string dst = address(n->buffer, n->indices[0]), from = address(src->buffer, src->indices[0]);
      flush_hoisted();
      w_.line(async_copy_text(helpers_, dst, from));
      used_async_ = true;
      return;
    }
    declare_vector_loads(vector_loads(n->value, lanes), lanes);
    use_vector_type(n->buffer.dtype(), lanes);
    w_.line(fmt::format("{} te_vs;", type));
    DataType t = n->buffer.dtype();
    for (int k = 0; k < lanes; ++k) {
      printer_.set_lane(std::to_string(k));
      std::string value = printer_.print_bare(n->value);
      if (printer_.compute_type(t) != t) value = fmt::format("({})({})", c_type(t), value);
      flush_hoisted();
      w_.line(array_vector(t, lanes) ? fmt::format("te_vs.v[{}] = {};", k, value)
                                     : fmt::format("te_vs.{} = {};", "xyzw"[k], value));
    }
    printer_.set_lane("");
    printer_.set_vector_loads({});
    w_.line(fmt::format("*({}*){} = te_vs;", type, address(n->buffer, n->indices[0])));
  }

  // A store that cannot be one vector (a transposing copy's strided one) still reads its
  // dense operands as vectors, where their addresses are aligned: one 16-byte load, not
  // eight 2-byte ones, each lane then stored by itself.
  void emit_lanes_reading_vectors(const StoreNode* n, int lanes) {
    const std::vector<const LoadNode*> loads =
        n->atomic_add || n->predicate.defined() ? std::vector<const LoadNode*>{} : vector_loads(n->value, lanes);
    if (loads.empty()) return emit_lane_loop(n, lanes);
    std::vector<std::string> unproven;  // each load's own vector size
    for (const LoadNode* l : loads)
      if (!proven_aligned(l->buffer, l->indices[0], lanes))
        unproven.push_back(fmt::format("((unsigned long long){} % {}) == 0", address(l->buffer, l->indices[0]),
                                       l->buffer.dtype().bytes() * lanes));
    flush_hoisted();
    if (unproven.empty()) {
      w_.open_block();
    } else {
      w_.open(fmt::format("if ({})", fmt::join(unproven, " && ")));
    }
    declare_vector_loads(loads, lanes);
    for (int k = 0; k < lanes; ++k) {
      printer_.set_lane(std::to_string(k));
      std::string line = store_text(n);
      flush_hoisted();
      w_.line(line);
    }
    printer_.set_lane("");
    printer_.set_vector_loads({});
    if (unproven.empty()) return w_.close();
    w_.close("} else {");
    w_.indent();
    emit_lane_loop(n, lanes);
    w_.close();
  }

  // Vector stores otherwise run lane by lane; the compiler unrolls the loop.
  void emit_lane_loop(const StoreNode* n, int lanes) {
    printer_.set_lane("te_lane");
    std::string line = store_text(n);
    w_.line("#pragma unroll");
    w_.open(fmt::format("for (int te_lane = 0; te_lane < {}; ++te_lane)", lanes));
    flush_hoisted();
    w_.line(line);
    w_.close();
    printer_.set_lane("");
  }

  std::string store_text(const StoreNode* n) {
    DataType t = n->buffer.dtype();
    std::string index = swizzled_index(helpers_, n->buffer, printer_.checked_index(n->buffer, n->indices[0]));
    std::string value = printer_.print_bare(n->value);
    if (printer_.compute_type(t) != t) value = fmt::format("({})({})", c_type(t), value);
    std::string target = fmt::format("{}[{}] = {};", scope_buffer(n->buffer), index, value);
    if (n->atomic_add) target = atomic_add_text(t, fmt::format("{}[{}]", scope_buffer(n->buffer), index), value);
    if (!n->predicate.defined()) return target;
    return fmt::format("if ({}) {}", printer_.print_bare(n->predicate), target);
  }

  // A TMA copy: the analysis checked its operands and that the whole block reaches it.
  void emit_tma_load(const TensorIntrinsicCallNode* n) {
    const TmaMap m = tma_map_of(n);
    size_t map = 0;
    while (!analysis_.tma_maps[map].same_as(m)) ++map;
    const Buffer &src = n->buffers[0], &dst = n->buffers[1];
    const Expr& offset = n->offsets[0];
    const Expr cols = cast(offset.dtype(), tma_matrix_cols(src));
    TmaCallText args;
    args.dst = scope_buffer(dst);
    args.offset = printer_.print_bare(n->offsets[1]);
    args.src = scope_buffer(src);
    args.map = tma_map_names_[map];
    args.rows_total = printer_.print_bare(cast(offset.dtype(), tma_matrix_rows(src)));
    args.cols_total = printer_.print_bare(cols);
    const VarBounds bounds = var_bounds_of(offset, scope_.ranges);
    args.row0 = printer_.print_bare(simplify(offset / cols, bounds));
    args.col0 = printer_.print_bare(simplify(offset % cols, bounds));
    args.slot = analysis_.tma_slot(dst);
    flush_hoisted();
    const int destinations = static_cast<int>(analysis_.tma_destinations.size());
    if (side_ == Side::Producer) return w_.line(tma_produce_text(helpers_, n, args, destinations));
    if (side_ == Side::Consumer) {  // in-flight wgmmas may read the buffer's last tile
      if (!releases_safe_) wait_for_wgmmas();
      w_.line(tma_release_statement(helpers_, destinations, args.slot));
      waited_ &= ~(1u << args.slot);
      return;
    }
    w_.line(tma_load_text(helpers_, n, args));
  }

  // CUDA's atomicAdd has no signed 64-bit overload: two's complement makes the unsigned one
  // add the same bits.
  static std::string atomic_add_text(DataType t, const std::string& element, const std::string& value) {
    if (t == Int(64))
      return fmt::format("atomicAdd(reinterpret_cast<unsigned long long*>(&{}), (unsigned long long)({}));", element,
                         value);
    return fmt::format("atomicAdd(&{}, {});", element, value);
  }

  std::string scope_buffer(const Buffer& b) {
    if (auto it = scope_.buffers.find(b.get()); it != scope_.buffers.end()) return it->second;
    if (auto it = scope_.buffers_by_name.find(b.name()); it != scope_.buffers_by_name.end()) return it->second;
    throw Error(
        fmt::format("CUDA codegen: buffer '{}' is accessed but is neither a parameter nor allocated", b.name()));
  }

  void emit_allocate(const AllocateNode* n, bool in_seq) {
    const Buffer& b = n->buffer;
    if (side_ == Side::Producer && b.scope() == MemoryScope::Shared && analysis_.dynamic_shared &&
        !uses_buffer(n->body, b)) {  // the consumers' buffer: its place, not its name
      next_dynamic_offset(b);
      return emit(n->body, in_seq);
    }
    if (uses_buffer(n->body, b)) {
      std::optional<int64_t> count = constant_elements(b);
      TE_ICHECK(count.has_value(), "CUDA: an array size the kernel analysis did not check");
      std::string name = names_.unique(b.name());
      scope_.buffers[b.get()] = name;
      scope_.buffers_by_name[b.name()] = name;
      if (b.scope() == MemoryScope::Warp || b.scope() == MemoryScope::Warpgroup) {
        // (The analysis checked: a whole number of fragments.)
        const int threads = fragment_threads(b.scope());
        auto layout = analysis_.fragment_layouts.find(b.get());
        const int64_t lane =
            layout == analysis_.fragment_layouts.end() ? *count / threads : lane_array_size(layout->second, *count);
        w_.line(fmt::format("alignas({}) {} {}[{}];  // this {}'s part of a {}'s {} elements{}", kArrayAlignment,
                            c_type(b.dtype()), name, lane, thread_word(threads), group_word(threads), *count,
                            layout != analysis_.fragment_layouts.end() && layout->second.rows_only
                                ? fmt::format(" (one per row of {})", layout->second.origin)
                                : ""));
      } else if (b.scope() == MemoryScope::Shared && analysis_.dynamic_shared) {
        w_.line(fmt::format("{0}* const {1} = reinterpret_cast<{0}*>({2} + {3});  // {4} elements{5}",
                            c_type(b.dtype()), name, kDynamicSharedArray, next_dynamic_offset(b), *count,
                            b.swizzle_bytes() ? fmt::format(", swizzled by {} bytes", b.swizzle_bytes()) : ""));
      } else {
        w_.line(fmt::format("alignas({}) {}{} {}[{}];", kArrayAlignment,
                            b.scope() == MemoryScope::Shared ? "__shared__ " : "", c_type(b.dtype()), name,
                            std::max<int64_t>(*count, 1)));
      }
    }
    emit(n->body, in_seq);
  }

  // Where shared buffer b starts in the dynamic shared memory: after the buffers before it.
  int64_t next_dynamic_offset(const Buffer& b) {
    std::optional<int64_t> count = constant_elements(b);
    TE_ICHECK(count.has_value(), "CUDA: an array size the kernel analysis did not check");
    const int64_t align = analysis_.shared_alignment(b);
    const int64_t at = (dynamic_offset_ + align - 1) / align * align;
    dynamic_offset_ = at + (*count * b.dtype().bytes() + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
    return at;
  }

  const KernelAnalysis& analysis_;
  NameTable names_;
  PrintScope scope_;
  ExprPrinter printer_;
  HelperSet& helpers_;
  const bool async_copies_;
  bool used_async_ = false;     // a cp.async was emitted
  bool used_wgmma_ = false;     // a wgmma was issued (and left in flight)
  int64_t dynamic_offset_ = 0;  // where the next shared buffer starts in dynamic shared memory
  Side side_ = Side::Block;
  bool async_wgmma_ = false;      // a warp-specialized kernel leaves wgmmas in flight
  bool wgmma_in_flight_ = false;  // ... and some may be at the point being printed
  std::string lane_warp_;         // the warp-in-warpgroup variable of the lane nest being printed (none: "")
  bool releases_safe_ = false;    // the releases being printed follow their wgmmas' wait
  // The register fragments (and their offsets; undefined: any) in-flight wgmmas may read as A.
  std::vector<std::pair<const BufferNode*, Expr>> wgmma_registers_;
  unsigned waited_ = 0;  // the consumers' TMA destinations waited for (wait_for_reads)
  CodeWriter w_;
  std::vector<CudaParam> params_;
  std::vector<std::string> tma_map_names_;  // the parameter of each of analysis_.tma_maps
  // Where the printer is: each enclosing sequence and the child being printed, and each
  // enclosing serial loop (tma_reads_after_barrier looks ahead from there).
  struct Frame {
    const std::vector<Stmt>* seq;
    size_t index;
    const ForNode* loop;
  };
  std::vector<Frame> frames_;
};

}  // namespace

KernelSource print_kernel(const ForNode* root, const std::string& name, const KernelAnalysis& analysis,
                          const VarRanges& host_ranges, const NameTable& globals, HelperSet& helpers,
                          const CudaOptions& options) {
  return KernelPrinter(analysis, host_ranges, globals, helpers, options).run(root, name);
}

}  // namespace te::cuda
