#pragma once
/// \file captioner.h
/// An image captioner: a CNN image encoder (ConvTower's stages) whose last feature map, one
/// token per cell projected to the decoder's width plus learned positions, is the memory of a
/// transformer decoder (pre-norm TransformerDecoderLayers: causal self-attention over the
/// caption so far, cross-attention over the image tokens, GELU feed-forward) that predicts the
/// next caption token. Trained with cross-entropy on the next token (teacher forcing);
/// captions are decoded greedily or by beam search (beam_search.h) from a start token ([CLS])
/// to an end token ([SEP]).
///
/// State-dict names: encoder.stages.N.K, memory_proj, memory_pos, tok_embed.weight, pos_embed,
/// layers.N.<TransformerDecoderLayer's>, ln_final, head.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/nn/containers.h"
#include "framework/nn/embedding.h"
#include "framework/nn/linear.h"
#include "framework/nn/norm.h"
#include "suites/multimodal/beam_search.h"
#include "suites/multimodal/clip_model.h"

namespace skiff::multimodal {

struct CaptionerConfig {
  int64_t image_size = 64;
  std::vector<int64_t> vision_channels{32, 64, 128, 256};
  int64_t width = 128, layers = 2, heads = 4;
  int64_t vocab_size = 0;
  int64_t context_length = 16;  ///< longest token row, start token included
  /// \throws ValueError naming the field for a value that cannot work.
  void check() const;
};

class Captioner : public nn::Module {
 public:
  explicit Captioner(const CaptionerConfig& c);
  std::string type_name() const override { return "Captioner"; }
  /// images [B, 3, S, S] -> the decoder's memory [B, cells, width].
  Tensor memory(const Tensor& images);
  /// Next-token logits [B, T, vocab] for ids [B, T] (start token first) over memory [B, M, width].
  Tensor decode(const Tensor& memory, const Tensor& ids);
  /// Not available (two inputs). \throws NotImplementedError.
  Tensor forward(const Tensor& x) override;
  const CaptionerConfig& config() const { return config_; }

  /// Decoding for one image's memory [1, M, width]: log-probabilities of the next token of each
  /// prefix (what beam_search and greedy_decode call).
  NextTokenLogProbs next_token_log_probs(const Tensor& image_memory);

  std::shared_ptr<ConvTower> encoder;
  std::shared_ptr<nn::Linear> memory_proj;
  Tensor memory_pos;
  std::shared_ptr<nn::Embedding> tok_embed;
  Tensor pos_embed;
  std::shared_ptr<nn::ModuleList> layers;
  std::shared_ptr<nn::LayerNorm> ln_final;
  std::shared_ptr<nn::Linear> head;

 private:
  CaptionerConfig config_;
};

/// Teacher-forcing loss of captions: ids [B, T] (start token first, end token last, padded with
/// pad_id): cross-entropy of decode(memory, ids[:, :-1]) against ids[:, 1:], padding ignored.
Tensor caption_loss(Captioner& model, const Tensor& images, const Tensor& ids, int64_t pad_id);

}  // namespace skiff::multimodal
