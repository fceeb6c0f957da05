/// \file
/// Tensors: placeholders (inputs) and computes (one expression per output point).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "te/export.h"
#include "te/expr.h"

namespace te {

/// What an operation is.
enum class OpKind : uint8_t {
  Placeholder,  ///< an input
  Compute       ///< an expression per output point (possibly a reduction)
};

/// One operation of the tensor graph. A compute's body may reference other operations
/// through TensorRead nodes; a Reduce body makes it a reduction.
struct TE_API OperationNode {
  OpKind kind = OpKind::Placeholder;  ///< Placeholder or compute.
  std::string name;                   ///< The tensor's name.
  DataType dtype;                     ///< The element type.
  std::vector<Expr> shape;            ///< The extent of each dimension.
  std::vector<IterVar> axis;          ///< Compute: one data-parallel axis per dimension.
  std::vector<IterVar> reduce_axis;   ///< Compute: the Reduce's axes, if the body is one.
  Expr body;                          ///< Compute: the value at point `axis`.
  /// The operations this one reads, in order of first use.
  std::vector<std::shared_ptr<const OperationNode>> inputs;
};
/// A shared, immutable operation.
using Operation = std::shared_ptr<const OperationNode>;

/// The output of an operation: what placeholder() and compute() return, what
/// expressions read (`A(i, j)`) and what schedules and lower() take.
class TE_API Tensor {
 public:
  /// An undefined tensor.
  Tensor() = default;
  /// The output of op.
  explicit Tensor(Operation op) : op_(std::move(op)) {}

  /// Whether the tensor has an operation.
  bool defined() const { return op_ != nullptr; }
  /// The operation that produces the tensor.
  const Operation& op() const { return op_; }
  /// The tensor's name.
  const std::string& name() const { return op_->name; }
  /// The element type.
  DataType dtype() const { return op_->dtype; }
  /// The extent of each dimension.
  const std::vector<Expr>& shape() const { return op_->shape; }
  /// The number of dimensions.
  int ndim() const { return static_cast<int>(op_->shape.size()); }
  /// Whether it is an input (placeholder()).
  bool is_placeholder() const { return op_->kind == OpKind::Placeholder; }
  /// Whether both are the output of the same operation.
  bool same_as(const Tensor& o) const { return op_ == o.op_; }

  /// The k-th data-parallel axis of a compute (te::Error otherwise).
  IterVar axis(int k) const;
  /// The k-th reduction axis of a reduction (te::Error otherwise).
  IterVar reduce_axis(int k) const;

  /// An element read: A(i, j). The index count must equal ndim (te::Error otherwise);
  /// integer indices only.
  Expr operator()(std::vector<Expr> indices) const;
  /// An element read with one index argument per dimension: A(i, j).
  template <typename... Args>
  Expr operator()(Args&&... args) const {
    return (*this)(std::vector<Expr>{Expr(std::forward<Args>(args))...});
  }

 private:
  Operation op_;
};

/// An input tensor of the given shape (int32/int64 expressions, usually constants or Vars).
TE_API Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name);

/// A compute from a function of one Var per dimension. axis_names, if given, name the
/// axes (default "i", "j", "k", "l", "m", "n" for up to 6 dimensions, "i0".. beyond).
TE_API Tensor compute_from_vars(std::vector<Expr> shape,
                                const std::function<Expr(const std::vector<Var>&)>& fn,
                                std::string name, std::vector<std::string> axis_names = {});

namespace detail {
template <typename F, size_t... I>
Expr call_with_vars(F& fn, const std::vector<Var>& v, std::index_sequence<I...>) {
  return fn(Expr(v[I])...);
}
template <typename F, typename Seq>
struct invocable_with_exprs;
template <typename F, size_t... I>
struct invocable_with_exprs<F, std::index_sequence<I...>>
    : std::is_invocable<F, decltype((void)I, std::declval<Expr>())...> {};
template <typename F, size_t N>
constexpr bool invocable_n = invocable_with_exprs<F, std::make_index_sequence<N>>::value;
}  // namespace detail

/// compute({M, N}, [&](Expr i, Expr j) { return A(i, j) * 2; }, "B"): the lambda takes
/// one Expr per dimension (1 to 6), or a const std::vector<Var>&.
template <typename F>
Tensor compute(std::vector<Expr> shape, F fn, std::string name,
               std::vector<std::string> axis_names = {}) {
  if constexpr (std::is_invocable_v<F, const std::vector<Var>&>) {
    return compute_from_vars(std::move(shape), fn, std::move(name), std::move(axis_names));
  } else {
    static_assert(detail::invocable_n<F, 1> || detail::invocable_n<F, 2> ||
                      detail::invocable_n<F, 3> || detail::invocable_n<F, 4> ||
                      detail::invocable_n<F, 5> || detail::invocable_n<F, 6>,
                  "compute: the function must take 1 to 6 Expr arguments or a std::vector<Var>");
    return compute_from_vars(
        std::move(shape),
        [&fn](const std::vector<Var>& v) -> Expr {
          constexpr size_t n = detail::invocable_n<F, 1>   ? 1
                               : detail::invocable_n<F, 2> ? 2
                               : detail::invocable_n<F, 3> ? 3
                               : detail::invocable_n<F, 4> ? 4
                               : detail::invocable_n<F, 5> ? 5
                                                           : 6;
          if (v.size() != n)
            throw Error("compute: the function takes " + std::to_string(n) +
                        " index arguments but the shape has " + std::to_string(v.size()) +
                        " dimensions");
          return detail::call_with_vars(fn, v, std::make_index_sequence<n>{});
        },
        std::move(name), std::move(axis_names));
  }
}

/// All operations reachable from outputs, producers before consumers.
TE_API std::vector<Operation> topo_sort(const std::vector<Tensor>& outputs);

}  // namespace te
