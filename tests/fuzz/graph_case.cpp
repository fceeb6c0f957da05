#include "graph_case.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "graph_builder.h"
#include "te/auto_schedule.h"
#include "graph_schedule.h"

namespace te::fuzz {
namespace {

class BarrierFinder : public IRVisitor {
 public:
  bool found = false;

 protected:
  void visit_barrier(const BarrierNode*) override { found = true; }
};

bool has_barrier(const Stmt& s) {
  BarrierFinder f;
  f.visit(s);
  return f.found;
}

}  // namespace

FuzzCase make_graph_case(uint64_t seed, const GraphCaseOptions& options) {
  FuzzCase c;
  c.seed = seed;
  c.kind = "graph";
  Rng rng(seed);
  using Auto = GraphCaseOptions::Auto;
  const bool gpu =
      options.auto_schedule == Auto::Off ? rng.chance(options.gpu_percent) : options.auto_schedule == Auto::Cuda;
  GraphMode mode;
  DataType dtype;
  const int m = static_cast<int>(rng.below(100));
  if (!gpu && m < options.fma_percent) {
    mode = GraphMode::FmaFloat;
    dtype = rng.chance(70) ? Float(32) : Float(64);
  } else if (m < 55) {
    static const DataType kInts[] = {Int(32), Int(32), Int(64), Int(16), UInt(8), UInt(32)};
    mode = GraphMode::Int;
    dtype = gpu ? Int(32) : rng.pick(kInts);
  } else {
    mode = GraphMode::ExactFloat;
    dtype = rng.chance(70) ? Float(32) : Float(64);
  }
  const bool symbolic = !gpu && options.auto_trials == 0 && rng.chance(options.symbolic_percent);
  c.gpu = gpu;
  c.compare = mode == GraphMode::FmaFloat ? Compare::Relative : Compare::Value;
  c.build_options.fma_contraction = mode == GraphMode::FmaFloat;
  c.main.label = "scheduled";

  GraphBuilder gb(rng, mode, dtype, gpu, symbolic, options.max_extent);
  std::ostringstream prog;
  prog << "mode "
       << (mode == GraphMode::Int          ? "int"
           : mode == GraphMode::ExactFloat ? "exact float"
                                           : "fma float")
       << ", " << (gpu ? "GPU" : "CPU") << " schedule\n";
  std::ostringstream log;
  try {
    const int stages = static_cast<int>(rng.range(1, options.max_stages));
    for (int k = 0; k < stages; ++k) gb.add_stage();
    c.rel_tol = 4.0 * (gb.op_count() + 2) * unit_roundoff(dtype);

    // Outputs: the computed tensors nothing reads; arguments: the inputs they need.
    std::set<const OperationNode*> read;
    for (const GraphNode& n : gb.nodes())
      for (const Operation& in : n.tensor.op()->inputs) read.insert(in.get());
    std::vector<Tensor> computes, outputs, inputs;
    std::vector<const GraphNode*> output_nodes, input_nodes;
    for (const GraphNode& n : gb.nodes()) {
      if (n.input) continue;
      computes.push_back(n.tensor);
      if (!read.count(n.tensor.op().get())) {
        outputs.push_back(n.tensor);
        output_nodes.push_back(&n);
      }
    }
    std::set<const OperationNode*> reachable;
    for (const Operation& op : topo_sort(outputs)) reachable.insert(op.get());
    for (const GraphNode& n : gb.nodes())
      if (n.input && reachable.count(n.tensor.op().get())) {
        inputs.push_back(n.tensor);
        input_nodes.push_back(&n);
      }
    prog << gb.text() << "outputs:";
    for (const Tensor& t : outputs) prog << " " << t.name();
    prog << "\n";

    Schedule s = create_schedule(outputs);
    if (options.auto_schedule != Auto::Off) {
      AutoScheduleOptions ao;
      if (gpu) ao.target = "cuda";
      ao.threads = 1;
      ao.trials = options.auto_trials;
      ao.seed = seed;
      log << "auto_schedule for " << ao.target.str() << ", trials " << ao.trials << "\n";
      try {
        s = auto_schedule(outputs, ao);
      } catch (const Error& e) {
        throw std::logic_error(std::string("auto_schedule refused the graph: ") + e.what());
      }
    } else if (gpu)
      schedule_for_gpu(rng, s, inputs, computes, log);
    else {
      StepFilter steps;
      steps.skip = options.skip_steps;
      schedule_for_cpu(rng, s, computes, log, steps);
      c.schedule_steps = steps.count;
    }
    LowerOptions lo;
    lo.partition_loops = rng.chance(80);
    if (!lo.partition_loops) log << "(partition_loops off)\n";

    std::vector<Tensor> args = inputs;
    args.insert(args.end(), outputs.begin(), outputs.end());
    const std::string name = fmt::format("fz_g{:x}", seed);
    std::map<std::string, NDArray> arrays;
    const ValueProfile profile = mode == GraphMode::FmaFloat ? ValueProfile::Positive : ValueProfile::SmallInt;
    for (const GraphNode* n : input_nodes) arrays[n->tensor.name()] = random_array(rng, n->size, dtype, profile);
    for (const GraphNode* n : output_nodes) arrays[n->tensor.name()] = NDArray::empty(n->size, dtype);
    // A symbolic extent that no listed tensor's shape binds (its input went unread) is a
    // scalar parameter.
    auto arguments = [&](const LoweredFunc& f) {
      std::vector<Argument> call;
      for (const Param& p : f.params) {
        if (p.is_buffer()) {
          call.emplace_back(arrays.at(p.name()));
          continue;
        }
        for (const auto& [v, value] : gb.vars())
          if (v.same_as(p.var)) call.emplace_back(value);
      }
      return call;
    };
    // The default schedule must always lower: any error there is a bug.
    try {
      LoweredFunc ref = lower(create_schedule(outputs), args, name);
      c.references.push_back({"unscheduled", ref, arguments(ref)});
    } catch (const std::exception& e) {
      c.failure = std::string("lowering the default schedule failed: ") + e.what();
    }
    c.main.func = lower(s, args, name, lo);
    c.main.args = arguments(c.main.func);
    c.run_jit = !has_barrier(c.main.func.body);
  } catch (const InternalError& e) {
    c.failure = e.what();
  } catch (const Error& e) {
    c.rejected = e.what();
  } catch (const std::logic_error& e) {
    c.failure = e.what();
  }
  // Drawn last, so that the cases of earlier seeds stay as they were.
  c.build_options.opt_level = rng.chance(75) ? 3 : static_cast<int>(rng.below(3));
  c.program = prog.str() + "schedule:\n" + log.str() + "JIT at -O" + std::to_string(c.build_options.opt_level) + "\n";
  return c;
}

}  // namespace te::fuzz
