/// \file
/// Schedules: how a tensor graph runs, kept as data (as in TVM). A Schedule holds one
/// Stage per operation, producers before consumers. A Stage holds its loops: the root
/// iter vars (the compute's axes, then its reduction axes), the split/fuse relations that
/// derive new iter vars from them, the leaf iter vars (the loops, outermost first),
/// per-loop annotations (parallel, vectorized, unrolled, bound to a GPU thread), where it
/// is computed (at the root, inlined into its readers, or inside a loop of a consumer)
/// and the memory scope of its buffer.
///
/// Every primitive checks its inputs and throws te::Error whose message names the
/// primitive, the stage, the axis and the rule broken, e.g.
///   "split: axis 'i' of stage 'C' was already split or fused; schedule its results"
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "te/export.h"
#include "te/expr.h"
#include "te/ir.h"
#include "te/tensor.h"
#include "te/tensorize.h"

namespace te {

/// What a split does where its factor does not divide the parent's extent (Halide's
/// TailStrategy).
enum class TailStrategy : uint8_t {
  /// The last outer iteration runs the inner loop behind a guard (parent < extent): the
  /// default; always correct. Vectorized, the tail becomes a scalar loop.
  GuardWithIf,
  /// The last outer iteration starts at extent - factor, so it overlaps the one before and
  /// recomputes those points: no guard, the tail stays one full vector. For stages without
  /// reduction axes (a reduction would accumulate the overlap twice). Where the extent is
  /// not known to be at least the factor, the split falls back to GuardWithIf.
  ShiftInwards,
  /// GuardWithIf, but the inner loop has `factor` iterations even where the extent is
  /// smaller: every tile is whole, so a stage computed inside one (compute_at) covers the
  /// whole tile (a tensor core's 16 rows); the points past the extent are guarded off.
  GuardWholeTiles
};

/// parent = outer * factor + inner (plus the parent's min). Exactly one of factor and
/// nparts is given; the other follows from the parent's extent at bound inference.
/// With TailStrategy::ShiftInwards: parent = min(outer * factor, extent - factor) + inner.
struct TE_API SplitRelation {
  IterVar parent;                                 ///< The loop that was split.
  IterVar outer;                                  ///< The outer result ("<parent>.outer").
  IterVar inner;                                  ///< The inner result ("<parent>.inner").
  Expr factor;                                    ///< split(parent, factor): inner has `factor` iterations
  Expr nparts;                                    ///< split_nparts(parent, nparts): outer has `nparts` iterations
  TailStrategy tail = TailStrategy::GuardWithIf;  ///< how an uneven last iteration runs
};
/// fused = outer * extent(inner) + inner.
struct TE_API FuseRelation {
  IterVar outer;  ///< The outer loop fused.
  IterVar inner;  ///< The inner loop fused.
  IterVar fused;  ///< The result ("<outer>.<inner>.fused").
};
/// The one loop of extent 1 that fuse() gives a stage without axes (a 0-d tensor).
struct TE_API SingletonRelation {
  IterVar iv;  ///< The loop.
};
/// One step of a stage's loop structure.
using Relation = std::variant<SplitRelation, FuseRelation, SingletonRelation>;

/// Where a stage is computed: at the root of the function, inlined into its readers, or
/// inside a loop of another stage (compute_at).
enum class AttachType : uint8_t {
  Root,    ///< its own loop nest at the root (compute_root, the default)
  Inline,  ///< substituted into its readers (compute_inline)
  Scope    ///< inside a loop of another stage (compute_at)
};

/// How one loop runs. ThreadBinding loops name the thread axis they are bound to.
struct TE_API IterVarAttr {
  ForKind kind = ForKind::Serial;  ///< Serial, Parallel, Vectorized, Unrolled or ThreadBinding.
  IterVar thread;                  ///< for ForKind::ThreadBinding: the thread_axis() given to bind()
};

/// A padded stride of a stage's buffer (Stage::storage_align): the stride of dimension
/// `dim` becomes the smallest value at least its row-major stride that is
/// `offset` modulo `factor`.
struct TE_API StorageAlign {
  int dim = 0;         ///< the dimension (the index of the axis in the operation's axes)
  int64_t factor = 1;  ///< the stride's modulus
  int64_t offset = 0;  ///< the stride's remainder, 0 <= offset < factor
};

/// The data of a Stage (see Stage for the accessors).
struct TE_API StageNode {
  Operation op;         ///< the current operation (cache_read/cache_write/rfactor rewrite it)
  Operation origin_op;  ///< the operation the stage was created for
  /// Every operation a primitive gave the stage after origin_op (cache_read, cache_write,
  /// rfactor, skip_zeros, ... rewrite it), the current one last: looking up any of them
  /// finds the stage, so a tensor of the graph as it was then still names it.
  std::vector<Operation> rewritten_ops;
  std::vector<IterVar> all_iter_vars;               ///< roots first (axes, then reduce axes), then derived
  std::vector<IterVar> leaf_iter_vars;              ///< the loops, outermost first
  std::vector<Relation> relations;                  ///< in the order they were applied
  std::map<const IterVarNode*, IterVarAttr> attrs;  ///< annotations of annotated loops
  AttachType attach_type = AttachType::Root;        ///< where the stage is computed
  Operation attach_op;                              ///< AttachType::Scope: the origin op of the stage computed in
  IterVar attach_ivar;                              ///< AttachType::Scope: the loop of that stage
  MemoryScope scope = MemoryScope::Global;          ///< the memory of its buffer
  bool scope_set = false;                           ///< set explicitly (set_scope, cache_read, cache_write)
  bool is_output = false;                           ///< one of the schedule's outputs
  std::vector<StorageAlign> storage_align;          ///< padded strides of its buffer (storage_align)
  int buffers = 1;         ///< copies of its buffer its attach loop cycles through (double_buffer: 2, pipeline: n)
  int swizzle_bytes = 0;   ///< its CUDA shared buffer's swizzle (Stage::swizzle), 0: none
  IterVar tensorize_axis;  ///< tensorize(): the loop whose nest the intrinsic replaces
  TensorIntrinsic tensorize_intrinsic;  ///< tensorize(): the intrinsic (undefined: none)
  /// warp_specialize(): its TMA copies are the producer warpgroup's (absent: the block's).
  std::optional<WarpSpecialization> warp_specialization;
};

/// An input the built function takes in another layout (Schedule::pretransform) or
/// transformed by a computation (Schedule::precompute), or both: taken = input, first
/// computed by `computed` if defined, then laid out by storage_order / inner_block.
struct TE_API Pretransform {
  Tensor input;  ///< the placeholder as the computation defines it
  Tensor taken;  ///< the placeholder the function takes in its place
  /// precompute(): the stage computed from input alone whose values the function takes
  /// (its definition, no longer a stage of the schedule); undefined for a layout only.
  Tensor computed;
  std::vector<int> storage_order;  ///< taken's dimension p is input's dimension storage_order[p]
  /// > 0: the last dimension of the order is blocked by this many elements: taken's
  /// first dimension is that dimension's block, its last the element in the block
  /// (taken has one dimension more than input).
  int64_t inner_block = 0;
};

/// The stages Schedule::winograd() makes, in the order they are computed.
struct TE_API WinogradStages {
  Tensor weights;     ///< "<conv>.wino_weights": G g Gᵀ per channel pair, [4][4][the weights' other dims]
  Tensor input_rows;  ///< "<conv>.wino_rows": Bᵀ d along the rows of each tile row (undefined: winograd_1d)
  Tensor input;       ///< "<conv>.wino_input": Bᵀ d B per tile, [4][4][the input's other dims][channels]
  Tensor product;     ///< "<conv>.wino_product": the 16 products summed over the input channels
  /// "<conv>.wino_output": Aᵀ m A with the output channels innermost, which conv copies,
  /// where conv's innermost axis is not an output channel (NCHW); undefined otherwise.
  Tensor output;
};

/// The data of a Schedule.
struct TE_API ScheduleNode {
  std::vector<Tensor> outputs;                     ///< the tensors create_schedule() was given
  std::vector<std::shared_ptr<StageNode>> stages;  ///< producers before consumers
  std::vector<Pretransform> pretransforms;         ///< inputs taken in another layout, in the order given
};

/// How one operation runs: a handle to a stage of a Schedule (`s[C]`). The primitives
/// change the schedule in place; see docs/primitives for each, with the loop nest
/// before and after.
class TE_API Stage {
 public:
  /// An undefined stage.
  Stage() = default;
  /// The stage `node` of `schedule` (Schedule::operator[] makes them).
  Stage(std::shared_ptr<ScheduleNode> schedule, std::shared_ptr<StageNode> node)
      : schedule_(std::move(schedule)), node_(std::move(node)) {}

  /// Whether this refers to a stage.
  bool defined() const { return node_ != nullptr; }
  /// The stage's data.
  const StageNode* get() const { return node_.get(); }
  /// The stage's data.
  const StageNode* operator->() const { return node_.get(); }
  /// Whether both refer to the same stage.
  bool same_as(const Stage& o) const { return node_ == o.node_; }

  /// The operation the stage computes now.
  const Operation& op() const { return node_->op; }
  /// The operation's name.
  const std::string& name() const { return node_->op->name; }
  /// The loops, outermost first.
  const std::vector<IterVar>& leaf_iter_vars() const { return node_->leaf_iter_vars; }
  /// Every iter var: the roots (axes, then reduction axes), then those derived by splits
  /// and fuses.
  const std::vector<IterVar>& all_iter_vars() const { return node_->all_iter_vars; }
  /// The splits and fuses, in the order they were applied.
  const std::vector<Relation>& relations() const { return node_->relations; }
  /// The annotation of a loop (Serial when none was given).
  ForKind for_kind(const IterVar& iv) const;
  /// The thread axis a loop is bound to (undefined when it is not bound).
  IterVar bound_thread(const IterVar& iv) const;
  /// Where the stage is computed.
  AttachType attach_type() const { return node_->attach_type; }
  /// AttachType::Scope: the stage and loop this stage is computed in.
  Stage attach_stage() const;
  /// AttachType::Scope: the loop of attach_stage() this stage is computed in.
  const IterVar& attach_ivar() const { return node_->attach_ivar; }
  /// The memory scope of the stage's buffer.
  MemoryScope scope() const { return node_->scope; }
  /// Whether the stage is an output of the schedule.
  bool is_output() const { return node_->is_output; }

  // ---- Loop structure ----
  /// Splits a loop into (outer, inner) with `factor` inner iterations: "i.outer", "i.inner".
  /// `tail` says how the last outer iteration runs when factor does not divide the extent.
  std::pair<IterVar, IterVar> split(const IterVar& parent, Expr factor, TailStrategy tail = TailStrategy::GuardWithIf);
  /// Splits a loop into (outer, inner) with `nparts` outer iterations.
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, Expr nparts);
  /// Fuses two adjacent loops (outer directly before inner) into one: "i.j.fused".
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  /// Fuses consecutive loops, outermost first. On a stage without axes, fuse({}) gives
  /// its single loop of extent 1.
  IterVar fuse(const std::vector<IterVar>& axes);
  /// Puts the given loops in this order, in the positions they occupy now.
  void reorder(const std::vector<IterVar>& order);
  /// split x by x_factor and y by y_factor, then order (x.outer, y.outer, x.inner, y.inner).
  std::tuple<IterVar, IterVar, IterVar, IterVar> tile(const IterVar& x, const IterVar& y, Expr x_factor, Expr y_factor);

  // ---- Loop annotations ----
  /// Runs the loop on a GPU thread axis: bind(iv, thread_axis("threadIdx.x")).
  void bind(const IterVar& iv, const IterVar& thread);
  /// Turns the loop (of constant extent) into vector instructions (data-parallel loops).
  void vectorize(const IterVar& iv);
  /// Replaces the loop (of constant extent) by copies of its body.
  void unroll(const IterVar& iv);
  /// Runs the loop's iterations on te's thread pool (data-parallel loops).
  void parallel(const IterVar& iv);

  // ---- Where the stage is computed ----
  /// Computes this stage inside loop iv of `parent`, which must read it.
  void compute_at(const Stage& parent, const IterVar& iv);
  /// Substitutes this stage's expression into its readers (element-wise stages only).
  void compute_inline();
  /// Computes this stage in its own loop nest at the root of the function (the default).
  void compute_root();
  /// The memory scope of this stage's buffer: "global", "shared", "local", "warp" or
  /// "warpgroup" (tensor-core fragments, docs/tensor_cores.md).
  void set_scope(const std::string& scope);
  /// Pads the stride of dimension `axis` (T.axis(d) of its tensor T) of this stage's buffer to the
  /// smallest value at least its row-major stride that is `offset` modulo `factor`
  /// (TVM's storage_align): e.g. (axis 0, 32, 1) gives a 32 x 32 shared tile rows of 33
  /// elements, so a column's 32 elements fall in 32 different banks.
  void storage_align(const IterVar& axis, int factor, int offset);
  /// Lays this stage's CUDA shared-memory buffer out by the `bytes`-wide swizzle (32, 64
  /// or 128) of Hopper's TMA and wgmma: the 16-byte chunk at byte offset b moves to
  /// chunk bits [4, 4 + w) XOR [7, 7 + w) (w = 1, 2, 3), so the 8 rows of a pattern
  /// fall in different banks. The layout wgmma's shared operands take (rows of exactly
  /// `bytes`, docs/tensor_cores.md); elsewhere a bank-conflict remedy like storage_align
  /// that keeps rows dense. Only the CUDA backend moves anything: interpret() and the CPU
  /// backends keep row-major buffers, which hold the same values. lower() checks that the
  /// stage is in shared memory and its buffer a whole number of 8-row patterns (8 x bytes).
  void swizzle(int bytes);
  /// Gives this stage two buffers (TVM's double_buffer): computed at a loop (compute_at),
  /// iteration v + 1's data is fetched into one buffer while iteration v reads the other, so
  /// on a GPU the loads of the next tile overlap the arithmetic on the current one and the
  /// loop needs one barrier per iteration instead of two. The loop is unrolled by two.
  /// lower() checks the attachment: a serial or unrolled loop.
  void double_buffer();
  /// Gives this stage `buffers` buffers (2 to 8; 2 is double_buffer()): iteration v reads
  /// buffer v % buffers while the fetches of the next buffers - 1 iterations are in
  /// flight, so a copy has that many iterations to land. The loop is unrolled by
  /// `buffers`; stages computed at the same loop take the same count. On the GPU the
  /// depth pays with TMA copies (intrinsics::cuda_tma_load_2d): each barrier waits only
  /// for the copies the code after it reads; the threads' cp.async copies are all waited
  /// for at every barrier. te::Error for a count outside 2..8, a placeholder or an output.
  void pipeline(int buffers);
  /// Warp specialization (CUDA, sm_90a): this pipelined stage's TMA copies (pipeline(n) or
  /// double_buffer(), tensorized with intrinsics::cuda_tma_load_2d) are issued by a
  /// producer warpgroup the block gets besides the warpgroups its loops bind (consumers;
  /// threadIdx.x spans 128 threads). One producer thread issues each copy as soon as the
  /// consumers have released the buffer's last tile (an "empty" mbarrier per buffer, which
  /// each consumer thread arrives on where the copy stands in the program); the consumers
  /// wait for a tile only where they read it (its "full" mbarrier) and synchronize among
  /// themselves only where their own shared accesses need it (a named barrier), so the
  /// copies run ahead of the arithmetic without __syncthreads. `setmaxnreg` moves
  /// registers from the producer to the consumers (`registers`; by default
  /// WarpSpecialization::balanced for the kernel's consumer warpgroups; 0 keeps the
  /// compiled count). interpret() and the CPU run the program as written. lower() checks
  /// that the stage is pipelined and TMA-copied; build_cuda that every TMA copy of such a
  /// kernel is warp-specialized with the same registers, that threadIdx.x spans 128
  /// threads and threadIdx.z none, and that the consumers ask no more registers than the
  /// producer releases. te::Error for register counts outside 24..256 or not a multiple of
  /// 8, one count balanced and the other not, a placeholder or an output.
  void warp_specialize(WarpSpecialization registers = {});

  // ---- Rewriting the reduction ----
  /// Visits only the points of this sum where `producer` can be nonzero. `producer` is an
  /// element-wise compute `if_then_else(cond, value, 0)` whose cond requires `y % S == 0`
  /// (or truncmod) of an axis y (a transposed convolution's input with S - 1 zeros
  /// inserted between its pixels), and this stage sums a product with one read of it as a
  /// factor, at y = e + r or e - r for a reduction axis r. r then takes only the values of
  /// its residue class: r = r0 + S * t, t the new reduction axis "<r>.nz" (ceil(extent / S)
  /// steps; a `where` keeps r inside its range when S does not divide it), and the loop
  /// nest does 1/S of the work per such axis. The terms skipped are 0 times the other
  /// factors: the result is unchanged unless one of those is infinite or NaN (0 * inf is
  /// NaN), and equals what PyTorch's transposed convolution gives, which never multiplies
  /// the zeros. Call it before scheduling r; te::Error when the pattern is not there.
  void skip_zeros(const Tensor& producer);
  /// Visits only the taps of this sum where `producer`, zero outside a box (a zero
  /// padding: an element-wise compute `if_then_else(cond, value, 0)` whose cond bounds an
  /// axis y by tests y >= lo, y < hi, ...), can be nonzero. Where this stage reads
  /// `producer` at y = k * r + e (r a reduction axis, k a constant, e free of reduction
  /// axes: a strided or dilated convolution's window), r becomes an axis of the same name
  /// over the taps that keep y inside: [max(min, ceil((lo - e) / k)), ...), bounds in the
  /// stage's axes, so its loop does no work on the padding (a 7-deep window over 16 padded
  /// planes, stride 2: 50 of 56 taps). `axes`: the reduction axes to narrow (default:
  /// every one the cond bounds); narrow the ones whose loops run outside the axes their
  /// bounds use (a loop inside them runs to the largest bound, each point guarded). The
  /// terms skipped are 0 times the other factors, as with skip_zeros. Call it before
  /// scheduling those axes; te::Error when the pattern is not there.
  void skip_padding(const Tensor& producer, const std::vector<IterVar>& axes = {});

  // ---- Intrinsics ----
  /// Replaces the loop nest under `axis` (axis included) by `intrinsic` (TVM's tensorize;
  /// docs/tensorize.md). lower() matches the nest against the intrinsic's declaration:
  /// the loops in order (the declaration's axes, then its reduction axes) with equal
  /// constant extents, the same expression (operations, types, reducer) and each access
  /// affine in those loops with the declaration's strides; a mismatch is a te::Error
  /// naming the part that differs. Inside a reduction the intrinsic accumulates and te's
  /// init stays as it is; a nest that holds the init runs it first, then the intrinsic.
  void tensorize(const IterVar& axis, const TensorIntrinsic& intrinsic);

 private:
  std::shared_ptr<ScheduleNode> schedule_;
  std::shared_ptr<StageNode> node_;
};

/// How a tensor graph runs: one Stage per operation (create_schedule makes it). Copies
/// share the schedule; copy() makes an independent one.
class TE_API Schedule {
 public:
  /// An undefined schedule.
  Schedule() = default;
  /// A handle to the schedule n.
  explicit Schedule(std::shared_ptr<ScheduleNode> n) : node_(std::move(n)) {}
  /// Whether this refers to a schedule.
  bool defined() const { return node_ != nullptr; }
  /// The schedule's data.
  const ScheduleNode* get() const { return node_.get(); }

  /// The stage of a tensor or operation (te::Error if the schedule has none). A tensor
  /// whose operation a primitive replaced still finds its stage.
  Stage operator[](const Tensor& t) const;
  /// The stage of an operation.
  Stage operator[](const Operation& op) const;
  /// Every stage, producers before consumers.
  std::vector<Stage> stages() const;
  /// The tensors the schedule was created for.
  const std::vector<Tensor>& outputs() const { return node_->outputs; }

  /// A new stage that copies `t` into `scope` ("shared", "local", "global", or "warp" /
  /// "warpgroup": a tensor-core fragment, docs/tensor_cores.md) and that the given readers read instead
  /// of t. Returns the copy ("A.shared"). `storage_order` (t's dimensions, outermost
  /// first; empty: t's own order) lays the copy out otherwise, as Halide's
  /// reorder_storage: {1, 2, 3, 0} packs OIHW weights as IHWO, the output channels
  /// contiguous; the copy's axes follow that order.
  Tensor cache_read(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers,
                    const std::vector<int>& storage_order = {});
  /// A copy of t, as cache_read's, with dimension `dim` stored by phase: the copy
  /// ("A.phases") has t's dimensions with dim's x replaced by two, x % stride ("phase")
  /// then x / stride ("coarse"), and its readers read t(.., x, ..) there. A read at
  /// x = stride * w + r (a stride-2 convolution's padded input along its output row w)
  /// becomes a read at (r % stride, w + r / stride): contiguous along w, where it was
  /// strided, for a reader vectorized over w. The values are the same. te::Error as for
  /// cache_read, and when dim is not a dimension of t or stride is less than 2.
  Tensor cache_read_phases(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers, int dim,
                           int stride);
  /// A new stage that computes t's expression into `scope`; t's stage then copies it out.
  /// Returns the new tensor ("C.local"). t's stage must not be scheduled yet.
  /// `storage_order` (as for cache_read) lays the new stage out otherwise: {0, 2, 3, 1}
  /// computes an NCHW output as NHWC, its channels the innermost axis.
  Tensor cache_write(const Tensor& t, const std::string& scope, const std::vector<int>& storage_order = {});
  /// Factors a reduction over the leaf reduction loop `axis` of t's stage: a new stage
  /// ("C.rf") computes the partial results, with axis's iterations as a data-parallel
  /// dimension at position factor_axis, and t's stage then reduces over that dimension.
  /// t's stage loses its loop schedule. Returns the new tensor. A tuple reduction
  /// (argmax, welford, a comm_reducer over a tuple) gets a factored stage with one
  /// output per value ("idx.rf", "val.rf"); the tensor returned is the one of t's value
  /// (`Tensor(rf.op(), i)` names the others).
  Tensor rfactor(const Tensor& t, const IterVar& axis, int factor_axis = 0);
  /// Computes t by phases of the given axes: a new stage ("C.phases") computes
  /// P(..., a, ..., q, ...) = t's expression at x = stride * q + a for each axis x
  /// given (a: "<x>.phase", `stride` values, before the other axes; q: "<x>.coarse",
  /// ceil(extent / stride) values, in x's place), and t's stage then copies
  /// t(..., x, ...) = P(..., x % stride, ..., x / stride, ...). The values are the same;
  /// what changes is that reads which depend on x only through x % stride (a transposed
  /// convolution's weights after skip_zeros) are the same for every q of a phase, which
  /// a tile over q reuses. `innermost` (optional): an axis of t that goes last in the
  /// phase stage instead, its vector axis (the channels, where t's last axis is a short
  /// row of an NCHW image). t's stage must not be scheduled yet. Returns the new tensor.
  Tensor split_phases(const Tensor& t, const std::vector<IterVar>& axes, int stride,
                      const IterVar& innermost = IterVar());
  /// Computes a 3x3 stride-1 convolution by Winograd's minimal filtering F(2x2, 3x3)
  /// (Lavin and Gray, 2016): per 2x2 outputs and channel pair, 16 products where the
  /// direct sum does 36. conv's body must be `sum(d(.., h + rh + c, .., w + rw + c', ..,
  /// rc, ..) * g(.., rh, .., rw, .., rc, ..), {rh, rw, rc})` (either factor first), rh and
  /// rw of 3 taps, h and w axes of conv, the weights' other indices axes of conv that the
  /// input does not use (the output channels), the input's others axes of conv or
  /// constants: an NHWC or NCHW convolution, padded or not. Four stages come before
  /// conv's (WinogradStages): the weights transformed (a stage of the weights alone:
  /// precompute() it when they are constant), the input tiles transformed in two passes,
  /// then for each of the 16 tile positions a matrix product over the input channels,
  /// channels innermost; conv's stage becomes Aᵀ m A, each output read from its tile
  /// (through a fifth stage with the output channels innermost when conv's are not).
  /// Output rows or columns of odd extent compute a last tile half outside and read zeros
  /// past the input. The result equals the convolution up to rounding (the transforms add
  /// and subtract inputs and halve weights: errors a few times a direct sum's). conv's
  /// stage must not be scheduled yet, nor other stages computed at its loops; float types
  /// only. te::Error naming what differs otherwise.
  WinogradStages winograd(const Tensor& conv);
  /// Computes one window of a convolution by Winograd's minimal filtering in one
  /// dimension, F(m, r) with m = outputs_per_tile, whatever its stride and dilation: a
  /// strided window reads the input by phases (stride 2: even and odd points), each phase
  /// a stride-1 window of its own taps r_p, and m outputs cost the sum over phases of
  /// m + r_p - 1 products per step of the other reduction axes where the direct sum does
  /// m * r (a 7-tap stride-2 window, m = 4: 13 against 28). conv's body must be
  /// `sum(d(.., s * x + dl * window + c, ..) * g(.., window, ..), {.., window, ..})` (either
  /// factor first): x an axis of conv that no other index uses, s and dl constants >= 1,
  /// c >= 0 (pad with a stage before), the window's taps contiguous within each phase
  /// (dilation 1, or a dilation the stride divides). The other reduction axes (the other
  /// windows, the channels) stay a sum in the transformed domain, so few input channels
  /// pay. Stages before conv's (WinogradStages, input_rows undefined): the weights
  /// transformed along the window, ν first (precompute() them when constant); the input
  /// transformed per tile of m outputs, ν innermost (a vector of constants times each
  /// input point); the products summed, ν first and the output channels last; conv
  /// becomes Aᵀ m of its tile (through `output`, channels innermost, when conv's are
  /// not). A last tile past x's extent reads zeros past the input. The result equals
  /// the convolution up to rounding (interpolation at 0, ±1, ±2, ±1/2, ±3, ±1/3 and
  /// infinity: at most 12 points per phase). te::Error naming what differs otherwise.
  WinogradStages winograd_1d(const Tensor& conv, const IterVar& window, int outputs_per_tile = 4);

  /// The function built from this schedule takes `input` (a placeholder) already laid
  /// out in `storage_order` (its dimensions, outermost first): {1, 2, 3, 0} takes OIHW
  /// weights as IHWO, the output channels contiguous. This is Ansor's layout rewrite for
  /// pre-transformed weights: a layout chosen for speed costs nothing per call when the
  /// input is constant (a model's weights), because the caller transforms it once, with
  /// the function lower_pretransform() makes. Every read of input becomes a read of the
  /// returned placeholder ("<input>_<order>", e.g. "w_1230") at the permuted indices;
  /// lower() puts that placeholder in input's place in the parameter list (list either).
  /// With `inner_block` > 0 the last dimension of the order is also blocked by that many
  /// elements, the blocks outermost: {0, 1, 2, 3} with 32 takes HWIO weights of 256
  /// output channels as [8][H][W][I][32] ("w_0123_b32"), so that a register tile's 32
  /// columns read one contiguous panel (oneDNN's blocked weight formats); a last block
  /// that is not whole is padded with zeros.
  /// te::Error when input is not a placeholder that a stage reads, is already
  /// pretransformed, the order is not a permutation, the order is the identity with no
  /// block, or the block is negative or not shorter than its dimension's constant extent.
  Tensor pretransform(const Tensor& input, const std::vector<int>& storage_order, int64_t inner_block = 0);
  /// The function built from this schedule takes t's values, computed once by the
  /// caller, instead of the input t is computed from: t is a stage that reads one input
  /// (a placeholder) and nothing else, and that input's only reader (a convolution's
  /// weights transformed for Winograd, winograd(): a model's weights are constant, the
  /// transform need not run on every call). t's readers read the returned placeholder
  /// ("<t>" with '.' as '_') and t's stage leaves the schedule; lower() puts the
  /// placeholder in the input's place in the parameter list; lower_pretransform(input)
  /// makes the function that computes it. pretransform() of the returned placeholder then
  /// lays it out as well (one function does both). te::Error when t is not part of the
  /// schedule, is an input or an output, reads anything but one input, shares that
  /// input with another reader, is scheduled or has stages computed at its loops, or
  /// the input is taken pretransformed already.
  Tensor precompute(const Tensor& t);
  /// The inputs taken pretransformed, in the order pretransform() was called.
  const std::vector<Pretransform>& pretransforms() const { return node_->pretransforms; }

  /// A deep copy: primitives on it leave this schedule as it is.
  Schedule copy() const;

 private:
  std::shared_ptr<ScheduleNode> node_;
};

/// A schedule with one stage per operation reachable from outputs, all at the root.
TE_API Schedule create_schedule(const std::vector<Tensor>& outputs);

}  // namespace te
