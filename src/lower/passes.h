// The passes of lower() (src/lower/lower.cpp) and the state they share.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "te/lower.h"
#include "te/schedule.h"
#include "te/simplify.h"

namespace te::lowering {

// What the loop-nest passes need to know about the schedule being lowered.
struct LowerContext {
  Schedule sched;  // inlined, with storage scopes assigned
  BoundMap bounds;
  // The buffer of every computed stage's outputs and every argument, by current
  // operation and output (value_index).
  std::map<std::pair<const OperationNode*, int>, Buffer> buffers;
  // The buffer of output i of op (TE_ICHECKs that it has one).
  const Buffer& buffer_of(const OperationNode* op, int i = 0) const;
  // The buffers of every output of op that has one, in order.
  std::vector<Buffer> buffers_of(const OperationNode* op) const;
  // Buffers of the arguments, in order (they keep their shapes; accesses are flattened).
  std::vector<Buffer> arg_buffers;
  std::set<const BufferNode*> params;
  // Intermediate buffers: the region of the tensor they hold (one range per dimension).
  std::map<const BufferNode*, std::vector<Range>> realize;
  // Constant bounds of the shape variables (see shape_var_bounds).
  VarBounds known;
  // Set by storage_flatten: the flat buffer that replaced each intermediate buffer.
  std::map<const BufferNode*, Buffer> flat_buffers;
  // Set by build_loop_nests: the Reduce of each cross-thread reduction, which its
  // thread_allreduce marker names by position (how its values combine).
  std::vector<Expr> allreduce_rules;
};

// One loop of a stage's nest.
struct NestLoop {
  IterVar iv;
  bool has_loop = true;  // false: a thread axis that an enclosing loop of the same tag runs
  Expr min, extent;
  ForKind kind = ForKind::Serial;
  std::string thread_tag;
};

// A stage's loop nest before it is assembled: its leaf loops, its statement and, for a
// reduction, the initialisation and where it goes.
struct StageNest {
  const StageNode* stage = nullptr;
  std::vector<NestLoop> loops;  // the leaves, outermost first
  Stmt body;                    // the store (update of a reduction) under its guards
  // Reductions only:
  Stmt init;                       // the store of the identity under its data-parallel guards
  std::vector<Expr> init_guards;   // set by build_loop_nests: guards free of reduction loops
  size_t init_level = 0;           // init runs before loops[init_level]
  std::vector<size_t> init_loops;  // loops (from init_level on) repeated around init
  // Row reductions only (compute_rows): each reduction step updates a row around the
  // element loops (loops[row_level] on): row_lets (the row values' old and new values,
  // the step's factors) bind around row_stores and those loops, all under row_guard.
  size_t row_level = 0;
  std::vector<std::pair<Var, Expr>> row_lets;
  Stmt row_stores;
  Expr row_guard;                      // undefined: none
  Stmt row_init;                       // the row values' identity, before init
  std::vector<size_t> row_init_loops;  // loops (from init_level on) repeated around row_init
  // Cross-thread reductions only: runs after the loops from init_level on (the threads
  // combine their partial results, and one of them stores the total).
  Stmt finish;
};

// ---- Schedule-level passes ----
// Refuses directives that lowering could only drop: a loop schedule on an inlined stage.
void check_schedule(const Schedule& s);
// compute_inline: substitutes inlined stages into their readers (a copy of the schedule).
Schedule inline_stages(const Schedule& s);
// cache stages: gives each intermediate stage its memory scope (cache_read/cache_write
// and set_scope choose it; otherwise the thread loops it is computed under do).
Schedule assign_storage_scopes(const Schedule& s);
// Bound inference on an inlined schedule.
BoundMap infer_bound_inlined(const Schedule& s);
// Buffers, argument checks and regions; throws te::Error for bad argument lists.
LowerContext make_context(const Schedule& s, BoundMap bounds, const std::vector<Tensor>& args);

// ---- Loop nests ----
// One nest per computed stage (ScheduleOps): loops, guards, the store.
std::vector<StageNest> build_loop_nests(LowerContext& ctx);
// Reductions: the init goes just outside the outermost reduction loop (that is not bound
// to GPU threads).
std::vector<StageNest> place_reduction_init(std::vector<StageNest> nests);
// compute_at: nests inside the loops of their consumers; the root nests in order.
Stmt attach_stages(const std::vector<StageNest>& nests, const LowerContext& ctx);
// Refuses annotations nested where they have no effect (parallel in parallel, vectorized
// or GPU loops; vectorized in vectorized; host loops around kernels).
void check_loop_nesting(const Stmt& body, const LowerContext& ctx);
// One stage's nest as a statement, without the stages computed inside it (for dumps).
Stmt assemble_nest(const StageNest& nest);

// ---- Statement passes ----
// Row-major flat indices; intermediate buffers get flat shapes over their regions.
// Records the flat buffers in ctx.flat_buffers.
Stmt storage_flatten(const Stmt& s, LowerContext& ctx);
// Stages marked double_buffer() get a second buffer; their attach loop fetches the next
// iteration's data into one while the current iteration reads the other.
Stmt inject_double_buffer(const Stmt& s, const LowerContext& ctx);
// How a stage of that many buffers (2 or more) reads in messages: "double-buffered" or
// "pipelined over n buffers".
std::string buffering_phrase(int buffers);
// Allocate nodes for intermediates at the innermost statement covering their uses
// (shared and global ones outside the thread loops that share them).
Stmt allocate_buffers(const Stmt& s, const LowerContext& ctx);

// vthread loops become interleaved copies of their innermost statements (TVM's
// InjectVirtualThread); buffers allocated inside get one copy per vthread.
Stmt inject_virtual_threads(const Stmt& body, const LowerContext& ctx);

// tensorize: each tensorized stage's nest under its axis, matched against the
// intrinsic's declaration, becomes a TensorIntrinsicCall (te::Error where it differs).
Stmt tensorize_stages(const Stmt& body, const LowerContext& ctx);

// Whether s does nothing (no statement, an empty sequence, an expression evaluated).
bool is_no_op(const Stmt& s);

// loop_partition with known constant bounds of variables (see te::partition_loops).
Stmt partition_loops(const Stmt& s, const VarBounds& known);

// The parameters: argument buffers, then the scalar variables no argument shape binds.
std::vector<Param> make_params(const LowerContext& ctx, const Stmt& body);
// Within a device region, thread loops of one tag run over the tag's largest extent.
Stmt unify_thread_extents(const Stmt& s, const VarBounds& known);
// Cross-thread reductions: each thread_allreduce marker becomes warp shuffles, shared
// memory and barriers (TVM's LowerThreadAllreduce).
Stmt lower_thread_allreduce(const Stmt& s, const LowerContext& ctx);
// Renames loop and let variables that would shadow a variable in scope or a parameter.
Stmt unique_names(const Stmt& s, const std::vector<Param>& params);

}  // namespace te::lowering
