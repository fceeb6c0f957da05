// Scaled dot-product attention on the CPU (float32): te::ops::attention with
// schedule_attention_cpu against PyTorch's matmul, softmax, matmul (a child process at the
// same thread count: bench/attention_torch.py) and a plain C++ loop (scores, softmax and
// the weighted sum of v per query, one row at a time), for prefill (seq 512-4096, dim 64
// and 128, causal and not) and decoding (one query against 4k and 32k keys). The te
// result is checked against the C++ loop before it is timed. Work: 4 · heads · seq_q ·
// seq_k · dim FLOP (the two products; half of it where causal).
#include <te/te.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cases.h"
#include "te/ops/attention.h"
#include "te/ops/attention_cpu.h"

namespace te_bench {

namespace {

struct Shape {
  int batch, heads, seq_q, seq_k, dim;
  bool causal;
  std::string name() const {
    return std::to_string(batch) + "x" + std::to_string(heads) + "x" + std::to_string(seq_q) + "x" +
           std::to_string(seq_k) + "x" + std::to_string(dim) + (causal ? "-causal" : "");
  }
  int64_t q_size() const { return int64_t(batch) * heads * seq_q * dim; }
  int64_t kv_size() const { return int64_t(batch) * heads * seq_k * dim; }
  double flop() const { return 4.0 * batch * heads * seq_q * seq_k * dim * (causal && seq_q > 1 ? 0.5 : 1.0); }
};

std::vector<float> uniform(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

// The plain C++ baseline: per query, its scores, their softmax and the weighted sum of v.
void attention_loop(const Shape& s, const float* q, const float* k, const float* v, float* out,
                    std::vector<float>& scores) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.dim));
  scores.resize(static_cast<size_t>(s.seq_k));
  for (int bh = 0; bh < s.batch * s.heads; ++bh) {
    const float* kb = k + int64_t(bh) * s.seq_k * s.dim;
    const float* vb = v + int64_t(bh) * s.seq_k * s.dim;
    for (int i = 0; i < s.seq_q; ++i) {
      const float* qi = q + (int64_t(bh) * s.seq_q + i) * s.dim;
      float* o = out + (int64_t(bh) * s.seq_q + i) * s.dim;
      const int keys = s.causal ? std::min(s.seq_k, i + s.seq_k - s.seq_q + 1) : s.seq_k;
      float mx = -INFINITY;
      for (int j = 0; j < keys; ++j) {
        float dot = 0;
        for (int c = 0; c < s.dim; ++c) dot += qi[c] * kb[int64_t(j) * s.dim + c];
        scores[size_t(j)] = dot * scale;
        mx = std::max(mx, scores[size_t(j)]);
      }
      float total = 0;
      for (int j = 0; j < keys; ++j) total += scores[size_t(j)] = std::exp(scores[size_t(j)] - mx);
      for (int c = 0; c < s.dim; ++c) o[c] = 0;
      for (int j = 0; j < keys; ++j) {
        const float p = scores[size_t(j)] / total;
        for (int c = 0; c < s.dim; ++c) o[c] += p * vb[int64_t(j) * s.dim + c];
      }
    }
  }
}

struct Data {
  Shape s;
  std::vector<float> q, k, v, want;
  te::NDArray Q, K, V, out;
  explicit Data(const Shape& shape) : s(shape) {
    q = uniform(s.q_size(), 1);
    k = uniform(s.kv_size(), 2);
    v = uniform(s.kv_size(), 3);
    Q = te::NDArray::from_vector(q, {s.batch, s.heads, s.seq_q, s.dim});
    K = te::NDArray::from_vector(k, {s.batch, s.heads, s.seq_k, s.dim});
    V = te::NDArray::from_vector(v, {s.batch, s.heads, s.seq_k, s.dim});
    out = te::NDArray::empty({s.batch, s.heads, s.seq_q, s.dim}, te::Float(32));
  }
  const std::vector<float>& reference() {
    if (want.empty()) {
      want.resize(static_cast<size_t>(s.q_size()));
      std::vector<float> scratch;
      attention_loop(s, q.data(), k.data(), v.data(), want.data(), scratch);
    }
    return want;
  }
  bool matches() {
    const std::vector<float>& w = reference();
    const float* got = static_cast<const float*>(out.data());
    for (size_t i = 0; i < w.size(); ++i)
      if (!(std::abs(got[i] - w[i]) <= 1e-4f * (1 + std::abs(w[i])))) return false;
    return true;
  }
};

te::Function compile(const Shape& s) {
  te::Tensor q = te::placeholder({s.batch, s.heads, s.seq_q, s.dim}, te::Float(32), "q"),
             k = te::placeholder({s.batch, s.heads, s.seq_k, s.dim}, te::Float(32), "k"),
             v = te::placeholder({s.batch, s.heads, s.seq_k, s.dim}, te::Float(32), "v");
  te::ops::AttentionOptions o;
  o.causal = s.causal;
  te::Tensor out = te::ops::attention(q, k, v, o);
  te::Schedule sched = te::create_schedule({out});
  te::ops::schedule_attention_cpu(sched, out);
  return te::build(te::lower(sched, {q, k, v, out}, "attention"))("attention");
}

void add_torch(const std::string& g, const Shape& s) {
  add(
      g, "pytorch",
      [g, s](benchmark::State& st) {
        const std::string cmd = "/usr/bin/python3 " + std::string(TE_BENCH_SOURCE_DIR) + "/attention_torch.py " +
                                std::to_string(s.batch) + " " + std::to_string(s.heads) + " " +
                                std::to_string(s.seq_q) + " " + std::to_string(s.seq_k) + " " + std::to_string(s.dim) +
                                " " + (s.causal ? "1" : "0") + " " + std::to_string(threads()) + " 5";
        std::vector<double> samples = command_samples(cmd);
        if (samples.empty()) return st.SkipWithError("PyTorch not found (scripts/deps.sh python3-torch)");
        size_t i = 0;
        for (auto _ : st) st.SetIterationTime(samples[i++ % samples.size()]);
        results().record(g, "pytorch", true, samples);
        report(st, g, "pytorch", true);
      },
      1);
}

void add_case(const Shape& s, const Peak& peak) {
  const std::string g = "attention/" + s.name();
  results().define_group(g, {s.flop() * 1e-9, "GFLOP/s", peak.gflops});
  auto data = std::make_shared<std::shared_ptr<Data>>();
  auto get = [data, s]() -> Data& {
    if (!*data) *data = std::make_shared<Data>(s);
    return **data;
  };
  add_torch(g, s);
  // One thread only: the loop has no threads of its own.
  if (threads() == 1)
    add(
        g, "cpp_loop",
        [g, get](benchmark::State& st) {
          Data& d = get();
          std::vector<float> scratch;
          float* out = static_cast<float*>(d.out.data());
          run_case(st, g, "cpp_loop", true,
                   [&] { attention_loop(d.s, d.q.data(), d.k.data(), d.v.data(), out, scratch); });
        },
        s.flop() > 20e9 ? 1 : 0);
  auto kernel = std::make_shared<std::optional<te::Function>>();
  add(g, "te", [g, get, s, kernel](benchmark::State& st) {
    Data& d = get();
    if (!*kernel) *kernel = compile(s);
    te::Function& f = **kernel;
    f(d.Q, d.K, d.V, d.out);
    if (!d.matches()) return st.SkipWithError("te: result differs from the C++ loop");
    run_case(st, g, "te", false, [&] { f(d.Q, d.K, d.V, d.out); });
  });
}

}  // namespace

void register_attention(const Peak& peak) {
  // Prefill: 4 heads of 512 to 4096 tokens.
  for (const Shape& s :
       {Shape{1, 4, 512, 512, 64, false}, Shape{1, 4, 1024, 1024, 64, false}, Shape{1, 4, 1024, 1024, 128, false},
        Shape{1, 4, 2048, 2048, 64, true}, Shape{1, 4, 4096, 4096, 64, true}})
    add_case(s, peak);
  // Decoding: one query per head against the cache.
  for (const Shape& s : {Shape{1, 8, 1, 4096, 128, false}, Shape{1, 8, 1, 32768, 128, false}}) add_case(s, peak);
}

}  // namespace te_bench
