// The interpreter's compiled form of a LoweredFunc: the same tree, with every variable
// and buffer resolved to a slot of a Frame, constants pre-rounded and every static check
// (types, scoping, lowering) done once, before anything runs.
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "interpret/value.h"
#include "te/interpret.h"
#include "te/ir.h"

namespace te::interp {

enum class EOp : uint8_t {
  Const,
  Var,
  Cast,
  Binary,
  Not,
  Select,
  Load,
  Ramp,
  Broadcast,
  Call,
  IfThenElse,
  Let,
  Extern
};

struct CExpr {
  EOp op = EOp::Const;
  BinOp bin = BinOp::Add;            // Binary
  Intrinsic fn = Intrinsic::Likely;  // Call
  DataType type;                     // the result's type (lanes included)
  DataType arg_type;                 // the first operand's element type (Cast, Binary, Call)
  int slot = -1;                     // Var, Let: variable slot; Load: buffer slot;
                                     // WarpShuffleDown: its slot in Frame::shuffled
  Scalar imm{};                      // Const
  // Operands: Cast/Not/Broadcast: a; Binary: a, b; Select/IfThenElse: cond a, values b c;
  // Ramp: base a, stride b; Call: its arguments; Let: value a, body b.
  const CExpr* a = nullptr;
  const CExpr* b = nullptr;
  const CExpr* c = nullptr;
  std::vector<const CExpr*> indices;  // Load: one flat index, or one per dimension
  const CExpr* predicate = nullptr;   // Load (null: every lane)
  // Extern: the host function (held for the run: see extern_registry.h) and its arguments.
  std::shared_ptr<const HostFunction> host;
  std::vector<const CExpr*> args;
};

struct CStmt {
  StmtKind kind = StmtKind::Evaluate;
  // A Barrier or a warp shuffle anywhere below (or here): the threads of a block run it
  // in lockstep.
  bool has_barrier = false;
  bool gpu_threads = false;  // For: a threadIdx loop
  int slot = -1;             // LetStmt, For: variable slot; Store, Allocate: buffer slot
  DataType var_type;         // For: the loop variable's type
  // LetStmt value, Store value, Evaluate value, IfThenElse / Assert condition.
  const CExpr* value = nullptr;
  const CExpr* min = nullptr;          // For
  const CExpr* extent = nullptr;       // For
  std::vector<const CExpr*> indices;   // Store
  const CExpr* predicate = nullptr;    // Store (null: every lane)
  bool atomic_add = false;             // Store: adds its value (StoreNode::atomic_add)
  std::vector<const CExpr*> shape;     // Allocate
  const BufferNode* buffer = nullptr;  // Allocate
  // Seq: its statements; LetStmt/For/Allocate/Assert: {body}; IfThenElse: {then, else}
  // with else null when absent.
  std::vector<const CStmt*> children;
  const std::string* message = nullptr;  // Assert
  // Store, LetStmt: the warp shuffles in its expressions, exchanged between the threads
  // of each warp before any of them evaluates the rest.
  std::vector<const CExpr*> shuffles;
};

// How one parameter binds: a buffer slot and, per dimension, either the slot of a bare
// shape variable or a shape expression to check; or a scalar variable's slot.
struct ParamBinding {
  int buffer_slot = -1;
  std::vector<int> shape_var_slots;       // -1 where the extent is an expression
  std::vector<const CExpr*> shape_exprs;  // null where the extent is a bare variable
  int var_slot = -1;                      // scalar parameters
};

struct Program {
  std::deque<CExpr> exprs;  // deques keep node addresses stable
  std::deque<CStmt> stmts;
  const CStmt* body = nullptr;
  std::vector<ParamBinding> params;
  int var_slots = 0;
  int buffer_slots = 0;
  int shuffle_slots = 0;
  std::vector<const VarNode*> slot_vars;  // the variable of each slot, for messages
};

// Compiles f; throws te::Error for IR the interpreter cannot run (unbound variables,
// buffers used outside their Allocate, mismatched types, TensorRead/Reduce nodes).
Program compile(const LoweredFunc& f);

}  // namespace te::interp
