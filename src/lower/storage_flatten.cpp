// Pass "storage_flatten": multi-dimensional accesses become one row-major index. Argument
// buffers keep their shapes (the callers' arrays); an intermediate buffer gets a flat
// shape covering the region bound inference gave it, and its indices are taken relative
// to the region's start. A region size that depends only on loop variables of constant
// ranges becomes its constant upper bound. A stage's storage_align pads the strides of its
// buffer: stride[d] becomes the smallest value >= the row-major one that is offset
// modulo factor.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <set>

#include "lower/loop_bounds.h"
#include "lower/passes.h"

namespace te::lowering {

namespace {

// Flat indices are computed in the extents' type: an int32 buffer of more than 2^31 - 1
// elements would wrap them (reading the wrong elements). Refused while lowering.
void check_index_range(const std::string& name, const std::vector<Expr>& dims) {
  __int128 total = 1;
  std::string text;
  for (const Expr& d : dims) {
    const int64_t* c = as_const_int(d);
    if (!c || d.dtype().bits() > 32) return;
    total *= std::max<int64_t>(*c, 0);
    text += (text.empty() ? "" : " x ") + std::to_string(*c);
    if (total > INT32_MAX)
      throw Error(
          fmt::format("lower: buffer '{}' has more than {} elements ({}), beyond what int32 indices "
                      "reach; give its extents as int64 (make_const(Int(64), ...)) or split the data",
                      name, INT32_MAX, text));
  }
}

class Flattener : public IRMutator {
 public:
  Flattener(const LowerContext& ctx, const Stmt& s)
      : ctx_(ctx), bounds_(loop_var_bounds(s, ctx.known)), constant_loops_(loop_var_bounds(s, {}, false)) {
    for (const auto& st : ctx.sched.get()->stages) {
      if (st->swizzle_bytes != 0)
        for (const Buffer& b : ctx.buffers_of(st->op.get())) swizzles_[b.get()] = st->swizzle_bytes;
      if (st->storage_align.empty()) continue;
      const std::vector<Buffer> buffers = ctx.buffers_of(st->op.get());
      for (size_t i = 0; i < buffers.size(); ++i) {
        std::vector<StorageAlign> aligns = st->storage_align;
        // A row reduction's row values (max, sum) end at the row axes: the alignment of
        // the last of those pads the element rows (acc), not the row values' own stride 1.
        if (static_cast<int>(i) < st->op->row_outputs) {
          const int last = static_cast<int>(st->op->row_shape.size()) - 1;
          aligns.erase(
              std::remove_if(aligns.begin(), aligns.end(), [&](const StorageAlign& a) { return a.dim == last; }),
              aligns.end());
        }
        aligns_[buffers[i].get()] = aligns;
        aligned_stage_[buffers[i].get()] = st->op->name;
      }
    }
  }

  const std::map<const BufferNode*, Buffer>& flat_buffers() const { return flat_; }

 protected:
  Expr mutate_load(const Expr& e, const LoadNode* n) override {
    Expr r = IRMutator::mutate_load(e, n);
    const auto* ln = r.as<LoadNode>();
    return load(flat_buffer(ln->buffer), {flat_index(ln->buffer, ln->indices)}, ln->predicate);
  }

  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    Stmt r = IRMutator::mutate_store(s, n);
    const auto* sn = r.as<StoreNode>();
    return store_like(*sn, flat_buffer(sn->buffer), sn->value, {flat_index(sn->buffer, sn->indices)}, sn->predicate);
  }

 private:
  bool is_param(const Buffer& b) const { return ctx_.params.count(b.get()) != 0; }
  // A buffer lowering made itself, already flat (a cross-thread reduction's accumulator).
  bool made_flat(const Buffer& b) const { return !is_param(b) && ctx_.realize.count(b.get()) == 0; }

  // True if every variable of e is a loop variable with a constant range.
  bool only_constant_loops(const Expr& e) const {
    struct Check : IRVisitor {
      const VarBounds* vars;
      bool ok = true;
      void visit_var(const VarNode* n) override { ok = ok && vars->count(n); }
    } c;
    c.vars = &constant_loops_;
    c.visit(e);
    return c.ok;
  }

  const std::vector<Range>& region(const Buffer& b) const {
    auto it = ctx_.realize.find(b.get());
    TE_ICHECK(it != ctx_.realize.end(), "storage_flatten: buffer without a region");
    return it->second;
  }

  Buffer flat_buffer(const Buffer& b) {
    if (is_param(b) || made_flat(b)) return b;
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    std::vector<Expr> extents;
    for (const Range& r : region(b)) extents.push_back(simplify(r.extent, bounds_));
    check_index_range(b.name(), extents);
    Expr size = make_const(Int(32), 1);
    if (aligns_.count(b.get()) && !extents.empty()) {
      size = strides(b)[0] * region(b)[0].extent;
      check_index_range(b.name(), {simplify(size, bounds_)});
    } else {
      for (const Range& r : region(b)) size = size * r.extent;
    }
    size = simplify(size, bounds_);
    Interval iv;
    if (!as_const_int(size) && only_constant_loops(size) && const_bounds(size, constant_loops_, &iv))
      size = make_const(size.dtype(), iv.max);
    const int swizzle = swizzles_.count(b.get()) ? swizzles_.at(b.get()) : 0;
    int64_t blocks_row = 0;
    if (swizzle != 0) {
      check_swizzled_size(b, size, swizzle);
      blocks_row = column_block_row(b, extents, size, swizzle);
    }
    Buffer flat(b.name(), b.dtype(), {size}, b.scope(), swizzle, blocks_row);
    flat_[b.get()] = flat;
    return flat;
  }

  // A swizzle moves 16-byte chunks within each 8-row pattern (8 x swizzle bytes): the
  // buffer must hold whole patterns, so every chunk has its place.
  static void check_swizzled_size(const Buffer& b, const Expr& elements, int swizzle) {
    const int64_t* n = as_const_int(elements);
    const int64_t pattern = 8 * int64_t(swizzle);
    if (n == nullptr || (*n * b.dtype().bytes()) % pattern != 0)
      throw Error(
          fmt::format("lower: buffer '{}' is swizzled ({} bytes) but holds {} elements of {} bytes: a swizzled "
                      "buffer is a whole number of {}-byte patterns (8 rows of {} bytes)",
                      b.name(), swizzle, to_string(elements), b.dtype().bytes(), pattern, swizzle));
  }

  // A swizzled buffer whose rows are wider than the swizzle is kept in column blocks
  // (BufferNode::swizzle_row): its rows must be whole blocks, each a whole number of
  // 8-row patterns. Returns the row length then, 0 for rows within the swizzle.
  int64_t column_block_row(const Buffer& b, const std::vector<Expr>& extents, const Expr& size, int swizzle) {
    if (extents.size() < 2) return 0;
    const Expr row = aligns_.count(b.get()) ? strides(b)[extents.size() - 2] : extents.back();
    const int64_t* c = as_const_int(row);
    const int64_t bytes = b.dtype().bytes();
    if (c == nullptr || *c * bytes <= swizzle) return 0;
    const int64_t rows = *as_const_int(size) / *c;
    if (*c * bytes % swizzle != 0 || rows % 8 != 0)
      throw Error(
          fmt::format("lower: buffer '{}' is swizzled ({} bytes) with rows of {} bytes, wider than the swizzle: such "
                      "a buffer is kept in column blocks of {} bytes, so its rows must be a multiple of {} bytes and "
                      "its row count ({}) a multiple of 8",
                      b.name(), swizzle, *c * bytes, swizzle, swizzle, rows));
    return *c;
  }

  Expr flat_index(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.empty()) return make_const(Int(32), 0);
    if (made_flat(b)) {
      TE_ICHECK(indices.size() == 1, "storage_flatten: a lowering-made buffer with several indices");
      return indices[0];
    }
    bool param = is_param(b);
    if (param && checked_.insert(b.get()).second) check_index_range(b.name(), b.shape());
    if (param && indices.size() == 1) return indices[0];
    if (!param && aligns_.count(b.get())) {
      const std::vector<Expr>& stride = strides(b);
      Expr idx;
      for (size_t d = 0; d < indices.size(); ++d) {
        Expr term = (indices[d] - region(b)[d].min) * stride[d];
        idx = d == 0 ? term : idx + term;
      }
      return simplify(idx, bounds_);
    }
    Expr idx;
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr rel = param ? indices[d] : indices[d] - region(b)[d].min;
      Expr ext = param ? b.shape()[d] : region(b)[d].extent;
      idx = d == 0 ? rel : idx * ext + rel;
    }
    return simplify(idx, bounds_);
  }

  // Row-major strides over the buffer's region, padded where its stage asked.
  const std::vector<Expr>& strides(const Buffer& b) {
    auto cached = strides_.find(b.get());
    if (cached != strides_.end()) return cached->second;
    const std::vector<Range>& reg = region(b);
    const size_t n = reg.size();
    std::vector<Expr> stride(n);
    for (size_t d = n; d-- > 0;) {
      Expr natural = d + 1 == n ? make_const(reg[d].extent.dtype(), 1) : stride[d + 1] * reg[d + 1].extent;
      stride[d] = simplify(natural, bounds_);
      for (const StorageAlign& a : aligns_.at(b.get())) {
        if (a.dim < 0 || static_cast<size_t>(a.dim) >= n)
          throw Error(
              fmt::format("lower: stage '{}' aligns dimension {} of its buffer, which has {} (did "
                          "rfactor change its shape?)",
                          aligned_stage_.at(b.get()), a.dim, n));
        if (static_cast<size_t>(a.dim) != d) continue;
        // The smallest v >= natural with v % factor == offset (natural >= 1 > offset - factor).
        DataType t = stride[d].dtype();
        Expr f = make_const(t, a.factor), o = make_const(t, a.offset);
        stride[d] = simplify((stride[d] - o + f - make_const(t, 1)) / f * f + o, bounds_);
      }
    }
    return strides_[b.get()] = stride;
  }

  const LowerContext& ctx_;
  std::map<const BufferNode*, std::vector<StorageAlign>> aligns_;
  std::map<const BufferNode*, std::string> aligned_stage_;
  std::map<const BufferNode*, std::vector<Expr>> strides_;
  VarBounds bounds_;          // with the shape variables' assumed bounds: for indices
  VarBounds constant_loops_;  // loops of constant ranges only: for sizes
  std::map<const BufferNode*, Buffer> flat_;
  std::map<const BufferNode*, int> swizzles_;  // Stage::swizzle of each stage's buffers
  std::set<const BufferNode*> checked_;
};

}  // namespace

Stmt storage_flatten(const Stmt& s, LowerContext& ctx) {
  Flattener f(ctx, s);
  Stmt out = f.mutate(s);
  for (const auto& [tensor_buffer, flat] : f.flat_buffers()) ctx.flat_buffers[tensor_buffer] = flat;
  return out;
}

}  // namespace te::lowering
