#pragma once
/// \file rnn.h
/// Multi-layer, optionally bidirectional LSTM and GRU (PyTorch nn.LSTM / nn.GRU
/// semantics, gate order and parameter names), written with skiff ops so they
/// are differentiable to any order.
///
/// Shapes (D = 2 if bidirectional else 1, L = num_layers, H = hidden_size):
///   input  [T, B, input_size]  ([B, T, input_size] with batch_first)
///   output [T, B, D * H]       ([B, T, D * H] with batch_first): last layer, both
///                              directions concatenated (forward first)
///   h, c   [L * D, B, H]       final states, index layer * D + direction
///                              (never batch-first, as in PyTorch)
/// Parameters per layer l and direction (suffix "_reverse" for the backward one):
///   weight_ih_l{l} [G * H, in_l], weight_hh_l{l} [G * H, H], bias_ih_l{l} [G * H],
///   bias_hh_l{l} [G * H], with G = 4 (LSTM: i, f, g, o) or 3 (GRU: r, z, n),
///   in_0 = input_size, in_l = D * H. All drawn from U(-1/sqrt(H), 1/sqrt(H)).
/// Dropout (training only) applies to the outputs of every layer but the last.
///
/// LSTM:  i = s(W_ii x + b_ii + W_hi h + b_hi), f = s(...), g = tanh(...), o = s(...)
///        c' = f * c + i * g,  h' = o * tanh(c')
/// GRU:   r = s(W_ir x + b_ir + W_hr h + b_hr), z = s(...)
///        n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),  h' = (1 - z) * n + z * h

#include <string>

#include "framework/core/rng.h"
#include "framework/nn/module.h"

namespace skiff::nn {

struct RNNOptions {
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;
  double dropout = 0.0;
  bool bidirectional = false;
  Generator* gen = nullptr;  ///< initialization and dropout draws (default generator when null)
};

/// Result of a recurrent forward pass.
struct RNNOutput {
  Tensor output;  ///< see the file comment
  Tensor h;       ///< [L * D, B, H]
  Tensor c;       ///< [L * D, B, H]; LSTM only (undefined for GRU)
};

/// Common machinery of LSTM and GRU (parameters, layer/direction loops).
class RNNBase : public Module {
 public:
  /// \throws ValueError for non-positive sizes or dropout outside [0, 1].
  RNNBase(int64_t gates, int64_t input_size, int64_t hidden_size, RNNOptions opt);
  /// output only (initial states are zeros).
  Tensor forward(const Tensor& x) override;
  int64_t hidden_size() const { return hs_; }
  int64_t input_size() const { return is_; }
  const RNNOptions& options() const { return opt_; }

 protected:
  /// Runs every layer and direction. h0/c0 [L * D, B, H] may be undefined (zeros);
  /// `lstm` selects the cell.
  RNNOutput run(const Tensor& x, const Tensor& h0, const Tensor& c0, bool lstm);
  std::string extra_repr() const override;

 private:
  int64_t gates_, is_, hs_;
  RNNOptions opt_;
};

/// Long short-term memory (Hochreiter & Schmidhuber 1997).
class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, RNNOptions opt = {}) : RNNBase(4, input_size, hidden_size, opt) {}
  std::string type_name() const override { return "LSTM"; }
  /// h0, c0: [L * D, B, H] initial states (undefined = zeros).
  /// \throws ShapeError when x or a state has the wrong shape.
  RNNOutput forward_with_state(const Tensor& x, const Tensor& h0 = Tensor(), const Tensor& c0 = Tensor()) {
    return run(x, h0, c0, true);
  }
};

/// Gated recurrent unit (Cho et al. 2014).
class GRU : public RNNBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size, RNNOptions opt = {}) : RNNBase(3, input_size, hidden_size, opt) {}
  std::string type_name() const override { return "GRU"; }
  /// h0: [L * D, B, H] initial state (undefined = zeros). The result's c is undefined.
  /// \throws ShapeError when x or h0 has the wrong shape.
  RNNOutput forward_with_state(const Tensor& x, const Tensor& h0 = Tensor()) { return run(x, h0, Tensor(), false); }
};

}  // namespace skiff::nn
