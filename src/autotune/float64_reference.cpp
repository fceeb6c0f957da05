#include "autotune/float64_reference.h"

#include <limits>
#include <map>

#include "expr/make_node.h"
#include "te/bfloat16.h"
#include "te/float16.h"

namespace te::autotune {

namespace {

DataType widened(DataType t) { return t.is_float() ? Float(64).with_lanes(t.lanes()) : t; }

// Thrown where a node's type cannot change; widen_floats() gives nullopt.
struct CannotWiden {};

class WidenFloats : public IRMutator {
 public:
  Buffer buffer(const Buffer& b) {
    if (!b.dtype().is_float()) return b;
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    std::vector<Expr> shape;
    for (const Expr& e : b.shape()) shape.push_back(mutate(e));
    return buffers_[b.get()] = Buffer(b.name(), widened(b.dtype()), shape, b.scope());
  }
  Var var(const Var& v) {
    if (!v.dtype().is_float()) return v;
    auto it = vars_.find(v.get());
    if (it != vars_.end()) return it->second;
    return vars_[v.get()] = Var(v.name(), widened(v.dtype()));
  }

 protected:
  Expr mutate_float_imm(const Expr& e, const FloatImmNode* n) override {
    return make_const(widened(e.dtype()), n->value);
  }
  Expr mutate_var(const Expr& e, const VarNode*) override {
    return var(Var(std::static_pointer_cast<const VarNode>(e.node())));
  }
  Expr mutate_cast(const Expr& e, const CastNode* n) override { return cast(widened(e.dtype()), mutate(n->value)); }
  Expr mutate_load(const Expr&, const LoadNode* n) override {
    std::vector<Expr> idx;
    mutate_all(n->indices, &idx);
    return load(buffer(n->buffer), idx, mutate(n->predicate));
  }
  Expr mutate_call(const Expr& e, const CallNode* n) override {
    if (n->op == Intrinsic::Extern || n->op == Intrinsic::WarpShuffleDown || n->op == Intrinsic::ThreadAllreduce)
      throw CannotWiden{};
    std::vector<Expr> args;
    mutate_all(n->args, &args);
    return make_expr<CallNode>(widened(e.dtype()), n->op, std::move(args), n->extern_name);
  }
  Expr mutate_let(const Expr&, const LetNode* n) override {
    return let(var(n->var), mutate(n->value), mutate(n->body));
  }
  Stmt mutate_let_stmt(const Stmt&, const LetStmtNode* n) override {
    return let_stmt(var(n->var), mutate(n->value), mutate(n->body));
  }
  Stmt mutate_store(const Stmt&, const StoreNode* n) override {
    std::vector<Expr> idx;
    mutate_all(n->indices, &idx);
    return store_like(*n, buffer(n->buffer), mutate(n->value), idx, mutate(n->predicate));
  }
  Stmt mutate_allocate(const Stmt&, const AllocateNode* n) override {
    return allocate(buffer(n->buffer), mutate(n->body));
  }
  Stmt mutate_tensor_intrinsic_call(const Stmt&, const TensorIntrinsicCallNode*) override { throw CannotWiden{}; }

 private:
  std::map<const BufferNode*, Buffer> buffers_;
  std::map<const VarNode*, Var> vars_;
};

}  // namespace

std::optional<LoweredFunc> widen_floats(const LoweredFunc& f) {
  WidenFloats w;
  LoweredFunc out;
  out.name = f.name;
  try {
    for (const Param& p : f.params) {
      Param q;
      if (p.is_buffer())
        q.buffer = w.buffer(p.buffer);
      else
        q.var = w.var(p.var);
      out.params.push_back(q);
    }
    out.body = w.mutate(f.body);
  } catch (const CannotWiden&) {
    return std::nullopt;
  }
  return out;
}

std::vector<Argument> widened_arguments(const std::vector<Argument>& args) {
  std::vector<Argument> out;
  for (const Argument& a : args) {
    if (!a.is_array() || !a.array().dtype().is_float()) {
      out.push_back(a);
      continue;
    }
    const NDArray& from = a.array();
    NDArray to = NDArray::empty(from.shape(), Float(64));
    double* p = static_cast<double*>(to.data());
    for (int64_t i = 0; i < from.size(); ++i) p[i] = element_value(from, i);
    out.emplace_back(to);
  }
  return out;
}

double element_value(const NDArray& a, int64_t i) {
  const void* p = a.data();
  DataType t = a.dtype();
  switch (t.code()) {
    case DataType::Code::Float:
      if (t.bits() == 16) return double(float(static_cast<const half*>(p)[i]));
      if (t.bits() == 32) return double(static_cast<const float*>(p)[i]);
      return static_cast<const double*>(p)[i];
    case DataType::Code::BFloat: return double(float(static_cast<const bfloat16*>(p)[i]));
    case DataType::Code::Int:
      if (t.bits() == 8) return static_cast<const int8_t*>(p)[i];
      if (t.bits() == 16) return static_cast<const int16_t*>(p)[i];
      if (t.bits() == 32) return static_cast<const int32_t*>(p)[i];
      return double(static_cast<const int64_t*>(p)[i]);
    case DataType::Code::UInt:
      if (t.bits() == 8) return static_cast<const uint8_t*>(p)[i];
      if (t.bits() == 16) return static_cast<const uint16_t*>(p)[i];
      if (t.bits() == 32) return static_cast<const uint32_t*>(p)[i];
      return double(static_cast<const uint64_t*>(p)[i]);
    case DataType::Code::Bool: return static_cast<const uint8_t*>(p)[i] != 0;
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace te::autotune
