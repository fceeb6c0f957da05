// CodeGen: loop IR to LLVM IR. One instance fills one llvm::Module with, for every
// LoweredFunc, the C-ABI kernel of its KernelSignature and a packed entry point
// `<kernel>__packed(void** args)` that the JIT calls (args[i] points at argument i).
//
// Values live in LLVM registers as: bool -> i1, intN/uintN -> iN, float16 and bfloat16
// -> float (always holding a value of the type: every float16/bfloat16 operation computes
// in float and rounds to the type, as the interpreter does; round_to), float32 -> float,
// float64 -> double. In memory bool is one byte, float16 is half and bfloat16 is i16
// (its bits: the float's upper half).
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen_llvm/index_analysis.h"
#include "codegen_llvm/signature.h"
#include "expr/reads_memory.h"
#include "te/ir.h"
#include "te/simplify.h"

namespace te::codegen {

// Binds key to value in map for the guard's lifetime, then restores the outer binding (or
// its absence): the scoping of variables, allocated buffers and known loop bounds.
template <typename Map>
class ScopedBinding {
 public:
  ScopedBinding(Map& map, const typename Map::key_type& key, typename Map::mapped_type value) : map_(map), key_(key) {
    auto it = map_.find(key_);
    if (it != map_.end()) outer_ = std::move(it->second);
    map_[key_] = std::move(value);
  }
  ~ScopedBinding() {
    if (outer_)
      map_[key_] = std::move(*outer_);
    else
      map_.erase(key_);
  }
  ScopedBinding(const ScopedBinding&) = delete;
  ScopedBinding& operator=(const ScopedBinding&) = delete;

 private:
  Map& map_;
  typename Map::key_type key_;
  std::optional<typename Map::mapped_type> outer_;
};

struct CodeGenOptions {
  std::string cpu, features;   // function attributes "target-cpu" / "target-features"
  int prefer_vector_bits = 0;  // "prefer-vector-width" (Target::vector_bits); 0: the CPU's
  // The target's CPU as LLVM knows it (its features: tensor intrinsics that need one);
  // null: assume none beyond the triple's baseline.
  const llvm::MCSubtargetInfo* subtarget = nullptr;
  bool fma_contraction = true;     // `contract` on float arithmetic
  bool fast_vector_math = true;    // BuildOptions::fast_vector_math
  bool check_data_indices = true;  // BuildOptions::check_data_indices
  std::string symbol_prefix;       // prepended to every external symbol (JIT uniqueness)
  bool packed_entries = true;      // emit `<kernel>__packed` (the JIT calls those)
  // Vector stores into outputs of at least this many bytes are streamed (non-temporal)
  // when aligned; <= 0: never (BuildOptions::streaming_store_min_bytes, resolved).
  int64_t streaming_store_min_bytes = 0;
};

// The external name of a function's packed entry point.
std::string packed_symbol(const std::string& prefix, const std::string& name);
// The symbol a call_extern of `name` calls: the name itself in objects (no prefix), a
// per-build alias in the JIT, which binds it to the address it resolved.
std::string extern_symbol(const std::string& prefix, const std::string& name);

// A load whose index was checked ahead (a group of row loads in a sequence, a load
// stepping with a loop's variable): the index to use and the lanes to load (null: all).
struct PrecheckedLoad {
  Expr index;
  llvm::Value* lane_mask;
};
using PrecheckBinding = ScopedBinding<std::unordered_map<const LoadNode*, PrecheckedLoad>>;

class CodeGen {
 public:
  CodeGen(llvm::Module& module, const CodeGenOptions& options);
  // Throws te::Error for IR the CPU backend cannot run (not lowered, a Barrier,
  // unknown variables or buffers, ...), naming the function.
  void add_function(const LoweredFunc& f, const KernelSignature& sig);

 private:
  struct BufferInfo {
    llvm::Value* ptr = nullptr;  // pointer to the first element (memory type)
    DataType dtype;              // element type
    int64_t base_align = 1;      // bytes the pointer is known to be aligned to
    // Parameters: their own alias scope and the scopes of the other parameters, so that
    // code which loads the pointers from a closure still knows they do not overlap.
    llvm::MDNode* alias_scope = nullptr;
    llvm::MDNode* noalias = nullptr;
  };
  // What belongs to the LLVM function being emitted (a kernel or a parallel body).
  struct FunctionState {
    llvm::Function* fn = nullptr;
    std::vector<llvm::Value*> heap_allocs;  // live te_alloc results, freed on error returns
    bool in_parallel = false;               // inside a parallel loop body
    // Set when a load's index read from memory left its buffer: (error message, i1 slot);
    // checked before the function returns success.
    // One flag per buffer and access kind, with the message's head and the checked
    // indices it names.
    struct BadIndexFlag {
      std::string head;
      std::vector<std::string> indices;
      llvm::Value* flag;
    };
    std::vector<BadIndexFlag> bad_index_flags;
    bool streamed = false;  // emitted a non-temporal store: fence before returning
  };

  // ---- types (codegen_types.cpp) ----
  llvm::Type* value_type(DataType t);
  llvm::Type* memory_type(DataType t);
  llvm::Type* abi_type(DataType scalar);  // kernel parameters: bool as i8, float16/bfloat16 as float
  llvm::Type* same_shape(llvm::Type* like, llvm::Type* scalar);  // scalar, or a vector of like's lanes
  llvm::Value* to_memory(llvm::Value* v, DataType t);
  llvm::Value* from_memory(llvm::Value* v, DataType t);
  llvm::Value* round_to_half(llvm::Value* v);         // float (vector) -> nearest half value
  llvm::Value* round_to_bfloat16(llvm::Value* v);     // float (vector) -> nearest bfloat16 value
  llvm::Value* round_to(llvm::Value* v, DataType t);  // the two above by t; else v as it is
  llvm::Value* int_const(DataType t, int64_t v);
  llvm::Value* splat_if_vector(llvm::Value* scalar, int lanes);
  llvm::Value* to_i64(llvm::Value* v, DataType t);  // index -> i64 (sign/zero extend)
  llvm::Value* to_bool(llvm::Value* v, DataType t);
  llvm::Value* any_lane(llvm::Value* mask);                // i1 vector -> i1
  llvm::Value* and_masks(llvm::Value* a, llvm::Value* b);  // either may be null (all lanes)

  // ---- expressions (codegen_expr.cpp, codegen_arith.cpp) ----
  llvm::Value* emit(const Expr& e);
  llvm::Value* emit_var(const VarNode* n);
  llvm::Value* emit_binary(const BinaryNode* n);
  llvm::Value* emit_int_binary(BinOp op, llvm::Value* a, llvm::Value* b, DataType t);
  llvm::Value* emit_int_division(BinOp op, llvm::Value* a, llvm::Value* b, DataType t);
  llvm::Value* safe_divisor(llvm::Value* b, bool is_signed);
  llvm::Value* emit_float_min_max(BinOp op, llvm::Value* a, llvm::Value* b, bool half);
  llvm::Value* emit_float_binary(BinOp op, llvm::Value* a, llvm::Value* b, DataType t);
  llvm::Value* emit_cast(llvm::Value* v, DataType from, DataType to);
  llvm::Value* round_to_odd_float(llvm::Value* v);  // double (vector) -> float, rounded to odd
  llvm::Value* emit_lane_loads(const BufferInfo& info, const Expr& index, llvm::Type* vec_mem, int lanes);
  llvm::Value* emit_strided_load(const BufferInfo& info, const Expr& base, int64_t stride, llvm::Type* vec_mem,
                                 int lanes);
  llvm::Value* emit_saturating_float_to_int(llvm::Value* v, DataType to, llvm::Type* target);
  llvm::Value* emit_call(const CallNode* n);
  llvm::Value* emit_float_intrinsic(Intrinsic op, llvm::Value* x, DataType t);
  llvm::Value* emit_classification(Intrinsic op, llvm::Value* x, DataType arg_type);
  llvm::Value* emit_bitwise(Intrinsic op, llvm::Value* a, llvm::Value* b, DataType t);
  bool provably_in_bounds(const Buffer& buf, const Expr& index) const;
  // index clamped to 0 where it lies outside buf (an i1 flag records it; the function
  // then fails with a message naming the load or store).
  bool needs_index_check(const Buffer& buf, const Expr& index) const;
  Expr checked_index(const Buffer& buf, const Expr& index, llvm::Value* active, bool is_store, llvm::Value** lane_mask);
  // ORs `bad` (an i1) into the function's flag for buf's loads or stores, noting the
  // indices checked for its message.
  void record_bad_index(const Buffer& buf, bool is_store, llvm::Value* bad, const std::vector<std::string>& indices);
  void emit_success_return();
  llvm::Value* emit_libm_call(const std::string& name, std::vector<llvm::Value*> args);
  // exp of a float32 vector without libm (codegen_vector_math.cpp).
  llvm::Value* emit_vector_exp(llvm::Value* x);
  llvm::Value* emit_if_then_else(const CallNode* n);
  // call_extern (codegen_extern.cpp).
  llvm::Value* emit_extern_call(const CallNode* n);
  llvm::FunctionCallee extern_function(const std::string& name, DataType ret, const std::vector<DataType>& params);
  llvm::Value* emit_ramp(const RampNode* n);
  llvm::Value* emit_let(const LetNode* n);

  // ---- memory (codegen_memory.cpp) ----
  const BufferInfo& buffer(const Buffer& b);
  llvm::Value* emit_load(const LoadNode* n);
  void emit_store(const StoreNode* n);
  // buffer[index] += value per lane (active's lanes), each an atomicrmw.
  void emit_atomic_add(const BufferInfo& info, llvm::Value* value, const Expr& index, llvm::Value* active, DataType t);
  void emit_allocate(const AllocateNode* n);
  llvm::Value* stack_allocation(int64_t bytes, bool zero_fill);        // an i8 pointer
  llvm::Value* heap_allocation(const Buffer& buffer, bool zero_fill);  // an i8 pointer, freed by the caller
  llvm::Align contiguous_alignment(const BufferInfo& info, const Expr& base);
  // Attaches the buffer's alias scopes to a memory access (a load, store or intrinsic).
  llvm::Value* annotate(llvm::Value* access, const BufferInfo& info);

  // ---- streaming stores (codegen_stream.cpp) ----
  // The parameters f never loads from: outputs whose stores may bypass the caches.
  void find_streamable_outputs(const LoweredFunc& f, const KernelSignature& sig);
  // Stores value (a vector) at ptr = buf + index, streaming it where the buffer and the
  // index qualify and the buffer is aligned at run time (else a store aligned to align);
  // false (nothing emitted) where it cannot be streamed.
  bool emit_streaming_store(const Buffer& buf, const BufferInfo& info, llvm::Value* value, llvm::Value* ptr,
                            const Expr& index, llvm::Align align);
  // Orders this function's streamed stores before its return (sfence).
  void emit_stream_fence();

  // ---- statements (codegen_stmt.cpp) ----
  void emit(const Stmt& s);
  // A sequence, with one check per group of row loads at one gathered position
  // (codegen_check_groups.cpp).
  void emit_seq(const Stmt& s);
  void emit_for(const ForNode* n);
  // Checks the loads of n's body at indices stepping with its variable once, before the
  // loop (codegen_check_hoist.cpp); returns the loop's end (begin where a check fails)
  // and binds the loads it checked in prechecked_ while `bindings` live.
  llvm::Value* hoist_index_checks(const ForNode* n, llvm::Value* begin, llvm::Value* end,
                                  std::vector<std::unique_ptr<PrecheckBinding>>* bindings);
  // for (var = begin; var < end; ++var) body, in the var's type.
  void emit_loop(const Var& var, llvm::Value* begin, llvm::Value* end, const Stmt& body, ForKind kind);
  void emit_if(const IfThenElseNode* n);
  void emit_assert(const AssertNode* n);
  // A tensor intrinsic: its LLVM implementation on the regions' start pointers
  // (codegen_tensor_intrinsic.cpp; te::Error where it has none or the CPU lacks it).
  void emit_tensor_intrinsic(const TensorIntrinsicCallNode* n);
  // Sets the last error to message, frees live heap allocations and returns -1.
  void emit_fail(const std::string& message);
  // Frees live heap allocations and returns code (an i32).
  void emit_error_return(llvm::Value* code);
  llvm::AllocaInst* entry_alloca(llvm::Type* t, uint64_t align);

  // ---- parallel loops (codegen_parallel.cpp) ----
  void emit_parallel_for(const ForNode* n);

  // ---- functions (codegen_function.cpp) ----
  llvm::Function* new_function(llvm::FunctionType* type, llvm::GlobalValue::LinkageTypes linkage,
                               const std::string& name);
  void emit_packed_entry(llvm::Function* kernel, const KernelSignature& sig);
  void alias_scopes_for(const LoweredFunc& f, const KernelSignature& sig);
  llvm::FunctionCallee runtime_function(const char* name);

  using VarValues = std::unordered_map<const VarNode*, llvm::Value*>;
  // Binds a variable in vars_ for the lifetime of the guard.
  using ScopedVar = ScopedBinding<VarValues>;

  [[noreturn]] void fail_build(const std::string& what) const;

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  CodeGenOptions options_;
  std::string func_name_;
  FunctionState fs_;
  VarValues vars_;
  DataVars data_vars_;      // let-bound to values read from memory
  VarFactors let_factors_;  // let-bound integers known to be multiples of a power of two
  VarBounds loop_bounds_;   // the enclosing loops with constant bounds: their variables' ranges
  std::unordered_map<const BufferNode*, BufferInfo> buffers_;       // parameters and live allocations
  llvm::Value* mask_ = nullptr;                                     // live lanes inside a vector if_then_else branch
  std::unordered_map<const LoadNode*, PrecheckedLoad> prechecked_;  // see PrecheckedLoad
  llvm::Value* extern_mask_ = nullptr;  // a vector store's predicate: the lanes extern calls run for
  // Per buffer of the current kernel: its alias scope list and the others' (alias_scopes_for).
  std::unordered_map<const BufferNode*, llvm::MDNode*> scope_of_, noalias_of_;
  int parallel_bodies_ = 0;
  std::unordered_set<const BufferNode*> streamable_;  // find_streamable_outputs
};

}  // namespace te::codegen
