// Captions as token rows, and zero-shot classification (zero_shot.h).
#include "suites/multimodal/zero_shot.h"

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/caption_dataset.h"

namespace skiff::multimodal {

CaptionTokens tokenize_captions(const text::Tokenizer& tokenizer, std::span<const std::string> captions,
                                int64_t context_length, int32_t end_id, int32_t pad_id) {
  SKIFF_CHECK(context_length >= 2, "tokenize_captions: context_length must be >= 2, got {}", context_length);
  SKIFF_CHECK(!captions.empty(), "tokenize_captions: no captions");
  std::vector<std::vector<int32_t>> rows;
  size_t longest = 0;
  for (const std::string& c : captions) {
    std::vector<int32_t> ids = tokenizer.encode_ids(c);
    if (ids.size() > size_t(context_length - 1)) ids.resize(size_t(context_length - 1));
    ids.push_back(end_id);
    longest = std::max(longest, ids.size());
    rows.push_back(std::move(ids));
  }
  std::vector<int64_t> ids;
  std::vector<bool> pad;
  for (const auto& r : rows)
    for (size_t k = 0; k < longest; ++k) {
      ids.push_back(k < r.size() ? r[k] : pad_id);
      pad.push_back(k >= r.size());
    }
  const Shape shape{int64_t(rows.size()), int64_t(longest)};
  return {from_vector(ids, shape), from_vector(pad, shape)};
}

std::pair<int32_t, int32_t> end_and_pad_ids(const text::Tokenizer& tokenizer) {
  const int32_t end = tokenizer.token_to_id("[SEP]"), pad = tokenizer.token_to_id("[PAD]");
  SKIFF_CHECK(end >= 0 && pad >= 0, "{}: the text tower needs a [SEP] (end of caption) and a [PAD] token",
              tokenizer.source());
  return {end, pad};
}

Tensor class_embeddings(ClipModel& model, const text::Tokenizer& tokenizer, const std::vector<std::string>& classes,
                        const std::vector<std::string>& templates) {
  SKIFF_CHECK(!classes.empty() && !templates.empty(), "class_embeddings: need classes and templates, got {} and {}",
              classes.size(), templates.size());
  for (const std::string& t : templates)
    SKIFF_CHECK(t.find("{}") != std::string::npos, "class_embeddings: template '{}' has no {{}} for the class name", t);
  const auto [end, pad] = end_and_pad_ids(tokenizer);
  NoGradGuard no_grad;
  std::vector<Tensor> per_class;
  for (const std::string& name : classes) {
    std::vector<std::string> prompts;
    for (const std::string& t : templates) {
      std::string p = t;
      const size_t at = p.find("{}");
      p.replace(at, 2, name);
      // "a {}" before a vowel reads "an {}" (captions say "an orange star").
      const bool after_a = at == 2 ? p.compare(0, 2, "a ") == 0 : at > 2 && p.compare(at - 3, 3, " a ") == 0;
      if (after_a && !name.empty() && std::string("aeiouAEIOU").find(name[0]) != std::string::npos) p.insert(at - 1, "n");
      prompts.push_back(std::move(p));
    }
    const CaptionTokens tok = tokenize_captions(tokenizer, prompts, model.config().context_length, end, pad);
    per_class.push_back(mean(model.encode_text(tok.ids, tok.pad), {0}));
  }
  return l2_normalize(stack(per_class, 0));
}

Tensor embed_image_files(ClipModel& model, const std::vector<std::string>& files, int64_t batch) {
  NoGradGuard no_grad;
  std::vector<Tensor> parts;
  for (size_t s = 0; s < files.size(); s += size_t(batch)) {
    std::vector<CaptionedImage> chunk;
    for (size_t i = s; i < std::min(files.size(), s + size_t(batch)); ++i) chunk.push_back({files[i], {}, ""});
    parts.push_back(model.encode_image(load_images(chunk, model.config().image_size)));
  }
  SKIFF_CHECK(!parts.empty(), "embed_image_files: no images");
  return concat(parts, 0);
}

Tensor embed_texts(ClipModel& model, const text::Tokenizer& tokenizer, const std::vector<std::string>& texts,
                   int64_t batch) {
  const auto [end, pad] = end_and_pad_ids(tokenizer);
  NoGradGuard no_grad;
  std::vector<Tensor> parts;
  for (size_t s = 0; s < texts.size(); s += size_t(batch)) {
    const std::span<const std::string> chunk(texts.data() + s, std::min(texts.size() - s, size_t(batch)));
    const CaptionTokens t = tokenize_captions(tokenizer, chunk, model.config().context_length, end, pad);
    parts.push_back(model.encode_text(t.ids, t.pad));
  }
  SKIFF_CHECK(!parts.empty(), "embed_texts: no texts");
  return concat(parts, 0);
}

const std::vector<std::string>& default_prompt_templates() {
  static const std::vector<std::string> t{"a {}", "a photo of a {}", "a picture of a {}", "one {}"};
  return t;
}

}  // namespace skiff::multimodal
