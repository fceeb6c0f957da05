#include "tensorize/declaration.h"

#include <map>

#include "expr/reduce_rule.h"
#include "te/error.h"

namespace te::tensorize {

std::vector<IterVar> declaration_loops(const TensorIntrinsicNode& in) {
  std::vector<IterVar> loops = in.output.op()->axis;
  for (const IterVar& iv : in.output.op()->reduce_axis) loops.push_back(iv);
  return loops;
}

namespace {

Expr flat_size(const std::vector<Expr>& shape) {
  int64_t n = 1;
  for (const Expr& e : shape) n *= *as_const_int(e);
  return make_const(Int(32), n);
}

// offset + sum of indices[d] * strides[d], in the offset's type (the index type of the
// stage's buffer; the declaration's axes are int32).
Expr flat_index(const std::vector<Expr>& indices, const Expr& offset, const std::vector<Expr>& strides) {
  const DataType t = offset.dtype();
  auto as_t = [&](const Expr& e) { return e.dtype() == t ? e : cast(t, e); };
  Expr flat = offset;
  for (size_t d = 0; d < indices.size(); ++d) flat = flat + as_t(indices[d]) * as_t(strides[d]);
  return flat;
}

// Tensor reads of the declaration's inputs become loads of the buffers; its axes, the
// fresh loop variables.
class Instantiate : public IRMutator {
 public:
  Instantiate(const TensorIntrinsicNode& in, const std::vector<Buffer>& buffers, const std::vector<Expr>& offsets,
              const std::vector<std::vector<Expr>>& strides, const std::map<const VarNode*, Expr>& vars)
      : in_(in), buffers_(buffers), offsets_(offsets), strides_(strides), vars_(vars) {}

 protected:
  Expr mutate_var(const Expr& e, const VarNode* n) override {
    auto it = vars_.find(n);
    return it == vars_.end() ? e : it->second;
  }
  Expr mutate_tensor_read(const Expr&, const TensorReadNode* n) override {
    for (size_t i = 0; i < in_.inputs.size(); ++i)
      if (in_.inputs[i].op() == n->op) {
        std::vector<Expr> idx;
        mutate_all(n->indices, &idx);
        return load(buffers_[i], {flat_index(idx, offsets_[i], strides_[i])});
      }
    TE_ICHECK(false, "tensorize: a declaration reads a tensor that is not its input");
    return Expr();
  }

 private:
  const TensorIntrinsicNode& in_;
  const std::vector<Buffer>& buffers_;
  const std::vector<Expr>& offsets_;
  const std::vector<std::vector<Expr>>& strides_;
  const std::map<const VarNode*, Expr>& vars_;
};

}  // namespace

std::vector<Buffer> declaration_buffers(const TensorIntrinsicNode& in) {
  std::vector<Buffer> out;
  for (const Tensor& t : in.inputs) out.emplace_back(t.name(), t.dtype(), std::vector<Expr>{flat_size(t.shape())});
  out.emplace_back(in.output.name(), in.output.dtype(), std::vector<Expr>{flat_size(in.output.shape())});
  return out;
}

const std::vector<Expr>& declaration_shape(const TensorIntrinsicNode& in, size_t k) {
  return k < in.inputs.size() ? in.inputs[k].shape() : in.output.shape();
}

std::vector<Expr> dense_strides(const TensorIntrinsicNode& in, size_t k, DataType t) {
  const std::vector<Expr>& shape = declaration_shape(in, k);
  std::vector<Expr> out(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    out[d] = make_const(t, stride);
    stride *= *as_const_int(shape[d]);
  }
  return out;
}

Stmt instantiate(const TensorIntrinsicNode& in, const std::vector<Buffer>& buffers, const std::vector<Expr>& offsets,
                 const std::vector<std::vector<Expr>>& strides, std::vector<Var>* loop_vars) {
  const std::vector<IterVar> loops = declaration_loops(in);
  std::map<const VarNode*, Expr> vars;
  loop_vars->clear();
  for (const IterVar& iv : loops) {
    Var v(iv->var.name(), iv->var.dtype());
    vars[iv->var.get()] = v;
    loop_vars->push_back(v);
  }
  Instantiate rewrite(in, buffers, offsets, strides, vars);
  const Operation& op = in.output.op();
  std::vector<Expr> out_index;
  for (const IterVar& iv : op->axis) out_index.push_back(vars.at(iv->var.get()));
  const Buffer& out = buffers.back();
  Expr out_flat = flat_index(out_index, offsets.back(), strides.back());
  Stmt body;
  if (const auto* red = op->body.as<ReduceNode>()) {
    Expr acc = load(out, {out_flat});
    body = store(out, reduce_combine(*red, {acc}, {rewrite.mutate(red->source())})[0], {out_flat});
  } else {
    body = store(out, rewrite.mutate(op->body), {out_flat});
  }
  for (size_t i = loops.size(); i-- > 0;)
    body = for_loop((*loop_vars)[i], make_const(loops[i]->var.dtype(), 0), loops[i]->dom.extent, ForKind::Serial, body);
  return body;
}

}  // namespace te::tensorize
