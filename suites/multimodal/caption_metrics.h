#pragma once
/// \file caption_metrics.h
/// Captioning metrics written from their papers, for `skiff eval` of captioners:
///  - BLEU-1..4 over a corpus (Papineni et al. 2002): clipped n-gram precisions summed over all
///    captions, their geometric mean, and the brevity penalty with each hypothesis's closest
///    reference length (ties to the shorter), as the COCO caption evaluation computes it, but
///    without its smoothing (a zero precision gives 0).
///  - CIDEr-D (Vedantam et al. 2015, as in the COCO caption evaluation): per n = 1..4, cosine
///    similarity of TF-IDF vectors of n-grams (document frequency over the images' reference
///    sets), the hypothesis's weights clipped to the reference's, times a Gaussian penalty on the
///    length difference (sigma 6; length counted in bigrams, as the reference code does),
///    averaged over n and references, times 10, averaged over images.
/// Both take captions as words (caption_words()).

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::multimodal {

using Words = std::vector<std::string>;

/// The words of a caption as the metrics see them: ASCII letters lower-cased, every character
/// other than a letter, digit or apostrophe a separator (the PTB tokenizer's punctuation dropped).
Words caption_words(std::string_view text);

/// Corpus BLEU-1..4 of hypotheses[i] against references[i] (at least one per hypothesis).
/// \throws ValueError if the counts differ or an image has no reference.
std::array<double, 4> corpus_bleu(const std::vector<Words>& hypotheses, const std::vector<std::vector<Words>>& references);

/// CIDEr-D of hypotheses[i] against references[i] (mean over images; 10 for a perfect caption of
/// at least four words whose n-grams are rare in the corpus).
/// \throws ValueError if the counts differ or an image has no reference.
double cider_d(const std::vector<Words>& hypotheses, const std::vector<std::vector<Words>>& references,
               double sigma = 6.0);

}  // namespace skiff::multimodal
