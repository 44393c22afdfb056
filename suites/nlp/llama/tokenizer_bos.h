#pragma once
/// \file tokenizer_bos.h
/// The beginning-of-sequence token a Hugging Face tokenizer.json adds: its
/// post-processor's TemplateProcessing (alone or inside a Sequence) puts a
/// special token first. `skiff nlp generate` prepends it to prompts and the
/// GGUF export records it (tokenizer.ggml.add_bos_token).
#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace skiff::nlp {

/// The id of the special token the single-sequence template starts with, or -1 when none.
int64_t tokenizer_bos_id(const nlohmann::json& tokenizer);

/// The same, read from a tokenizer.json file (-1 when it is not valid JSON).
/// \throws IoError when the file cannot be read.
int64_t tokenizer_bos_id(const std::filesystem::path& tokenizer_json);

}  // namespace skiff::nlp
