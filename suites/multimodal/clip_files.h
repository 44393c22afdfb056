#pragma once
/// \file clip_files.h
/// Trained multimodal models on disk, as `skiff export -c configs/multimodal/...` writes them
/// and the `skiff mm` commands read them: DIR/model.safetensors (the weights), DIR/clip.json
/// (ClipConfig) or DIR/captioner.json (CaptionerConfig), and DIR/vocab.txt (the tokenizer). A
/// training run directory works too (best_model.safetensors beside the JSON, the vocabulary
/// named by its config.yml's Tokenizer.vocab).

#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "framework/text/tokenizer.h"
#include "suites/multimodal/captioner.h"
#include "suites/multimodal/clip_model.h"

namespace skiff::multimodal {

nlohmann::json clip_config_json(const ClipConfig& c);
/// \throws ValueError naming `file` and the field for a missing or bad value.
ClipConfig clip_config_from_json(const nlohmann::json& j, const std::string& file);

struct LoadedClip {
  std::unique_ptr<ClipModel> model;  ///< in eval mode
  std::unique_ptr<text::Tokenizer> tokenizer;
};

/// \throws IoError naming the directory and the missing file; ValueError for files that do not
///         fit together (weights of another shape).
LoadedClip load_clip_model(const std::filesystem::path& dir);

nlohmann::json captioner_config_json(const CaptionerConfig& c);
/// \throws ValueError naming `file` and the field for a missing or bad value.
CaptionerConfig captioner_config_from_json(const nlohmann::json& j, const std::string& file);

struct LoadedCaptioner {
  std::unique_ptr<Captioner> model;  ///< in eval mode
  std::unique_ptr<text::Tokenizer> tokenizer;
};

/// \throws as load_clip_model.
LoadedCaptioner load_captioner(const std::filesystem::path& dir);

}  // namespace skiff::multimodal
