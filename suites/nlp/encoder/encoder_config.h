#pragma once
/// \file encoder_config.h
/// The shape of a BERT-style encoder (Devlin et al. 2019) and its token layout, as the
/// recipes' `Encoder:` section writes it and as a trained model directory stores it
/// (encoder.json beside the weights), so `skiff nlp classify --model DIR` rebuilds the
/// same modules without the recipe.
///
/// Token ids: [0, pieces) are the SentencePiece model's pieces (<unk>=0, <s>=1, </s>=2
/// first, as spm_train numbers them); the three ids after them are the encoder's own
/// specials, which no text encodes to: [PAD] = pieces, [CLS] = pieces + 1,
/// [MASK] = pieces + 2. vocab_size = pieces + 3.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace skiff::nlp {

struct EncoderConfig {
  int64_t pieces = 0;               ///< tokenizer pieces (ids below are the specials)
  int64_t hidden_size = 128;
  int64_t num_layers = 2;
  int64_t num_heads = 4;
  int64_t intermediate_size = 512;  ///< the GELU feed-forward's width
  int64_t max_length = 128;         ///< the longest input, [CLS] included (learned positions: their count)
  /// "learned" (a position embedding added to the tokens, as BERT) or "rotary" (queries
  /// and keys rotated by position in every attention layer, base rope_theta).
  std::string positions = "learned";
  double rope_theta = 10000.0;
  bool pre_norm = true;             ///< x + f(norm(x)) (true) or norm(x + f(x)) (BERT's post-norm)
  double dropout = 0.1;
  double layer_norm_eps = 1e-5;
  std::string pooling = "cls";      ///< classifier input: "cls" (tanh pooler on [CLS]) or "mean" (over real tokens)
  std::vector<std::string> labels;  ///< class names of the classification head (empty: no head)

  int64_t vocab_size() const { return pieces + 3; }
  int64_t pad_id() const { return pieces; }
  int64_t cls_id() const { return pieces + 1; }
  int64_t mask_id() const { return pieces + 2; }
  /// The first id an MLM random replacement may draw: the pieces after <unk>, <s>, </s>.
  int64_t first_regular_id() const { return 3; }

  /// \throws ValueError naming the field for a size <= 0, heads not dividing the width,
  ///   or an unknown pooling.
  void check(const std::string& where) const;
};

nlohmann::json to_json(const EncoderConfig& c);
/// \throws ValueError naming `where` and the field for a missing or mistyped field.
EncoderConfig encoder_config_from_json(const nlohmann::json& j, const std::string& where);

/// DIR/encoder.json written atomically; and read back (\throws IoError naming the file).
void save_encoder_config(const EncoderConfig& c, const std::filesystem::path& file);
EncoderConfig load_encoder_config(const std::filesystem::path& file);

}  // namespace skiff::nlp
