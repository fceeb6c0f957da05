// Tensors: placeholders (inputs) and computes (one expression per output point).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "te/expr.h"

namespace te {

enum class OpKind : uint8_t { Placeholder, Compute };

// One operation of the tensor graph. A compute's body may reference other operations
// through TensorRead nodes; a Reduce body makes it a reduction.
struct OperationNode {
  OpKind kind = OpKind::Placeholder;
  std::string name;
  DataType dtype;
  std::vector<Expr> shape;
  // Compute only:
  std::vector<IterVar> axis;         // one data-parallel axis per output dimension
  std::vector<IterVar> reduce_axis;  // the Reduce's axes, if the body is a Reduce
  Expr body;
  // The operations this one reads, in order of first use.
  std::vector<std::shared_ptr<const OperationNode>> inputs;
};
using Operation = std::shared_ptr<const OperationNode>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Operation op) : op_(std::move(op)) {}

  bool defined() const { return op_ != nullptr; }
  const Operation& op() const { return op_; }
  const std::string& name() const { return op_->name; }
  DataType dtype() const { return op_->dtype; }
  const std::vector<Expr>& shape() const { return op_->shape; }
  int ndim() const { return static_cast<int>(op_->shape.size()); }
  bool is_placeholder() const { return op_->kind == OpKind::Placeholder; }
  bool same_as(const Tensor& o) const { return op_ == o.op_; }

  // The k-th data-parallel / reduction axis of a compute (te::Error otherwise).
  IterVar axis(int k) const;
  IterVar reduce_axis(int k) const;

  // An element read: A(i, j). The index count must equal ndim (te::Error otherwise);
  // integer indices only.
  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Args>
  Expr operator()(Args&&... args) const {
    return (*this)(std::vector<Expr>{Expr(std::forward<Args>(args))...});
  }

 private:
  Operation op_;
};

// An input tensor of the given shape (int32/int64 expressions, usually constants or Vars).
Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name);

// A compute from a function of one Var per dimension. axis_names, if given, name the
// axes (default "i", "j", "k", "l", "m", "n" for up to 6 dimensions, "i0".. beyond).
Tensor compute_from_vars(std::vector<Expr> shape,
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

// compute({M, N}, [&](Expr i, Expr j) { return A(i, j) * 2; }, "B"): the lambda takes
// one Expr per dimension (1 to 6), or a const std::vector<Var>&.
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

// All operations reachable from outputs, producers before consumers.
std::vector<Operation> topo_sort(const std::vector<Tensor>& outputs);

}  // namespace te
