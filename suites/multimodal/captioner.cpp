// The image captioner (captioner.h).
#include "suites/multimodal/captioner.h"

#include <cmath>

#include "framework/core/error.h"
#include "framework/nn/attention.h"
#include "framework/nn/init.h"
#include "framework/nn/transformer.h"
#include "framework/ops/ops.h"

namespace skiff::multimodal {
namespace {

/// The encoder's configuration in ClipConfig terms (the stages are ConvTower's).
ClipConfig tower_config(const CaptionerConfig& c) {
  ClipConfig t;
  t.vision_type = "cnn";
  t.image_size = c.image_size;
  t.vision_channels = c.vision_channels;
  t.vocab_size = std::max<int64_t>(c.vocab_size, 1);
  t.embed_dim = 1;  // ConvTower's pooled projection is not used by the captioner: keep it minimal
  return t;
}

int64_t memory_cells(const CaptionerConfig& c) {
  int64_t side = c.image_size;
  for (size_t i = 0; i < c.vision_channels.size(); ++i) side = (side + 1) / 2;  // stride-2, padding-1 3x3 convs
  return side * side;
}

}  // namespace

void CaptionerConfig::check() const {
  auto positive = [](int64_t v, const char* name) {
    SKIFF_CHECK(v > 0, "CaptionerConfig: {} must be positive, got {}", name, v);
  };
  positive(image_size, "image_size");
  SKIFF_CHECK(!vision_channels.empty(), "CaptionerConfig: vision_channels is empty");
  positive(width, "width");
  positive(layers, "layers");
  positive(heads, "heads");
  SKIFF_CHECK(width % heads == 0, "CaptionerConfig: width {} is not a multiple of heads {}", width, heads);
  positive(vocab_size, "vocab_size");
  SKIFF_CHECK(context_length >= 2, "CaptionerConfig: context_length must be >= 2, got {}", context_length);
}

Captioner::Captioner(const CaptionerConfig& c) : config_(c) {
  c.check();
  const int64_t w = c.width;
  encoder = register_module("encoder", std::make_shared<ConvTower>(tower_config(c)));
  memory_proj = register_module("memory_proj", std::make_shared<nn::Linear>(c.vision_channels.back(), w));
  memory_pos = register_parameter("memory_pos", zeros({memory_cells(c), w}));
  nn::init::normal_(memory_pos, 0.0, 0.02);
  tok_embed = register_module("tok_embed", std::make_shared<nn::Embedding>(c.vocab_size, w));
  nn::init::normal_(tok_embed->weight, 0.0, 0.02);
  pos_embed = register_parameter("pos_embed", zeros({c.context_length, w}));
  nn::init::normal_(pos_embed, 0.0, 0.01);
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  nn::TransformerLayerOptions o;
  o.dim_feedforward = 4 * w;
  o.dropout = 0.0;
  o.activation = nn::TransformerActivation::GELU;
  o.norm_first = true;
  for (int64_t i = 0; i < c.layers; ++i) layers->push_back(std::make_shared<nn::TransformerDecoderLayer>(w, c.heads, o));
  ln_final = register_module("ln_final", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{w}));
  head = register_module("head", std::make_shared<nn::Linear>(w, c.vocab_size));
}

Tensor Captioner::memory(const Tensor& images) {
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(2) == config_.image_size && images.size(3) == config_.image_size,
                    "Captioner: expected images [B, 3, {}, {}], got {}", config_.image_size, config_.image_size,
                    images.shape());
  const Tensor f = encoder->feature_map(images);  // [B, C, h, w]
  const int64_t b = f.size(0), ch = f.size(1), cells = f.size(2) * f.size(3);
  const Tensor tokens = transpose(reshape(f, {b, ch, cells}), 1, 2);  // [B, cells, C]
  return add((*memory_proj)(tokens), reshape(memory_pos, {1, cells, config_.width}));
}

Tensor Captioner::decode(const Tensor& mem, const Tensor& ids) {
  SKIFF_CHECK_SHAPE(ids.dim() == 2 && ids.size(1) > 0 && ids.size(1) <= config_.context_length,
                    "Captioner: expected ids [B, T] with 0 < T <= {}, got {}", config_.context_length, ids.shape());
  const int64_t t = ids.size(1);
  Tensor x = add((*tok_embed)(ids), reshape(slice(pos_embed, 0, 0, t), {1, t, config_.width}));
  const Tensor mask = nn::causal_mask(t, x.dtype());
  for (int64_t i = 0; i < layers->size(); ++i) x = layers->at<nn::TransformerDecoderLayer>(i)->forward(x, mem, mask);
  return (*head)((*ln_final)(x));
}

Tensor Captioner::forward(const Tensor&) {
  SKIFF_THROW(NotImplementedError, "Captioner: use memory() and decode() (the model has two inputs)");
}

NextTokenLogProbs Captioner::next_token_log_probs(const Tensor& image_memory) {
  return [this, image_memory](const std::vector<std::vector<int64_t>>& prefixes) {
    NoGradGuard no_grad;
    // Prefixes of one length (beam search extends them together): one batch.
    std::vector<int64_t> flat;
    const int64_t t = int64_t(prefixes.at(0).size());
    for (const auto& p : prefixes) {
      SKIFF_CHECK(int64_t(p.size()) == t, "Captioner: prefixes of different lengths in one step");
      flat.insert(flat.end(), p.end() - std::min<int64_t>(t, config_.context_length), p.end());
    }
    const int64_t n = int64_t(prefixes.size()), used = std::min<int64_t>(t, config_.context_length);
    const Tensor mem = expand(image_memory, {n, image_memory.size(1), image_memory.size(2)});
    const Tensor logits = decode(mem, from_vector(flat, {n, used}));
    return log_softmax(squeeze(slice(logits, 1, used - 1, used), 1), -1);
  };
}

Tensor caption_loss(Captioner& model, const Tensor& images, const Tensor& ids, int64_t pad_id) {
  SKIFF_CHECK_SHAPE(ids.dim() == 2 && ids.size(1) >= 2 && ids.size(0) == images.size(0),
                    "caption_loss: expected ids [B, T >= 2] for {} images, got {}", images.size(0), ids.shape());
  const int64_t t = ids.size(1);
  const Tensor logits = model.decode(model.memory(images), slice(ids, 1, 0, t - 1));
  const Tensor targets = contiguous(slice(ids, 1, 1, t));
  return cross_entropy(reshape(logits, {-1, logits.size(2)}), reshape(targets, {-1}), {}, pad_id);
}

}  // namespace skiff::multimodal
