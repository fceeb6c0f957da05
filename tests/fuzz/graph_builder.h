// Random tensor graphs for the graph fuzzer (see graph_case.h): inputs of random shapes
// and 1-4 compute stages, each reading earlier tensors through element-wise, shifted,
// strided, guarded, transposed, concatenated, reduced or matrix-product accesses.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "expr_gen.h"
#include "fuzz_rng.h"
#include "te/te.h"

namespace te::fuzz {

// How the values of a graph stay comparable across schedules (see fuzz_values.h).
enum class GraphMode : uint8_t {
  Int,         // integer stages: wrapping arithmetic is exact in any order
  ExactFloat,  // float stages over small integers; every read clamped to [-256, 256]
  FmaFloat,    // float stages of + and * over positive values (FMA contraction on)
};

struct GraphNode {
  Tensor tensor;
  std::vector<Expr> shape;    // extents (symbolic when the inputs are)
  std::vector<int64_t> size;  // their values in this case
  bool input = false;
};

class GraphBuilder {
 public:
  // gpu: values for CUDA C, where signed overflow is undefined: integer reads are
  // clamped to [-64, 64] and trees kept shallow, so no int32 operation can overflow.
  GraphBuilder(Rng& rng, GraphMode mode, DataType dtype, bool gpu, bool symbolic, int max_extent);

  // Adds one compute stage reading earlier tensors (or new inputs).
  void add_stage();

  const std::vector<GraphNode>& nodes() const { return nodes_; }
  // The values of the symbolic extents.
  const std::vector<std::pair<Var, int64_t>>& vars() const { return vars_; }
  // A generous count of the float operations on any path to an output (FmaFloat's
  // tolerance grows with it).
  int op_count() const { return ops_; }
  std::string text() const { return text_.str(); }

 private:
  int new_input(std::vector<Expr> shape, std::vector<int64_t> size);
  int random_input();
  int pick_producer();
  // Another tensor of exactly the shape of node p (existing or a new input).
  int same_shape_partner(int p);
  Expr read(int node, const std::vector<Expr>& idx);
  ExprGen make_gen();
  int add_compute(std::vector<Expr> shape, std::vector<int64_t> size, Tensor t, const std::string& kind);
  std::string next_name() { return "T" + std::to_string(++stages_); }

  int elementwise(int p);
  int stencil(int p);
  int downsample(int p);
  int guarded_shift(int p);
  int transpose(int p);
  int concat(int p);
  int reduction(int p);
  int matmul(int p);

  Rng& rng_;
  GraphMode mode_;
  DataType dtype_;
  bool gpu_, symbolic_;
  int max_extent_;
  std::vector<GraphNode> nodes_;
  std::vector<std::pair<Var, int64_t>> vars_;
  std::ostringstream text_;
  int stages_ = 0, inputs_ = 0, ops_ = 0;
};

}  // namespace te::fuzz
