// Greedy and beam-search decoding (beam_search.h).
#include "suites/multimodal/beam_search.h"

#include <algorithm>
#include <cmath>

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::multimodal {
namespace {

double normalised(double log_prob, size_t length, double penalty) {
  return log_prob / std::pow(double(std::max<size_t>(length, 1)), penalty);
}

std::vector<float> row(const Tensor& t, int64_t r) {
  return contiguous(to(select(t, 0, r), DType::Float32)).to_vector<float>();
}

}  // namespace

Hypothesis greedy_decode(const NextTokenLogProbs& step, int64_t start_id, int64_t end_id, int64_t max_len) {
  SKIFF_CHECK(max_len >= 1, "greedy_decode: max_len must be >= 1, got {}", max_len);
  std::vector<int64_t> prefix{start_id};
  Hypothesis h;
  for (int64_t k = 0; k < max_len; ++k) {
    const std::vector<float> lp = row(step({prefix}), 0);
    const int64_t best = int64_t(std::max_element(lp.begin(), lp.end()) - lp.begin());
    h.tokens.push_back(best);
    h.log_prob += lp[size_t(best)];
    prefix.push_back(best);
    if (best == end_id) break;
  }
  h.score = normalised(h.log_prob, h.tokens.size(), 1.0);
  return h;
}

std::vector<Hypothesis> beam_search(const NextTokenLogProbs& step, int64_t start_id, int64_t end_id, int64_t max_len,
                                    int64_t beam, double length_penalty) {
  SKIFF_CHECK(beam >= 1, "beam_search: beam must be >= 1, got {}", beam);
  SKIFF_CHECK(max_len >= 1, "beam_search: max_len must be >= 1, got {}", max_len);
  std::vector<Hypothesis> live{Hypothesis{}}, done;
  for (int64_t k = 0; k < max_len && !live.empty(); ++k) {
    std::vector<std::vector<int64_t>> prefixes;
    for (const Hypothesis& h : live) {
      std::vector<int64_t> p{start_id};
      p.insert(p.end(), h.tokens.begin(), h.tokens.end());
      prefixes.push_back(std::move(p));
    }
    const Tensor lp = step(prefixes);
    SKIFF_CHECK_SHAPE(lp.dim() == 2 && lp.size(0) == int64_t(live.size()),
                      "beam_search: the step gave {} for {} prefixes (expected [prefixes, vocab])", lp.shape(), live.size());
    // Every extension of every live hypothesis, the `beam` best by total log-probability.
    std::vector<Hypothesis> candidates;
    for (size_t i = 0; i < live.size(); ++i) {
      const std::vector<float> r = row(lp, int64_t(i));
      for (size_t v = 0; v < r.size(); ++v) {
        if (!std::isfinite(r[v])) continue;
        Hypothesis c = live[i];
        c.tokens.push_back(int64_t(v));
        c.log_prob += r[v];
        candidates.push_back(std::move(c));
      }
    }
    const size_t keep = std::min(candidates.size(), size_t(beam));
    std::partial_sort(candidates.begin(), candidates.begin() + std::ptrdiff_t(keep), candidates.end(),
                      [](const Hypothesis& a, const Hypothesis& b) { return a.log_prob > b.log_prob; });
    candidates.resize(keep);
    live.clear();
    for (Hypothesis& c : candidates) {
      c.score = normalised(c.log_prob, c.tokens.size(), length_penalty);
      (c.tokens.back() == end_id || k + 1 == max_len ? done : live).push_back(std::move(c));
    }
    // Stop once no live hypothesis can still beat the worst finished one kept: log-probabilities
    // only fall, so a live one's best possible score is its current one at its longest length.
    if (int64_t(done.size()) >= beam) {
      std::sort(done.begin(), done.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
      const double worst_kept = done[size_t(beam - 1)].score;
      bool hope = false;
      for (const Hypothesis& h : live)
        hope |= normalised(h.log_prob, size_t(max_len), length_penalty) > worst_kept ||
                normalised(h.log_prob, h.tokens.size(), length_penalty) > worst_kept;
      if (!hope) break;
    }
  }
  std::sort(done.begin(), done.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (int64_t(done.size()) > beam) done.resize(size_t(beam));
  return done;
}

}  // namespace skiff::multimodal
