#include "codegen_cuda_src/kernel_analysis.h"

#include <fmt/format.h>

#include <map>

#include "codegen_cuda_src/index_check.h"
#include "codegen_cuda_src/stmt_util.h"
#include "codegen_cuda_src/tensor_intrinsics.h"
#include "expr/analysis.h"
#include "expr/buffer_util.h"
#include "expr/reads_memory.h"
#include "te/simplify.h"
#include "te/error.h"
#include "te/tensorize.h"

namespace te::cuda {

namespace {

bool reads_buffer(const Expr& e, const Buffer& b) {
  struct Finder : IRVisitor {
    const Buffer& target;
    bool found = false;
    explicit Finder(const Buffer& t) : target(t) {}
    void visit_load(const LoadNode* n) override {
      if (n->buffer.same_as(target) || n->buffer.name() == target.name()) found = true;
      IRVisitor::visit_load(n);
    }
  } f(b);
  f.visit(e);
  return f.found;
}

// The product of the upper bounds of a buffer's extents, saturated at kUnbounded.
int64_t max_elements(const Buffer& b, const VarRanges& ranges) {
  auto extent_hi = [&ranges](const Expr& d) -> std::optional<int64_t> { return math_range(d, ranges).hi; };
  return product_of_extents(b, extent_hi, ValueRange::kUnbounded).value_or(ValueRange::kUnbounded);
}

class Analyzer : public IRVisitor {
 public:
  Analyzer(const std::string& kernel, const HostVars& host_vars, const VarRanges& ranges)
      : kernel_(kernel), host_vars_(host_vars), ranges_(ranges) {}

  KernelAnalysis result;
  bool may_exceed_int32 = false;

  void run(const ForNode* root) {
    collect_tma_destinations(root);
    visit_for(root);
    check_warp_buffers();
    place_producer_warpgroup();
    place_tma_barriers();
    int64_t threads = 1;
    bool constant = true;
    for (int d = 0; d < 3; ++d) {
      if (!result.block[d].defined()) continue;
      if (const int64_t* c = as_const_int(result.block[d]))
        threads *= *c;
      else
        constant = false;
    }
    if (constant && threads > kMaxThreadsPerBlock)
      throw Error(fmt::format("CUDA: kernel '{}' has {} threads per block ({}); the limit is {}", kernel_, threads,
                              block_text(), kMaxThreadsPerBlock));
    // Block-level code runs in every thread of the block: a store that reads what it
    // writes (an accumulation) would be applied once per thread, racing.
    if ((!constant || threads > 1) && !racy_stores_.empty())
      throw Error(
          fmt::format("CUDA: in kernel '{}', the store to '{}' runs outside every threadIdx loop and "
                      "reads '{}' itself, so every thread of the block would update it: bind its "
                      "loops to threadIdx or compute it in a kernel of its own",
                      kernel_, racy_stores_.front(), racy_stores_.front()));
  }

 protected:
  void visit_var(const VarNode* n) override { use_var(n); }

  void visit_let(const LetNode* n) override {
    visit(n->value);
    note_let(data_vars_, n->var.get(), n->value);
    bind(n->var.get(), math_range(n->value, ranges_), depends_on_threads(n->value));
    visit(n->body);
  }

  void visit_load(const LoadNode* n) override {
    refuse_element_access(n->buffer, "reads");
    use_buffer(n->buffer, false);
    use_extents_if_checked(n->buffer, n->indices);
    IRVisitor::visit_load(n);
  }

  void visit_store(const StoreNode* n) override {
    refuse_element_access(n->buffer, "writes");
    use_buffer(n->buffer, true);
    use_extents_if_checked(n->buffer, n->indices);
    if (thread_loops_ == 0 && lane_nest_depth_ == 0 && reads_buffer(n->value, n->buffer))
      racy_stores_.push_back(n->buffer.name());
    IRVisitor::visit_store(n);
  }

  void visit_let_stmt(const LetStmtNode* n) override {
    visit(n->value);
    note_let(data_vars_, n->var.get(), n->value);
    bind(n->var.get(), math_range(n->value, ranges_), depends_on_threads(n->value));
    visit(n->body);
  }

  void visit_for(const ForNode* n) override {
    if (lane_nest_depth_ == 0 && n->for_kind != ForKind::ThreadBinding && !inside_lanes() && is_fragment_nest(n)) {
      lane_nest_roots_.push_back(n);  // planned once every fragment layout is known
      ++lane_nest_depth_;
      visit_for(n);
      --lane_nest_depth_;
      return;
    }
    visit(n->min);
    if (n->for_kind != ForKind::ThreadBinding) {
      visit(n->extent);
      bool divergent = depends_on_threads(n->min) || depends_on_threads(n->extent);
      check_index_range(n);
      bind(n->var.get(), loop_var_range(n->min, n->extent, ranges_), divergent);
      if (divergent) divergent_.push_back(fmt::format("loop '{}', whose bounds depend", n->var.name()));
      visit(n->body);
      if (divergent) divergent_.pop_back();
      return;
    }
    ThreadTag tag = parse_thread_tag(n->thread_tag, n->var.name());
    for (const auto& [outer_tag, outer_var] : enclosing_tags_) {
      if (outer_tag == n->thread_tag)
        throw Error(
            fmt::format("CUDA: in kernel '{}', loop '{}' binds {} inside loop '{}', which binds it "
                        "already",
                        kernel_, n->var.name(), n->thread_tag, outer_var));
      if (tag.is_block && outer_tag.rfind("threadIdx.", 0) == 0)
        throw Error(
            fmt::format("CUDA: in kernel '{}', {} loop '{}' is inside {} loop '{}': block loops must "
                        "enclose thread loops",
                        kernel_, n->thread_tag, n->var.name(), outer_tag, outer_var));
    }
    for (const Var& var : free_vars(n->extent)) {
      const VarNode* v = var.get();
      if (bound_.count(v))
        throw Error(
            fmt::format("CUDA: in kernel '{}', the extent {} of {} loop '{}' depends on '{}', which is "
                        "bound inside the kernel: launch sizes must be known before the launch",
                        kernel_, to_string(n->extent), n->thread_tag, n->var.name(), v->name));
      if (!host_vars_.count(v)) use_var(v);  // reports the undefined variable
    }
    record_extent(tag, n);
    check_index_range(n);
    bind(n->var.get(), loop_var_range(n->min, n->extent, ranges_), !tag.is_block);
    enclosing_tags_.emplace_back(n->thread_tag, n->var.name());
    thread_loops_ += !tag.is_block;
    visit(n->body);
    thread_loops_ -= !tag.is_block;
    enclosing_tags_.pop_back();
  }

  // The group a warp's or warpgroup's intrinsic runs in, in words.
  static std::string group_text(int threads) {
    return threads == 32 ? "a warp's 32 lanes" : "a warpgroup's 128 threads";
  }

  // A warp's or warpgroup's intrinsic: its operands (the body is only the declaration,
  // for interpret()).
  void visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n) override {
    if (is_tma_load(n)) return visit_tma_load(n);
    const CudaIntrinsic* spec = cuda_intrinsic(n);
    TE_ICHECK(spec != nullptr, "CUDA: an intrinsic check_tensor_intrinsics did not refuse");
    const std::string& name = n->intrinsic->name;
    const std::string group = group_text(spec->threads);
    for (const auto& [tag, var] : enclosing_tags_)
      if (tag == "threadIdx.x")
        throw Error(fmt::format(
            "CUDA: in kernel '{}', tensor intrinsic '{}' is inside threadIdx.x loop '{}': {} run it together "
            "(threadIdx.x is the {}), so compute its stage outside every threadIdx.x loop, under threadIdx.y/z "
            "loops that pick the {}",
            kernel_, name, var, group, spec->threads == 32 ? "lane" : "thread's place in it",
            spec->threads == 32 ? "warp" : "warpgroup"));
    if (!divergent_.empty())
      throw Error(
          fmt::format("CUDA: in kernel '{}', tensor intrinsic '{}' is inside {} on threadIdx: {} must all run it",
                      kernel_, name, divergent_.back(), group));
    if (warp_intrinsic_.empty()) {
      warp_intrinsic_ = name;
      group_threads_ = spec->threads;
    } else if (group_threads_ != spec->threads) {
      throw Error(fmt::format(
          "CUDA: kernel '{}' runs tensor intrinsic '{}' ({}) and '{}' ({}): its threadIdx.x extent cannot be "
          "both; split them into two kernels",
          kernel_, warp_intrinsic_, group_text(group_threads_), name, group));
    }
    const TensorIntrinsicNode& in = *n->intrinsic;
    for (size_t k = 0; k < spec->operands.size(); ++k) {
      const Buffer& b = n->buffers[k];
      const Fragment f = spec->operands[k];
      visit(n->offsets[k]);
      for (const Expr& s : n->strides[k]) visit(s);
      const std::string what = fmt::format("tensor intrinsic '{}' takes its declaration's '{}'", name,
                                           k < in.inputs.size() ? in.inputs[k].name() : in.output.name());
      if (f == Fragment::KMajorShared) {
        check_k_major_tile(b, n->strides[k][0], n->offsets[k], what);
        use_buffer(b, false);
        continue;
      }
      if (f == Fragment::MNMajorShared) {
        const Tensor& operand = in.inputs[k];
        check_mn_major_tile(b, n->strides[k][0], n->offsets[k], *as_const_int(operand.shape()[1]), what);
        use_buffer(b, false);
        continue;
      }
      if (f == Fragment::Memory) {
        if (b.swizzle_bytes() != 0)
          throw Error(
              fmt::format("CUDA: in kernel '{}', {} from '{}', which is swizzled ({} bytes, Stage::swizzle); "
                          "this intrinsic reads rows of plain strides, so leave that buffer unswizzled",
                          kernel_, what, b.name(), b.swizzle_bytes()));
        if (per_thread_scope(b.scope()) && b.scope() != MemoryScope::Local)
          throw Error(
              fmt::format("CUDA: in kernel '{}', {} from memory, but '{}' is a {} fragment (scope "
                          "\"{}\"); stage it through shared or global memory",
                          kernel_, what, b.name(), scope_name(b.scope()), scope_name(b.scope())));
        use_buffer(b, k + 1 == spec->operands.size());
        continue;
      }
      const MemoryScope scope = fragment_scope(f);
      if (b.scope() != scope)
        throw Error(
            fmt::format("CUDA: in kernel '{}', {} as a {} fragment (\"{}\"), but '{}' is in {} memory; "
                        "give it scope \"{}\" (cache_read / cache_write with \"{}\")",
                        kernel_, what, scope_name(scope), fragment_name(f), b.name(), scope_name(b.scope()),
                        scope_name(scope), scope_name(scope)));
      const FragmentShape& fs = spec->shapes[k];
      const int64_t* row = as_const_int(n->strides[k][0]);
      if (row == nullptr || *row % fs.cols != 0)
        throw Error(fmt::format(
            "CUDA: in kernel '{}', {} as a {} x {} fragment of '{}', whose rows are {} "
            "elements long: a {} buffer's rows must be a constant multiple of {}",
            kernel_, what, fs.rows, fs.cols, b.name(), to_string(n->strides[k][0]), scope_name(scope), fs.cols));
      FragmentLayout layout{f, fs, *row, false, name};
      auto [it, inserted] = warp_layouts_.emplace(b.get(), layout);
      if (!inserted && (it->second.kind != f || it->second.row != *row || it->second.shape.cols != fs.cols))
        throw Error(fmt::format(
            "CUDA: in kernel '{}', {} buffer '{}' is a \"{}\" {} x {} fragment with rows of {} for "
            "'{}' but a \"{}\" {} x {} fragment with rows of {} for '{}'; threads hold the two "
            "differently",
            kernel_, scope_name(scope), b.name(), fragment_name(it->second.kind), it->second.shape.rows,
            it->second.shape.cols, it->second.row, it->second.origin, fragment_name(f), fs.rows, fs.cols, *row, name));
    }
  }

  // The shared buffers TMA fills, before the walk: their allocations need its alignment.
  void collect_tma_destinations(const ForNode* root) {
    struct Finder : IRVisitor {
      std::vector<Buffer>* found;
      void run(const ForNode* r) { visit_for(r); }
      void visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n) override {
        if (!is_tma_load(n)) return;
        for (const Buffer& b : *found)
          if (b.same_as(n->buffers[1]) || b.name() == n->buffers[1].name()) return;
        found->push_back(n->buffers[1]);
      }
    } finder;
    finder.found = &result.tma_destinations;
    finder.run(root);
    if (result.tma_destinations.size() > static_cast<size_t>(kMaxTmaDestinations))
      throw Error(fmt::format("CUDA: kernel '{}' fills {} shared buffers by TMA; te gives a kernel at most {}", kernel_,
                              result.tma_destinations.size(), kMaxTmaDestinations));
  }

  // A TMA copy: a box of a dense global matrix into a dense (or swizzled) shared tile,
  // issued once for the whole block.
  void visit_tma_load(const TensorIntrinsicCallNode* n) {
    const std::string& name = n->intrinsic->name;
    const Buffer &src = n->buffers[0], &dst = n->buffers[1];
    const TmaMap m = tma_map_of(n);
    const auto [box_rows, box_cols] = tma_box_of(n);
    for (size_t k = 0; k < 2; ++k) {
      visit(n->offsets[k]);
      for (const Expr& e : n->strides[k]) visit(e);
    }
    auto fail = [&](const std::string& why) {
      throw Error(fmt::format("CUDA: in kernel '{}', TMA copy '{}' from '{}' into '{}': {}", kernel_, name, src.name(),
                              dst.name(), why));
    };
    if (src.scope() != MemoryScope::Global)
      fail(fmt::format("the source is a {} buffer; TMA copies from global memory (a tile of a parameter)",
                       scope_name(src.scope())));
    if (dst.scope() != MemoryScope::Shared)
      fail(fmt::format("the destination is a {} buffer; TMA copies into shared memory (cache_read with \"shared\")",
                       scope_name(dst.scope())));
    const Expr cols = tma_matrix_cols(src);
    // (A box of one row has no row stride: the matcher passes 0.)
    if (box_rows > 1 && !can_prove(n->strides[0][0] == cols))
      fail(
          fmt::format("the box's rows are {} elements apart, but TMA sees '{}' as rows of its last dimension ({}); "
                      "copy a tile of consecutive rows",
                      to_string(n->strides[0][0]), src.name(), to_string(cols)));
    if (const int64_t* c = as_const_int(cols); c != nullptr && *c * src.dtype().bytes() % 16 != 0)
      fail(fmt::format("'{}' has rows of {} bytes; a tensor map's rows are a multiple of 16 bytes apart", src.name(),
                       *c * src.dtype().bytes()));
    const int64_t* dst_row = as_const_int(n->strides[1][0]);
    if (box_rows > 1 && (dst_row == nullptr || *dst_row != box_cols))
      fail(
          fmt::format("the box lands in rows {} elements apart; TMA writes its {} columns densely, so the shared "
                      "tile's rows must be {} elements long",
                      to_string(n->strides[1][0]), box_cols, box_cols));
    const int64_t row_bytes = int64_t{box_cols} * dst.dtype().bytes();
    if (m.swizzle != 0 && dst.swizzle_row() == 0 && row_bytes != m.swizzle)
      fail(
          fmt::format("'{}' is swizzled by {} bytes but the box's rows are {} bytes; TMA swizzles rows of exactly "
                      "the swizzle's width, or a multiple of it in a buffer of that many columns (column blocks)",
                      dst.name(), m.swizzle, row_bytes));
    if (dst.swizzle_row() != 0 && dst.swizzle_row() != box_cols)
      fail(
          fmt::format("'{}' is kept in column blocks of rows of {} elements, but the box's rows are {}; TMA fills "
                      "whole rows of such a buffer",
                      dst.name(), dst.swizzle_row(), box_cols));
    for (size_t k = 0; k < 2; ++k)
      if (depends_on_threads(n->offsets[k]))
        fail(fmt::format("where it copies ({}) depends on threadIdx; one thread issues the copy for the whole block",
                         to_string(n->offsets[k])));
    if (!divergent_.empty())
      fail(fmt::format("it is inside {} on threadIdx; the whole block runs the copy together", divergent_.back()));
    if (n->producer && result.warp_specialization && !(*n->producer == *result.warp_specialization))
      fail(
          fmt::format("its stage gives the producer and consumer warpgroups {} and {} registers, another "
                      "warp-specialized stage of the kernel {} and {}; give them the same (warp_specialize)",
                      n->producer->producer_registers, n->producer->consumer_registers,
                      result.warp_specialization->producer_registers, result.warp_specialization->consumer_registers));
    if (n->producer) {
      result.warp_specialization = n->producer;
      if (producer_copy_.empty()) producer_copy_ = dst.name();
    } else if (block_copy_.empty()) {
      block_copy_ = dst.name();
    }
    const DataType t = n->offsets[1].dtype();
    // Each block's box starts on a pattern boundary: its first row is a multiple of 8.
    const int64_t align = m.swizzle ? 8 * (dst.swizzle_row() ? row_bytes : m.swizzle) : kTmaDestinationAlignment;
    if (!can_prove(n->offsets[1] * make_const(t, dst.dtype().bytes()) % make_const(t, align) == make_zero(t),
                   var_bounds_of(n->offsets[1], ranges_)))
      fail(fmt::format("it lands at element {} of '{}', which is not on a {}-byte boundary ({})",
                       to_string(n->offsets[1]), dst.name(), align,
                       m.swizzle ? "the swizzle pattern's 8 rows" : "as cp.async.bulk.tensor needs"));
    use_buffer(src, false);
    use_buffer(dst, true);
    for (const Expr& d : src.shape())
      for (const Var& v : free_vars(d))
        if (host_vars_.count(v.get())) use_var(v.get());  // the copy's bounds
    for (const TmaMap& seen : result.tma_maps)
      if (seen.same_as(m)) return;
    result.tma_maps.push_back(m);
  }

  // A warp-specialized kernel: its threads (128 along x, the warpgroups along y) are the
  // consumers; one more warpgroup along y is the producer. Every TMA copy is the
  // producer's, and the registers setmaxnreg moves fit the multiprocessor's.
  void place_producer_warpgroup() {
    if (!result.warp_specialization) return;
    auto fail = [&](const std::string& why) {
      throw Error(
          fmt::format("CUDA: kernel '{}' is warp-specialized (Stage::warp_specialize of the stage filling '{}'), "
                      "but {}",
                      kernel_, producer_copy_, why));
    };
    if (!block_copy_.empty())
      fail(
          fmt::format("its TMA copy into '{}' is not; a producer warpgroup issues all of a kernel's TMA copies or "
                      "none (warp-specialize that stage too)",
                      block_copy_));
    const int64_t* x = result.block[0].defined() ? as_const_int(result.block[0]) : nullptr;
    if (x == nullptr || *x != 128)
      fail(
          fmt::format("its threadIdx.x extent is {}; the producer and consumers are warpgroups, so bind loops of "
                      "exactly 128 to threadIdx.x (one consumer warpgroup per threadIdx.y)",
                      result.block[0].defined() ? to_string(result.block[0]) : std::string("1 (none bound)")));
    if (result.block[2].defined() && !is_one(result.block[2]))
      fail(fmt::format("it binds threadIdx.z ({}); the consumer warpgroups are threadIdx.y, the producer one more",
                       to_string(result.block[2])));
    const int64_t* y = result.block[1].defined() ? as_const_int(result.block[1]) : nullptr;
    if (result.block[1].defined() && y == nullptr)
      fail(fmt::format("its threadIdx.y extent {} is not a constant; the producer warpgroup comes after the consumers",
                       to_string(result.block[1])));
    result.consumer_warpgroups = y ? *y : 1;
    result.block[1] = make_const(Int(32), result.consumer_warpgroups + 1);
    if (result.warp_specialization->producer_registers == WarpSpecialization::kBalanced)
      result.warp_specialization = WarpSpecialization::balanced(static_cast<int>(result.consumer_warpgroups));
    check_register_split(fail);
  }

  // setmaxnreg moves registers inside the block: the producer gives back down to its
  // count, the consumers take theirs from what it gave (the CTA's pool), never from the
  // multiprocessor's free ones; a request the pool cannot meet waits forever.
  template <typename Fail>
  void check_register_split(const Fail& fail) const {
    const WarpSpecialization& ws = *result.warp_specialization;
    const int64_t consumers = result.consumer_warpgroups;
    const int64_t threads = 128 * (consumers + 1);
    const int launch = WarpSpecialization::launch_registers(threads);
    const int producer = ws.producer_registers ? ws.producer_registers : launch;
    const int consumer = ws.consumer_registers ? ws.consumer_registers : launch;
    const std::string start =
        fmt::format("its {} threads launch with {} registers each (ptxas's __launch_bounds__ cap)", threads, launch);
    const WarpSpecialization fits = WarpSpecialization::balanced(static_cast<int>(consumers));
    const std::string advice = fmt::format("; give warp_specialize WarpSpecialization::balanced({}) = {{{}, {}}}",
                                           consumers, fits.producer_registers, fits.consumer_registers);
    if (producer > launch)
      fail(fmt::format("{}, fewer than its producer warpgroup's {}: setmaxnreg.dec cannot raise them{}", start,
                       producer, advice));
    if (consumer < launch)
      fail(fmt::format("{}, more than its consumer warpgroups' {}: setmaxnreg.inc cannot lower them{}", start, consumer,
                       advice));
    const int64_t released = 128 * int64_t{launch - producer};
    const int64_t asked = 128 * consumers * int64_t{consumer - launch};
    if (asked > released)
      fail(
          fmt::format("{}; its {} consumer warpgroups at {} ask {} registers more, its producer warpgroup at {} "
                      "releases {}, and setmaxnreg.inc takes only what the block released: it would wait forever{}",
                      start, consumers, consumer, asked, producer, released, advice));
  }

  // TMA's mbarriers go after the buffers, in dynamic shared memory (where the emulation
  // and the copies address shared memory): a "full" one per destination, and with warp
  // specialization an "empty" one after them.
  void place_tma_barriers() {
    if (result.tma_destinations.empty()) return;
    result.tma_barrier_offset = (result.shared_bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
    result.shared_bytes = result.tma_barrier_offset + kTmaBarrierBytes *
                                                          static_cast<int64_t>(result.tma_destinations.size()) *
                                                          (result.warp_specialization ? 2 : 1);
    result.dynamic_shared = true;
    if (result.shared_bytes > kMaxDynamicSharedBytes)
      throw Error(
          fmt::format("CUDA: kernel '{}' needs {} bytes of shared memory with its TMA mbarriers; a block has "
                      "at most {} bytes (227 KiB, sm_90)",
                      kernel_, result.shared_bytes, kMaxDynamicSharedBytes));
  }

  // wgmma's operand: a K-major tile of a shared buffer swizzled by w bytes, whose rows
  // (the tile's stride) are exactly w bytes, or which is kept in column blocks of w bytes
  // (rows wider than the swizzle, BufferNode::swizzle_row) with the tile's 16 columns in
  // one block from a row that is a multiple of 8: either way one matrix descriptor (rows
  // w bytes apart) describes it.
  void check_k_major_tile(const Buffer& b, const Expr& stride, const Expr& offset, const std::string& what) const {
    if (b.scope() != MemoryScope::Shared || b.swizzle_bytes() == 0)
      throw Error(
          fmt::format("CUDA: in kernel '{}', {} from '{}', a {}{} buffer; wgmma reads K-major tiles of swizzled "
                      "shared buffers (cache_read with \"shared\", then Stage::swizzle of its row bytes)",
                      kernel_, what, b.name(), b.swizzle_bytes() ? "swizzled " : "", scope_name(b.scope())));
    const int64_t w = b.swizzle_bytes() / b.dtype().bytes();
    const int64_t* row = as_const_int(stride);
    if (row == nullptr || (b.swizzle_row() == 0 ? *row != w : *row != b.swizzle_row()))
      throw Error(
          fmt::format("CUDA: in kernel '{}', {} from '{}', whose rows are {} elements of {} bytes, but it is "
                      "swizzled by {} bytes: wgmma's tiles need rows of exactly the swizzle's width ({} elements), "
                      "or whole column blocks of it",
                      kernel_, what, b.name(), to_string(stride), b.dtype().bytes(), b.swizzle_bytes(), w));
    if (b.swizzle_row() == 0) return;
    const DataType t = offset.dtype();
    const Expr r = make_const(t, *row);
    if (!can_prove(offset % r % make_const(t, 16) == make_zero(t) && offset / r % make_const(t, 8) == make_zero(t),
                   var_bounds_of(offset, ranges_)))
      throw Error(
          fmt::format("CUDA: in kernel '{}', {} from '{}' at element {}: a K-major tile of a buffer kept in column "
                      "blocks starts at a row that is a multiple of 8 and a column that is a multiple of 16",
                      kernel_, what, b.name(), to_string(offset)));
  }

  // wgmma's MN-major operand: a K x n tile of a swizzled shared buffer kept in column
  // blocks of the swizzle's width (or whose rows are that width), covering whole blocks
  // from the first row of a block's 8-row pattern, so one descriptor (block distance,
  // 8-row distance) describes it.
  void check_mn_major_tile(const Buffer& b, const Expr& stride, const Expr& offset, int64_t cols,
                           const std::string& what) const {
    if (b.scope() != MemoryScope::Shared || b.swizzle_bytes() == 0)
      throw Error(fmt::format(
          "CUDA: in kernel '{}', {} from '{}', a {}{} buffer; wgmma reads MN-major tiles of swizzled shared buffers "
          "(cache_read with \"shared\", then Stage::swizzle)",
          kernel_, what, b.name(), b.swizzle_bytes() ? "swizzled " : "", scope_name(b.scope())));
    const int64_t w = b.swizzle_bytes() / b.dtype().bytes();
    const int64_t* row = as_const_int(stride);
    if (row == nullptr || (b.swizzle_row() == 0 ? *row != w : *row != b.swizzle_row()))
      throw Error(fmt::format(
          "CUDA: in kernel '{}', {} from '{}', whose rows are {} elements, but a {}-byte swizzle's column blocks "
          "are {} elements wide: wgmma's MN-major tiles are rows of whole column blocks of the buffer",
          kernel_, what, b.name(), to_string(stride), b.swizzle_bytes(), w));
    if (cols % w != 0)
      throw Error(
          fmt::format("CUDA: in kernel '{}', {} from '{}': its {} columns are not whole column blocks of {} "
                      "(the {}-byte swizzle's width)",
                      kernel_, what, b.name(), cols, w, b.swizzle_bytes()));
    const DataType t = offset.dtype();
    const Expr r = make_const(t, *row);
    if (!can_prove(offset % r % make_const(t, w) == make_zero(t) && offset / r % make_const(t, 8) == make_zero(t),
                   var_bounds_of(offset, ranges_)))
      throw Error(
          fmt::format("CUDA: in kernel '{}', {} from '{}' at element {}: an MN-major tile starts a column "
                      "block at a row that is a multiple of 8",
                      kernel_, what, b.name(), to_string(offset)));
  }

  void visit_allocate(const AllocateNode* n) override {
    const Buffer& b = n->buffer;
    if (b.scope() == MemoryScope::Global)
      throw Error(
          fmt::format("CUDA: kernel '{}' allocates global buffer '{}' inside the kernel; allocate it "
                      "outside every blockIdx loop (at the top of the function) instead",
                      kernel_, b.name()));
    for (const Expr& d : b.shape()) {
      if (!as_const_int(d))
        throw Error(
            fmt::format("CUDA: {} buffer '{}' in kernel '{}' has extent {}, which is not a constant: "
                        "CUDA's {} arrays need sizes known at compile time",
                        scope_name(b.scope()), b.name(), kernel_, to_string(d),
                        b.scope() == MemoryScope::Shared ? "__shared__" : "per-thread"));
    }
    // At most kUnbounded bytes: the byte counts below cannot overflow.
    std::optional<int64_t> elements =
        constant_elements(b, ValueRange::kUnbounded / std::max<int64_t>(b.dtype().bytes(), 1));
    if (!elements)
      throw Error(fmt::format("CUDA: {} buffer '{}' in kernel '{}' has more than 2^61 bytes", scope_name(b.scope()),
                              b.name(), kernel_));
    int64_t count = *elements;
    if (b.scope() == MemoryScope::Shared) {
      // Every array starts at a multiple of its alignment (static ones are alignas'd).
      const int64_t bytes = count * b.dtype().bytes(), align = result.shared_alignment(b);
      result.shared_bytes = (result.shared_bytes + align - 1) / align * align;
      result.shared_bytes += (bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
      shared_parts_.push_back(fmt::format("{}: {}", b.name(), bytes));
      if (result.shared_bytes > kMaxDynamicSharedBytes) {
        std::string parts;
        for (const std::string& p : shared_parts_) parts += (parts.empty() ? "" : ", ") + p;
        throw Error(
            fmt::format("CUDA: kernel '{}' needs {} bytes of shared memory ({}); a block has at most "
                        "{} bytes (227 KiB, sm_90)",
                        kernel_, result.shared_bytes, parts, kMaxDynamicSharedBytes));
      }
      swizzled_ |= b.swizzle_bytes() != 0;
      result.dynamic_shared = result.shared_bytes > kMaxStaticSharedBytes || swizzled_;
    }
    may_exceed_int32 |= count > INT32_MAX;
    if (b.scope() == MemoryScope::Warp || b.scope() == MemoryScope::Warpgroup) warp_buffers_.emplace_back(b, count);
    allocated_.insert(b.get());
    allocated_names_.insert(b.name());
    visit(n->body);
  }

  void visit_if_then_else(const IfThenElseNode* n) override {
    visit(n->cond);
    bool divergent = depends_on_threads(n->cond);
    if (divergent) divergent_.push_back(fmt::format("'if ({})', whose condition depends", to_string(n->cond)));
    visit(n->then_case);
    if (n->else_case.defined()) visit(n->else_case);
    if (divergent) divergent_.pop_back();
  }

  void visit_barrier(const BarrierNode*) override {
    if (!divergent_.empty())
      throw Error(
          fmt::format("CUDA: in kernel '{}', a barrier is inside {} on threadIdx: the threads that "
                      "skip it would never reach __syncthreads()",
                      kernel_, divergent_.back()));
  }

 private:
  bool inside_lanes() const {
    for (const auto& [tag, var] : enclosing_tags_)
      if (tag == "threadIdx.x") return true;
    return false;
  }

  void refuse_element_access(const Buffer& b, const char* how) const {
    if (lane_nest_depth_ > 0) return;
    if (b.scope() == MemoryScope::Warp || b.scope() == MemoryScope::Warpgroup)
      throw Error(
          fmt::format("CUDA: kernel '{}' {} {} buffer '{}' element by element; its threads hold it as "
                      "the tensor-core intrinsics lay it out, so only they may access it (tensorize the "
                      "stages that read and write it), or a loop nest at warp level whose lanes each run the "
                      "elements they hold (serial or unrolled loops, lets, conditions and stores only, outside every "
                      "threadIdx.x loop)",
                      kernel_, how, scope_name(b.scope()), b.name()));
  }

  // Warp (warpgroup) fragments need a warp (warpgroup) per threadIdx.y/z: threadIdx.x of
  // 32 (128); a kernel that binds no threadIdx.x loop gets it. Buffers of whole fragments.
  void check_warp_buffers() {
    if (!warp_intrinsic_.empty()) {
      if (!result.block[0].defined()) result.block[0] = make_const(Int(32), group_threads_);
      const int64_t* x = as_const_int(result.block[0]);
      if (x == nullptr || *x != group_threads_)
        throw Error(fmt::format(
            "CUDA: kernel '{}' runs tensor intrinsic '{}', which {} run together, but its threadIdx.x extent is "
            "{}; bind loops of exactly {} to threadIdx.x (e.g. the shared-memory copies' innermost ones), or "
            "none (the kernel then has {} threads along x), so that each threadIdx.y/z is one {}",
            kernel_, warp_intrinsic_, group_text(group_threads_), to_string(result.block[0]), group_threads_,
            group_threads_, group_threads_ == 32 ? "warp" : "warpgroup"));
    }
    std::map<const BufferNode*, int64_t> counts;
    for (const auto& [b, count] : warp_buffers_) counts[b.get()] = count;
    infer_fragment_layouts(lane_nest_roots_, counts, &warp_layouts_);
    for (const ForNode* root : lane_nest_roots_) result.lane_nests[root] = plan_lane_nest(root, warp_layouts_, kernel_);
    result.fragment_layouts = warp_layouts_;
    for (const auto& [b, count] : warp_buffers_) {
      auto it = warp_layouts_.find(b.get());
      if (it == warp_layouts_.end()) continue;  // never accessed
      const FragmentShape& fs = it->second.shape;
      if (!it->second.rows_only && count % (fs.rows * it->second.row) != 0)  // (inference checked rows_only's)
        throw Error(
            fmt::format("CUDA: in kernel '{}', {} buffer '{}' has {} elements, not a whole number of "
                        "rows of {} x {} fragments ({} rows of {}); shape it as whole fragments",
                        kernel_, scope_name(b.scope()), b.name(), count, fs.rows, fs.cols, fs.rows, it->second.row));
    }
  }

  std::string producer_copy_, block_copy_;  // the first TMA destination the producer (the block) fills
  std::string warp_intrinsic_;
  int group_threads_ = 32;  // the threads its intrinsics run in: a warp's 32, a warpgroup's 128
  std::map<const BufferNode*, FragmentLayout> warp_layouts_;
  std::vector<const ForNode*> lane_nest_roots_;
  int lane_nest_depth_ = 0;  // inside a lane nest: its warp-buffer accesses are planned per lane
  std::vector<std::pair<Buffer, int64_t>> warp_buffers_;
  DataVars data_vars_;  // let-bound to values read from memory
  std::string block_text() const {
    std::string s;
    for (int d = 0; d < 3; ++d) {
      if (!result.block[d].defined()) continue;
      s += fmt::format("{}threadIdx.{} = {}", s.empty() ? "" : ", ", kAxes[d], to_string(result.block[d]));
    }
    return s;
  }

  void use_var(const VarNode* v) {
    if (bound_.count(v) || seen_free_.count(v)) return;
    if (!host_vars_.count(v))
      throw Error(
          fmt::format("CUDA: kernel '{}' reads variable '{}', which is neither a parameter of the "
                      "function nor bound by an enclosing loop or let",
                      kernel_, v->name));
    seen_free_.insert(v);
    result.free_vars.push_back(host_vars_.at(v));
  }

  // A checked index is compared with the buffer's size in the kernel
  // (ExprPrinter::checked_index), so a symbolic size's variables become parameters. The
  // ranges here are not the printer's, but they only decide for constant sizes, which
  // need no parameters; the width is not known yet, and not wide is conservative.
  void use_extents_if_checked(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.size() != 1 || !index_needs_check(b, indices[0], data_vars_, ranges_, false)) return;
    for (const Expr& d : b.shape())
      for (const Var& v : free_vars(d))
        if (host_vars_.count(v.get())) use_var(v.get());
  }

  void use_buffer(const Buffer& b, bool write) {
    if (allocated_.count(b.get()) || allocated_names_.count(b.name())) return;
    if (write) result.written.insert(b.name());
    for (const Buffer& seen : result.buffers)
      if (seen.same_as(b) || seen.name() == b.name()) return;
    result.buffers.push_back(b);
    may_exceed_int32 |= max_elements(b, ranges_) > INT32_MAX;
  }

  void bind(const VarNode* v, ValueRange r, bool thread_dependent) {
    bound_.insert(v);
    ranges_[v] = r;
    if (thread_dependent) thread_dependent_.insert(v);
  }

  bool depends_on_threads(const Expr& e) const {
    for (const Var& v : free_vars(e))
      if (thread_dependent_.count(v.get())) return true;
    return false;
  }

  void check_index_range(const ForNode* n) {
    ValueRange r = loop_var_range(n->min, n->extent, ranges_);
    ValueRange end = math_range(n->extent, ranges_);
    may_exceed_int32 |= !r.fits_int32() || end.hi > INT32_MAX || !math_range(n->min, ranges_).fits_int32();
  }

  void record_extent(ThreadTag tag, const ForNode* n) {
    std::array<Expr, 3>& dims = tag.is_block ? result.grid : result.block;
    Expr& seen = dims[tag.dim];
    auto& first_var = tag.is_block ? grid_vars_[tag.dim] : block_vars_[tag.dim];
    if (!seen.defined()) {
      seen = n->extent;
      first_var = n->var.name();
    } else if (!equal(seen, n->extent)) {
      throw Error(
          fmt::format("CUDA: in kernel '{}', {} is bound to different extents: {} (loop '{}') and {} "
                      "(loop '{}'); one launch has one size per axis",
                      kernel_, n->thread_tag, to_string(seen), first_var, to_string(n->extent), n->var.name()));
    }
    if (const int64_t* c = as_const_int(n->extent)) {
      int64_t limit = tag.is_block ? kMaxGridDim[tag.dim] : kMaxBlockDim[tag.dim];
      if (*c > limit)
        throw Error(fmt::format("CUDA: in kernel '{}', {} loop '{}' has extent {}; CUDA allows at most {}", kernel_,
                                n->thread_tag, n->var.name(), *c, limit));
    }
  }

  std::string kernel_;
  const HostVars& host_vars_;
  VarRanges ranges_;
  std::set<const VarNode*> bound_, seen_free_, thread_dependent_;
  std::set<const BufferNode*> allocated_;
  std::set<std::string> allocated_names_;
  std::vector<std::pair<std::string, std::string>> enclosing_tags_;
  std::vector<std::string> shared_parts_, racy_stores_;
  bool swizzled_ = false;               // a swizzled shared buffer: dynamic shared memory, 1024-byte aligned
  std::vector<std::string> divergent_;  // enclosing thread-dependent ifs and loops
  std::string grid_vars_[3], block_vars_[3];
  int thread_loops_ = 0;
};

}  // namespace

int KernelAnalysis::tma_slot(const BufferNode* b) const {
  for (size_t i = 0; i < tma_destinations.size(); ++i)
    if (tma_destinations[i].get() == b || tma_destinations[i].name() == b->name) return static_cast<int>(i);
  return -1;
}

int64_t KernelAnalysis::shared_alignment(const Buffer& b) const {
  if (b.swizzle_bytes() != 0) return kSwizzledAlignment;
  return tma_slot(b) >= 0 ? kTmaDestinationAlignment : kSharedAlignment;
}

ThreadTag parse_thread_tag(const std::string& tag, const std::string& loop_var) {
  for (int d = 0; d < 3; ++d) {
    if (tag == fmt::format("blockIdx.{}", kAxes[d])) return {true, d};
    if (tag == fmt::format("threadIdx.{}", kAxes[d])) return {false, d};
  }
  if (tag == "vthread")
    throw Error(
        fmt::format("CUDA: loop '{}' is bound to vthread, which the CUDA backend does not support; "
                    "bind it to threadIdx or leave it serial",
                    loop_var));
  throw Error(
      fmt::format("CUDA: loop '{}' is bound to unknown thread tag '{}' (expected blockIdx.x|y|z or "
                  "threadIdx.x|y|z)",
                  loop_var, tag));
}

KernelAnalysis analyze_kernel(const ForNode* root, const std::string& kernel_name, const HostVars& host_vars,
                              const VarRanges& host_ranges, CudaOptions::IndexWidth width) {
  ThreadTag tag = parse_thread_tag(root->thread_tag, root->var.name());
  if (!tag.is_block)
    throw Error(
        fmt::format("CUDA: {} loop '{}' is outside every blockIdx loop: a kernel starts at a loop bound "
                    "to blockIdx (bind an outer axis, even of extent 1, to blockIdx.x)",
                    root->thread_tag, root->var.name()));
  Analyzer a(kernel_name, host_vars, host_ranges);
  a.run(root);
  KernelAnalysis r = std::move(a.result);
  r.index_64bit =
      width == CudaOptions::IndexWidth::Int64 || (width == CudaOptions::IndexWidth::Auto && a.may_exceed_int32);
  return r;
}

}  // namespace te::cuda
