// TensorIntrinsic: declaring an intrinsic (the rules a declaration must follow, checked
// once here so that the matcher and the backends can rely on them) and te's built-ins.
#include <fmt/format.h>

#include "expr/extern_calls.h"
#include "te/error.h"
#include "te/tensorize.h"

namespace te {

std::string TensorIntrinsic::implementation(const std::string& target) const {
  auto it = node_->implementations.find(target);
  return it == node_->implementations.end() ? std::string() : it->second;
}

TensorIntrinsic TensorIntrinsic::with_init(const TensorIntrinsic& init) const {
  if (!defined() || !init.defined()) throw Error("TensorIntrinsic::with_init: an intrinsic is undefined");
  const Operation& op = node_->output.op();
  const Operation& iop = init->output.op();
  if (op->body.as<ReduceNode>() == nullptr)
    throw Error(
        fmt::format("TensorIntrinsic::with_init: '{}' is not a reduction, so it has no init to replace", name()));
  if (iop->body.as<ReduceNode>() != nullptr || !iop->reduce_axis.empty())
    throw Error(
        fmt::format("TensorIntrinsic::with_init: the init '{}' of '{}' must not be a reduction", init.name(), name()));
  auto shape_text = [](const Tensor& t) {
    std::string s;
    for (const Expr& e : t.shape()) s += (s.empty() ? "" : ", ") + to_string(e);
    return t.dtype().to_string() + "[" + s + "]";
  };
  bool same = init->output.dtype() == node_->output.dtype() && init->output.ndim() == node_->output.ndim();
  for (size_t d = 0; same && d < init->output.shape().size(); ++d)
    same = *as_const_int(init->output.shape()[d]) == *as_const_int(node_->output.shape()[d]);
  if (!same)
    throw Error(fmt::format("TensorIntrinsic::with_init: the init '{}' computes {}, the output of '{}' is {}",
                            init.name(), shape_text(init->output), name(), shape_text(node_->output)));
  auto n = std::make_shared<TensorIntrinsicNode>(*node_);
  n->init = init.node();
  return TensorIntrinsic(n);
}

namespace {

bool constant_positive(const Expr& e) {
  const int64_t* v = as_const_int(e);
  return v != nullptr && *v > 0;
}

// The placeholders the declaration reads, in order of first use; te::Error for a read of
// anything else (the intrinsic's meaning must be self-contained).
std::vector<Tensor> declaration_inputs(const std::string& name, const Operation& op) {
  std::vector<Tensor> inputs;
  for (const Operation& in : op->inputs) {
    if (in->kind != OpKind::Placeholder)
      throw Error(
          fmt::format("tensor_intrinsic '{}': the declaration reads '{}', which is not a placeholder; "
                      "declare the intrinsic over placeholders only",
                      name, in->name));
    for (size_t d = 0; d < in->shape.size(); ++d)
      if (!constant_positive(in->shape[d]))
        throw Error(fmt::format("tensor_intrinsic '{}': dimension {} of input '{}' is not a positive constant", name, d,
                                in->name));
    inputs.push_back(Tensor(in));
  }
  return inputs;
}

}  // namespace

TensorIntrinsic tensor_intrinsic(const std::string& name, const Tensor& output,
                                 const std::map<std::string, std::string>& implementations,
                                 const std::vector<Tensor>& strided) {
  if (!is_c_identifier(name)) throw Error(fmt::format("tensor_intrinsic: name '{}' must be a C identifier", name));
  if (!output.defined() || output.op()->kind != OpKind::Compute || output.op()->is_scatter() ||
      !output.op()->more_outputs.empty())
    throw Error(fmt::format("tensor_intrinsic '{}': the declaration must be a compute with one output", name));
  const Operation& op = output.op();
  for (const IterVar& iv : op->axis)
    if (!constant_positive(iv->dom.extent) || !is_const_int(iv->dom.min, 0))
      throw Error(fmt::format("tensor_intrinsic '{}': axis '{}' must run from 0 over a positive constant extent", name,
                              iv->var.name()));
  for (const IterVar& iv : op->reduce_axis)
    if (!constant_positive(iv->dom.extent) || !is_const_int(iv->dom.min, 0))
      throw Error(
          fmt::format("tensor_intrinsic '{}': reduction axis '{}' must run from 0 over a positive "
                      "constant extent",
                      name, iv->var.name()));
  if (const auto* r = op->body.as<ReduceNode>()) {
    if (r->reducer == Reducer::Custom || r->sources.size() != 1 || r->condition.defined())
      throw Error(
          fmt::format("tensor_intrinsic '{}': the declaration's reduction must be a built-in one "
                      "(sum, prod, min, max) over one value, without a condition",
                      name));
  }
  for (const auto& [target, impl] : implementations)
    if (target != "llvm" && target != "cuda")
      throw Error(fmt::format("tensor_intrinsic '{}': unknown target '{}' (targets: llvm, cuda)", name, target));
  auto n = std::make_shared<TensorIntrinsicNode>();
  n->name = name;
  n->inputs = declaration_inputs(name, op);
  n->output = output;
  n->implementations = implementations;
  n->free_strides.assign(n->inputs.size() + 1, false);
  for (const Tensor& t : strided) {
    size_t k = 0;
    while (k < n->inputs.size() && !n->inputs[k].same_as(t)) ++k;
    if (k == n->inputs.size() && !output.same_as(t))
      throw Error(
          fmt::format("tensor_intrinsic '{}': strided tensor '{}' is neither an input nor the output of the "
                      "declaration",
                      name, t.defined() ? t.name() : "(undefined)"));
    n->free_strides[k] = true;
  }
  return TensorIntrinsic(n);
}

namespace intrinsics {
namespace {

Tensor dot_16x4_u8s8_declaration() {
  Tensor a = placeholder({4}, UInt(8), "A");
  Tensor b = placeholder({16, 4}, Int(8), "B");
  IterVar k = reduce_axis({0, 4}, "k");
  return compute(
      {16}, [&](Expr i) { return sum(cast(Int(32), a(k)) * cast(Int(32), b(i, k)), {k}); }, "C");
}

}  // namespace

TensorIntrinsic x86_dot_16x4_u8s8() {
  // The implementation names are the keys of the LLVM backend's emitters
  // (src/codegen_llvm/tensor_intrinsics_x86.cpp).
  static const TensorIntrinsic intrin =
      tensor_intrinsic("x86_dot_16x4_u8s8", dot_16x4_u8s8_declaration(), {{"llvm", "x86_dot_16x4_u8s8"}});
  return intrin;
}

TensorIntrinsic x86_vnni_dot_16x4_u8s8() {
  static const TensorIntrinsic intrin =
      tensor_intrinsic("x86_vnni_dot_16x4_u8s8", dot_16x4_u8s8_declaration(), {{"llvm", "x86_vnni_dot_16x4_u8s8"}});
  return intrin;
}

TensorIntrinsic transpose(DataType t, int n) {
  if (t.lanes() != 1 || t.is_bool() || t.is_handle() ||
      (t.bits() != 8 && t.bits() != 16 && t.bits() != 32 && t.bits() != 64))
    throw Error(fmt::format("intrinsics::transpose: the elements must be scalars of 8, 16, 32 or 64 bits, not {}",
                            t.to_string()));
  if (n < 2 || n > 64 || (n & (n - 1)) != 0)
    throw Error(
        fmt::format("intrinsics::transpose: the block must be n x n with n a power of two from 2 to 64, "
                    "not {}",
                    n));
  // Both tiles have rows of any stride (a block of larger tensors); the implementation
  // (src/codegen_llvm/tensor_intrinsic_transpose.cpp) reads the element type and n from
  // the declaration.
  Tensor src = placeholder({n, n}, t, "S");
  Tensor dst = compute(
      {n, n}, [&](Expr i, Expr j) { return src(j, i); }, "T");
  return tensor_intrinsic(fmt::format("transpose_{}x{}_{}", n, n, t.to_string()), dst, {{"llvm", "transpose"}},
                          {src, dst});
}

}  // namespace intrinsics
}  // namespace te
