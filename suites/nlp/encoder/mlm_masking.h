#pragma once
/// \file mlm_masking.h
/// BERT's masked-LM corruption (Devlin et al. 2019, section 3.1): each real token is
/// selected with probability `probability`; a selected token becomes [MASK] with
/// probability mask_share, a random regular piece with random_share, and stays as it
/// is otherwise (80/10/10 by default). [PAD] and [CLS] are never selected. Only the
/// selected positions carry a label (the original id); the loss reads nothing else.
///
/// The draws come from a counter-based stream seeded by (seed, step), so a resumed run
/// masks batch k exactly as the uninterrupted run did, on any thread count.

#include <cstdint>
#include <vector>

#include "framework/tensor/tensor.h"
#include "suites/nlp/encoder/encoder_config.h"

namespace skiff::nlp {

struct MlmMaskOptions {
  double probability = 0.15;
  double mask_share = 0.8;
  double random_share = 0.1;
};

struct MaskedBatch {
  Tensor ids;                  ///< [B, T] int64, corrupted
  Tensor positions;            ///< [N] int64, flat indices b*T + t of the selected tokens
  Tensor labels;               ///< [N] int64, their original ids
};

/// Corrupts `ids` [B, T] (int64, rows starting with [CLS], padded with [PAD]). At least
/// one token per batch is selected when any real token exists (so the loss is defined).
/// \throws ValueError for shares outside [0, 1] or summing above 1.
MaskedBatch mask_tokens(const Tensor& ids, const EncoderConfig& c, const MlmMaskOptions& o, uint64_t seed,
                        uint64_t step);

}  // namespace skiff::nlp
