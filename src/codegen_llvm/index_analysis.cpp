#include "codegen_llvm/index_analysis.h"

#include <fmt/format.h>

#include <algorithm>

namespace te::codegen {
namespace {

constexpr int64_t kMaxFactor = int64_t{1} << 30;

int64_t power_of_two_factor_of_constant(int64_t v) {
  if (v == 0) return kMaxFactor;
  int64_t f = 1;
  while (f < kMaxFactor && (v & f) == 0) f <<= 1;
  return f;
}

bool as_constant(const Expr& e, int64_t* v) {
  if (const int64_t* c = as_const_int(e)) {
    *v = *c;
    return true;
  }
  return false;
}

}  // namespace

Expr element_count(const Buffer& buffer, DataType t) {
  Expr size = make_const(t, 1);
  for (const Expr& d : buffer.shape()) size = size * cast(t, d);
  return size;
}

Expr flatten_index(const Buffer& buffer, const std::vector<Expr>& indices) {
  if (indices.size() == 1) return indices[0];
  if (indices.size() != buffer.shape().size())
    throw Error(fmt::format("build: buffer '{}' of rank {} is accessed with {} indices", buffer.name(),
                            buffer.shape().size(), indices.size()));
  if (indices.empty()) return make_const(Int(32), 0);
  Expr flat = indices[0];
  for (size_t d = 1; d < indices.size(); ++d) {
    Expr extent = buffer.shape()[d];
    if (flat.dtype().is_vector()) extent = broadcast(extent, flat.dtype().lanes());
    if (extent.dtype().element_of() != flat.dtype().element_of())
      extent = cast(flat.dtype().with_lanes(extent.dtype().lanes()), extent);
    flat = flat * extent + indices[d];
  }
  return flat;
}

bool split_uniform(const Expr& index, Expr* uniform, Expr* varying) {
  std::vector<Expr> terms{index}, scalars, vectors;
  while (!terms.empty()) {
    Expr e = terms.back();
    terms.pop_back();
    const auto* add = e.as<BinaryNode>();
    if (add != nullptr && add->op == BinOp::Add) {
      terms.push_back(add->b);
      terms.push_back(add->a);
    } else if (const auto* b = e.as<BroadcastNode>(); b != nullptr && b->value.dtype().is_scalar()) {
      scalars.push_back(b->value);
    } else {
      vectors.push_back(e);
    }
  }
  if (scalars.empty() || vectors.empty()) return false;
  *uniform = scalars[0];
  for (size_t i = 1; i < scalars.size(); ++i) *uniform = *uniform + scalars[i];
  *varying = vectors[0];
  for (size_t i = 1; i < vectors.size(); ++i) *varying = *varying + vectors[i];
  return true;
}

bool as_strided(const Expr& index, Expr* base, int64_t* stride) {
  if (const auto* r = index.as<RampNode>()) {
    if (!r->base.dtype().is_scalar()) return false;
    if (!as_constant(r->stride, stride)) return false;
    *base = r->base;
    return true;
  }
  if (const auto* b = index.as<BroadcastNode>()) {
    if (!b->value.dtype().is_scalar()) return false;
    *base = b->value;
    *stride = 0;
    return true;
  }
  const auto* bin = index.as<BinaryNode>();
  if (bin == nullptr) return false;
  Expr base_a, base_b;
  int64_t stride_a = 0, stride_b = 0;
  switch (bin->op) {
    case BinOp::Add:
    case BinOp::Sub:
      if (!as_strided(bin->a, &base_a, &stride_a) || !as_strided(bin->b, &base_b, &stride_b)) return false;
      *base = bin->op == BinOp::Add ? base_a + base_b : base_a - base_b;
      *stride = bin->op == BinOp::Add ? stride_a + stride_b : stride_a - stride_b;
      return true;
    case BinOp::Mul: {
      // A strided vector times a broadcast constant.
      int64_t k = 0;
      const Expr* vec = nullptr;
      if (as_constant(bin->b, &k))
        vec = &bin->a;
      else if (as_constant(bin->a, &k))
        vec = &bin->b;
      if (vec == nullptr || !as_strided(*vec, &base_a, &stride_a)) return false;
      *base = base_a * make_const(base_a.dtype(), k);
      *stride = stride_a * k;
      return true;
    }
    default: return false;
  }
}

int64_t known_power_of_two_factor(const Expr& e, const VarFactors& vars) {
  int64_t c = 0;
  if (as_constant(e, &c)) return power_of_two_factor_of_constant(c);
  if (const auto* v = e.as<VarNode>()) {
    auto it = vars.find(v);
    return it == vars.end() ? 1 : it->second;
  }
  const auto* b = e.as<BinaryNode>();
  if (b == nullptr || !e.dtype().is_integer()) return 1;
  int64_t fa = known_power_of_two_factor(b->a, vars), fb = known_power_of_two_factor(b->b, vars);
  switch (b->op) {
    case BinOp::Add:
    case BinOp::Sub: return std::min(fa, fb);
    case BinOp::Mul: return std::min(kMaxFactor, fa * fb);
    default: return 1;
  }
}

}  // namespace te::codegen
