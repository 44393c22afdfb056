// What the multimodal recipes share (recipe_common.h).
#include "suites/multimodal/train/recipe_common.h"

#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/zero_shot.h"

namespace skiff::multimodal {

namespace fs = std::filesystem;
using config::Key;
using config::keys;
using config::Section;
using config::Type;

std::shared_ptr<const config::Schema> caption_split_schema() {
  static const auto s = keys({Key{.name = "dataset", .type = Type::Map, .required = true,
                                  .schema = keys({Key{.name = "captions", .type = Type::String,
                                                      .help = "COCO captions JSON or image<TAB>caption list",
                                                      .required = true},
                                                  Key{.name = "image_dir", .type = Type::String}})},
                              Key{.name = "loader", .type = Type::Map,
                                  .schema = keys({Key{.name = "batch_size_per_card", .type = Type::Integer, .min = 2}})}});
  return s;
}

config::Key tokenizer_key() {
  return Key{.name = "Tokenizer", .type = Type::Map, .required = true,
             .schema = keys({Key{.name = "vocab", .type = Type::String,
                                 .help = "vocab.txt, tokenizer.json or SentencePiece model with [SEP] and [PAD]",
                                 .required = true}})};
}

fs::path recipe_save_dir(const train::Recipe& r, const std::string& fallback) {
  return r.section("Global").text("save_model_dir", fallback);
}

std::unique_ptr<text::Tokenizer> recipe_tokenizer(const train::Recipe& r) {
  const Section t = r.section("Tokenizer");
  const fs::path vocab = t.text("vocab");
  SKIFF_CHECK_T(IoError, fs::exists(vocab), "{}: no tokenizer at '{}' (skiff mm synth writes vocab.txt)",
                t.where("vocab"), vocab.string());
  auto tok = text::load_tokenizer(vocab);
  end_and_pad_ids(*tok);  // names the file when [SEP] or [PAD] is missing
  return tok;
}

std::vector<CaptionedImage> recipe_split(const train::Recipe& r, const std::string& split) {
  const Section d = r.section(split).section("dataset");
  const fs::path captions = d.text("captions");
  SKIFF_CHECK_T(IoError, fs::exists(captions), "{}: no caption file at '{}' (make one with skiff mm synth DIR)",
                d.where("captions"), captions.string());
  return read_caption_file(captions, d.text("image_dir", ""));
}

int64_t recipe_batch_size(const train::Recipe& r, const std::string& split, int64_t fallback) {
  return r.section(split).section("loader").integer("batch_size_per_card", fallback, 2);
}

std::vector<int64_t> EpochOrder::rows(int64_t step) {
  const int64_t epoch = step / per_epoch(), k = step % per_epoch();
  if (epoch != perm_epoch_) {
    Generator g(seed_ * 1000003 + uint64_t(epoch));
    perm_ = randperm(int64_t(rows_), &g).to_vector<int64_t>();
    perm_epoch_ = epoch;
  }
  return {perm_.begin() + k * batch_, perm_.begin() + (k + 1) * batch_};
}

}  // namespace skiff::multimodal
