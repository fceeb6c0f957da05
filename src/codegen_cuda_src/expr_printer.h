// Prints te expressions as CUDA C expressions with te's semantics.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen_cuda_src/helpers.h"
#include "codegen_cuda_src/names.h"
#include "codegen_cuda_src/value_range.h"
#include "expr/reads_memory.h"
#include "te/expr.h"

namespace te::cuda {

// A variable as the printed code sees it: its identifier and the type it was declared
// with there (an int32 launcher argument seen from 64-bit index code is widened).
struct VarBinding {
  std::string name;
  DataType declared;
};

// What is in scope where an expression is printed.
struct PrintScope {
  std::map<const VarNode*, VarBinding> vars;
  std::map<const BufferNode*, std::string> buffers;
  std::map<std::string, std::string> buffers_by_name;  // for Buffer objects rebuilt by passes
  VarRanges ranges;                                    // known ranges, for plain / and %
  DataVars data_vars;                                  // bound to values read from memory
};

struct PrintMode {
  bool wide = false;       // int32 values are computed as int64
  bool host = false;       // host launcher code: no memory reads
  bool fast_math = false;  // float32 fast intrinsics
};

class ExprPrinter {
 public:
  ExprPrinter(PrintScope& scope, HelperSet& helpers, NameTable& names, PrintMode mode)
      : scope_(scope), helpers_(helpers), names_(names), mode_(mode) {}

  // e as a C expression; compound expressions come parenthesised.
  std::string print(const Expr& e);
  // e without its outermost parentheses: for an index, a right-hand side, a condition.
  std::string print_bare(const Expr& e) { return strip_parens(print(e)); }
  // index into buf, printed; run-time checked where index_needs_check says so.
  std::string checked_index(const Buffer& buf, const Expr& index);
  // Declarations (`const T x = v;`) of Let expressions hoisted out of what was printed;
  // they must be emitted before the statement that uses the printed text.
  std::vector<std::string> take_hoisted();

  // Vector expressions print as one lane: lane is the C variable holding the lane number
  // (Ramp(b, s, n) prints as b + s * lane, Broadcast(v) as v). Empty: scalar code.
  void set_lane(std::string lane) { lane_ = std::move(lane); }
  // Loads read as a whole vector into a variable (float4 te_v0 = ...): inside code printed
  // for a literal lane ("0".."7"), such a load prints as that variable's component.
  // A vector load read once: its variable and whether its lanes are an array (`.v[k]`,
  // te_vec) rather than `.x .y .z .w`.
  struct VectorLoad {
    std::string name;
    bool array = false;
  };
  void set_vector_loads(std::map<const LoadNode*, VectorLoad> loads) { vector_loads_ = std::move(loads); }
  // Loads of warp fragments a lane nest reads (lane_nest.h): each as its slot of the
  // lane's array.
  void set_fragment_slots(std::map<const LoadNode*, int64_t> slots) { fragment_slots_ = std::move(slots); }
  // Whether an access to buf at index goes through the run-time bounds check.
  bool index_is_checked(const Buffer& buf, const Expr& index) const;
  // buf's name in the kernel.
  std::string name_of(const Buffer& buf) { return buffer_name(buf); }

  // The type an int32 value is computed in: int64 in wide mode.
  DataType compute_type(DataType t) const;
  // The C type of compute_type(t).
  std::string compute_c_type(DataType t) const;

  static std::string strip_parens(const std::string& s);

 private:
  std::string cast(DataType from, DataType to, const std::string& v);
  std::string binary(const BinaryNode* n);
  std::string int_arith(BinOp op, DataType t, const Expr& a, const Expr& b);
  std::string call(const CallNode* n);
  std::string float_call(const char* name, DataType t, const std::vector<std::string>& args);
  std::string bitwise(const CallNode* n);
  std::string extern_call(const CallNode* n);
  std::string load(const LoadNode* n);
  std::string let(const LetNode* n);
  std::string buffer_name(const Buffer& b);
  // Prints e where C may skip evaluating it (the untaken side of if_then_else, the right
  // operand of && and ||): Let values cannot be hoisted out of there.
  std::string print_guarded(const Expr& e);

  PrintScope& scope_;
  HelperSet& helpers_;
  NameTable& names_;
  PrintMode mode_;
  std::string lane_;
  std::map<const LoadNode*, VectorLoad> vector_loads_;
  std::map<const LoadNode*, int64_t> fragment_slots_;
  int guarded_ = 0;
  std::vector<std::string> hoisted_;
};

}  // namespace te::cuda
