// What the attention tests share: a case's shape and options, its inputs, and softmax(q
// kᵀ scale + bias) v in float64 (a query with no key left gives zeros).
#pragma once
#include <cmath>
#include <random>
#include <vector>

#include "te/te.h"

namespace te::attention_test {

struct Case {
  const char* name;
  int batch, heads, kv_heads, seq_q, seq_k, dim;
  bool causal = false;
  bool bias = false;    // a random bias with a few -inf entries and one fully masked query row
  float magnitude = 1;  // scale of q and k: 30 gives scores in the thousands
  DataType dtype = Float(32);
  int key_block = 8;  // small, so that most cases fold several blocks, the last one partial
};

inline std::vector<float> random_values(size_t n, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Rounds every value to dtype (so the reference sees what te reads).
inline void round_to(std::vector<float>& v, DataType t) {
  if (t == Float(32)) return;
  for (size_t i = 0; i < v.size(); ++i) {
    const float x = v[i];
    v[i] = t == Float(16) ? static_cast<float>(half(x)) : static_cast<float>(bfloat16(x));
  }
}

// softmax(q kᵀ scale + bias) v in float64; a query with no key left gives zeros.
inline std::vector<double> reference(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, const std::vector<float>& bias) {
  const int group = c.heads / c.kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.dim));
  std::vector<double> out(size_t(c.batch * c.heads * c.seq_q * c.dim), 0.0);
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < c.heads; ++h)
      for (int i = 0; i < c.seq_q; ++i) {
        const int hk = h / group;
        std::vector<double> s(size_t(c.seq_k), -INFINITY);
        double mx = -INFINITY;
        for (int j = 0; j < c.seq_k; ++j) {
          if (c.causal && j > i + c.seq_k - c.seq_q) continue;
          double dot = 0;
          for (int d = 0; d < c.dim; ++d)
            dot += double(q[size_t(((b * c.heads + h) * c.seq_q + i) * c.dim + d)]) *
                   k[size_t(((b * c.kv_heads + hk) * c.seq_k + j) * c.dim + d)];
          dot *= scale;
          if (c.bias) dot += bias[size_t(((b * c.heads + h) * c.seq_q + i) * c.seq_k + j)];
          s[size_t(j)] = dot;
          mx = std::max(mx, dot);
        }
        if (mx == -INFINITY) continue;
        double total = 0;
        double* o = &out[size_t(((b * c.heads + h) * c.seq_q + i) * c.dim)];
        for (int j = 0; j < c.seq_k; ++j) {
          if (s[size_t(j)] == -INFINITY) continue;
          const double p = std::exp(s[size_t(j)] - mx);
          total += p;
          for (int d = 0; d < c.dim; ++d) o[d] += p * v[size_t(((b * c.kv_heads + hk) * c.seq_k + j) * c.dim + d)];
        }
        for (int d = 0; d < c.dim; ++d) o[d] /= total;
      }
  return out;
}

inline NDArray as_array(const std::vector<float>& v, std::vector<int64_t> shape, DataType t) {
  NDArray f = NDArray::from_vector(v, shape);
  if (t == Float(32)) return f;
  NDArray a = NDArray::empty(shape, t);
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == Float(16)) {
      static_cast<half*>(a.data())[i] = half(v[i]);
    } else {
      static_cast<bfloat16*>(a.data())[i] = bfloat16(v[i]);
    }
  }
  return a;
}

inline float element(NDArray a, size_t i) {
  if (a.dtype() == Float(16)) return static_cast<float>(static_cast<const half*>(a.data())[i]);
  if (a.dtype() == BFloat(16)) return static_cast<float>(static_cast<const bfloat16*>(a.data())[i]);
  return static_cast<const float*>(a.data())[i];
}

// A case's inputs, rounded to its type (so the reference sees what te reads).
struct Inputs {
  std::vector<float> q, k, v, bias;
};

inline Inputs make_inputs(const Case& c) {
  const size_t B = size_t(c.batch), H = size_t(c.heads), HK = size_t(c.kv_heads), M = size_t(c.seq_q),
               N = size_t(c.seq_k), D = size_t(c.dim);
  Inputs in;
  in.q = random_values(B * H * M * D, 1, c.magnitude);
  in.k = random_values(B * HK * N * D, 2, c.magnitude);
  in.v = random_values(B * HK * N * D, 3, 1.0f);
  if (c.bias) {
    in.bias = random_values(B * H * M * N, 4, 1.0f);
    for (size_t i = 0; i < in.bias.size(); i += 7) in.bias[i] = -INFINITY;
    for (size_t j = 0; j < N; ++j) in.bias[1 * N + j] = -INFINITY;  // query 1 of (0, 0): no key
  }
  round_to(in.q, c.dtype);
  round_to(in.k, c.dtype);
  round_to(in.v, c.dtype);
  return in;
}

}  // namespace te::attention_test
