// What code generation needs to know about the index of a load or store: the flat
// index of a multi-dimensional access, whether a vector index is base + stride * lane,
// and which power of two it is known to be a multiple of (for alignment).
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "te/expr.h"

namespace te::codegen {

// The row-major flat index of indices into buffer (one index: returned as is).
Expr flatten_index(const Buffer& buffer, const std::vector<Expr>& indices);
// The buffer's element count in type t (the product of its shape), for index checks.
Expr element_count(const Buffer& buffer, DataType t);

// If the vector index is base + stride * lane for a scalar base and a constant stride
// (Ramps, Broadcasts and their sums, differences and products with constants), sets
// them and returns true.
bool as_strided(const Expr& index, Expr* base, int64_t* stride);

// Splits a vector index into uniform + varying: the sum of its top-level broadcast terms
// (a scalar) and the rest (a vector). Returns false when it has no broadcast term.
bool split_uniform(const Expr& index, Expr* uniform, Expr* varying);

// The largest power of two (at most 2^30) the scalar integer expression is known to
// be a multiple of; 1 when nothing is known.
// Variables with such a known factor (let-bound indices) are looked up in `vars`.
using VarFactors = std::unordered_map<const VarNode*, int64_t>;
int64_t known_power_of_two_factor(const Expr& e, const VarFactors& vars = {});

}  // namespace te::codegen
