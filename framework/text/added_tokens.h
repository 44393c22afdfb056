#pragma once
/// \file added_tokens.h
/// Tokens added on top of a model's vocabulary (tokenizer.json `added_tokens`, such as
/// <|im_start|>, <s>, [CLS]) and the first step of every Hugging Face tokenizer: cutting
/// them out of the raw text before normalization, so they never reach the model.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/text/split_regex.h"

namespace skiff::text {

/// A token added on top of the model's vocabulary (tokenizer.json `added_tokens`).
struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;  ///< dropped by decode(..., skip_special_tokens = true)
  bool lstrip = false;   ///< removes white space before it
  bool rstrip = false;   ///< removes white space after it
};

/// Cuts added tokens out of a text the way the references do (transformers.js's
/// DictionarySplitter): scanning left to right, the longest added token starting at
/// each position wins; a token's lstrip / rstrip trims JavaScript white space
/// (String.trimEnd / trimStart) from the neighbouring stretch of text.
class AddedTokenSplitter {
 public:
  AddedTokenSplitter() = default;
  /// \throws ValueError naming `source` for an empty, negative-id or invalid-UTF-8 token.
  AddedTokenSplitter(const std::vector<AddedToken>& tokens, std::string_view source);

  /// A stretch of the text: an added token (`added` indexes the constructor's list) or
  /// text to normalize and tokenize (`added` = -1). Stretches may be empty after stripping.
  struct Section {
    Span span;
    int32_t added;
  };
  /// Splits valid UTF-8 `text` into sections (appended to `out`, in order).
  void split(std::string_view text, std::vector<Section>& out) const;

 private:
  struct TrieNode {
    std::vector<std::pair<uint8_t, int32_t>> next;
    int32_t added = -1;
  };
  int32_t match(std::string_view text, size_t pos, size_t& len) const;

  std::vector<TrieNode> trie_{1};
  std::vector<std::pair<bool, bool>> strip_;  // lstrip, rstrip per token
  bool first_byte_[256] = {};
};

}  // namespace skiff::text
