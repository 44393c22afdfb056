#include "framework/nn/rnn.h"

#include <cmath>

#include "framework/nn/init.h"
#include "framework/ops/ops.h"

namespace skiff::nn {

namespace {
std::string suffix(int64_t layer, int64_t dir) { return std::to_string(layer) + (dir ? "_reverse" : ""); }
}  // namespace

RNNBase::RNNBase(int64_t gates, int64_t input_size, int64_t hidden_size, RNNOptions opt)
    : gates_(gates), is_(input_size), hs_(hidden_size), opt_(opt) {
  SKIFF_CHECK(input_size > 0 && hidden_size > 0 && opt.num_layers > 0,
              "RNN: expected positive input_size, hidden_size and num_layers, got {}, {}, {}", input_size, hidden_size,
              opt.num_layers);
  SKIFF_CHECK(opt.dropout >= 0 && opt.dropout <= 1, "RNN: expected 0 <= dropout <= 1, got {}", opt.dropout);
  int64_t dirs = opt.bidirectional ? 2 : 1;
  double bound = 1.0 / std::sqrt(double(hidden_size));
  for (int64_t l = 0; l < opt.num_layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      int64_t in = l == 0 ? input_size : dirs * hidden_size;
      std::string s = suffix(l, d);
      std::vector<Tensor*> ps = {&register_parameter("weight_ih_l" + s, empty({gates * hidden_size, in})),
                                 &register_parameter("weight_hh_l" + s, empty({gates * hidden_size, hidden_size}))};
      if (opt.bias) {
        ps.push_back(&register_parameter("bias_ih_l" + s, empty({gates * hidden_size})));
        ps.push_back(&register_parameter("bias_hh_l" + s, empty({gates * hidden_size})));
      }
      for (Tensor* p : ps) init::uniform_(*p, -bound, bound, opt.gen);
    }
  }
}

Tensor RNNBase::forward(const Tensor& x) { return run(x, Tensor(), Tensor(), gates_ == 4).output; }

RNNOutput RNNBase::run(const Tensor& input, const Tensor& h0, const Tensor& c0, bool lstm) {
  const char* name = lstm ? "LSTM" : "GRU";
  SKIFF_CHECK_SHAPE(input.dim() == 3 && input.size(2) == is_, "{}: expected input [{}, {}], got {}", name,
                    opt_.batch_first ? "B, T" : "T, B", is_, input.shape());
  Tensor x = opt_.batch_first ? transpose(input, 0, 1) : input;  // [T, B, I]
  int64_t steps = x.size(0), batch = x.size(1), dirs = opt_.bidirectional ? 2 : 1, layers = opt_.num_layers;
  Shape state_shape{layers * dirs, batch, hs_};
  auto check_state = [&](const Tensor& s, const char* what) {
    SKIFF_CHECK_SHAPE(!s.defined() || s.shape() == state_shape, "{}: expected {} {}, got {}", name, what, state_shape,
                      s.shape());
  };
  check_state(h0, "h0");
  check_state(c0, "c0");
  SKIFF_CHECK_SHAPE(steps >= 1, "{}: expected at least one time step, got input {}", name, input.shape());

  std::vector<Tensor> h_final, c_final;
  Tensor layer_in = x;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Tensor> dir_out;
    for (int64_t d = 0; d < dirs; ++d) {
      std::string s = suffix(l, d);
      Tensor w_ih = param("weight_ih_l" + s), w_hh = param("weight_hh_l" + s);
      Tensor b_ih = opt_.bias ? param("bias_ih_l" + s) : Tensor();
      Tensor b_hh = opt_.bias ? param("bias_hh_l" + s) : Tensor();
      int64_t idx = l * dirs + d;
      // An undefined state is the zero state. It is never materialized: with h = 0 the
      // recurrent term is just its bias, and with c = 0 the forget term vanishes. The
      // results are the same bit for bit, and no tensor of the batch's size is made from
      // a size read in C++, so a traced RNN keeps a dynamic batch.
      Tensor h = h0.defined() ? select(h0, 0, idx) : Tensor();
      Tensor c = lstm && c0.defined() ? select(c0, 0, idx) : Tensor();
      // The input projection of every time step in one matmul; only the recurrent part is
      // sequential. It runs batch-first, so the rows it folds are [B * T] with the batch
      // leading, which a trace with a dynamic batch can follow.
      Tensor xw = linear(contiguous(transpose(layer_in, 0, 1)), w_ih, b_ih);  // [B, T, G*H]
      std::vector<Tensor> outs(static_cast<size_t>(steps));
      for (int64_t i = 0; i < steps; ++i) {
        int64_t t = d == 0 ? i : steps - 1 - i;
        Tensor xt = select(xw, 1, t);
        Tensor hw = h.defined() ? linear(h, w_hh, b_hh) : b_hh;  // [B, G*H], [G*H], or none
        auto plus = [](const Tensor& a, const Tensor& b) { return b.defined() ? a + b : a; };
        if (lstm) {
          auto parts = chunk(plus(xt, hw), 4, 1);
          Tensor written = sigmoid(parts[0]) * tanh(parts[2]);
          c = c.defined() ? sigmoid(parts[1]) * c + written : written;
          h = sigmoid(parts[3]) * tanh(c);
        } else {
          auto xp = chunk(xt, 3, 1);
          std::vector<Tensor> hp = hw.defined() ? chunk(hw, 3, hw.dim() - 1) : std::vector<Tensor>(3);
          Tensor r = sigmoid(plus(xp[0], hp[0]));
          Tensor z = sigmoid(plus(xp[1], hp[1]));
          Tensor n = tanh(hp[2].defined() ? xp[2] + r * hp[2] : xp[2]);
          h = h.defined() ? (1.0 - z) * n + z * h : (1.0 - z) * n;
        }
        outs[size_t(t)] = h;
      }
      dir_out.push_back(stack(outs, 0));  // [T, B, H]
      h_final.push_back(h);
      c_final.push_back(c);
    }
    layer_in = dirs == 1 ? dir_out[0] : concat(dir_out, 2);
    if (l + 1 < layers && is_training() && opt_.dropout > 0) layer_in = dropout(layer_in, opt_.dropout, true, opt_.gen);
  }
  RNNOutput out;
  out.output = opt_.batch_first ? transpose(layer_in, 0, 1) : layer_in;
  out.h = stack(h_final, 0);
  if (lstm) out.c = stack(c_final, 0);
  return out;
}

std::string RNNBase::extra_repr() const {
  return fmt::format("{}, {}, num_layers={}, bias={}, batch_first={}, dropout={}, bidirectional={}", is_, hs_,
                     opt_.num_layers, opt_.bias, opt_.batch_first, opt_.dropout, opt_.bidirectional);
}

}  // namespace skiff::nn
