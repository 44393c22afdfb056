// LSTM and GRU against a naive scalar step-by-step reference written here with
// the same weights, plus shapes, parameter names and float64 gradient checks.

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "framework/nn/rnn.h"
#include "tests/framework/nn/nn_test_utils.h"

namespace skiff::nn {
namespace {

using testing::expect_module_gradcheck;
using testing::rand64;
using testing::values;

double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct RefResult {
  std::vector<double> out;  // [T, B, D*H]
  std::vector<double> h, c; // [L*D, B, H]
};

// Plain loops over doubles; x is time-major [T, B, I]; h0/c0 [L*D, B, H].
RefResult reference(bool lstm, const std::map<std::string, Tensor>& sd, std::vector<double> x, int64_t T, int64_t B,
                    int64_t I, int64_t H, int64_t L, int64_t D, const std::vector<double>& h0,
                    const std::vector<double>& c0) {
  const int64_t G = lstm ? 4 : 3;
  RefResult r;
  r.h.assign(size_t(L * D * B * H), 0);
  r.c.assign(size_t(L * D * B * H), 0);
  int64_t in = I;
  for (int64_t l = 0; l < L; ++l) {
    std::vector<double> out(size_t(T * B * D * H));
    for (int64_t d = 0; d < D; ++d) {
      std::string s = std::to_string(l) + (d ? "_reverse" : "");
      auto wih = values(sd.at("weight_ih_l" + s)), whh = values(sd.at("weight_hh_l" + s));
      auto bih = values(sd.at("bias_ih_l" + s)), bhh = values(sd.at("bias_hh_l" + s));
      int64_t idx = l * D + d;
      std::vector<double> h(h0.begin() + idx * B * H, h0.begin() + (idx + 1) * B * H);
      std::vector<double> c(c0.begin() + idx * B * H, c0.begin() + (idx + 1) * B * H);
      for (int64_t step = 0; step < T; ++step) {
        int64_t t = d ? T - 1 - step : step;
        std::vector<double> hn(h.size()), cn(c.size());
        for (int64_t b = 0; b < B; ++b) {
          std::vector<double> gx(size_t(G * H)), gh(size_t(G * H));
          for (int64_t k = 0; k < G * H; ++k) {
            gx[k] = bih[k];
            gh[k] = bhh[k];
            for (int64_t j = 0; j < in; ++j) gx[k] += wih[k * in + j] * x[(t * B + b) * in + j];
            for (int64_t j = 0; j < H; ++j) gh[k] += whh[k * H + j] * h[b * H + j];
          }
          for (int64_t j = 0; j < H; ++j) {
            if (lstm) {
              double ig = sigm(gx[j] + gh[j]), fg = sigm(gx[H + j] + gh[H + j]);
              double gg = std::tanh(gx[2 * H + j] + gh[2 * H + j]), og = sigm(gx[3 * H + j] + gh[3 * H + j]);
              cn[b * H + j] = fg * c[b * H + j] + ig * gg;
              hn[b * H + j] = og * std::tanh(cn[b * H + j]);
            } else {
              double rg = sigm(gx[j] + gh[j]), zg = sigm(gx[H + j] + gh[H + j]);
              double ng = std::tanh(gx[2 * H + j] + rg * gh[2 * H + j]);
              hn[b * H + j] = (1 - zg) * ng + zg * h[b * H + j];
            }
          }
        }
        h = hn;
        if (lstm) c = cn;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j) out[(t * B + b) * D * H + d * H + j] = h[b * H + j];
      }
      std::copy(h.begin(), h.end(), r.h.begin() + idx * B * H);
      std::copy(c.begin(), c.end(), r.c.begin() + idx * B * H);
    }
    x = out;
    in = D * H;
    r.out = out;
  }
  return r;
}

void expect_vec_near(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol) << "at " << i;
}

TEST(LSTMTest, MatchesNaiveReferenceMultiLayerBidirectionalBatchFirst) {
  Generator g(1);
  RNNOptions o;
  o.num_layers = 2;
  o.bidirectional = true;
  o.batch_first = true;
  o.gen = &g;
  LSTM lstm(3, 4, o);
  lstm.to(DType::Float64);
  const int64_t T = 5, B = 2;
  Tensor x = rand64({B, T, 3}, 2);  // batch first
  Tensor h0 = rand64({4, B, 4}, 3), c0 = rand64({4, B, 4}, 4);
  auto r = lstm.forward_with_state(x, h0, c0);
  EXPECT_EQ(r.output.shape(), (Shape{B, T, 8}));
  EXPECT_EQ(r.h.shape(), (Shape{4, B, 4}));
  EXPECT_EQ(r.c.shape(), (Shape{4, B, 4}));
  auto ref = reference(true, lstm.state_dict(), values(transpose(x, 0, 1)), T, B, 3, 4, 2, 2, values(h0), values(c0));
  expect_vec_near(values(transpose(r.output, 0, 1)), ref.out, 1e-12);
  expect_vec_near(values(r.h), ref.h, 1e-12);
  expect_vec_near(values(r.c), ref.c, 1e-12);
}

TEST(LSTMTest, ParameterNamesShapesAndDefaults) {
  RNNOptions o;
  o.bidirectional = true;
  LSTM lstm(3, 5, o);
  auto sd = lstm.state_dict();
  EXPECT_EQ(sd.size(), 8u);
  EXPECT_EQ(sd.at("weight_ih_l0").shape(), (Shape{20, 3}));
  EXPECT_EQ(sd.at("weight_hh_l0_reverse").shape(), (Shape{20, 5}));
  for (auto& p : lstm.parameters()) {
    for (double v : values(p)) EXPECT_LE(std::abs(v), 1.0 / std::sqrt(5.0));
  }
  // Zero initial state equals omitting it; time-major default layout.
  Tensor x = rand({7, 2, 3});
  auto a = lstm.forward_with_state(x);
  auto b = lstm.forward_with_state(x, zeros({2, 2, 5}), zeros({2, 2, 5}));
  EXPECT_EQ(values(a.output), values(b.output));
  EXPECT_EQ(lstm(x).shape(), (Shape{7, 2, 10}));
  EXPECT_THROW(lstm(rand({7, 2, 4})), ShapeError);
  EXPECT_THROW(lstm.forward_with_state(x, zeros({1, 2, 5})), ShapeError);
  EXPECT_THROW(LSTM(0, 3), ValueError);
}

TEST(GRUTest, MatchesNaiveReferenceMultiLayerBidirectional) {
  Generator g(5);
  RNNOptions o;
  o.num_layers = 2;
  o.bidirectional = true;
  o.gen = &g;
  GRU gru(2, 3, o);
  gru.to(DType::Float64);
  const int64_t T = 4, B = 3;
  Tensor x = rand64({T, B, 2}, 6), h0 = rand64({4, B, 3}, 7);
  auto r = gru.forward_with_state(x, h0);
  EXPECT_FALSE(r.c.defined());
  EXPECT_EQ(r.output.shape(), (Shape{T, B, 6}));
  auto ref = reference(false, gru.state_dict(), values(x), T, B, 2, 3, 2, 2, values(h0),
                       std::vector<double>(size_t(4 * B * 3), 0.0));
  expect_vec_near(values(r.output), ref.out, 1e-12);
  expect_vec_near(values(r.h), ref.h, 1e-12);
}

TEST(RNNTest, DropoutBetweenLayersOnlyInTraining) {
  Generator g(8);
  RNNOptions o;
  o.num_layers = 2;
  o.dropout = 0.5;
  o.gen = &g;
  GRU gru(3, 4, o);
  Tensor x = rand({3, 1, 3});
  EXPECT_NE(values(gru(x)), values(gru(x)));
  gru.eval();
  EXPECT_EQ(values(gru(x)), values(gru(x)));
}

TEST(RNNTest, GradcheckFloat64) {
  Generator g(9);
  RNNOptions o;
  o.bidirectional = true;
  o.gen = &g;
  LSTM lstm(2, 2, o);
  lstm.to(DType::Float64);
  Tensor x = rand64({3, 1, 2}, 10, true), h0 = rand64({2, 1, 2}, 11, true), c0 = rand64({2, 1, 2}, 12, true);
  std::vector<Tensor> leaves{x, h0, c0};
  for (auto& p : lstm.parameters()) leaves.push_back(p);
  expect_module_gradcheck(
      [&] {
        auto r = lstm.forward_with_state(x, h0, c0);
        return concat({reshape(r.output, {-1}), reshape(r.h, {-1}), reshape(r.c, {-1})}, 0);
      },
      leaves);

  RNNOptions og;
  og.num_layers = 2;
  og.gen = &g;
  GRU gru(2, 2, og);
  gru.to(DType::Float64);
  std::vector<Tensor> gl{x};
  for (auto& p : gru.parameters()) gl.push_back(p);
  expect_module_gradcheck([&] { return gru(x); }, gl);
}

}  // namespace
}  // namespace skiff::nn
