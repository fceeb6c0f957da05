// The loop-IR interpreter behind te::interpret(). It runs a Program (program.h): the
// function compiled once to slot-resolved nodes.
//
// Expressions: scalar-typed nodes are evaluated by eval() into one Scalar; vector-typed
// nodes by eval_vector() into a LaneVec, under an optional lane mask. A masked-off lane
// is not computed through memory: its loads do not happen and it reads as zero. Masks
// come from vector if_then_else (each side sees only the lanes that take it) and from a
// vector Store's predicate (the value is computed only for the lanes stored).
//   && and || evaluate both operands; only if_then_else guards evaluation.
//
// Statements: exec() runs a statement for one thread of execution. Loops of every kind
// run serially. A threadIdx loop whose body contains a Barrier runs its threads in
// lockstep instead (exec_lockstep, one Frame per thread) so every thread reaches each
// barrier before any passes it; a barrier reached by only part of a block is an error.
#pragma once
#include <memory>
#include <vector>

#include "interpret/frame.h"
#include "interpret/program.h"
#include "interpret/value.h"
#include "te/argument.h"
#include "te/ir.h"

namespace te::interp {

class Interpreter {
 public:
  // Compiles f (te::Error for IR that cannot run).
  explicit Interpreter(const LoweredFunc& f);

  // Binds the arguments to f's parameters and runs f's body. Errors carry no prefix;
  // te::interpret adds the function's name.
  void run(const std::vector<Argument>& args);

 private:
  struct ThreadGroup {
    std::vector<Frame> threads;
    // False when the group was started by part of an enclosing group's threads.
    bool whole_block = true;
  };

  // Expressions (eval_expr.cpp).
  Scalar eval(const CExpr* e, Frame& f);
  Scalar eval_rare(const CExpr* e, Frame& f);
  Scalar eval_load(const CExpr* e, Frame& f);
  // out = the lanes of e (a scalar is broadcast to `lanes`), computed for the lanes
  // active in mask (nullptr: all).
  void eval_lanes(const CExpr* e, Frame& f, const LaneVec* mask, int lanes, LaneVec& out);
  void eval_vector(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out);
  void eval_vector_load(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out);
  void eval_vector_call(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out);
  // call_extern (eval_extern.cpp): one host call per (active) lane.
  Scalar eval_extern(const CExpr* e, Frame& f);
  void eval_vector_extern(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out);

  // Statements for one thread (exec_stmt.cpp).
  void exec(const CStmt* s, Frame& f);
  void exec_for(const CStmt* s, Frame& f);
  void exec_store(const CStmt* s, Frame& f);
  void exec_vector_store(const CStmt* s, Frame& f);
  void exec_allocate(const CStmt* s, Frame& f);
  std::vector<int64_t> eval_shape(const CStmt* s, Frame& f);

  // Threads of a block in lockstep (exec_lockstep.cpp).
  void run_threads_in_lockstep(const CStmt* loop, Frame& f, int64_t min, int64_t extent);
  void exec_lockstep(const CStmt* s, ThreadGroup& g, const std::vector<int>& active);
  void lockstep_for(const CStmt* s, ThreadGroup& g, const std::vector<int>& active);
  void lockstep_thread_loop(const CStmt* s, ThreadGroup& g, const std::vector<int>& active);
  void lockstep_allocate(const CStmt* s, ThreadGroup& g, const std::vector<int>& active);
  // Computes s's warp shuffles: each active thread's Frame::shuffled gets its result.
  void exchange_shuffles(const CStmt* s, ThreadGroup& g, const std::vector<int>& active);

  // Arguments (bind_args.cpp).
  void bind_arguments(const std::vector<Argument>& args, Frame& root);

  const LoweredFunc& func_;
  Program program_;
  std::vector<std::unique_ptr<BufferStorage>> param_storage_;
  std::vector<NDArray> param_arrays_;  // keeps the arguments' memory alive
};

}  // namespace te::interp
