// te::ops::attention_backward against PyTorch's autograd (float64, from the stored float32
// inputs: tests/data/torch_golden/attention_backward, scripts/gen_torch_golden.py):
// causal grouped-query heads with seq_q != seq_k, a broadcast bias with -inf entries
// (dbias summed over its broadcast dimension), decoding; through interpret() of the
// default schedule and the JIT of auto_schedule's. Where PyTorch's gradient is NaN (a
// query with no key) te's is 0. And the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "te/auto_schedule.h"
#include "te/autodiff.h"
#include "te/ops/attention_backward.h"
#include "te/te.h"
#include "test_util.h"

namespace te {
namespace {

std::vector<Expr> dims(const NDArray& a) {
  std::vector<Expr> d;
  for (int64_t x : a.shape()) d.push_back(make_const(Int(32), x));
  return d;
}

void check_golden(const std::string& name, bool causal) {
  SCOPED_TRACE(name);
  const std::string dir = std::string(TE_TEST_DATA_DIR) + "/torch_golden/attention_backward/" + name + "/";
  auto load = [&](const char* f) { return NDArray::load_npy(dir + f + ".npy"); };
  const NDArray q = load("q"), k = load("k"), v = load("v"), dout = load("dout");
  const bool has_bias = std::ifstream(dir + "bias.npy").good();
  Tensor Q = placeholder(dims(q), Float(32), "q"), K = placeholder(dims(k), Float(32), "k"),
         V = placeholder(dims(v), Float(32), "v"), DO = placeholder(dims(dout), Float(32), "dout");
  ops::AttentionOptions o;
  o.causal = causal;
  std::vector<Tensor> args{Q, K, V, DO};
  std::vector<Argument> inputs{q, k, v, dout};
  if (has_bias) {
    NDArray b = load("bias");
    o.bias = placeholder(dims(b), Float(32), "bias");
    args.push_back(o.bias);
    inputs.push_back(b);
  }
  ops::AttentionBackward g = ops::attention_backward(Q, K, V, DO, o);
  std::vector<Tensor> grads{g.dq, g.dk, g.dv};
  std::vector<std::string> names{"dq", "dk", "dv"};
  if (has_bias) {
    grads.push_back(g.dbias);
    names.push_back("dbias");
  }
  args.insert(args.end(), grads.begin(), grads.end());
  for (bool jit : {false, true}) {
    SCOPED_TRACE(jit ? "jit, auto_schedule" : "interpret, default schedule");
    Schedule s = jit ? auto_schedule(grads) : create_schedule(grads);
    LoweredFunc f = lower(s, args, "attention_backward");
    std::vector<Argument> call = inputs;
    std::vector<NDArray> got;
    for (const std::string& n : names) {
      got.push_back(NDArray::empty(load(n.c_str()).shape(), Float(32)));
      call.push_back(got.back());
    }
    if (jit) {
      build(f)("attention_backward").call(call);
    } else {
      interpret(f, call);
    }
    for (size_t r = 0; r < names.size(); ++r) {
      SCOPED_TRACE(names[r]);
      const std::vector<double> want = load(names[r].c_str()).to_vector<double>();
      const std::vector<float> have = got[r].to_vector<float>();
      for (size_t i = 0; i < want.size(); ++i) {
        const double w = std::isnan(want[i]) ? 0.0 : want[i];
        ASSERT_NEAR(have[i], w, 5e-5 * (1 + std::fabs(w))) << "element " << i;
      }
    }
  }
}

TEST(AttentionBackward, CausalGroupedQueryHeads) { check_golden("causal_gqa", true); }
TEST(AttentionBackward, BroadcastBiasWithMaskedKeys) { check_golden("bias_broadcast", false); }
TEST(AttentionBackward, Decoding) { check_golden("decoding", true); }

// float16 inputs: float32 sums, each gradient rounded once by a stage of its own; the
// float32 gradients of the same (rounded) inputs within float16's rounding.
TEST(AttentionBackward, Float16RoundsOnce) {
  const std::string dir = std::string(TE_TEST_DATA_DIR) + "/torch_golden/attention_backward/causal_gqa/";
  std::vector<NDArray> in;
  for (const char* f : {"q", "k", "v", "dout"}) {
    const NDArray a = NDArray::load_npy(dir + f + ".npy");
    std::vector<float> x = a.to_vector<float>();
    for (float& e : x) e = static_cast<float>(half(e));
    in.push_back(NDArray::from_vector(x, a.shape()));
  }
  std::vector<std::vector<float>> results[2];
  for (int h = 0; h < 2; ++h) {
    const DataType t = h ? Float(16) : Float(32);
    std::vector<Tensor> ph;
    std::vector<Argument> call;
    for (size_t i = 0; i < in.size(); ++i) {
      ph.push_back(placeholder(dims(in[i]), t, "in" + std::to_string(i)));
      NDArray a = NDArray::empty(in[i].shape(), t);
      const std::vector<float> x = in[i].to_vector<float>();
      for (size_t e = 0; e < x.size(); ++e) {
        if (h) {
          static_cast<half*>(a.data())[e] = half(x[e]);
        } else {
          static_cast<float*>(a.data())[e] = x[e];
        }
      }
      call.push_back(a);
    }
    ops::AttentionOptions o;
    o.causal = true;
    ops::AttentionBackward g = ops::attention_backward(ph[0], ph[1], ph[2], ph[3], o);
    std::vector<Tensor> args = ph;
    std::vector<NDArray> outs;
    for (const Tensor& r : {g.dq, g.dk, g.dv}) {
      EXPECT_EQ(r.dtype(), t);
      args.push_back(r);
      std::vector<int64_t> shape;
      for (const Expr& e : r.shape()) shape.push_back(*as_const_int(e));
      outs.push_back(NDArray::empty(shape, t));
      call.push_back(outs.back());
    }
    interpret(lower(create_schedule({g.dq, g.dk, g.dv}), args, "bwd"), call);
    for (const NDArray& r : outs) {
      std::vector<float> v(static_cast<size_t>(r.size()));
      for (size_t e = 0; e < v.size(); ++e)
        v[e] = h ? static_cast<float>(static_cast<const half*>(r.data())[e]) : static_cast<const float*>(r.data())[e];
      results[h].push_back(v);
    }
  }
  for (size_t r = 0; r < 3; ++r)
    for (size_t e = 0; e < results[0][r].size(); ++e)
      EXPECT_NEAR(results[1][r][e], results[0][r][e], 1e-3 * (1 + std::fabs(results[0][r][e]))) << r << ":" << e;
}

TEST(AttentionBackward, Errors) {
  Tensor q = placeholder({1, 2, 4, 8}, Float(32), "q"), k = placeholder({1, 2, 6, 8}, Float(32), "k"),
         v = placeholder({1, 2, 6, 8}, Float(32), "v");
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] {
              ops::attention_backward(q, k, v, placeholder({1, 2, 4, 7}, Float(32), "dout"));
            }),
            "attention_backward: dout (1, 2, 4, 7) is not the output's shape (1, 2, 4, 8)");
  EXPECT_EQ(message([&] {
              ops::attention_backward(q, k, v, placeholder({1, 2, 4, 8}, Float(16), "dout"));
            }),
            "attention_backward: dout must be the output's shape (batch, heads, seq_q, dim_v) and type float32, got "
            "(1, 2, 4, 8)");
  EXPECT_EQ(message([&] {
              ops::attention_backward(q, placeholder({1, 2, 6, 4}, Float(32), "k4"), v, q);
            }),
            "attention: q (1, 2, 4, 8) and k (1, 2, 6, 4) differ in dim");
  // te::gradient does not differentiate the forward's row reduction: it says so.
  const std::string refused = message([&] { gradient(ops::attention(q, k, v), {q}); });
  EXPECT_NE(refused.find("attention.max"), std::string::npos) << refused;
  EXPECT_NE(refused.find("attention_backward"), std::string::npos) << refused;
}

}  // namespace
}  // namespace te
