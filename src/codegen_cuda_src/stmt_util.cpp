#include "codegen_cuda_src/stmt_util.h"

namespace te::cuda {

namespace {

class BufferAccessFinder : public IRVisitor {
 public:
  explicit BufferAccessFinder(const Buffer& b) : target_(b) {}
  bool found = false;

 protected:
  void visit_load(const LoadNode* n) override {
    found |= matches(n->buffer);
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    found |= matches(n->buffer);
    IRVisitor::visit_store(n);
  }

 private:
  bool matches(const Buffer& b) const { return b.same_as(target_) || b.name() == target_.name(); }
  const Buffer& target_;
};

// Finds a type for which `pred` holds among expressions and allocations.
class TypeFinder : public IRVisitor {
 public:
  explicit TypeFinder(bool (*pred)(DataType)) : pred_(pred) {}
  bool found = false;
  void visit(const Expr& e) override {
    if (e.defined()) found |= pred_(e.dtype());
    IRVisitor::visit(e);
  }
  using IRVisitor::visit;

 protected:
  void visit_allocate(const AllocateNode* n) override {
    found |= pred_(n->buffer.dtype());
    IRVisitor::visit_allocate(n);
  }

 private:
  bool (*pred_)(DataType);
};

bool uses_type(const LoweredFunc& f, bool (*pred)(DataType)) {
  for (const Param& p : f.params) {
    if (pred(p.is_buffer() ? p.buffer.dtype() : p.var.dtype())) return true;
  }
  TypeFinder finder(pred);
  if (f.body.defined()) finder.visit(f.body);
  return finder.found;
}

}  // namespace

bool uses_buffer(const Stmt& s, const Buffer& b) {
  BufferAccessFinder u(b);
  u.visit(s);
  return u.found;
}

bool uses_float16(const LoweredFunc& f) {
  return uses_type(f, [](DataType t) { return t.is_float16(); });
}

bool uses_bfloat16(const LoweredFunc& f) {
  return uses_type(f, [](DataType t) { return t.is_bfloat(); });
}

bool dense_ramp(const Expr& index, int lanes) {
  const auto* r = index.as<RampNode>();
  return r && r->lanes == lanes && is_one(r->stride);
}

}  // namespace te::cuda
