// Greedy and beam search on a toy next-token table where the locally best first token leads
// to a worse sentence.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/beam_search.h"

namespace skiff::multimodal {
namespace {

// Tokens: 0 start, 1 end, 2 "A", 3 "B". First token: A 0.6, B 0.4. After A: end 0.3, A 0.37,
// B 0.33. After B: end 0.9, A 0.05, B 0.05. After two tokens: end 1.
// Best sentence "B end" (0.36) beats every sentence starting with A ("A A end" 0.222).
Tensor table(const std::vector<std::vector<int64_t>>& prefixes) {
  std::vector<float> out;
  for (const auto& p : prefixes) {
    std::vector<double> probs(4, 0.0);
    if (p.size() == 1) probs = {0, 0, 0.6, 0.4};
    else if (p.size() == 2 && p[1] == 2) probs = {0, 0.3, 0.37, 0.33};
    else if (p.size() == 2 && p[1] == 3) probs = {0, 0.9, 0.05, 0.05};
    else probs = {0, 1, 0, 0};
    for (double v : probs) out.push_back(v > 0 ? float(std::log(v)) : -INFINITY);
  }
  return from_vector(out, {int64_t(prefixes.size()), 4});
}

TEST(BeamSearch, FindsTheSentenceGreedyDecodingMisses) {
  const Hypothesis g = greedy_decode(table, 0, 1, 5);
  EXPECT_EQ(g.tokens, (std::vector<int64_t>{2, 2, 1}));  // A (0.6), A (0.37), end
  EXPECT_NEAR(g.log_prob, std::log(0.6 * 0.37), 1e-5);
  const std::vector<Hypothesis> b = beam_search(table, 0, 1, 5, 2, 0.0);  // raw log-probability
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b[0].tokens, (std::vector<int64_t>{3, 1}));
  EXPECT_NEAR(b[0].log_prob, std::log(0.36), 1e-5);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1].tokens, (std::vector<int64_t>{2, 2, 1}));  // 0.222 beats "A B end" 0.198 and "A end" 0.18
  EXPECT_GE(b[0].score, b[1].score);
  // A beam of one is greedy.
  EXPECT_EQ(beam_search(table, 0, 1, 5, 1, 0.0)[0].tokens, g.tokens);
  // max_len cuts: no sentence ends within one token.
  const auto cut = beam_search(table, 0, 1, 1, 2, 0.0);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0].tokens, (std::vector<int64_t>{2}));
  EXPECT_THROW(beam_search(table, 0, 1, 5, 0), ValueError);
  EXPECT_THROW(greedy_decode(table, 0, 1, 0), ValueError);
}

TEST(BeamSearch, LengthPenaltyFavoursLongerSentences) {
  // Raw log-probability: "B end" (0.36). Normalised by length (penalty 1): "A A end" scores
  // log(0.222) / 3 = -0.502 against log(0.36) / 2 = -0.511 and wins.
  EXPECT_EQ(beam_search(table, 0, 1, 5, 3, 0.0)[0].tokens, (std::vector<int64_t>{3, 1}));
  const auto b = beam_search(table, 0, 1, 5, 3, 1.0);
  EXPECT_EQ(b[0].tokens, (std::vector<int64_t>{2, 2, 1}));
  EXPECT_NEAR(b[0].score, std::log(0.222) / 3, 1e-5);
}

}  // namespace
}  // namespace skiff::multimodal
