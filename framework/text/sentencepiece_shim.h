#pragma once
// Internal to framework/text: the functions of libsentencepiece that skiff uses, behind a
// table of function pointers in a module of their own (libskiff_sentencepiece.so,
// sentencepiece_shim.cpp) that sentencepiece_tokenizer.cpp loads with dlopen.
//
// Why: Debian's libsentencepiece carries its own copy of protobuf-lite (3.14) and exports
// its symbols; skiff also links the system libprotobuf (3.21, for ONNX). Linked into one
// process, sentencepiece's generated code binds to the newer runtime and aborts in
// protobuf's version check. Loading the module with RTLD_LOCAL | RTLD_DEEPBIND makes
// libsentencepiece resolve protobuf to its own copy first.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/text/split_regex.h"

namespace skiff::text::detail {

struct SentencePieceApi {
  int version;  // kSentencePieceApiVersion: the module and the library were built together
  // A processor for a .model file, or null with `error` set.
  void* (*load)(const std::string& path, std::string& error);
  void (*release)(void* processor);
  // Ids (and with `offsets`, each piece's byte range); false with `error` set.
  bool (*encode)(const void* processor, std::string_view text, std::vector<int>& ids, std::vector<Span>* offsets,
                 std::string& error);
  bool (*decode)(const void* processor, const std::vector<int>& ids, std::string& text, std::string& error);
  std::string (*id_to_piece)(const void* processor, int id);
  int (*piece_to_id)(const void* processor, std::string_view piece);
  int (*unk_id)(const void* processor);
  int (*piece_size)(const void* processor);
  // A piece's score (log probability, or minus the merge rank for BPE) and kind: the
  // numbers of sentencepiece's ModelProto (1 normal, 2 unknown, 3 control, 5 unused, 6 byte).
  float (*score)(const void* processor, int id);
  int (*piece_type)(const void* processor, int id);
  // SentencePieceTrainer::Train with these key/value options; false with `error` set.
  bool (*train)(const std::unordered_map<std::string, std::string>& options, std::string& error);
};

inline constexpr int kSentencePieceApiVersion = 2;

}  // namespace skiff::text::detail

// The module's one exported symbol.
extern "C" const skiff::text::detail::SentencePieceApi* skiff_sentencepiece_api();
