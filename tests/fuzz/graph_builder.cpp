#include "graph_builder.h"

#include <fmt/format.h>

namespace te::fuzz {
namespace {

std::string shape_text(const std::vector<Expr>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + to_string(shape[d]);
  return s + "]";
}

Expr constant_extent(int64_t v) { return Expr(static_cast<int>(v)); }

}  // namespace

GraphBuilder::GraphBuilder(Rng& rng, GraphMode mode, DataType dtype, bool gpu, bool symbolic, int max_extent)
    : rng_(rng), mode_(mode), dtype_(dtype), gpu_(gpu), symbolic_(symbolic), max_extent_(max_extent) {}

int GraphBuilder::new_input(std::vector<Expr> shape, std::vector<int64_t> size) {
  std::string name = "A" + std::to_string(inputs_++);
  GraphNode n;
  n.tensor = placeholder(shape, dtype_, name);
  n.shape = std::move(shape);
  n.size = std::move(size);
  n.input = true;
  text_ << name << ": input " << dtype_.to_string() << shape_text(n.shape) << "\n";
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size() - 1);
}

int GraphBuilder::random_input() {
  int rank = static_cast<int>(rng_.range(1, 3));
  std::vector<Expr> shape;
  std::vector<int64_t> size;
  for (int d = 0; d < rank; ++d) {
    int64_t e = rng_.chance(10) ? 1 : rng_.range(2, max_extent_);
    size.push_back(e);
    if (symbolic_ && rng_.chance(50)) {
      Var v("n" + std::to_string(vars_.size()));
      vars_.emplace_back(v, e);
      shape.push_back(v);
    } else {
      shape.push_back(constant_extent(e));
    }
  }
  return new_input(shape, size);
}

int GraphBuilder::pick_producer() {
  if (nodes_.empty() || rng_.chance(15)) return random_input();
  // Mostly the latest tensor: chains of stages are where attach points nest.
  if (rng_.chance(60)) return static_cast<int>(nodes_.size() - 1);
  return static_cast<int>(rng_.below(nodes_.size()));
}

int GraphBuilder::same_shape_partner(int p) {
  std::vector<int> same;
  for (size_t q = 0; q < nodes_.size(); ++q) {
    if (static_cast<int>(q) == p || nodes_[q].size != nodes_[p].size) continue;
    bool eq = true;
    for (size_t d = 0; d < nodes_[q].shape.size(); ++d) eq = eq && equal(nodes_[q].shape[d], nodes_[p].shape[d]);
    if (eq) same.push_back(static_cast<int>(q));
  }
  if (!same.empty() && rng_.chance(60)) return rng_.pick(same);
  return new_input(nodes_[p].shape, nodes_[p].size);
}

Expr GraphBuilder::read(int node, const std::vector<Expr>& idx) {
  Expr x = nodes_[node].tensor(idx);
  if (mode_ == GraphMode::ExactFloat) return min(max(x, make_const(dtype_, -256.0)), make_const(dtype_, 256.0));
  if (gpu_ && mode_ == GraphMode::Int) {
    if (dtype_.is_uint()) return min(x, make_const(dtype_, int64_t{64}));
    return min(max(x, make_const(dtype_, int64_t{-64})), make_const(dtype_, int64_t{64}));
  }
  return x;
}

ExprGen GraphBuilder::make_gen() {
  ExprGenOptions o;
  switch (mode_) {
    case GraphMode::Int:
      if (gpu_) {
        o.small_constants = true;
        o.float_division = false;
        o.transcendental = false;
      }
      break;
    case GraphMode::ExactFloat:
      o.exact_floats_only = true;
      o.small_constants = true;
      o.float_division = false;
      o.transcendental = false;
      break;
    case GraphMode::FmaFloat:
      o.positive_only = true;
      o.lets = false;
      break;
  }
  return ExprGen(rng_, o);
}

int GraphBuilder::add_compute(std::vector<Expr> shape, std::vector<int64_t> size, Tensor t, const std::string& kind) {
  GraphNode n;
  n.tensor = t;
  n.shape = std::move(shape);
  n.size = std::move(size);
  text_ << t.name() << shape_text(n.shape) << " = " << kind << ": " << t.op()->body << "\n";
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size() - 1);
}

void GraphBuilder::add_stage() {
  int p = pick_producer();
  const GraphNode& P = nodes_[p];
  const size_t rank = P.shape.size();
  bool can_shift = false;
  for (int64_t e : P.size) can_shift = can_shift || e >= 2;
  for (int attempt = 0; attempt < 16; ++attempt) {
    switch (rng_.below(16)) {
      case 0:
      case 1:
      case 2:
      case 3: elementwise(p); return;
      case 4:
      case 5:
        if (can_shift) {
          stencil(p);
          return;
        }
        break;
      case 6: downsample(p); return;
      case 7: guarded_shift(p); return;
      case 8:
        if (rank >= 2) {
          transpose(p);
          return;
        }
        break;
      case 9: concat(p); return;
      case 10:
      case 11:
      case 12:
      case 13: reduction(p); return;
      default:
        if (rank == 2) {
          matmul(p);
          return;
        }
        break;
    }
  }
  elementwise(p);
}

int GraphBuilder::elementwise(int p) {
  int q = rng_.chance(50) ? same_shape_partner(p) : -1;
  // A broadcast operand along one dimension: a rank-1 tensor of that extent.
  int b = -1, bdim = 0;
  if (rng_.chance(25)) {
    bdim = static_cast<int>(rng_.below(nodes_[p].shape.size()));
    b = new_input({nodes_[p].shape[bdim]}, {nodes_[p].size[bdim]});
  }
  const GraphNode P = nodes_[p];
  const int depth = static_cast<int>(rng_.range(1, gpu_ ? 2 : 3));
  Tensor t = compute(
      P.shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.begin(), v.end());
        ExprGen g = make_gen();
        g.add_leaf(read(p, idx));
        if (q >= 0) g.add_leaf(read(q, idx));
        if (b >= 0) g.add_leaf(read(b, {idx[bdim]}));
        if (mode_ == GraphMode::Int && rng_.chance(30)) g.add_leaf(cast(dtype_, v[rng_.below(v.size())]));
        Expr e = g.gen(dtype_, depth);
        ops_ += 1 << depth;
        return e;
      },
      next_name());
  return add_compute(P.shape, P.size, t, "elementwise");
}

int GraphBuilder::stencil(int p) {
  const GraphNode P = nodes_[p];
  std::vector<int> dims;
  for (size_t d = 0; d < P.size.size(); ++d)
    if (P.size[d] >= 2) dims.push_back(static_cast<int>(d));
  rng_.shuffle(dims);
  if (dims.size() > 2) dims.resize(2);
  if (dims.size() == 2 && rng_.chance(50)) dims.resize(1);
  std::vector<Expr> shape = P.shape;
  std::vector<int64_t> size = P.size;
  std::vector<int> width(P.size.size(), 1);
  for (int d : dims) {
    width[d] = static_cast<int>(rng_.range(2, std::min<int64_t>(3, P.size[d])));
    shape[d] = simplify(P.shape[d] - (width[d] - 1));
    size[d] = P.size[d] - (width[d] - 1);
  }
  Tensor t = compute(
      shape,
      [&](const std::vector<Var>& v) {
        // Every window point, summed, and sometimes combined with a random tree.
        std::vector<Expr> points;
        int d0 = dims[0], d1 = dims.size() > 1 ? dims[1] : dims[0];
        for (int o0 = 0; o0 < width[d0]; ++o0)
          for (int o1 = 0; o1 < (d1 == d0 ? 1 : width[d1]); ++o1) {
            std::vector<Expr> idx(v.begin(), v.end());
            idx[d0] = v[d0] + o0;
            if (d1 != d0) idx[d1] = v[d1] + o1;
            points.push_back(read(p, idx));
          }
        Expr sum = points[0];
        for (size_t k = 1; k < points.size(); ++k) sum = sum + points[k];
        ops_ += static_cast<int>(points.size());
        if (rng_.chance(50)) return sum;
        ExprGen g = make_gen();
        for (const Expr& e : points) g.add_leaf(e);
        return g.gen(dtype_, 1) + sum;
      },
      next_name());
  return add_compute(
      shape, size, t,
      fmt::format("stencil over dims {}{}", dims[0], dims.size() > 1 ? fmt::format(",{}", dims[1]) : ""));
}

int GraphBuilder::downsample(int p) {
  const GraphNode P = nodes_[p];
  int d = static_cast<int>(rng_.below(P.shape.size()));
  std::vector<Expr> shape = P.shape;
  std::vector<int64_t> size = P.size;
  shape[d] = simplify((P.shape[d] + 1) / 2);
  size[d] = (P.size[d] + 1) / 2;
  Tensor t = compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.begin(), v.end());
        idx[d] = v[d] * 2;
        ops_ += 1;
        return read(p, idx) * make_const(dtype_, int64_t{mode_ == GraphMode::FmaFloat ? 1 : 3});
      },
      next_name());
  return add_compute(shape, size, t, fmt::format("stride 2 along dim {}", d));
}

int GraphBuilder::guarded_shift(int p) {
  const GraphNode P = nodes_[p];
  int d = static_cast<int>(rng_.below(P.shape.size()));
  int o = rng_.chance(50) ? -1 : 1;
  Tensor t = compute(
      P.shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.begin(), v.end());
        Expr j = v[d] + o;
        idx[d] = j;
        Expr fallback = mode_ == GraphMode::FmaFloat ? make_const(dtype_, 1.0) : make_zero(dtype_);
        std::vector<Expr> here(v.begin(), v.end());
        ops_ += 1;
        return if_then_else(j >= 0 && j < P.shape[d], read(p, idx), fallback) + read(p, here);
      },
      next_name());
  return add_compute(P.shape, P.size, t, fmt::format("guarded shift by {} along dim {}", o, d));
}

int GraphBuilder::transpose(int p) {
  const GraphNode P = nodes_[p];
  std::vector<int> perm(P.shape.size());
  for (size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int>(d);
  rng_.shuffle(perm);
  std::vector<Expr> shape;
  std::vector<int64_t> size;
  for (int d : perm) {
    shape.push_back(P.shape[d]);
    size.push_back(P.size[d]);
  }
  Tensor t = compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.size());
        for (size_t k = 0; k < perm.size(); ++k) idx[perm[k]] = v[k];
        return read(p, idx);
      },
      next_name());
  std::string ptxt;
  for (int d : perm) ptxt += std::to_string(d);
  return add_compute(shape, size, t, "transpose " + ptxt);
}

int GraphBuilder::concat(int p) {
  const GraphNode P = nodes_[p];
  // The second part: same extents but along dimension 0, where it has its own.
  std::vector<Expr> qshape = P.shape;
  std::vector<int64_t> qsize = P.size;
  qsize[0] = rng_.range(1, max_extent_);
  qshape[0] = constant_extent(qsize[0]);
  int q = new_input(qshape, qsize);
  std::vector<Expr> shape = P.shape;
  std::vector<int64_t> size = P.size;
  shape[0] = simplify(P.shape[0] + qshape[0]);
  size[0] = P.size[0] + qsize[0];
  Tensor t = compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.begin(), v.end()), qidx(v.begin(), v.end());
        qidx[0] = v[0] - P.shape[0];
        return if_then_else(v[0] < P.shape[0], read(p, idx), read(q, qidx));
      },
      next_name());
  return add_compute(shape, size, t, "concat along dim 0");
}

int GraphBuilder::reduction(int p) {
  const GraphNode P = nodes_[p];
  const size_t rank = P.shape.size();
  // Which dimensions to reduce: at least one, often all of a rank-1 input.
  std::vector<bool> reduced(rank, false);
  size_t count = 0;
  for (size_t d = 0; d < rank; ++d)
    if (rng_.chance(45)) reduced[d] = true, ++count;
  if (count == 0) reduced[rng_.below(rank)] = true, ++count;
  if (count > 2) {  // keep reductions small: at most two axes
    for (size_t d = 0; d < rank && count > 2; ++d)
      if (reduced[d]) reduced[d] = false, --count;
  }
  std::vector<Expr> shape;
  std::vector<int64_t> size;
  std::vector<IterVar> axes;
  int64_t points = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      axes.push_back(reduce_axis({Expr(0), P.shape[d]}, "k" + std::to_string(d)));
      points *= P.size[d];
    } else {
      shape.push_back(P.shape[d]);
      size.push_back(P.size[d]);
    }
  }
  const bool full = shape.empty();
  if (full) {  // everything reduced: one element
    shape.push_back(Expr(1));
    size.push_back(1);
  }
  int q = rng_.chance(30) ? same_shape_partner(p) : -1;
  std::vector<Reducer> reducers = {Reducer::Sum, Reducer::Sum, Reducer::Min, Reducer::Max};
  if (mode_ == GraphMode::Int && !gpu_) reducers.push_back(Reducer::Prod);
  if (mode_ == GraphMode::FmaFloat) reducers = {Reducer::Sum};
  const Reducer r = rng_.pick(reducers);
  const int depth =
      mode_ == GraphMode::ExactFloat || gpu_ ? static_cast<int>(rng_.below(2)) : static_cast<int>(rng_.below(3));
  const bool conditional = mode_ != GraphMode::FmaFloat && rng_.chance(20);
  Tensor t = compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        size_t out = 0, k = 0;
        for (size_t d = 0; d < rank; ++d) idx.push_back(reduced[d] ? Expr(axes[k++]) : Expr(v[out++]));
        ExprGen g = make_gen();
        g.add_leaf(read(p, idx));
        if (q >= 0) g.add_leaf(read(q, idx));
        Expr src = g.gen(dtype_, depth);
        ops_ += static_cast<int>(points) + (1 << depth);
        Expr cond;
        if (conditional) {
          Expr k0 = axes[0];
          if (!full && rng_.chance(60))
            cond = k0 <= v[0];
          else
            cond = (k0 % 2) == 0;
        }
        return reduce(r, src, axes, cond);
      },
      next_name());
  return add_compute(shape, size, t, std::string("reduce ") + reducer_name(r) + (conditional ? " where" : ""));
}

int GraphBuilder::matmul(int p) {
  const GraphNode P = nodes_[p];
  int64_t n = rng_.range(1, max_extent_);
  int q = new_input({P.shape[1], constant_extent(n)}, {P.size[1], n});
  IterVar k = reduce_axis({Expr(0), P.shape[1]}, "k");
  ops_ += static_cast<int>(2 * P.size[1]);
  Tensor t = compute(
      {P.shape[0], constant_extent(n)},
      [&](Expr i, Expr j) {
        return sum(read(p, {i, k}) * read(q, {Expr(k), j}), {k});
      },
      next_name());
  return add_compute({P.shape[0], constant_extent(n)}, {P.size[0], n}, t, "matmul");
}

}  // namespace te::fuzz
