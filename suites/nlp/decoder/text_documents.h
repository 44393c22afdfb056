#pragma once
/// \file text_documents.h
/// Plain-text corpora for the decoder recipes: files cut into documents at separator
/// lines (Debian's fortune files separate their entries with a line "%"), and a seeded
/// split into training and held-out documents, the same on every machine.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace skiff::nlp {

/// The documents of `files` in order. A directory stands for its regular files without
/// an extension (fortune's .dat indexes and .u8 links are skipped), sorted by name;
/// files whose name is in `exclude` are left out. A line equal to `separator` ends a
/// document (an empty separator: every file is one document); documents are trimmed of
/// surrounding blank lines and empty ones dropped. Invalid UTF-8 becomes U+FFFD.
/// \throws IoError naming a path that does not exist or cannot be read; ValueError
///   when no document is found.
std::vector<std::string> read_text_documents(const std::vector<std::filesystem::path>& files,
                                             const std::string& separator,
                                             const std::vector<std::string>& exclude = {});

struct DocumentSplit {
  std::vector<std::string> train, eval;
};

/// Shuffles the documents with `seed` and holds out the first eval_share of them (at
/// least one; the rest train, in their shuffled order).
/// \throws ValueError for eval_share outside (0, 1) or fewer than two documents.
DocumentSplit split_documents(std::vector<std::string> docs, double eval_share, uint64_t seed);

}  // namespace skiff::nlp
