// CPU kernels for ctc_loss and ctc_loss_backward (Graves et al. 2006, "Connectionist Temporal
// Classification", sections 4.1-4.2), in log space.
// Algorithm: for sample n with target l (length S_n) the extended label sequence l' has
// L = 2 S_n + 1 states (blank, l_1, blank, ..., l_S, blank). Forward:
//   alpha_0(0) = lp[0, blank], alpha_0(1) = lp[0, l'_1],
//   alpha_t(s) = lp[t, l'_s] + lse(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if l'_s != blank, l'_{s-2}),
//   nll = -lse(alpha_{T_n-1}(L-1), alpha_{T_n-1}(L-2)).
// Backward: beta_t(s) is the mirror recursion (including the emission at t), and
//   d nll / d lp[t, c] = -exp(lse_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll - lp[t, c])
// (exact for free log_probs; 0 for frames t >= T_n, unreachable classes and infeasible samples).
// Layout: log_probs [T, N, C] and targets (padded [N, S] or concatenated 1-D) are made contiguous;
// log_alpha is [N, T, 2 S_max + 1] with unreachable entries -inf. Samples run in parallel (each is
// computed by one thread, so results do not depend on the thread count). Lengths and target values
// are validated serially before the parallel loop.
// Reference: tests/framework/ops/loss/ctc_loss_test.cpp (brute-force sum over all alignments,
// finite-difference gradients); tested to 1e-10 in float64, 1e-4 in float32.
#include <cmath>
#include <limits>
#include <vector>

#include "framework/backends/cpu/loops.h"
#include "framework/core/threading.h"

namespace skiff::cpu {
namespace {

Tensor contiguous_input(const Tensor& t) { return t.is_contiguous() ? t : detail::contiguous_copy(t); }

template <typename T>
T log_add(T a, T b) {
  const T m = std::max(a, b);
  if (m == -std::numeric_limits<T>::infinity()) return m;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

template <typename T>
T log_add3(T a, T b, T c) {
  const T m = std::max(a, std::max(b, c));
  if (m == -std::numeric_limits<T>::infinity()) return m;
  return m + std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m));
}

// Where each sample's target sequence lives, after validating lengths and values.
struct CtcLayout {
  int64_t max_time = 0, batch = 0, num_classes = 0, states = 0, blank = 0;
  std::vector<int64_t> input_length, target_length, target_offset;
  const int64_t* targets = nullptr;

  int64_t label(int64_t n, int64_t s) const {
    return s % 2 == 0 ? blank : targets[target_offset[size_t(n)] + (s - 1) / 2];
  }
};

CtcLayout ctc_layout(const Tensor& lp, const Tensor& targets, const Tensor& input_lengths,
                     const Tensor& target_lengths, int64_t blank, int64_t states, const char* op) {
  CtcLayout L;
  L.max_time = lp.shape()[0];
  L.batch = lp.shape()[1];
  L.num_classes = lp.shape()[2];
  L.states = states;
  L.blank = blank;
  L.input_length = contiguous_input(input_lengths).to_vector<int64_t>();
  L.target_length = contiguous_input(target_lengths).to_vector<int64_t>();
  L.targets = targets.data<int64_t>();
  const bool padded = targets.dim() == 2;
  const int64_t padded_width = padded ? targets.shape()[1] : 0;
  int64_t offset = 0;
  for (int64_t n = 0; n < L.batch; ++n) {
    const int64_t in_len = L.input_length[size_t(n)], tg_len = L.target_length[size_t(n)];
    SKIFF_CHECK_INDEX(in_len >= 0 && in_len <= L.max_time,
                      "{}: expected input_lengths in [0, T] = [0, {}], got {} for sample {}", op, L.max_time, in_len,
                      n);
    SKIFF_CHECK_INDEX(tg_len >= 0 && 2 * tg_len + 1 <= states,
                      "{}: expected target_lengths in [0, {}], got {} for sample {}", op, (states - 1) / 2, tg_len, n);
    if (padded) {
      SKIFF_CHECK_INDEX(tg_len <= padded_width, "{}: target length {} of sample {} exceeds the padded width S = {}",
                        op, tg_len, n, padded_width);
      L.target_offset.push_back(n * padded_width);
    } else {
      SKIFF_CHECK_INDEX(offset + tg_len <= targets.numel(),
                        "{}: target_lengths sum to more than the {} concatenated targets (at sample {})", op,
                        targets.numel(), n);
      L.target_offset.push_back(offset);
      offset += tg_len;
    }
    for (int64_t k = 0; k < tg_len; ++k) {
      const int64_t v = L.targets[L.target_offset.back() + k];
      SKIFF_CHECK_INDEX(v >= 0 && v < L.num_classes,
                        "{}: expected target values in [0, C) = [0, {}), got {} (sample {}, position {})", op,
                        L.num_classes, v, n, k);
      SKIFF_CHECK(v != blank, "{}: target sequences must not contain the blank label {} (sample {}, position {})", op,
                  blank, n, k);
    }
  }
  return L;
}

bool parallel_over_batch(const CtcLayout& L) {
  return L.batch > 1 && L.batch * L.max_time * L.states >= kParallelGrain && num_threads() > 1;
}

template <typename T>
void ctc_forward(const CtcLayout& L, const T* lp, T* nll, T* log_alpha) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  const int64_t C = L.num_classes, N = L.batch;
#pragma omp parallel for schedule(dynamic, 1) if (parallel_over_batch(L))
  for (int64_t n = 0; n < N; ++n) {
    T* alpha = log_alpha + n * L.max_time * L.states;
    std::fill(alpha, alpha + L.max_time * L.states, kNegInf);
    const int64_t frames = L.input_length[size_t(n)], len = 2 * L.target_length[size_t(n)] + 1;
    if (frames == 0) {  // only the empty target has an (empty) alignment
      nll[n] = len == 1 ? T(0) : std::numeric_limits<T>::infinity();
      continue;
    }
    auto emit = [&](int64_t t, int64_t s) { return lp[(t * N + n) * C + L.label(n, s)]; };
    alpha[0] = emit(0, 0);
    if (len > 1) alpha[1] = emit(0, 1);
    for (int64_t t = 1; t < frames; ++t) {
      const T* prev = alpha + (t - 1) * L.states;
      T* cur = alpha + t * L.states;
      for (int64_t s = 0; s < len; ++s) {
        const bool can_skip = s >= 2 && L.label(n, s) != L.blank && L.label(n, s) != L.label(n, s - 2);
        const T sum = log_add3(prev[s], s >= 1 ? prev[s - 1] : kNegInf, can_skip ? prev[s - 2] : kNegInf);
        cur[s] = sum == kNegInf ? kNegInf : sum + emit(t, s);
      }
    }
    const T* last = alpha + (frames - 1) * L.states;
    nll[n] = -(len > 1 ? log_add(last[len - 1], last[len - 2]) : last[0]);
  }
}

template <typename T>
void ctc_backward(const CtcLayout& L, const T* grad, const T* lp, const T* nll, const T* log_alpha, T* out) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  const int64_t C = L.num_classes, N = L.batch;
  // Scratch sized up front: nothing allocates (or can throw) inside the parallel region.
  std::vector<T> beta_all(size_t(N * L.max_time * L.states), kNegInf);
  std::vector<T> lcab_all(size_t(N * C));
#pragma omp parallel for schedule(dynamic, 1) if (parallel_over_batch(L))
  for (int64_t n = 0; n < N; ++n) {
    const int64_t frames = L.input_length[size_t(n)], len = 2 * L.target_length[size_t(n)] + 1;
    for (int64_t t = 0; t < L.max_time; ++t) std::fill(out + (t * N + n) * C, out + (t * N + n + 1) * C, T(0));
    if (frames == 0 || !std::isfinite(nll[n])) continue;
    const T* alpha = log_alpha + n * L.max_time * L.states;
    T* beta = beta_all.data() + n * L.max_time * L.states;
    T* lcab = lcab_all.data() + n * C;
    auto emit = [&](int64_t t, int64_t s) { return lp[(t * N + n) * C + L.label(n, s)]; };
    T* last = beta + (frames - 1) * L.states;
    last[len - 1] = emit(frames - 1, len - 1);
    if (len > 1) last[len - 2] = emit(frames - 1, len - 2);
    for (int64_t t = frames - 2; t >= 0; --t) {
      const T* next = beta + (t + 1) * L.states;
      T* cur = beta + t * L.states;
      for (int64_t s = 0; s < len; ++s) {
        const bool can_skip = s + 2 < len && L.label(n, s) != L.blank && L.label(n, s) != L.label(n, s + 2);
        const T sum = log_add3(next[s], s + 1 < len ? next[s + 1] : kNegInf, can_skip ? next[s + 2] : kNegInf);
        cur[s] = sum == kNegInf ? kNegInf : sum + emit(t, s);
      }
    }
    const T g = grad[n];
    for (int64_t t = 0; t < frames; ++t) {
      std::fill(lcab, lcab + C, kNegInf);
      for (int64_t s = 0; s < len; ++s) {
        T& slot = lcab[L.label(n, s)];
        slot = log_add(slot, alpha[t * L.states + s] + beta[t * L.states + s]);
      }
      T* row = out + (t * N + n) * C;
      const T* lp_row = lp + (t * N + n) * C;
      for (int64_t c = 0; c < C; ++c)
        if (lcab[c] != kNegInf) row[c] = -g * std::exp(lcab[c] + nll[n] - lp_row[c]);
    }
  }
}

template <typename Fn>
void visit_ctc_dtype(DType t, const char* op, Fn&& fn) {
  switch (t) {
    case DType::Float32: fn(TypeTag<float>{}); return;
    case DType::Float64: fn(TypeTag<double>{}); return;
    default: SKIFF_THROW(NotImplementedError, "{}: dtype {} is not supported (float32, float64)", op, dtype_name(t));
  }
}

void ctc_loss_cpu(const KernelContext& c) {
  const Tensor lp = contiguous_input(c.inputs[0]);
  const Tensor targets = contiguous_input(c.inputs[1]);
  const Tensor& log_alpha = c.outputs[1];
  CtcLayout L = ctc_layout(lp, targets, c.inputs[2], c.inputs[3], c.attrs.get_int("blank"), log_alpha.shape()[2],
                           "ctc_loss");
  visit_ctc_dtype(lp.dtype(), "ctc_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ctc_forward<T>(L, lp.data<T>(), c.outputs[0].data<T>(), log_alpha.data<T>());
  });
}

void ctc_loss_backward_cpu(const KernelContext& c) {
  const Tensor grad = contiguous_input(c.inputs[0]);
  const Tensor lp = contiguous_input(c.inputs[1]);
  const Tensor targets = contiguous_input(c.inputs[2]);
  const Tensor nll = contiguous_input(c.inputs[5]);
  const Tensor log_alpha = contiguous_input(c.inputs[6]);
  CtcLayout L = ctc_layout(lp, targets, c.inputs[3], c.inputs[4], c.attrs.get_int("blank"), log_alpha.shape()[2],
                           "ctc_loss_backward");
  visit_ctc_dtype(lp.dtype(), "ctc_loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ctc_backward<T>(L, grad.data<T>(), lp.data<T>(), nll.data<T>(), log_alpha.data<T>(), c.outputs[0].data<T>());
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(ctc_loss, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0, ctc_loss_cpu);
SKIFF_REGISTER_KERNEL(ctc_loss_backward, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0,
                      ctc_loss_backward_cpu);

}  // namespace skiff::cpu
