#pragma once
/// \file zero_shot.h
/// Text in and out of the dual encoder: captions as the text tower's token rows, and zero-shot
/// classification (CLIP's recipe): each class name put into prompt templates ("a photo of a
/// {}"), the prompts encoded, normalised, averaged per class over the templates (prompt
/// ensembling) and normalised again; an image's class is the one whose embedding is closest.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "framework/text/tokenizer.h"
#include "suites/multimodal/clip_model.h"

namespace skiff::multimodal {

struct CaptionTokens {
  Tensor ids;  ///< [B, T] int64
  Tensor pad;  ///< [B, T] bool, true after each row's end token
};

/// The captions' token ids cut to context_length - 1, then end_id, rows padded with pad_id to
/// the longest row. \throws ValueError if context_length < 2 or captions is empty.
CaptionTokens tokenize_captions(const text::Tokenizer& tokenizer, std::span<const std::string> captions,
                                int64_t context_length, int32_t end_id, int32_t pad_id);

/// The special ids a BERT vocabulary gives the text tower: [SEP] ends a caption, [PAD] pads.
/// \throws ValueError naming the tokenizer's file when it lacks either.
std::pair<int32_t, int32_t> end_and_pad_ids(const text::Tokenizer& tokenizer);

/// One unit vector per class [classes, embed_dim]: the mean over templates ("{}" replaced by the
/// class name) of the normalised prompt embeddings, normalised.
/// \throws ValueError if a template has no "{}" or there are no classes or templates.
Tensor class_embeddings(ClipModel& model, const text::Tokenizer& tokenizer, const std::vector<std::string>& classes,
                        const std::vector<std::string>& templates);

/// Unit embeddings [N, D] of image files (decoded, resized to the model's input, normalised as
/// in training) and of texts (as captions), `batch` at a time, under no-grad.
/// \throws IoError naming an unreadable image.
Tensor embed_image_files(ClipModel& model, const std::vector<std::string>& files, int64_t batch = 64);
Tensor embed_texts(ClipModel& model, const text::Tokenizer& tokenizer, const std::vector<std::string>& texts,
                   int64_t batch = 256);

/// The templates `skiff mm zeroshot` uses by default.
const std::vector<std::string>& default_prompt_templates();

}  // namespace skiff::multimodal
