#pragma once
/// \file index.h
/// The model-zoo index: what `model_zoo/index.yaml` says about every pretrained
/// model, loaded and validated.
///
/// The schema is documented in docs/zoo.md. Loading validates everything that
/// can be checked without the network: required keys, types, sha256 format,
/// sizes, source kinds, duplicate names. Every problem is a ConfigError that
/// names `file:line` and the key path, e.g.
/// `model_zoo/index.yaml:14: models[0].files[1].sha256: expected 64 lowercase hex digits, got "abc"`.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace skiff::zoo {

/// How a source fetches a file.
enum class SourceKind {
  Http,  ///< `https://...` or `http://...`: one GET, resumable with Range requests.
  File,  ///< `file:///abs/path` or `file://relative/path` (relative to the index's directory).
  Npm,   ///< `npm:PACKAGE@VERSION#path/in/package`: `npm pack`, then the file from the tarball;
         ///< `npm:PACKAGE@VERSION`: the tarball itself (the registry's bytes).
};

/// One place a file can come from, parsed from its URI.
struct Source {
  SourceKind kind = SourceKind::Http;
  std::string uri;  ///< The text as written in the index (used in messages).
  /// Http: the URL. File: the resolved local path. Npm: PACKAGE@VERSION.
  std::string location;
  /// Optional member inside an archive: Npm (the path in the package; empty: the tarball);
  /// Http/File when the URI ends in `#member` and names a .tar/.tgz/.tar.gz/.zip.
  std::string member;
};

/// Parses a source URI. `base_dir` resolves relative `file://` paths.
/// \throws ValueError naming the URI when the kind is unknown or the syntax is wrong.
Source parse_source(const std::string& uri, const std::filesystem::path& base_dir = {});

/// One file of a model, stored content-addressed by its sha256.
struct FileEntry {
  std::string path;    ///< Relative path inside the model directory ("model.onnx").
  std::string sha256;  ///< 64 lowercase hex digits of the file's SHA-256.
  uint64_t size = 0;   ///< Exact size in bytes.
  std::vector<Source> sources;  ///< Tried in order after any user mirrors.
  /// When true the file is an archive (.tar/.tgz/.tar.gz/.zip) that is verified,
  /// then safely extracted; the model directory gets the extracted tree under
  /// `path` without its archive extension.
  bool unpack = false;
};

/// A reported metric and what it was measured on.
struct Metric {
  std::string name;     ///< "hmean", "accuracy", ...
  double value = 0;
  std::string dataset;  ///< The data set the number was measured on.
  std::string source;   ///< Where the number comes from (URL or paper), may be empty.
};

/// One pretrained model.
struct ModelEntry {
  std::string name;          ///< Unique id, `[a-z0-9][a-z0-9._-]*` ("ppocr-v4-det").
  std::string suite;         ///< ocr, detection, nlp, multimodal or science.
  std::string task;          ///< "text-detection", "text-recognition", ...
  std::string architecture;  ///< "DB (PP-LCNetV3 backbone)", ...
  std::string description_en, description_zh;
  std::string license;       ///< SPDX id of the weights' licence.
  std::string license_note;  ///< Optional: provenance, licence of the distribution channel.
  std::vector<std::string> languages;
  std::vector<Metric> metrics;
  std::string config;   ///< Optional recipe path under configs/.
  std::string command;  ///< Optional: the skiff command that runs the model.
  std::string version;
  std::vector<FileEntry> files;
  int line = 0;  ///< Line of the entry in the index (for messages).

  /// Sum of the file sizes.
  uint64_t total_size() const;
  /// \throws ValueError naming the model and listing its files.
  const FileEntry& file(const std::string& path) const;
};

/// The whole index.
struct Index {
  std::filesystem::path path;  ///< Where it was loaded from.
  int schema_version = 1;
  std::vector<ModelEntry> models;

  /// nullptr when there is no such model.
  const ModelEntry* find(const std::string& name) const;
  /// \throws ValueError "unknown model 'x' (did you mean 'y'?)".
  const ModelEntry& get(const std::string& name) const;
  std::vector<std::string> names() const;
};

/// Loads and validates an index file.
/// \throws IoError when it cannot be read, ConfigError (file:line: key: problem) when it is invalid.
Index load_index(const std::filesystem::path& path);

/// Parses and validates index text; `display_path` is used in messages and its
/// directory resolves relative `file://` sources.
Index parse_index(const std::string& text, const std::filesystem::path& display_path);

}  // namespace skiff::zoo
