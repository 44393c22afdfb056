// BLEU and CIDEr-D (caption_metrics.h says what each computes).
#include "suites/multimodal/caption_metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "framework/core/error.h"

namespace skiff::multimodal {
namespace {

constexpr int kMaxN = 4;

/// Counts of every n-gram (n = 1..4) of a caption, keyed by the words joined with spaces.
using NgramCounts = std::map<std::string, double>;

std::array<NgramCounts, kMaxN> ngram_counts(const Words& w) {
  std::array<NgramCounts, kMaxN> counts;
  for (int n = 1; n <= kMaxN; ++n)
    for (size_t i = 0; i + size_t(n) <= w.size(); ++i) {
      std::string key = w[i];
      for (int k = 1; k < n; ++k) key += ' ' + w[i + size_t(k)];
      counts[size_t(n - 1)][key] += 1;
    }
  return counts;
}

void check_pairs(const char* metric, size_t hypotheses, const std::vector<std::vector<Words>>& references) {
  SKIFF_CHECK(hypotheses == references.size(), "{}: {} hypotheses but {} reference sets", metric, hypotheses,
              references.size());
  for (size_t i = 0; i < references.size(); ++i)
    SKIFF_CHECK(!references[i].empty(), "{}: image {} has no reference caption", metric, i);
}

}  // namespace

Words caption_words(std::string_view text) {
  Words words;
  std::string cur;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '\'' || c >= 0x80) {  // bytes of UTF-8 letters stay inside words
      cur += char(std::tolower(c));
    } else if (!cur.empty()) {
      words.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

std::array<double, 4> corpus_bleu(const std::vector<Words>& hypotheses, const std::vector<std::vector<Words>>& references) {
  check_pairs("corpus_bleu", hypotheses.size(), references);
  std::array<double, kMaxN> matched{}, total{};
  double hyp_len = 0, ref_len = 0;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const Words& h = hypotheses[i];
    const auto hc = ngram_counts(h);
    // Clip each n-gram's count to its largest count in any one reference.
    std::array<NgramCounts, kMaxN> max_ref;
    size_t closest = references[i][0].size();
    for (const Words& r : references[i]) {
      const auto rc = ngram_counts(r);
      for (int n = 0; n < kMaxN; ++n)
        for (const auto& [g, c] : rc[size_t(n)]) max_ref[size_t(n)][g] = std::max(max_ref[size_t(n)][g], c);
      const auto diff = [&](size_t len) { return std::abs(double(len) - double(h.size())); };
      if (diff(r.size()) < diff(closest) || (diff(r.size()) == diff(closest) && r.size() < closest)) closest = r.size();
    }
    for (int n = 0; n < kMaxN; ++n) {
      for (const auto& [g, c] : hc[size_t(n)]) {
        auto it = max_ref[size_t(n)].find(g);
        matched[size_t(n)] += it == max_ref[size_t(n)].end() ? 0.0 : std::min(c, it->second);
      }
      total[size_t(n)] += double(std::max<int64_t>(0, int64_t(h.size()) - n));
    }
    hyp_len += double(h.size());
    ref_len += double(closest);
  }
  std::array<double, 4> bleu{};
  if (hyp_len == 0) return bleu;
  const double brevity = hyp_len > ref_len ? 1.0 : std::exp(1.0 - ref_len / hyp_len);
  double log_sum = 0;
  for (int n = 0; n < kMaxN; ++n) {
    if (matched[size_t(n)] == 0 || total[size_t(n)] == 0) break;  // this and every longer BLEU are 0
    log_sum += std::log(matched[size_t(n)] / total[size_t(n)]);
    bleu[size_t(n)] = brevity * std::exp(log_sum / double(n + 1));
  }
  return bleu;
}

double cider_d(const std::vector<Words>& hypotheses, const std::vector<std::vector<Words>>& references, double sigma) {
  check_pairs("cider_d", hypotheses.size(), references);
  if (hypotheses.empty()) return 0.0;
  // Document frequency: in how many images' reference sets each n-gram occurs.
  std::map<std::string, double> df;
  std::vector<std::vector<std::array<NgramCounts, kMaxN>>> ref_counts(references.size());
  for (size_t i = 0; i < references.size(); ++i) {
    std::set<std::string> seen;
    for (const Words& r : references[i]) {
      ref_counts[i].push_back(ngram_counts(r));
      for (const auto& by_n : ref_counts[i].back())
        for (const auto& [g, c] : by_n) seen.insert(g);
    }
    for (const std::string& g : seen) df[g] += 1;
  }
  const double log_images = std::log(double(references.size()));
  struct Vec {
    std::array<NgramCounts, kMaxN> w;  // tf * idf per n-gram
    std::array<double, kMaxN> norm{};
    double length = 0;  // bigrams, as the reference implementation counts it
  };
  auto tfidf = [&](const std::array<NgramCounts, kMaxN>& counts) {
    Vec v;
    for (int n = 0; n < kMaxN; ++n) {
      for (const auto& [g, tf] : counts[size_t(n)]) {
        auto it = df.find(g);
        const double w = tf * (log_images - std::log(std::max(1.0, it == df.end() ? 0.0 : it->second)));
        v.w[size_t(n)][g] = w;
        v.norm[size_t(n)] += w * w;
        if (n == 1) v.length += tf;
      }
      v.norm[size_t(n)] = std::sqrt(v.norm[size_t(n)]);
    }
    return v;
  };
  double total = 0;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const Vec h = tfidf(ngram_counts(hypotheses[i]));
    double image_score = 0;
    for (const auto& rc : ref_counts[i]) {
      const Vec r = tfidf(rc);
      const double delta = h.length - r.length;
      const double penalty = std::exp(-delta * delta / (2 * sigma * sigma));
      for (int n = 0; n < kMaxN; ++n) {
        double dot = 0;
        for (const auto& [g, wh] : h.w[size_t(n)]) {
          auto it = r.w[size_t(n)].find(g);
          if (it != r.w[size_t(n)].end()) dot += std::min(wh, it->second) * it->second;  // clipped
        }
        if (h.norm[size_t(n)] != 0 && r.norm[size_t(n)] != 0) dot /= h.norm[size_t(n)] * r.norm[size_t(n)];
        image_score += dot * penalty / kMaxN;
      }
    }
    total += image_score / double(references[i].size()) * 10.0;
  }
  return total / double(hypotheses.size());
}

}  // namespace skiff::multimodal
