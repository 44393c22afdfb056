// libskiff_sentencepiece.so: libsentencepiece behind the table of sentencepiece_shim.h
// (why it is a separate module: see there).
#include "framework/text/sentencepiece_shim.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <memory>

namespace {

using skiff::text::Span;
using Processor = sentencepiece::SentencePieceProcessor;

const Processor& proc(const void* p) { return *static_cast<const Processor*>(p); }
absl::string_view view(std::string_view s) { return absl::string_view(s.data(), s.size()); }

void* load(const std::string& path, std::string& error) {
  auto p = std::make_unique<Processor>();
  auto status = p->Load(path);
  if (!status.ok()) {
    error = status.ToString();
    return nullptr;
  }
  return p.release();
}

void release(void* p) { delete static_cast<Processor*>(p); }

bool encode(const void* p, std::string_view text, std::vector<int>& ids, std::vector<Span>* offsets,
            std::string& error) {
  if (!offsets) {
    auto status = proc(p).Encode(view(text), &ids);
    if (!status.ok()) error = status.ToString();
    return status.ok();
  }
  const auto spt = proc(p).EncodeAsImmutableProto(view(text));
  for (size_t i = 0; i < spt.pieces_size(); ++i) {
    const auto piece = spt.pieces(int(i));
    ids.push_back(int(piece.id()));
    offsets->push_back({piece.begin(), piece.end()});
  }
  return true;
}

bool decode(const void* p, const std::vector<int>& ids, std::string& text, std::string& error) {
  auto status = proc(p).Decode(ids, &text);
  if (!status.ok()) error = status.ToString();
  return status.ok();
}

std::string id_to_piece(const void* p, int id) { return proc(p).IdToPiece(id); }
int piece_to_id(const void* p, std::string_view piece) { return proc(p).PieceToId(view(piece)); }
int unk_id(const void* p) { return proc(p).unk_id(); }
int piece_size(const void* p) { return proc(p).GetPieceSize(); }
float score(const void* p, int id) { return proc(p).GetScore(id); }
int piece_type(const void* p, int id) {
  const Processor& s = proc(p);
  if (s.IsUnknown(id)) return 2;
  if (s.IsControl(id)) return 3;
  if (s.IsUnused(id)) return 5;
  if (s.IsByte(id)) return 6;
  return 1;
}

bool train(const std::unordered_map<std::string, std::string>& options, std::string& error) {
  sentencepiece::SetRandomGeneratorSeed(1);
  auto status = sentencepiece::SentencePieceTrainer::Train(options);
  if (!status.ok()) error = status.ToString();
  return status.ok();
}

const skiff::text::detail::SentencePieceApi kApi{skiff::text::detail::kSentencePieceApiVersion,
                                                  load,
                                                  release,
                                                  encode,
                                                  decode,
                                                  id_to_piece,
                                                  piece_to_id,
                                                  unk_id,
                                                  piece_size,
                                                  score,
                                                  piece_type,
                                                  train};

}  // namespace

extern "C" __attribute__((visibility("default"))) const skiff::text::detail::SentencePieceApi*
skiff_sentencepiece_api() {
  return &kApi;
}
