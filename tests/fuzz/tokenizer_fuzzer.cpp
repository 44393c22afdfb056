// Tokenizer files as `skiff nlp tokenize` and the NLP models load them, then one encode
// and decode. The first byte picks the kind of file, the rest is its content:
//   0 tokenizer.json (Hugging Face: BPE, WordPiece, Unigram, WordLevel, their normalizers,
//     pre-tokenizers, decoders and added tokens), 1 BERT vocab.txt,
//   2 GPT-2 encoder.json and vocab.bpe (two parts, fuzz_support.h), 3 SentencePiece .model.
#include "framework/text/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int kind = data[0] % 4;
  std::string_view content = skiff::fuzz::as_text(data + 1, size - 1);
  skiff::fuzz::remove_scratch("tok");
  std::filesystem::path file;
  switch (kind) {
    case 0: file = skiff::fuzz::write_scratch_file("tok/tokenizer.json", content); break;
    case 1: file = skiff::fuzz::write_scratch_file("tok/vocab.txt", content); break;
    case 2: {
      auto parts = skiff::fuzz::split_parts(content, 2);
      file = skiff::fuzz::write_scratch_file("tok/encoder.json", parts[0]);
      skiff::fuzz::write_scratch_file("tok/vocab.bpe", parts[1]);
      break;
    }
    default: file = skiff::fuzz::write_scratch_file("tok/tokenizer.model", content); break;
  }
  skiff::fuzz::expect_clean_errors("tokenizer", [&] {
    auto tokenizer = skiff::text::load_tokenizer(file);
    auto ids = tokenizer->encode_ids("Hello, world! 你好 ﬁ café 123\n\tend");
    (void)tokenizer->decode(ids);
    (void)tokenizer->decode(ids, /*skip_special_tokens=*/true);
  });
  return 0;
}
