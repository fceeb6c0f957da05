#include "expr_case.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "expr_gen.h"

namespace te::fuzz {
namespace {

// A schedule for the one loop of an element-wise compute, drawn once and applied to
// both the immediate and the constants-from-memory version.
struct LoopSchedule {
  enum class Kind { None, SplitVectorize, SplitUnroll, ParallelVectorize, Parallel, Vectorize, NpartsVectorize, Gpu };
  Kind kind = Kind::None;
  int64_t factor = 1;
  bool nparts = false;

  std::string apply(Schedule& s, const Tensor& c) const {
    Stage st = s[c];
    IterVar i = c.axis(0);
    auto split = [&]() {
      return nparts ? st.split_nparts(i, static_cast<int>(factor)) : st.split(i, static_cast<int>(factor));
    };
    std::string how = nparts ? "split_nparts" : "split";
    switch (kind) {
      case Kind::None: return "default schedule";
      case Kind::SplitVectorize: {
        auto [o, in] = split();
        st.vectorize(in);
        return fmt::format("{}(i, {}); vectorize(inner)", how, factor);
      }
      case Kind::SplitUnroll: {
        auto [o, in] = split();
        st.unroll(in);
        return fmt::format("{}(i, {}); unroll(inner)", how, factor);
      }
      case Kind::ParallelVectorize: {
        auto [o, in] = split();
        st.parallel(o);
        st.vectorize(in);
        return fmt::format("{}(i, {}); parallel(outer); vectorize(inner)", how, factor);
      }
      case Kind::Parallel: st.parallel(i); return "parallel(i)";
      case Kind::Vectorize: st.vectorize(i); return "vectorize(i)";
      case Kind::NpartsVectorize: {
        auto [o, in] = st.split_nparts(i, static_cast<int>(factor));
        st.vectorize(in);
        return fmt::format("split_nparts(i, {}); vectorize(inner)", factor);
      }
      case Kind::Gpu: {
        auto [o, in] = split();
        st.bind(o, thread_axis("blockIdx.x"));
        st.bind(in, thread_axis("threadIdx.x"));
        return fmt::format("{}(i, {}); bind(outer, blockIdx.x); bind(inner, threadIdx.x)", how, factor);
      }
    }
    return "";
  }
};

LoopSchedule draw_schedule(Rng& rng, int64_t n, bool gpu) {
  LoopSchedule ls;
  if (gpu) {
    static const int64_t kThreads[] = {1, 2, 3, 4, 7, 8, 16, 32, 64};
    ls.kind = LoopSchedule::Kind::Gpu;
    ls.factor = rng.pick(kThreads);
    ls.nparts = rng.chance(20);
    return ls;
  }
  ls.factor = rng.range(2, 16);
  ls.nparts = rng.chance(20);
  switch (rng.below(8)) {
    case 0: ls.kind = LoopSchedule::Kind::None; break;
    case 1:
    case 2: ls.kind = LoopSchedule::Kind::SplitVectorize; break;
    case 3: ls.kind = LoopSchedule::Kind::SplitUnroll; break;
    case 4: ls.kind = LoopSchedule::Kind::ParallelVectorize; break;
    case 5: ls.kind = LoopSchedule::Kind::Parallel; break;
    case 6: ls.kind = n <= 64 ? LoopSchedule::Kind::Vectorize : LoopSchedule::Kind::SplitVectorize; break;
    default:
      ls.kind = LoopSchedule::Kind::NpartsVectorize;
      ls.factor = rng.range(1, 4);
      break;
  }
  return ls;
}

// Constants read from memory: one placeholder per type, one element per constant.
struct ConstantPool {
  static constexpr int64_t kSlots = 64;
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::vector<Expr>> values;

  Expr read(DataType t, const Expr& imm) {
    const std::string key = t.to_string();
    auto& vals = values[key];
    if (static_cast<int64_t>(vals.size()) >= kSlots) return imm;
    auto it = tensors.find(key);
    if (it == tensors.end())
      it = tensors.emplace(key, placeholder({Expr(static_cast<int>(kSlots))}, t, "K_" + key)).first;
    vals.push_back(imm);
    return it->second(static_cast<int>(vals.size() - 1));
  }
};

}  // namespace

FuzzCase make_expr_case(uint64_t seed, const ExprCaseOptions& options) {
  FuzzCase c;
  c.seed = seed;
  c.kind = options.bfloat16 ? "expr --bfloat16" : "expr";  // as te_fuzz re-runs it
  c.compare = Compare::Bits;
  c.build_options.fma_contraction = false;   // every float operation rounds on its own
  c.build_options.fast_vector_math = false;  // exp through libm lane by lane, as interpret()
  Rng rng(seed);
  const bool gpu = rng.chance(options.gpu_percent);
  static const int64_t kSizes[] = {1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 33, 64};
  const int64_t n = rng.pick(kSizes);
  const int num_inputs = static_cast<int>(rng.range(1, 4));
  std::vector<Tensor> inputs;
  std::vector<NDArray> input_data;
  std::ostringstream prog;
  prog << "inputs:";
  const auto& types = options.bfloat16 ? types_with_bfloat16() : all_scalar_types();
  for (int k = 0; k < num_inputs; ++k) {
    DataType t = rng.pick(types);
    inputs.push_back(placeholder({Expr(static_cast<int>(n))}, t, "A" + std::to_string(k)));
    input_data.push_back(random_array(rng, {n}, t, ValueProfile::Edge));
    prog << " A" << k << ": " << t.to_string() << "[" << n << "]";
  }
  const DataType out_type = rng.pick(types);
  ExprGenOptions eo;
  eo.signed_wrap = !gpu;
  eo.bfloat16 = options.bfloat16;
  const int depth = static_cast<int>(rng.range(1, options.max_depth));
  const LoopSchedule sched = draw_schedule(rng, n, gpu);
  LowerOptions lo;
  lo.partition_loops = rng.chance(80);
  const Rng tree_rng = rng;  // both versions of the tree draw the same numbers

  auto make_tensor = [&](ConstantPool* pool) {
    Rng r = tree_rng;
    ExprGen::ConstantMaker maker;
    if (pool) maker = [pool](DataType t, const Expr& imm) { return pool->read(t, imm); };
    return compute(
        {Expr(static_cast<int>(n))},
        [&](Expr i) {
          ExprGen g(r, eo, maker);
          for (const Tensor& a : inputs) g.add_leaf(a(i));
          if (r.chance(40)) g.add_leaf(i);
          // Reads at an offset, guarded so that only in-bounds ones happen.
          for (const Tensor& a : inputs) {
            if (!r.chance(30)) continue;
            static const int kOffsets[] = {-2, -1, 1, 3};
            int d = r.pick(kOffsets);
            Expr j = i + d;
            g.add_leaf(if_then_else(j >= 0 && j < static_cast<int>(n), a(j), g.constant(a.dtype())));
          }
          return g.gen(out_type, depth);
        },
        "C");
  };

  c.main.label = "scheduled";
  c.references.push_back({"unscheduled", {}, {}});
  c.references.push_back({"constants read from memory", {}, {}});
  try {
    Tensor out = make_tensor(nullptr);
    ConstantPool pool;
    Tensor out_opaque = make_tensor(&pool);
    prog << "\noutput C: " << out_type.to_string() << "[" << n << "]\nC[i] = " << out.op()->body << "\n";

    Schedule s = create_schedule({out});
    prog << "schedule: " << sched.apply(s, out) << (lo.partition_loops ? "" : "; partition_loops off") << "\n";
    c.gpu = gpu;
    const std::string name = fmt::format("fz_e{:x}", seed);
    std::vector<Tensor> args = inputs;
    args.push_back(out);
    c.main.func = lower(s, args, name, lo);

    std::vector<Argument> call;
    for (const NDArray& a : input_data) call.emplace_back(a);
    call.emplace_back(NDArray::empty({n}, out_type));
    c.main.args = call;

    try {  // the default schedule must always lower: any error there is a bug
      c.references[0].func = lower(create_schedule({out}), args, name);
    } catch (const std::exception& e) {
      c.failure = std::string("lowering the default schedule failed: ") + e.what();
    }
    c.references[0].args = call;

    Schedule so = create_schedule({out_opaque});
    sched.apply(so, out_opaque);
    std::vector<Tensor> args_opaque = inputs;
    std::vector<Argument> call_opaque;
    for (const NDArray& a : input_data) call_opaque.emplace_back(a);
    for (auto& [key, t] : pool.tensors) {
      args_opaque.push_back(t);
      NDArray k = NDArray::empty({ConstantPool::kSlots}, t.dtype());
      const auto& vals = pool.values[key];
      for (size_t j = 0; j < vals.size(); ++j) store_immediate(k, static_cast<int64_t>(j), vals[j]);
      call_opaque.emplace_back(k);
    }
    args_opaque.push_back(out_opaque);
    call_opaque.emplace_back(NDArray::empty({n}, out_type));
    c.references[1].func = lower(so, args_opaque, name, lo);
    c.references[1].args = call_opaque;
  } catch (const InternalError& e) {
    c.failure = e.what();
  } catch (const Error& e) {
    c.rejected = e.what();
  }
  // Drawn last, so that the cases of earlier seeds stay as they were.
  c.build_options.opt_level = rng.chance(75) ? 3 : static_cast<int>(rng.below(3));
  prog << "JIT at -O" << c.build_options.opt_level << "\n";
  c.program = prog.str();
  return c;
}

}  // namespace te::fuzz
