// The CLIP-style dual encoder (clip_model.h).
#include "suites/multimodal/clip_model.h"

#include <cmath>

#include "framework/core/error.h"
#include "framework/nn/activation.h"
#include "framework/nn/attention.h"
#include "framework/nn/init.h"
#include "framework/nn/transformer.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/pretrained_tower.h"

namespace skiff::multimodal {
namespace {

std::shared_ptr<nn::ModuleList> transformer_stack(int64_t width, int64_t layers, int64_t heads) {
  auto list = std::make_shared<nn::ModuleList>();
  nn::TransformerLayerOptions o;
  o.dim_feedforward = 4 * width;
  o.dropout = 0.0;
  o.activation = nn::TransformerActivation::GELU;
  o.norm_first = true;
  for (int64_t i = 0; i < layers; ++i) list->push_back(std::make_shared<nn::TransformerEncoderLayer>(width, heads, o));
  return list;
}

}  // namespace

void ClipConfig::check() const {
  auto positive = [](int64_t v, const char* name) {
    SKIFF_CHECK(v > 0, "ClipConfig: {} must be positive, got {}", name, v);
  };
  positive(image_size, "image_size");
  SKIFF_CHECK(vision_type == "vit" || vision_type == "cnn" || vision_type == "pretrained",
              "ClipConfig: vision_type must be vit, cnn or pretrained, got '{}'", vision_type);
  positive(patch_size, "patch_size");
  SKIFF_CHECK(vision_type != "vit" || image_size % patch_size == 0,
              "ClipConfig: image_size {} is not a multiple of patch_size {}", image_size, patch_size);
  SKIFF_CHECK(!vision_channels.empty(), "ClipConfig: vision_channels is empty");
  for (int64_t ch : vision_channels) positive(ch, "vision_channels");
  positive(vision_width, "vision_width");
  positive(vision_layers, "vision_layers");
  positive(vision_heads, "vision_heads");
  SKIFF_CHECK(vision_width % vision_heads == 0, "ClipConfig: vision_width {} is not a multiple of vision_heads {}",
              vision_width, vision_heads);
  positive(vocab_size, "vocab_size");
  positive(context_length, "context_length");
  positive(text_width, "text_width");
  positive(text_layers, "text_layers");
  positive(text_heads, "text_heads");
  SKIFF_CHECK(text_width % text_heads == 0, "ClipConfig: text_width {} is not a multiple of text_heads {}", text_width,
              text_heads);
  positive(embed_dim, "embed_dim");
  SKIFF_CHECK(init_temperature > 0 && max_logit_scale >= 1 / init_temperature,
              "ClipConfig: need 0 < init_temperature and max_logit_scale >= 1 / init_temperature, got {} and {}",
              init_temperature, max_logit_scale);
}

VisionTransformer::VisionTransformer(const ClipConfig& c) : config_(c) {
  c.check();
  const int64_t w = c.vision_width, patches = (c.image_size / c.patch_size) * (c.image_size / c.patch_size);
  patch_embed = register_module("patch_embed", std::make_shared<nn::Conv2d>(3, w, std::vector<int64_t>{c.patch_size},
                                                                            std::vector<int64_t>{c.patch_size},
                                                                            std::vector<int64_t>{0},
                                                                            std::vector<int64_t>{1}, 1, false));
  // CLIP's initial scales: width^-0.5 for the class token and position embeddings.
  class_embedding = register_parameter("class_embedding", zeros({w}));
  nn::init::normal_(class_embedding, 0.0, 1.0 / std::sqrt(double(w)));
  pos_embed = register_parameter("pos_embed", zeros({patches + 1, w}));
  nn::init::normal_(pos_embed, 0.0, 1.0 / std::sqrt(double(w)));
  ln_pre = register_module("ln_pre", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{w}));
  layers = register_module("layers", transformer_stack(w, c.vision_layers, c.vision_heads));
  ln_post = register_module("ln_post", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{w}));
  proj = register_module("proj", std::make_shared<nn::Linear>(w, c.embed_dim, false));
}

Tensor VisionTransformer::forward(const Tensor& images) {
  const int64_t s = config_.image_size, w = config_.vision_width;
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(1) == 3 && images.size(2) == s && images.size(3) == s,
                    "VisionTransformer: expected images [B, 3, {}, {}], got {}", s, s, images.shape());
  const int64_t b = images.size(0);
  Tensor x = (*patch_embed)(images);                                  // [B, W, S/p, S/p]
  x = transpose(reshape(x, {b, w, x.size(2) * x.size(3)}), 1, 2);  // [B, N, W]
  const Tensor cls = expand(reshape(class_embedding, {1, 1, w}), {b, 1, w});
  x = concat({cls, x}, 1) + reshape(pos_embed, {1, pos_embed.size(0), w});
  x = (*ln_pre)(x);
  for (int64_t i = 0; i < layers->size(); ++i) x = layers->at<nn::TransformerEncoderLayer>(i)->forward(x);
  return (*proj)((*ln_post)(squeeze(slice(x, 1, 0, 1), 1)));
}

ConvTower::ConvTower(const ClipConfig& c) : config_(c) {
  c.check();
  stages = register_module("stages", std::make_shared<nn::ModuleList>());
  int64_t in = 3;
  for (int64_t out : c.vision_channels) {
    auto stage = std::make_shared<nn::Sequential>();
    stage->push_back(std::make_shared<nn::Conv2d>(in, out, std::vector<int64_t>{3}, std::vector<int64_t>{2},
                                                  std::vector<int64_t>{1}, std::vector<int64_t>{1}, 1, false));
    stage->push_back(std::make_shared<nn::BatchNorm2d>(out));
    stage->push_back(std::make_shared<nn::ReLU>());
    stage->push_back(std::make_shared<nn::Conv2d>(out, out, std::vector<int64_t>{3}, std::vector<int64_t>{1},
                                                  std::vector<int64_t>{1}, std::vector<int64_t>{1}, 1, false));
    stage->push_back(std::make_shared<nn::BatchNorm2d>(out));
    stage->push_back(std::make_shared<nn::ReLU>());
    stages->push_back(stage);
    in = out;
  }
  proj = register_module("proj", std::make_shared<nn::Linear>(in, c.embed_dim, false));
}

Tensor ConvTower::feature_map(const Tensor& images) {
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(1) == 3, "ConvTower: expected images [B, 3, H, W], got {}",
                    images.shape());
  Tensor x = images;
  for (int64_t i = 0; i < stages->size(); ++i) x = stages->at<nn::Sequential>(i)->forward(x);
  return x;
}

Tensor ConvTower::forward(const Tensor& images) { return (*proj)(mean(feature_map(images), {2, 3})); }

TextTransformer::TextTransformer(const ClipConfig& c) : config_(c) {
  c.check();
  const int64_t w = c.text_width;
  tok_embed = register_module("tok_embed", std::make_shared<nn::Embedding>(c.vocab_size, w));
  nn::init::normal_(tok_embed->weight, 0.0, 0.02);
  pos_embed = register_parameter("pos_embed", zeros({c.context_length, w}));
  nn::init::normal_(pos_embed, 0.0, 0.01);
  layers = register_module("layers", transformer_stack(w, c.text_layers, c.text_heads));
  ln_final = register_module("ln_final", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{w}));
  proj = register_module("proj", std::make_shared<nn::Linear>(w, c.embed_dim, false));
}

Tensor TextTransformer::forward(const Tensor& ids, const Tensor& pad) {
  SKIFF_CHECK_SHAPE(ids.dim() == 2 && ids.size(1) > 0 && ids.size(1) <= config_.context_length,
                    "TextTransformer: expected ids [B, T] with 0 < T <= {}, got {}", config_.context_length,
                    ids.shape());
  if (pad.defined())
    SKIFF_CHECK_SHAPE(pad.shape() == ids.shape() && pad.dtype() == DType::Bool,
                      "TextTransformer: expected a bool pad mask of shape {}, got {} {}", ids.shape(),
                      dtype_name(pad.dtype()), pad.shape());
  const int64_t b = ids.size(0), t = ids.size(1), w = config_.text_width;
  Tensor x = (*tok_embed)(ids) + reshape(slice(pos_embed, 0, 0, t), {1, t, w});
  const Tensor mask = config_.causal_text ? nn::causal_mask(t, x.dtype()) : Tensor();
  for (int64_t i = 0; i < layers->size(); ++i) x = layers->at<nn::TransformerEncoderLayer>(i)->forward(x, mask, pad);
  x = (*ln_final)(x);
  // Real tokens per row (padding follows them).
  const Tensor real = pad.defined() ? skiff::to(logical_not(pad), x.dtype()) : ones({b, t}, x.dtype());
  Tensor feature;
  if (config_.causal_text) {
    // The last real token: it has seen the whole caption.
    const Tensor last = skiff::to(clamp_min(sub(sum(real, {1}), 1.0), 0.0), DType::Int64);
    feature = squeeze(gather(x, 1, expand(reshape(last, {b, 1, 1}), {b, 1, w})), 1);
  } else {
    feature = div(sum(mul(x, unsqueeze(real, 2)), {1}), clamp_min(sum(real, {1}, true), 1.0));
  }
  return (*proj)(feature);
}

ClipModel::ClipModel(const ClipConfig& c) : config_(c) {
  c.check();
  if (c.vision_type == "cnn") {
    visual = register_module("visual", std::make_shared<ConvTower>(c));
  } else if (c.vision_type == "pretrained") {
    visual = register_module("visual", std::make_shared<PretrainedTower>(PretrainedTowerOptions{
                                           .model = c.pretrained_model, .output = c.pretrained_output,
                                           .embed_dim = c.embed_dim, .random_init = c.pretrained_random_init}));
  } else {
    visual = register_module("visual", std::make_shared<VisionTransformer>(c));
  }
  text = register_module("text", std::make_shared<TextTransformer>(c));
  logit_scale = register_parameter("logit_scale", full({}, std::log(1.0 / c.init_temperature)));
}

Tensor ClipModel::encode_image(const Tensor& images) { return l2_normalize(visual->forward(images)); }
Tensor ClipModel::encode_text(const Tensor& ids, const Tensor& pad) { return l2_normalize(text->forward(ids, pad)); }

Tensor ClipModel::logit_scale_value() const { return exp(clamp_max(logit_scale, std::log(config_.max_logit_scale))); }

Tensor ClipModel::forward(const Tensor&) {
  SKIFF_THROW(NotImplementedError, "ClipModel: use encode_image and encode_text (the model has two inputs)");
}

Tensor l2_normalize(const Tensor& x) { return div(x, clamp_min(norm(x, 2.0, {-1}, true), 1e-12)); }

Tensor clip_loss(const Tensor& image_embeddings, const Tensor& text_embeddings, const Tensor& scale) {
  SKIFF_CHECK_SHAPE(image_embeddings.dim() == 2 && image_embeddings.shape() == text_embeddings.shape(),
                    "clip_loss: expected two [B, D] embeddings of one shape, got {} and {}", image_embeddings.shape(),
                    text_embeddings.shape());
  const Tensor logits = mul(matmul(image_embeddings, t(text_embeddings)), scale);
  const Tensor labels = arange(image_embeddings.size(0));
  return div(add(cross_entropy(logits, labels), cross_entropy(t(logits), labels)), 2.0);
}

}  // namespace skiff::multimodal
