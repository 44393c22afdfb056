// BLEU, CIDEr-D and Recall@K on cases computed by hand (the arithmetic is in the comments).
#include <gtest/gtest.h>

#include <cmath>

#include "framework/ops/ops.h"
#include "suites/multimodal/caption_metrics.h"
#include "suites/multimodal/retrieval_metrics.h"

namespace skiff::multimodal {
namespace {

Words w(const char* text) { return caption_words(text); }

TEST(CaptionWords, LowerCaseWithoutPunctuation) {
  EXPECT_EQ(caption_words("A red Triangle, left of two circles."),
            (Words{"a", "red", "triangle", "left", "of", "two", "circles"}));
  EXPECT_EQ(caption_words("  it's 3 o'clock!! "), (Words{"it's", "3", "o'clock"}));
  EXPECT_TRUE(caption_words(" ,.; ").empty());
}

TEST(CorpusBleu, HandComputedPrecisionsAndBrevity) {
  // "the cat sat on the mat" vs "the cat is on the mat": p1 = 5/6 (the x2, cat, on, mat),
  // p2 = 3/5 (the cat, on the, the mat), p3 = 1/4 (on the mat), p4 = 0/3; same length, BP 1.
  auto b = corpus_bleu({w("the cat sat on the mat")}, {{w("the cat is on the mat")}});
  EXPECT_NEAR(b[0], 5.0 / 6, 1e-12);
  EXPECT_NEAR(b[1], std::sqrt(5.0 / 6 * 3.0 / 5), 1e-12);
  EXPECT_NEAR(b[2], 0.5, 1e-12);  // (5/6 * 3/5 * 1/4)^(1/3) = (1/8)^(1/3)
  EXPECT_EQ(b[3], 0.0);
  // "a cat is on the mat": p = 5/6, 4/5, 3/4, 2/3; BLEU-4 = (1/3)^(1/4).
  EXPECT_NEAR(corpus_bleu({w("a cat is on the mat")}, {{w("the cat is on the mat")}})[3], std::pow(1.0 / 3, 0.25),
              1e-12);
  // Clipping: "the the the" against "the cat": p1 = 1/3.
  EXPECT_NEAR(corpus_bleu({w("the the the")}, {{w("the cat")}})[0], 1.0 / 3, 1e-12);
  // Brevity: "the cat" (2 words) against a 6-word reference: BP = exp(1 - 6/2).
  EXPECT_NEAR(corpus_bleu({w("the cat")}, {{w("the cat is on the mat")}})[1], std::exp(-2.0), 1e-12);
  // The closest reference length sets the penalty: 3 (|3 - 2| = 1) rather than 6; ties go short.
  EXPECT_NEAR(corpus_bleu({w("the cat")}, {{w("the cat is on the mat"), w("the cat sat")}})[0], std::exp(1.0 - 1.5),
              1e-12);
  EXPECT_NEAR(corpus_bleu({w("a b c")}, {{w("a b c d"), w("a b")}})[0], 1.0, 1e-12);  // ties: 2 < 3, BP 1
  // Corpus level: counts add over captions before dividing. p1 = (1 + 2) / (2 + 2) = 3/4.
  auto c = corpus_bleu({w("x y"), w("a b")}, {{w("x z")}, {w("a b")}});
  EXPECT_NEAR(c[0], 0.75, 1e-12);
  EXPECT_NEAR(c[1], std::sqrt(0.75 * 0.5), 1e-12);  // p2 = (0 + 1) / (1 + 1)
  EXPECT_EQ(corpus_bleu({w("")}, {{w("a")}})[0], 0.0);
}

TEST(CiderD, HandComputedTfIdfCosinesAndLengthPenalty) {
  // Two images, refs "a red square" / "a blue circle". "a" is in both (idf log 2 - log 2 = 0),
  // every other n-gram in one (idf log 2). A perfect 3-word caption: cosine 1 for n = 1, 2, 3,
  // and no 4-grams (0): (1 + 1 + 1 + 0) / 4 * 10 = 7.5.
  const std::vector<std::vector<Words>> refs{{w("a red square")}, {w("a blue circle")}};
  EXPECT_NEAR(cider_d({w("a red square"), w("a blue circle")}, refs), 7.5, 1e-9);
  // "a blue" for the second: n = 1: (log2)^2 / (log2 * sqrt(2) log2) = 1/sqrt(2); n = 2 the same;
  // n = 3, 4: 0; lengths in bigrams 1 vs 2: penalty exp(-1 / 72).
  const double second = (2 / std::sqrt(2.0)) / 4 * 10 * std::exp(-1.0 / 72);
  EXPECT_NEAR(cider_d({w("a red square"), w("a blue")}, refs), (7.5 + second) / 2, 1e-9);
  // Clipping: repeating a word cannot raise its weight above the reference's. "red red square":
  // n = 1: h = (red 2l, square l), r = (a 0, red l, square l), l = log 2: min(2l, l) * l + l * l =
  // 2 l^2 over |h| |r| = sqrt(5) l * sqrt(2) l -> 2 / sqrt(10); n = 2: "red square" matches, "red
  // red" does not: l^2 / (sqrt(2) l * sqrt(2) l) = 1/2; n = 3: 0. Same length: no penalty.
  const double clipped = (2 / std::sqrt(10.0) + 0.5) / 4 * 10;
  EXPECT_NEAR(cider_d({w("red red square"), w("a blue circle")}, refs), (clipped + 7.5) / 2, 1e-9);
  // Averaged over an image's references.
  const std::vector<std::vector<Words>> two_refs{{w("a red square"), w("a blue circle")}, {w("a green star")}};
  const double s = cider_d({w("a red square"), w("a green star")}, two_refs);
  EXPECT_GT(s, 0.0);
  EXPECT_LT(s, 7.5);
  EXPECT_THROW(cider_d({w("a")}, {}), ValueError);
  EXPECT_THROW(cider_d({w("a")}, {{}}), ValueError);
  EXPECT_THROW(corpus_bleu({w("a"), w("b")}, {{w("a")}}), ValueError);
}

TEST(RecallAtK, RanksTheBestCorrectItemWithTiesAgainstTheQuery) {
  // Query 0: correct item 2 scores 0.9, one wrong item (0.95) above it: rank 1.
  // Query 1: correct items 0 and 3; item 3 (0.8) is best, nothing wrong above: rank 0.
  // Query 2: correct item 1 ties with wrong item 0 at 0.5 and wrong items 2, 3 are above: rank 3.
  Tensor sim = from_vector(std::vector<float>{0.95f, 0.1f, 0.9f, 0.2f,   //
                                              0.3f, 0.7f, 0.1f, 0.8f,    //
                                              0.5f, 0.5f, 0.6f, 0.9f},
                           {3, 4});
  auto r = recall_at_k(sim, {{2}, {0, 3}, {1}}, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(r[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(r[2], 2.0 / 3);
  EXPECT_DOUBLE_EQ(r[3], 2.0 / 3);  // the tie keeps query 2 out of the first 3
  EXPECT_DOUBLE_EQ(r[4], 1.0);
  EXPECT_THROW(recall_at_k(sim, {{2}, {0}}), ShapeError);
  EXPECT_THROW(recall_at_k(sim, {{2}, {}, {1}}), ValueError);
  EXPECT_THROW(recall_at_k(sim, {{2}, {4}, {1}}), ValueError);
  EXPECT_THROW(recall_at_k(sim, {{2}, {0}, {1}}, {0}), ValueError);
}

}  // namespace
}  // namespace skiff::multimodal
