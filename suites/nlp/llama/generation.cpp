#include "suites/nlp/llama/generation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "framework/ops/op.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff::nlp {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

std::string stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::Length: return "length";
    case StopReason::EosToken: return "eos";
    case StopReason::Callback: return "stop";
  }
  return "?";
}

void apply_repetition_penalty(std::span<float> logits, std::span<const int64_t> seen, double penalty) {
  SKIFF_CHECK(penalty > 0, "generate: repetition_penalty must be positive, got {}", penalty);
  if (penalty == 1.0) return;
  std::unordered_set<int64_t> done;
  for (int64_t id : seen) {
    if (id < 0 || id >= int64_t(logits.size()) || !done.insert(id).second) continue;
    float& x = logits[size_t(id)];
    x = x < 0 ? float(x * penalty) : float(x / penalty);
  }
}

void apply_temperature(std::span<float> logits, double temperature) {
  SKIFF_CHECK(temperature > 0, "generate: temperature must be positive, got {}", temperature);
  if (temperature == 1.0) return;
  for (float& x : logits) x = float(x / temperature);
}

void apply_top_k(std::span<float> logits, int64_t k) {
  if (k <= 0 || k >= int64_t(logits.size())) return;
  std::vector<float> v(logits.begin(), logits.end());
  std::nth_element(v.begin(), v.begin() + (k - 1), v.end(), std::greater<float>());
  float kth = v[size_t(k - 1)];
  for (float& x : logits)
    if (x < kth) x = kNegInf;
}

void apply_top_p(std::span<float> logits, double p) {
  SKIFF_CHECK(p > 0 && p <= 1, "generate: top_p must be in (0, 1], got {}", p);
  if (p >= 1.0 || logits.empty()) return;
  std::vector<size_t> order(logits.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] > logits[b]; });
  double max = logits[order[0]], total = 0;
  std::vector<double> prob(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) total += prob[i] = std::exp(double(logits[i]) - max);
  double mass = 0;  // probability of the tokens kept so far
  for (size_t i : order) {
    if (mass >= p) logits[i] = kNegInf;
    else mass += prob[i] / total;
  }
}

int64_t argmax_token(std::span<const float> logits) {
  return int64_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

int64_t sample_token(std::span<const float> logits, Generator& gen) {
  double max = *std::max_element(logits.begin(), logits.end());
  std::vector<double> cum(logits.size());
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) cum[i] = total += std::exp(double(logits[i]) - max);
  double u = gen.uniform() * total;
  size_t i = size_t(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin());
  // u < total, so i is in range unless rounding put u on the last edge; never pick a -inf token.
  i = std::min(i, logits.size() - 1);
  while (logits[i] == kNegInf && i > 0) --i;
  return int64_t(i);
}

void validate(const GenerationConfig& c) {
  SKIFF_CHECK(c.max_new_tokens >= 0, "generate: max_new_tokens must be >= 0, got {}", c.max_new_tokens);
  SKIFF_CHECK(c.repetition_penalty > 0, "generate: repetition_penalty must be positive, got {}", c.repetition_penalty);
  if (c.do_sample) {
    SKIFF_CHECK(c.temperature > 0, "generate: temperature must be positive when sampling, got {}", c.temperature);
    SKIFF_CHECK(c.top_p > 0 && c.top_p <= 1, "generate: top_p must be in (0, 1], got {}", c.top_p);
    SKIFF_CHECK(c.top_k >= 0, "generate: top_k must be >= 0, got {}", c.top_k);
  }
}

GenerationOutput generate(LlamaForCausalLM& model, const std::vector<std::vector<int64_t>>& prompts,
                          const GenerationConfig& c, const TokenCallback& on_token) {
  validate(c);
  SKIFF_CHECK(!prompts.empty(), "generate: no prompts");
  const int64_t b = int64_t(prompts.size()), v = model.config().vocab_size;
  size_t longest = 0;
  for (size_t r = 0; r < prompts.size(); ++r) {
    SKIFF_CHECK(!prompts[r].empty(), "generate: prompt {} is empty (add a BOS token or some text)", r);
    longest = std::max(longest, prompts[r].size());
  }
  int64_t pad = c.pad_token_id >= 0 ? c.pad_token_id : (c.eos_token_ids.empty() ? 0 : c.eos_token_ids[0]);
  pad = std::clamp<int64_t>(pad, 0, v - 1);
  std::unordered_set<int64_t> eos(c.eos_token_ids.begin(), c.eos_token_ids.end());

  // Left-padded prompts and their mask.
  const int64_t t0 = int64_t(longest);
  std::vector<int64_t> ids(size_t(b * t0), pad), mask(size_t(b * t0), 0);
  bool padded = false;
  for (int64_t r = 0; r < b; ++r) {
    int64_t off = t0 - int64_t(prompts[size_t(r)].size());
    padded |= off > 0;
    for (size_t i = 0; i < prompts[size_t(r)].size(); ++i) {
      ids[size_t(r * t0 + off) + i] = prompts[size_t(r)][i];
      mask[size_t(r * t0 + off) + i] = 1;
    }
  }
  std::vector<std::vector<int64_t>> seen(prompts.begin(), prompts.end());
  GenerationOutput out;
  out.tokens.resize(size_t(b));
  out.reasons.assign(size_t(b), StopReason::Length);
  std::vector<bool> done(size_t(b), false);
  int64_t active = b;

  NoGradGuard no_grad;
  Generator gen(c.seed);
  LlamaCache cache;
  Tensor input = from_vector(ids, {b, t0});
  int64_t width = t0;  // columns of the mask
  for (int64_t step = 0; step < c.max_new_tokens && active > 0; ++step) {
    Tensor attn = padded ? from_vector(mask, {b, width}) : Tensor();
    Tensor logits = contiguous(model.forward(input, attn, &cache, Tensor(), /*last_only=*/true));  // [B, 1, V]
    const float* lp = logits.data<float>();
    std::vector<int64_t> next(size_t(b), pad);
    std::vector<float> row(static_cast<size_t>(v));
    for (int64_t r = 0; r < b; ++r) {
      if (done[size_t(r)]) continue;
      std::copy(lp + r * v, lp + (r + 1) * v, row.begin());
      apply_repetition_penalty(row, seen[size_t(r)], c.repetition_penalty);
      int64_t tok;
      if (!c.do_sample) {
        tok = argmax_token(row);
      } else {
        apply_temperature(row, c.temperature);
        apply_top_k(row, c.top_k);
        apply_top_p(row, c.top_p);
        tok = sample_token(row, gen);
      }
      next[size_t(r)] = tok;
      seen[size_t(r)].push_back(tok);
      out.tokens[size_t(r)].push_back(tok);
      bool stop = false;
      if (eos.count(tok)) {
        out.reasons[size_t(r)] = StopReason::EosToken;
        stop = true;
      }
      if (on_token && on_token(size_t(r), tok) && !stop) {
        out.reasons[size_t(r)] = StopReason::Callback;
        stop = true;
      }
      if (stop) {
        done[size_t(r)] = true;
        --active;
      }
    }
    if (active == 0 || step + 1 == c.max_new_tokens) break;
    input = from_vector(next, {b, 1});
    if (padded) {
      std::vector<int64_t> wider(size_t(b * (width + 1)));
      for (int64_t r = 0; r < b; ++r) {
        std::copy(mask.begin() + r * width, mask.begin() + (r + 1) * width, wider.begin() + r * (width + 1));
        wider[size_t(r * (width + 1) + width)] = 1;
      }
      mask.swap(wider);
      ++width;
    }
  }
  return out;
}

}  // namespace skiff::nlp
