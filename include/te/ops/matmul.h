/// \file
/// Matrix multiplication as a TE compute (header-only). Its CUDA schedules are in
/// te/ops/matmul_cuda.h: schedule_matmul_cuda (the classic tiled SGEMM) and
/// schedule_matmul_tensorcore_cuda (float16 / bfloat16 on the tensor cores).
///
///   Tensor C = te::ops::matmul(A, B);             // A: M x K, B: K x N, float
///   Schedule s = create_schedule({C});
///   te::ops::schedule_matmul_cuda(s, C);          // 128 x 128 tiles per block
///
/// The schedules find A and B as the inputs of C's operation (no names involved).
#pragma once
#include <string>

#include "te/te.h"

namespace te::ops {

namespace matmul_detail {

// matmul() (b_transposed false: B is K x N) or linear() (B is N x K): C = sum over k of
// widen(A[i, k]) * widen(B's element (k, j)), 16-bit inputs widened to float32. `api`,
// `a` and `b` name the function and its operands in the errors.
inline Tensor gemm(const Tensor& A, const Tensor& B, bool b_transposed, const std::string& name, const char* api,
                   const char* a, const char* b) {
  const std::string op = std::string(api) + ": ";
  if (A.ndim() != 2 || B.ndim() != 2)
    throw Error(op + a + " and " + b + " must be matrices, got " + std::to_string(A.ndim()) + " and " +
                std::to_string(B.ndim()) + " axes");
  if (!A.dtype().is_float() || A.dtype() != B.dtype())
    throw Error(op + a + " and " + b + " must have the same float dtype, got " + A.dtype().to_string() + " and " +
                B.dtype().to_string());
  const int64_t* ka = as_const_int(A.shape()[1]);
  const int64_t* kb = as_const_int(B.shape()[b_transposed ? 1 : 0]);
  if (ka && kb && *ka != *kb)
    throw Error(op + a + "'s columns (" + std::to_string(*ka) + ") and " + b + "'s " +
                (b_transposed ? "columns (" : "rows (") + std::to_string(*kb) + ") differ");
  const DataType acc = A.dtype().bits() == 16 ? Float(32) : A.dtype();
  IterVar k = reduce_axis({make_zero(A.shape()[1].dtype()), A.shape()[1]}, "k");
  auto widen = [&](const Expr& e) { return e.dtype() == acc ? e : cast(acc, e); };
  return compute(
      {A.shape()[0], B.shape()[b_transposed ? 0 : 1]},
      [&](Expr i, Expr j) { return sum(widen(A(i, k)) * widen(b_transposed ? B(j, k) : B(k, j)), {k}); }, name);
}

}  // namespace matmul_detail

/// C[i, j] = sum over k of A[i, k] * B[k, j]: A is M x K, B is K x N, both of one float
/// dtype (float16 and bfloat16 inputs accumulate in float32: C is float32).
inline Tensor matmul(const Tensor& A, const Tensor& B, const std::string& name = "matmul") {
  return matmul_detail::gemm(A, B, false, name, "matmul", "A", "B");
}

/// x · wᵀ, as a linear layer (PyTorch's F.linear without bias, TVM's nn.dense) computes it:
/// C[i, j] = sum over k of x[i, k] * w[j, k], x is M x K, w is N x K (a layer's weights,
/// one row per output feature), both of one float dtype (float16 and bfloat16 inputs
/// accumulate in float32). schedule_matmul_wgmma_cuda takes it too: w's rows are the
/// K-major tiles wgmma reads.
inline Tensor linear(const Tensor& x, const Tensor& w, const std::string& name = "linear") {
  return matmul_detail::gemm(x, w, true, name, "linear", "x", "w");
}

/// How a GEMM's C reads its B.
enum class MatmulForm {
  None,    ///< not a GEMM of the two forms below
  AB,      ///< matmul(): C[i, j] = sum over k of A[i, k] * B[k, j], B is K x N
  ABTrans  ///< linear(): C[i, j] = sum over k of A[i, k] * B[j, k], B is N x K
};

/// Which GEMM C is: exactly one of the forms of MatmulForm, each factor as read or
/// widened to C's type, k over [0, K), A and B two tensors of one float dtype, no
/// condition; written by hand or by matmul() / linear(), the same answer. A transposed
/// A, a partial range of k, a third factor or one tensor on both sides (A · A: the
/// schedules stage A and B apart) is neither. The GEMM rule of auto_schedule takes these.
inline MatmulForm matmul_form(const Tensor& C) {
  const OperationNode* op = C.op().get();
  if (op->kind != OpKind::Compute || op->axis.size() != 2 || op->reduce_axis.size() != 1 || op->inputs.size() != 2 ||
      op->num_outputs() != 1 || op->is_scatter())
    return MatmulForm::None;
  const auto* sum = op->body.as<ReduceNode>();
  if (sum == nullptr || sum->reducer != Reducer::Sum || sum->condition.defined() || sum->sources.size() != 1)
    return MatmulForm::None;
  const auto* product = sum->source().as<BinaryNode>();
  if (product == nullptr || product->op != BinOp::Mul) return MatmulForm::None;
  // `factor` reads a matrix at (row, column), as it is or widened to C's type.
  auto matrix = [&](const Expr& factor, const IterVar& row, const IterVar& column) -> const OperationNode* {
    Expr read = factor;
    if (const auto* widen = factor.as<CastNode>()) read = widen->value;
    const auto* t = read.as<TensorReadNode>();
    if (t == nullptr || t->value_index != 0 || t->indices.size() != 2 || !t->indices[0].same_as(Expr(row)) ||
        !t->indices[1].same_as(Expr(column)) || factor.dtype() != C.dtype() || t->op->shape.size() != 2)
      return nullptr;
    return t->op.get();
  };
  const IterVar& k = op->reduce_axis[0];
  const OperationNode* a = matrix(product->a, op->axis[0], k);
  const OperationNode* kn = matrix(product->b, k, op->axis[1]);
  const OperationNode* nk = matrix(product->b, op->axis[1], k);
  const OperationNode* b = kn != nullptr ? kn : nk;
  if (a == nullptr || b == nullptr || a->dtype != b->dtype || !a->dtype.is_float() || !is_const_int(k.dom().min, 0))
    return MatmulForm::None;
  const Expr& b_k = b->shape[kn != nullptr ? 0 : 1];
  const Expr& b_n = b->shape[kn != nullptr ? 1 : 0];
  if (!equal(k.dom().extent, a->shape[1]) || !equal(k.dom().extent, b_k) || !equal(op->shape[0], a->shape[0]) ||
      !equal(op->shape[1], b_n))
    return MatmulForm::None;
  return kn != nullptr ? MatmulForm::AB : MatmulForm::ABTrans;
}

/// Whether C is matmul()'s form (MatmulForm::AB; see matmul_form()).
inline bool is_matmul(const Tensor& C) { return matmul_form(C) == MatmulForm::AB; }

/// What a schedule of matmul (or linear) finds in its output C: A, B and the constant M, N, K.
struct MatmulOperands {
  Tensor A;                   ///< M x K
  Tensor B;                   ///< K x N (N x K when b_transposed)
  int64_t M;                  ///< rows of A and C
  int64_t N;                  ///< columns of C
  int64_t K;                  ///< columns of A
  bool b_transposed = false;  ///< C is linear()'s form (MatmulForm::ABTrans): B is N x K
};

/// C's operands for the schedule named `schedule`: te::Error ("<schedule>: ...") when C is
/// neither of matmul_form()'s forms or an extent is not a constant.
inline MatmulOperands matmul_operands(const Tensor& C, const std::string& schedule) {
  const auto* op = C.op().get();
  const MatmulForm form = matmul_form(C);
  if (form == MatmulForm::None)
    throw Error(schedule + ": '" + op->name +
                "' is not a matmul: C[i, j] = sum over k of A[i, k] * B[k, j] (te::ops::matmul) or A[i, k] * B[j, "
                "k] (te::ops::linear), each factor as read or widened to C's type");
  Tensor A(op->inputs[0]), B(op->inputs[1]);
  auto constant = [&](const Expr& e, const char* what) {
    const int64_t* v = as_const_int(e);
    if (v == nullptr) throw Error(schedule + ": " + what + " is " + to_string(e) + ", not a constant");
    return *v;
  };
  const bool transposed = form == MatmulForm::ABTrans;
  return {A,
          B,
          constant(A.shape()[0], "M"),
          constant(B.shape()[transposed ? 0 : 1], "N"),
          constant(A.shape()[1], "K"),
          transposed};
}

/// The tiled GEMMs' one shape rule for C (schedule_matmul_tensorcore_cuda,
/// schedule_matmul_wgmma_cuda): their last tiles shift inward to stay whole
/// (TailStrategy::ShiftInwards), so C must hold one block_m x block_n tile; te::Error
/// ("<schedule>: C is ...") otherwise.
inline void check_c_holds_a_tile(const std::string& schedule, int64_t M, int64_t N, int block_m, int block_n) {
  if (M >= block_m && N >= block_n) return;
  throw Error(schedule + ": C is " + std::to_string(M) + " x " + std::to_string(N) +
              ", smaller than a block_m x block_n = " + std::to_string(block_m) + " x " + std::to_string(block_n) +
              " tile (the last tiles shift inward to stay whole); take smaller tiles");
}

}  // namespace te::ops

// Deprecated, kept for one release: this header still includes the CUDA schedules, as it
// did when it held schedule_matmul_cuda. Include te/ops/matmul_cuda.h for them; define
// TE_OPS_COMPUTE_ONLY to get the compute alone now.
#ifndef TE_OPS_COMPUTE_ONLY
#include "te/ops/matmul_cuda.h"
#endif
