// The rules of auto_schedule (trials = 0): shared state and one entry point per rule.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "auto_schedule/decisions.h"
#include "auto_schedule/graph.h"
#include "auto_schedule/target.h"
#include "te/auto_schedule.h"
#include "te/schedule.h"

namespace te::auto_sched {

// Where a kept (non-inlined) stage is computed.
// The most vector multiply-adds a register tile's unrolled reduction body holds: a 7x7x3
// window times a 16-register tile is thousands of instructions, more than the CPU's
// decoded-uop cache holds, and the loop would then run at the decoders' pace.
constexpr int64_t kUnrolledFmas = 512;

struct Placement {
  enum class Kind { Root, At } kind = Kind::Root;
  // At: the root stage whose loop nest holds it (its "anchor").
  const OperationNode* anchor = nullptr;
  // At: the anchor's axes (indices) that are fixed at the loop it is computed at; the
  // anchor puts them outermost.
  std::vector<int> outer;
  // At: a reduction computed as the anchor's register tile (a matmul and its
  // element-wise epilogue): the anchor is tiled as the reduction would be.
  bool tile = false;
  // (An At stage whose anchor holds a register tile is computed once per parallel work
  // item of the tiling, at the loop tile_reduction_cpu makes: a convolution's padding.)
};

struct Context {
  Schedule s;
  Graph& g;
  const AutoScheduleOptions& opts;
  CpuTarget cpu;
  std::map<const OperationNode*, Placement> place;
  // Stages a pattern rule schedules whole (attention on the CPU): never inlined, kept at
  // the root, left alone by the other rules.
  std::set<const OperationNode*> whole;
  // Copies a layout rule made (packed weights, inputs by phase): never inlined.
  std::set<const OperationNode*> kept;
  std::vector<std::string> notes;  // one line per decision (printed with options.progress)
  Decisions& choices;              // the rules' values, or the search's

  void note(std::string line) { notes.push_back(std::move(line)); }
  // A value the search may change: `name` is "<op>.<what>" (see Decisions).
  int64_t choose(const OperationNode* op, const std::string& what, int64_t rule_value, std::vector<int64_t> options) {
    return choices.choose(op->name + "." + what, rule_value, std::move(options));
  }
  Stage stage(const OperationNode* op) const;
};

// The rules over the graph of `outputs`, each open value taken from `choices`.
Schedule apply_rules(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options, Decisions& choices);

// Rewrites each sum that multiplies a producer's structured zeros to skip them
// (Stage::skip_zeros), noting each; returns the outputs' tensors in s now (the graph
// the other rules see). On a CPU, the last axis is computed by phases too where the
// layout rule will move a channel axis innermost.
std::vector<Tensor> skip_structured_zeros(Schedule& s, const std::vector<Tensor>& outputs,
                                          const AutoScheduleOptions& options, const CpuTarget& cpu,
                                          std::vector<std::string>& notes);
// Whether op is one of `constants` (AutoScheduleOptions::constant_inputs, or a placeholder
// the rules added to them).
bool is_constant(const OperationNode* op, const std::vector<Tensor>& constants);
// CPU: 3x3 stride-1 float32 convolutions of 16 or more input and output channels
// computed by Winograd's F(2x2, 3x3) (Schedule::winograd) unless options.winograd is
// false; weights among `constants` transformed once by the caller (Schedule::precompute),
// the transformed weights' placeholder added to `constants`; an NCHW input's copy with
// the channels last and the outputs' stage with them innermost go into `kept`. Notes
// each; returns the outputs' tensors in s now.
// Then the convolutions left whose one window, computed by Winograd's F(m, r) in one
// dimension (Schedule::winograd_1d: strided and dilated windows by phases), a window of
// 5 or more taps, saves 1.8x or more of the multiplications, where the other reduction
// axes sum 16 or more steps, the other windows span at most 16 points, and there are 16
// or more output channels (C2D's 7x7
// stride-2 windows over 3 channels: 17 products per 6 outputs where the direct sum does
// 42); their stages go into `rows` (scheduled whole), their input transforms into `kept`.
struct Winograd1dStages {
  const OperationNode* product = nullptr;  // the transformed products (WinogradStages::product)
  const OperationNode* output = nullptr;   // the output transform: conv, or WinogradStages::output
  const OperationNode* input = nullptr;    // the input transform (WinogradStages::input)
  int input_tile_dim = -1;                 // the input transform's axis over the tiles
  int64_t outputs = 0;                     // m: outputs per tile
};
std::vector<Tensor> use_winograd(Schedule& s, const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                                 std::vector<Tensor>& constants, std::vector<std::string>& notes,
                                 std::set<const OperationNode*>& kept, std::vector<Winograd1dStages>& rows);
// CPU: a winograd_1d convolution scheduled whole (use_winograd's `rows`, marked in
// Context::whole): its output transform parallel over the rows, each tile's m outputs
// unrolled over vectors of channels, and the products of a row computed there in
// register tiles over the tiles and channels, so they stay in the L1 and L2.
void schedule_winograd_1d_cpu(Context& cx, const Winograd1dStages& w);
// CPU: a reduction whose output rows are short for the vectors (an NCHW convolution's
// rows of 26 pixels) while one of its channel axes is long is computed with that axis
// innermost (cache_write with a storage order), reading its small weights packed the
// same way (cache_read with a storage order; the packed copy goes into `kept`), or
// taking them packed when they are among `constants` (Schedule::pretransform), and
// copied back; returns the outputs' tensors in s now.
std::vector<Tensor> choose_layouts(Schedule& s, const std::vector<Tensor>& outputs, const CpuTarget& cpu,
                                   const std::vector<Tensor>& constants, std::vector<std::string>& notes,
                                   std::set<const OperationNode*>& kept);
// Body evaluations of a reader per element of its input above which a copy of that input
// made on every call (weights packed, an input stored by phase) costs nothing measurable.
constexpr int64_t kEvaluationsPerCopiedElement = 64;
// CPU: a reduction whose vector axis (its last) reads an input at a constant stride along
// it (a stride-2 convolution's padded input, NCHW, along the output row), which costs
// two loads and a shuffle per vector, reads a copy of that input stored by phase
// (Schedule::cache_read_phases; the copy goes into `kept`) instead: one load per vector.
// Only where the copy is small next to the reduction's arithmetic; the search may turn it
// off ("<stage>.read_by_phase"). Returns the outputs' tensors in s now.
std::vector<Tensor> read_strided_inputs_by_phase(Schedule& s, const std::vector<Tensor>& outputs, const CpuTarget& cpu,
                                                 Decisions& choices, std::vector<std::string>& notes,
                                                 std::set<const OperationNode*>& kept);
// Whether choose_layouts would compute op with a channel axis innermost.
bool moves_channels_innermost(const OperationNode& op, const CpuTarget& cpu, const std::vector<Tensor>& constants);
// Marks element-wise producers that are cheap or read without reuse as inlined.
void choose_inlines(Context& cx);
// Decides where every kept stage is computed (Context::place).
void choose_placements(Context& cx);
// Whether a reduction's reads reuse data across one of its data-parallel axes while its
// innermost axis is contiguous in some read: a matmul, a convolution.
bool has_tiling_reuse(const Graph& g, const OperationNode* op);

// CPU: schedules one root stage and the stages computed inside it.
void schedule_root_cpu(Context& cx, const OperationNode* op);
// CPU: multi-level tiling: `outer` holds the loops over the output, `inner` (a local
// stage) the register tile that `red` (the original reduction) describes.
void tile_reduction_cpu(Context& cx, Stage outer, Stage inner, const OperationNode* red,
                        const std::vector<const OperationNode*>& attached);
// CPU: a tiled reduction whose output rows are shorter than half a vector (a
// convolution's weight gradient: rows of 3 taps) while its innermost reduction axis is
// contiguous: vector lanes along that axis (rfactor), the partial sums tiled as
// tile_reduction_cpu tiles any reduction, the lanes added after. False (nothing done)
// when the rule does not apply.
bool tile_lane_partials_cpu(Context& cx, const OperationNode* op);
// CPU: whether tile_lane_partials_cpu takes this tiled reduction (rows shorter than half
// a vector).
bool has_short_rows(const Context& cx, const OperationNode* op);
// Whether op is a padding itself, `if_then_else(cond, x, 0)` or a select, rather than a
// copy of one.
bool pads_itself(const Operation& op);
// Whether a padding (pads_itself) pads its dimension `dim`: its condition tests that axis.
bool pads_along(const Operation& op, size_t dim);
// Whether a reduction axis is a window the padding rule narrows (more than 4 taps).
bool long_window(const IterVar& r);
// Whether the reduction reads a zero padding through such a window along one of its
// output axes, in a dimension the padding pads (C3D's depth: 7 taps, stride 2, over 16
// planes padded by 3): the padding rule narrows it to the taps inside the input, so the
// work items at the edges do less (C3D's 8 output planes do 4 to 7 taps each; the tiling
// then makes smaller items, 8 per thread, that the idle thread takes part of the busy
// one's share in: two threads, Zen 5, 27.2 -> 26.2 ms; C2D, DIL and the 3x3
// convolutions the same within 1%); and work items that pad their own rows would pad
// most of their neighbours' again.
bool long_window_over_padding(const Context& cx, const OperationNode* red, const std::vector<Read>& reads);
// Whether, along every dimension `pad` pads, the windows through which the reduction
// reads it (`reads`: its effective reads) span at most 1/16 of the padded extent: one
// thread's 4 work items, a quarter of the rows each, then pad less than a quarter again
// of their neighbours' rows (C2D: 7 of 230 rows; C3D's depth: 7 of 22 planes).
bool windows_narrow_next_to_padding(const Context& cx, const OperationNode* pad, const OperationNode* red,
                                    const std::vector<Read>& reads);
// CPU: a reduction of 4096 steps or more (or symbolic) per point: its vector partial sums
// keep 4 accumulators, as one would be a chain of dependent adds, latency-bound at a
// quarter of the adds a core can issue.
bool long_reduction(const OperationNode* op);
// CPU: a reduction without reuse at the root (row sums, a full sum, a matrix-vector product).
void schedule_reduction_cpu(Context& cx, const OperationNode* op);
// CPU: whether a reduction has too few points to keep the threads busy and a reduction
// long enough to split into parallel parts (schedule_reduction_cpu does, at the root).
bool needs_parallel_parts(const Context& cx, const OperationNode* op);
// CPU: a row reduction (compute_rows) at the root: parallel over its rows, its innermost
// element axis vectorized inside its reduction loops.
void schedule_row_reduction_cpu(Context& cx, const OperationNode* op);
// The stages of every te::ops::attention in the graph (found through the graph,
// ops::attention_stages_of) that its own schedule takes whole (Context::whole): on the
// CPU all, on CUDA those the tensor-core schedule applies to.
std::set<const OperationNode*> find_attention(const Context& cx);
// CUDA: marks each float16 / bfloat16 matmul that a tensor-core GEMM schedule takes (and
// its fused epilogue) as scheduled whole (Context::whole), its operands as kept.
void find_gemms(Context& cx);
// CUDA: schedules each matmul find_gemms marked: wgmma for sm_90a, else mma.sync.
void schedule_gemm_cuda_rule(Context& cx);
// CPU: schedules each attention found with ops::schedule_attention_cpu.
void schedule_attention_cpu_rule(Context& cx);
// CPU, after the tiling: a sum over a zero-padded producer narrows the reduction loops
// that run outside the axes their bounds use to the taps inside the padding
// (Stage::skip_padding); decision "<op>.skip_padding".
void skip_padding_taps(Context& cx);
// CUDA: a long reduction without reuse to tile, by cross-thread reductions: one block per
// output point, or, where the points are few and their sums long, the reduction cut into
// parts (rfactor; decision "<op>.grid_parts"), a block per part and point, then a block
// per point combining the parts (a sum's, an argmax's, a Welford's own combine).
void schedule_long_reduction_cuda(Context& cx, const OperationNode* op);
// CUDA: schedules each attention found with ops::schedule_attention_cuda.
void schedule_attention_cuda_rule(Context& cx);
// CPU: an element-wise root stage and the stages computed in its loops.
// CPU, a scatter: its leading axes that index the output directly (each iteration its
// own elements: no atomics, deterministic) fused into the parallel loop; else, for a
// scatter-add that atomics serve, its outermost axis.
void schedule_scatter_cpu(Context& cx, const OperationNode* op);
void schedule_elementwise_cpu(Context& cx, const OperationNode* op, const std::vector<const OperationNode*>& attached);
// CPU: a stage computed inside another one's loop: vectorized (a reduction through
// rfactor), small loops unrolled. `anchor_loop` is where it and its rfactor stage go.
void schedule_attached_cpu(Context& cx, const OperationNode* op, const Stage& anchor, const IterVar& anchor_loop);

// CUDA: schedules one root stage and the stages computed inside it.
void schedule_root_cuda(Context& cx, const OperationNode* op);

// Helpers.
// Splits iv into vectors of `lanes` (ShiftInwards where the stage has no reduction) and
// vectorizes the inner part; returns the outer part. Nothing when lanes < 2.
IterVar vectorize_split(Stage st, const IterVar& iv, int lanes, bool shift_inwards);
// Fuses consecutive leaf loops [first, last] of st (indices into its leaves).
IterVar fuse_range(Stage st, const std::vector<IterVar>& loops);
std::string axis_names(const std::vector<IterVar>& v);
// Whether `index` changes within aligned runs of `rows` values of axis x: a grouped
// convolution's input channel (co / 32) * 16 + rc does not for runs of 8 (or any divisor
// of 32), so every row of such a tile, or every lane of such a vector, reads the same.
bool varies_within_rows(const Expr& index, const IterVar& x, int64_t rows);
// Whether one of `reads` indexes `axis` together with one of red's reduction axes: a
// window sliding along the axis (a convolution's input at y * stride + kh).
bool reads_window_along(const std::vector<Read>& reads, const OperationNode& red, const IterVar& axis);
// The outputs as s's stages compute them now: a definition rewrite (cache_write, reads
// by phase, skipped zeros) replaces an output's operation.
std::vector<Tensor> outputs_in(const Schedule& s, const std::vector<Tensor>& outputs);

}  // namespace te::auto_sched

namespace te::auto_sched {
// CPU: splits op's innermost contiguous reduction axis into vectors through rfactor;
// returns the factored tensor, undefined when the rule does not apply. `annotate`:
// order the factored stage's loops (the lanes last) and vectorize them now (not when
// it is itself factored next: rfactor rebuilds its loops). `rule_vectors`: the rules' count
// of vector accumulators (the search's accumulator_vectors; 1 where the axis is too short).
Tensor vectorize_reduction(Context& cx, const OperationNode* op, bool annotate, int64_t rule_vectors = 1);
// A factored stage's loops: its data axes, the reductions, then the lanes (vectorized).
void order_lanes_last(Stage rs, const Tensor& rf);
}  // namespace te::auto_sched
