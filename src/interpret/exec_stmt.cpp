// Statement execution for one thread of execution (plain recursion).
#include <fmt/format.h>

#include "expr/int_arith.h"
#include "interpret/interpreter.h"
#include "interpret/memory.h"

namespace te::interp {

Interpreter::Interpreter(const LoweredFunc& f) : func_(f), program_(compile(f)) {}

void Interpreter::run(const std::vector<Argument>& args) {
  Frame root;
  root.vars.assign(static_cast<size_t>(program_.var_slots), int_scalar(0));
  root.buffers.assign(static_cast<size_t>(program_.buffer_slots), nullptr);
  root.shuffled.assign(static_cast<size_t>(program_.shuffle_slots), int_scalar(0));
  bind_arguments(args, root);
  if (program_.body) exec(program_.body, root);
}

void Interpreter::exec(const CStmt* s, Frame& f) {
  if (!s->shuffles.empty())
    throw Error(
        "a warp shuffle runs outside the GPU thread loops (threadIdx.*) that would give "
        "it a warp of threads");
  switch (s->kind) {
    case StmtKind::TensorIntrinsicCall: break;  // compiled as a Seq of its declaration
    case StmtKind::LetStmt:
      f.vars[static_cast<size_t>(s->slot)] = eval(s->value, f);
      exec(s->children[0], f);
      return;
    case StmtKind::For: exec_for(s, f); return;
    case StmtKind::Store:
      if (s->value->type.is_scalar())
        exec_store(s, f);
      else
        exec_vector_store(s, f);
      return;
    case StmtKind::Allocate: exec_allocate(s, f); return;
    case StmtKind::IfThenElse:
      if (eval(s->value, f).i != 0)
        exec(s->children[0], f);
      else if (s->children[1])
        exec(s->children[1], f);
      return;
    case StmtKind::Seq:
      for (const CStmt* c : s->children) exec(c, f);
      return;
    case StmtKind::Evaluate:
      if (s->value->type.is_scalar()) {
        eval(s->value, f);
      } else {
        LaneVec ignored;
        eval_vector(s->value, f, nullptr, ignored);
      }
      return;
    case StmtKind::Barrier:
      // Outside lockstep execution one thread runs at a time, so the threads of a block
      // before this point have all finished: nothing to wait for.
      return;
    case StmtKind::Assert:
      if (eval(s->value, f).i == 0) throw Error(fmt::format("assertion failed: {}", *s->message));
      exec(s->children[0], f);
      return;
  }
  TE_ICHECK(false, "exec: unknown statement kind");
}

void Interpreter::exec_for(const CStmt* s, Frame& f) {
  int64_t min = eval(s->min, f).i;
  int64_t extent = eval(s->extent, f).i;
  if (s->gpu_threads && s->has_barrier) {
    run_threads_in_lockstep(s, f, min, extent);
    return;
  }
  Scalar& var = f.vars[static_cast<size_t>(s->slot)];
  const CStmt* body = s->children[0];
  for (int64_t k = 0; k < extent; ++k) {
    var = int_scalar(arith::add(min, k, s->var_type));
    exec(body, f);
  }
}

void Interpreter::exec_store(const CStmt* s, Frame& f) {
  if (s->predicate && eval(s->predicate, f).i == 0) return;
  Scalar value = eval(s->value, f);
  const BufferStorage& st = *f.buffers[static_cast<size_t>(s->slot)];
  const size_t count = s->indices.size();
  auto write = s->atomic_add ? add_element : write_element;
  if (count == 1) {
    write(st, checked_offset(st, eval(s->indices[0], f).i, true), value);
    return;
  }
  constexpr size_t kMaxDims = 8;
  if (count > kMaxDims)
    throw Error(fmt::format("an access to buffer '{}' has {} indices (at most {} supported)", st.buffer->name, count,
                            kMaxDims));
  int64_t idx[kMaxDims];
  for (size_t d = 0; d < count; ++d) idx[d] = eval(s->indices[d], f).i;
  write(st, checked_offset(st, idx, count, true), value);
}

void Interpreter::exec_vector_store(const CStmt* s, Frame& f) {
  // The value is computed and stored only for the predicate's lanes.
  const int lanes = s->value->type.lanes();
  LaneVec pred;
  const LaneVec* mask = nullptr;
  if (s->predicate) {
    eval_lanes(s->predicate, f, nullptr, lanes, pred);
    bool any = false;
    for (int k = 0; k < lanes; ++k) any |= pred[k].i != 0;
    if (!any) return;
    mask = &pred;
  }
  LaneVec value;
  eval_vector(s->value, f, mask, value);
  const BufferStorage& st = *f.buffers[static_cast<size_t>(s->slot)];
  const size_t count = s->indices.size();
  std::vector<LaneVec> index(count);
  for (size_t d = 0; d < count; ++d) eval_lanes(s->indices[d], f, mask, lanes, index[d]);
  std::vector<int64_t> at(count);
  for (int k = 0; k < lanes; ++k) {
    if (mask && !pred[k].i) continue;
    for (size_t d = 0; d < count; ++d) at[d] = index[d][k].i;
    (s->atomic_add ? add_element : write_element)(st, checked_offset(st, at.data(), count, true), value[k]);
  }
}

std::vector<int64_t> Interpreter::eval_shape(const CStmt* s, Frame& f) {
  std::vector<int64_t> shape;
  shape.reserve(s->shape.size());
  for (const CExpr* extent : s->shape) shape.push_back(eval(extent, f).i);
  return shape;
}

void Interpreter::exec_allocate(const CStmt* s, Frame& f) {
  BufferStorage st;
  allocate_storage(&st, s->buffer, eval_shape(s, f));
  BufferStorage*& slot = f.buffers[static_cast<size_t>(s->slot)];
  slot = &st;
  exec(s->children[0], f);
  slot = nullptr;
}

}  // namespace te::interp
