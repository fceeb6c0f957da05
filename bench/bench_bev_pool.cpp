// bev_pool_v2 (BEVDet) on the realistic golden case (tests/data/bev_pool/realistic: 6
// cameras, D = 59, 16 x 44 features of 80 channels, a 128 x 128 BEV grid, 125k points in
// 11k intervals): te's schedule_bev_pool_cpu, with the index checks (the default) and
// without (inputs validated by check_bev_pool_inputs), against BEVDet's loop in plain C++
// (-O3 -march=native) and the pure-PyTorch reference with index_add_ (run by
// bench/bev_pool_torch.py in a child process at the same thread count, when Debian's
// python3-torch is installed). Every implementation's output is checked against the
// golden output first.
#include <te/ops/bev_pool.h>
#include <te/ops/bev_pool_cpu.h>
#include <te/te.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baselines.h"
#include "bench_util.h"
#include "cases.h"

namespace te_bench {

namespace {

const std::string kDir = std::string(TE_BENCH_DATA_DIR) + "/bev_pool/realistic";

struct BevData {
  te::NDArray depth, feat, rd, rf, rb, starts, lengths, want, out;
  std::vector<int32_t> bev;
  BevData() {
    auto load = [](const char* f) { return te::NDArray::load_npy(kDir + "/" + f + ".npy"); };
    depth = load("depth");
    feat = load("feat");
    rd = load("ranks_depth");
    rf = load("ranks_feat");
    rb = load("ranks_bev");
    starts = load("interval_starts");
    lengths = load("interval_lengths");
    want = load("out");
    bev = load("bev_shape").to_vector<int32_t>();
    out = te::NDArray::empty(want.shape(), te::Float(32));
  }
  size_t out_size() const { return size_t(want.nbytes() / 4); }
  float* out_ptr() { return static_cast<float*>(out.data()); }
  bool check() {
    const float* w = static_cast<const float*>(want.data());
    for (size_t i = 0; i < out_size(); ++i)
      if (!(std::abs(out_ptr()[i] - w[i]) <= 1e-4f * (1 + std::abs(w[i])))) return false;
    return true;
  }
};

std::shared_ptr<BevData> data() {
  static std::shared_ptr<BevData> d = std::make_shared<BevData>();
  return d;
}

te::LoweredFunc te_bev_pool(const BevData& d) {
  auto dims = [](const te::NDArray& a) {
    std::vector<te::Expr> v;
    for (int64_t e : a.shape()) v.push_back(te::make_const(te::Int(32), e));
    return v;
  };
  te::Tensor depth = te::placeholder(dims(d.depth), te::Float(32), "depth");
  te::Tensor feat = te::placeholder(dims(d.feat), te::Float(32), "feat");
  te::Var P("n_points"), I("n_intervals");
  te::Tensor rd = te::placeholder({P}, te::Int(32), "ranks_depth"),
             rf = te::placeholder({P}, te::Int(32), "ranks_feat"), rb = te::placeholder({P}, te::Int(32), "ranks_bev");
  te::Tensor st = te::placeholder({I}, te::Int(32), "interval_starts"),
             len = te::placeholder({I}, te::Int(32), "interval_lengths");
  te::Tensor out = te::ops::bev_pool_v2(depth, feat, rd, rf, rb, st, len, {d.bev[0], d.bev[1], d.bev[2], d.bev[3]});
  te::Schedule s = te::create_schedule({out});
  te::ops::schedule_bev_pool_cpu(s, out);
  return te::lower(s, {depth, feat, rd, rf, rb, st, len, out}, "bev_pool");
}

// PyTorch's per-call seconds from bench/bev_pool_torch.py; empty when it cannot run.
std::vector<double> torch_samples(int threads, int calls) {
  return command_samples("/usr/bin/python3 " + std::string(TE_BENCH_SOURCE_DIR) + "/bev_pool_torch.py " + kDir + " " +
                         std::to_string(threads) + " " + std::to_string(calls));
}

void add_impl(const std::string& g, const std::string& impl, bool baseline,
              std::function<std::function<void()>(BevData&)> prepare) {
  auto call = std::make_shared<std::function<void()>>();
  add(g, impl, [=](benchmark::State& st) {
    std::shared_ptr<BevData> d = data();
    if (!*call) {
      *call = prepare(*d);
      std::fill(d->out_ptr(), d->out_ptr() + d->out_size(), -1.0f);
      (*call)();
      if (!d->check()) return st.SkipWithError((impl + ": wrong result").c_str());
    }
    run_case(st, g, impl, baseline, *call);
    if (baseline) results().add_companion(g, impl, *call);
  });
}

}  // namespace

void register_bev_pool() {
  const std::string g = "bev_pool/realistic";
  results().define_group(g, {double(data()->rd.shape()[0]) * 80 * 1e-9, "G point-channels/s"});
  add(
      g, "pytorch",
      [g](benchmark::State& st) {
        std::vector<double> s = torch_samples(threads(), 20);
        if (s.empty()) return st.SkipWithError("PyTorch not found (scripts/deps.sh python3-torch)");
        size_t k = 0;
        for (auto _ : st) st.SetIterationTime(s[k++ % s.size()]);
        results().record(g, "pytorch", true, s);
        report(st, g, "pytorch", true);
      },
      1);
  add_impl(g, "loop", true, [](BevData& d) -> std::function<void()> {
    return [&d] {
      bev_pool_loop(static_cast<const float*>(d.depth.data()), static_cast<const float*>(d.feat.data()),
                    static_cast<const int32_t*>(d.rd.data()), static_cast<const int32_t*>(d.rf.data()),
                    static_cast<const int32_t*>(d.rb.data()), static_cast<const int32_t*>(d.starts.data()),
                    static_cast<const int32_t*>(d.lengths.data()), int(d.starts.shape()[0]), 80, d.out_ptr(),
                    d.out_size());
    };
  });
  for (bool checked : {true, false})
    add_impl(g, checked ? "te" : "te_unchecked", false, [checked](BevData& d) -> std::function<void()> {
      te::BuildOptions o;
      o.check_data_indices = checked;
      te::Function f = te::build(te_bev_pool(d), o)("bev_pool");
      return [f, &d] { f(d.depth, d.feat, d.rd, d.rf, d.rb, d.starts, d.lengths, d.out); };
    });
}

}  // namespace te_bench
