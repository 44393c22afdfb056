#include "suites/nlp/decoder/text_documents.h"

#include <algorithm>
#include <random>
#include <utility>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/unicode.h"

namespace skiff::nlp {

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> expand(const std::vector<fs::path>& files, const std::vector<std::string>& exclude) {
  auto excluded = [&](const fs::path& p) {
    return std::find(exclude.begin(), exclude.end(), p.filename().string()) != exclude.end();
  };
  std::vector<fs::path> out;
  for (const fs::path& f : files) {
    std::error_code ec;
    SKIFF_CHECK_T(IoError, fs::exists(f, ec), "text corpus: {} does not exist", f.string());
    if (!fs::is_directory(f, ec)) {
      if (!excluded(f)) out.push_back(f);
      continue;
    }
    std::vector<fs::path> inside;
    for (const auto& e : fs::directory_iterator(f))
      if (e.is_regular_file() && !e.is_symlink() && !e.path().has_extension() && !excluded(e.path()))
        inside.push_back(e.path());
    std::sort(inside.begin(), inside.end());
    out.insert(out.end(), inside.begin(), inside.end());
  }
  return out;
}

void add_document(std::string doc, std::vector<std::string>& out) {
  const size_t first = doc.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return;
  // Keep leading indentation on the first line: only whole blank lines are trimmed.
  const size_t line_start = doc.rfind('\n', first);
  doc.erase(0, line_start == std::string::npos ? 0 : line_start + 1);
  doc.erase(doc.find_last_not_of(" \t\r\n") + 1);
  out.push_back(std::move(doc));
}

}  // namespace

std::vector<std::string> read_text_documents(const std::vector<fs::path>& files, const std::string& separator,
                                             const std::vector<std::string>& exclude) {
  std::vector<std::string> docs;
  const std::vector<fs::path> paths = expand(files, exclude);
  for (const fs::path& p : paths) {
    const std::string text = text::to_valid_utf8(io::read_file(p));
    if (separator.empty()) {
      add_document(text, docs);
      continue;
    }
    std::string doc;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line == separator) add_document(std::exchange(doc, {}), docs);
      else (doc += line) += '\n';
      pos = end + 1;
    }
    add_document(std::move(doc), docs);
  }
  SKIFF_CHECK(!docs.empty(), "text corpus: no document in {} file(s){}", paths.size(),
              paths.empty() ? std::string(" (every file was excluded or skipped)") : std::string());
  return docs;
}

DocumentSplit split_documents(std::vector<std::string> docs, double eval_share, uint64_t seed) {
  SKIFF_CHECK(eval_share > 0 && eval_share < 1, "split_documents: eval_share must be in (0, 1), got {}", eval_share);
  SKIFF_CHECK(docs.size() >= 2, "split_documents: {} document(s) cannot be split", docs.size());
  std::mt19937_64 gen(seed);
  for (size_t i = docs.size(); i > 1; --i) std::swap(docs[i - 1], docs[size_t(gen() % i)]);
  const size_t held = std::clamp<size_t>(size_t(double(docs.size()) * eval_share), 1, docs.size() - 1);
  DocumentSplit s;
  s.eval.assign(std::make_move_iterator(docs.begin()), std::make_move_iterator(docs.begin() + int64_t(held)));
  s.train.assign(std::make_move_iterator(docs.begin() + int64_t(held)), std::make_move_iterator(docs.end()));
  return s;
}

}  // namespace skiff::nlp
