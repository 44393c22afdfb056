#pragma once
/// \file clip_model.h
/// A CLIP-style dual encoder (Radford et al. 2021): an image tower and a text tower, each ending
/// in a linear projection into one embedding space where both are L2-normalised, trained with
/// the symmetric InfoNCE loss at a learnable temperature.
///
/// Image tower (VisionTransformer): a patch_size x patch_size convolution of stride patch_size
/// (the patch embedding, no bias), a learned class token and position embeddings, a LayerNorm,
/// `vision_layers` pre-norm transformer layers (GELU, 4x feed-forward), a LayerNorm on the class
/// token's output, and the projection (no bias).
/// Text tower (TextTransformer): token and learned position embeddings, `text_layers` pre-norm
/// transformer layers with a causal mask (CLIP: the sequence's last real token, the end of the
/// caption, is its feature) or bidirectional (the mean over real tokens), a final LayerNorm and
/// the projection. Padding positions are masked out as keys.
///
/// Temperature: logits = exp(logit_scale) * image_embedding . text_embedding, logit_scale a
/// parameter starting at log(1 / init_temperature) and clamped at log(max_logit_scale) (CLIP's
/// 100) where it is used, so it cannot grow without bound.
///
/// Or a CNN image tower (ConvTower): stride-2 stages of convolutions with BatchNorm and ReLU,
/// the global average and the projection.
///
/// State-dict names: visual.{patch_embed.weight, class_embedding, pos_embed, ln_pre, layers.N,
/// ln_post, proj} (ConvTower: visual.{stages.N.K, proj}), text.{tok_embed.weight, pos_embed,
/// layers.N, ln_final, proj}, logit_scale.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/nn/containers.h"
#include "framework/nn/conv.h"
#include "framework/nn/embedding.h"
#include "framework/nn/linear.h"
#include "framework/nn/norm.h"

namespace skiff::multimodal {

struct ClipConfig {
  int64_t image_size = 64;  ///< square input side, a multiple of patch_size (vit)
  /// "vit" (VisionTransformer), "cnn" (ConvTower) or "pretrained" (PretrainedTower: a zoo
  /// detector's backbone, pretrained_model cut at pretrained_output).
  std::string vision_type = "vit";
  std::string pretrained_model = "nanodet-coco";
  std::string pretrained_output = "PartitionedCall/onnx_tf_prefix_Concat_62";
  bool pretrained_random_init = false;  ///< the pretrained tower's architecture with fresh weights
  int64_t patch_size = 8;
  /// cnn: output channels of the stages, each halving the resolution.
  std::vector<int64_t> vision_channels{32, 64, 128, 256};
  int64_t vision_width = 128, vision_layers = 4, vision_heads = 4;
  int64_t vocab_size = 0;        ///< the tokenizer's
  int64_t context_length = 16;   ///< longest token sequence
  int64_t text_width = 128, text_layers = 3, text_heads = 4;
  bool causal_text = true;       ///< causal mask and end-token feature; false: bidirectional, mean
  int64_t embed_dim = 64;
  double init_temperature = 0.07;
  double max_logit_scale = 100.0;
  /// \throws ValueError naming the field for a value that cannot work.
  void check() const;
};

class VisionTransformer : public nn::Module {
 public:
  explicit VisionTransformer(const ClipConfig& c);
  std::string type_name() const override { return "VisionTransformer"; }
  /// images [B, 3, S, S] -> [B, embed_dim] (not normalised).
  Tensor forward(const Tensor& images) override;

  std::shared_ptr<nn::Conv2d> patch_embed;
  Tensor class_embedding, pos_embed;
  std::shared_ptr<nn::LayerNorm> ln_pre, ln_post;
  std::shared_ptr<nn::ModuleList> layers;
  std::shared_ptr<nn::Linear> proj;

 private:
  ClipConfig config_;
};

/// The CNN image tower: per stage a 3x3 convolution of stride 2 and a 3x3 convolution of stride
/// 1, each with BatchNorm and ReLU, then the global average and the projection (no bias).
/// Children: stages.N.{0..5}, proj.
class ConvTower : public nn::Module {
 public:
  explicit ConvTower(const ClipConfig& c);
  std::string type_name() const override { return "ConvTower"; }
  /// images [B, 3, S, S] -> [B, embed_dim] (not normalised).
  Tensor forward(const Tensor& images) override;
  /// The last stage's feature map [B, C, S / 2^stages, S / 2^stages] (what forward() pools).
  Tensor feature_map(const Tensor& images);

  std::shared_ptr<nn::ModuleList> stages;
  std::shared_ptr<nn::Linear> proj;

 private:
  ClipConfig config_;
};

class TextTransformer : public nn::Module {
 public:
  explicit TextTransformer(const ClipConfig& c);
  std::string type_name() const override { return "TextTransformer"; }
  /// ids [B, T] int64 (T <= context_length), pad [B, T] bool (true: padding, after the real
  /// tokens) or undefined -> [B, embed_dim] (not normalised).
  /// \throws ShapeError naming the argument for inconsistent shapes.
  Tensor forward(const Tensor& ids, const Tensor& pad);
  Tensor forward(const Tensor& ids) override { return forward(ids, Tensor()); }

  std::shared_ptr<nn::Embedding> tok_embed;
  Tensor pos_embed;
  std::shared_ptr<nn::ModuleList> layers;
  std::shared_ptr<nn::LayerNorm> ln_final;
  std::shared_ptr<nn::Linear> proj;

 private:
  ClipConfig config_;
};

class ClipModel : public nn::Module {
 public:
  explicit ClipModel(const ClipConfig& c);
  std::string type_name() const override { return "ClipModel"; }
  /// L2-normalised embeddings [B, embed_dim].
  Tensor encode_image(const Tensor& images);
  Tensor encode_text(const Tensor& ids, const Tensor& pad);
  /// exp(min(logit_scale, log(max_logit_scale))), a 0-d tensor (differentiable below the clamp).
  Tensor logit_scale_value() const;
  /// Not available (the model has two inputs). \throws NotImplementedError.
  Tensor forward(const Tensor& x) override;
  const ClipConfig& config() const { return config_; }

  std::shared_ptr<nn::Module> visual;  ///< VisionTransformer, ConvTower or PretrainedTower (ClipConfig::vision_type)
  std::shared_ptr<TextTransformer> text;
  Tensor logit_scale;

 private:
  ClipConfig config_;
};

/// The symmetric InfoNCE loss of a batch of matching pairs: row i of image_embeddings [B, D]
/// and of text_embeddings [B, D] belong together; logits = scale * I T^T;
/// loss = (cross_entropy(logits, arange(B)) + cross_entropy(logits^T, arange(B))) / 2.
/// \throws ShapeError if the embeddings differ in shape or are not 2-D.
Tensor clip_loss(const Tensor& image_embeddings, const Tensor& text_embeddings, const Tensor& scale);

/// x / ||x|| along the last dim (rows of zeros stay zero).
Tensor l2_normalize(const Tensor& x);

}  // namespace skiff::multimodal
