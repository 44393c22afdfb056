#pragma once
/// \file loss.h
/// Loss functions, with PyTorch semantics unless noted.
///
/// Every loss takes a `Reduction`:
///   - `Reduction::Mean` (default): the (weighted) mean of the per-element losses, a 0-d tensor;
///   - `Reduction::Sum`: their sum, a 0-d tensor;
///   - `Reduction::None`: the per-element losses themselves (shape documented per loss).
/// Inputs must be floating point (float32/float64; float16/bfloat16 where the element-wise ops
/// support them). Class-index targets are int64 (int32/uint8/int8 are widened). Class weights,
/// `pos_weight` and lengths are never differentiated (they are constants, as in PyTorch).
///
/// Errors: ShapeError for mismatched shapes, TypeError for wrong dtypes, IndexError for a class
/// index outside [0, C) (the message names the bad value and C), ValueError for bad arguments
/// (negative beta, label_smoothing outside [0, 1], probabilities outside [0, 1], an unknown
/// reduction name).

#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

/// How per-element losses are combined.
enum class Reduction { None, Mean, Sum };

/// "none" | "mean" | "sum" -> Reduction. \throws ValueError naming the accepted values.
Reduction reduction_from_string(const std::string& name);
/// Reduction -> "none" | "mean" | "sum".
const char* reduction_name(Reduction r);

// ---- regression losses ------------------------------------------------------------------

/// Squared error (input - target)^2. `input` and `target` must have the same shape (any rank);
/// `target` is converted to input's dtype. None -> input's shape.
/// \throws ShapeError, TypeError (non-float input).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

/// Absolute error |input - target| (gradient 0 where they are equal). Same contract as mse_loss.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

/// Huber-like smooth L1 with threshold beta:
///   0.5 d^2 / beta  if |d| < beta,   |d| - 0.5 beta  otherwise   (d = input - target).
/// beta == 0 gives l1_loss. Same shape rules as mse_loss. \throws ValueError for beta < 0.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);

// ---- binary classification --------------------------------------------------------------

/// Binary cross-entropy on probabilities:
///   -w * (t log(p) + (1 - t) log(1 - p)),
/// with each log clamped to >= -100 (so p = 0 or 1 gives a finite loss, like PyTorch).
/// `probabilities` and `target` have the same shape; `weight` (optional, undefined = 1) broadcasts
/// to that shape. None -> input's shape.
/// \throws ShapeError, TypeError, ValueError if a probability lies outside [0, 1].
Tensor binary_cross_entropy(const Tensor& probabilities, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = Reduction::Mean);

/// Binary cross-entropy on logits x, computed stably:
///   w * ((1 - t) x + (1 + (pw - 1) t) (log1p(exp(-|x|)) + max(-x, 0)))
/// which for pw = 1 is  w * (max(x, 0) - x t + log1p(exp(-|x|))).
/// `weight` (optional) broadcasts to the input shape; `pos_weight` (optional, weight of the
/// positive term, usually [C] for the last dim) broadcasts too. None -> input's shape.
/// \throws ShapeError, TypeError.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, Reduction reduction = Reduction::Mean);

// ---- multi-class classification ----------------------------------------------------------

/// Negative log-likelihood of class indices.
///   log_probs: [N, C] or [N, C, d1, ...] (or unbatched [C]); usually log_softmax outputs.
///   target:    int64 [N] or [N, d1, ...] (or 0-d), each in [0, C) or equal to ignore_index.
///   weight:    optional [C] class weights (undefined = all ones), same dtype as log_probs.
/// loss[n, d] = -weight[t] * log_probs[n, t, d] with t = target[n, d]; 0 where t == ignore_index.
/// Mean divides the sum by the sum of weight[t] over non-ignored targets (NaN if all are ignored,
/// as in PyTorch). None -> target's shape.
/// \throws ShapeError, TypeError, IndexError naming the bad target value and C.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = {},
                int64_t ignore_index = -100, Reduction reduction = Reduction::Mean);

/// log_softmax over dim 1 (dim 0 for unbatched [C]) followed by nll_loss, with optional label
/// smoothing eps in [0, 1]:
///   loss = (1 - eps) * nll + eps / C * (-sum_c weight[c] log_softmax(x)[c]).
/// `target` is either class indices (int dtypes; shapes as in nll_loss; mean divides both terms by
/// the sum of weight[t] over non-ignored targets, as PyTorch does) or class probabilities (a float
/// tensor with logits' shape: loss = -sum_c weight[c] t'[c] log_softmax(x)[c] with
/// t' = (1 - eps) t + eps / C; mean divides by the number of samples N * d1 * ...; ignore_index
/// does not apply). Differentiable w.r.t. logits (and probability targets), twice.
/// \throws ShapeError, TypeError, IndexError, ValueError (label_smoothing outside [0, 1]).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                     int64_t ignore_index = -100, Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0);

// ---- sequence losses ----------------------------------------------------------------------

/// Connectionist Temporal Classification loss (Graves et al. 2006).
///   log_probs:      [T, N, C] float32/float64, log-probabilities over classes (log_softmax outputs).
///   targets:        int64 [N, S] padded (sample n uses targets[n, :target_lengths[n]]), or the
///                   concatenation of all target sequences as 1-D [sum(target_lengths)].
///                   Values in [0, C), never `blank`.
///   input_lengths:  int64 [N], each in [0, T].
///   target_lengths: int64 [N], each >= 0 (and <= S for padded targets).
/// Per sample: nll[n] = -log sum over alignments of prod_t exp(log_probs[t, n, path_t]), computed
/// with the alpha recursion in log space (each sample independently, in parallel over the batch).
/// A target that no alignment of input_lengths[n] frames can produce (e.g. longer than the input)
/// gives +inf, or 0 with zero_infinity; either way that sample's gradient is 0 (PyTorch gives NaN
/// without zero_infinity).
/// Reduction: None -> [N]; Sum -> sum of nll; Mean -> mean over the batch of nll[n] / max(S_n, 1)
/// (PyTorch semantics).
/// Gradient: w.r.t. log_probs only, the exact derivative of the loss treating log_probs as free
/// inputs, -exp(log(sum_{s: l'_s = c} alpha_t(s) beta_t(s)) + nll - log_probs[t, n, c]). PyTorch
/// returns this plus exp(log_probs), which only agrees after a log_softmax backward; the gradient
/// w.r.t. the logits before log_softmax is the same. It is computed by the op "ctc_loss_backward",
/// which is not itself differentiable: second derivatives of ctc_loss are not supported.
/// \throws ShapeError, TypeError, IndexError (blank outside [0, C), a target value outside [0, C),
/// a length out of range), ValueError (a target equal to blank).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0, Reduction reduction = Reduction::Mean,
                bool zero_infinity = false);
/// ctc_loss with lengths given as lists.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank = 0,
                Reduction reduction = Reduction::Mean, bool zero_infinity = false);

}  // namespace skiff
