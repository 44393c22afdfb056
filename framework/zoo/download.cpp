#include "framework/zoo/download.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>

#include "framework/core/error.h"

namespace skiff::zoo::detail {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void curl_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct WriteState {
  int fd = -1;
  uint64_t offset = 0;  // bytes already in the file when this request started
  uint64_t written = 0;
  uint64_t max_size = 0;
  CURL* curl = nullptr;
  bool checked_status = false;
  bool restarted = false;  // the server ignored Range and sent the whole file
  std::string error;
  Progress* progress = nullptr;
  double stall_timeout_s = 30;
  double last_data = 0;  // when bytes last arrived (steady clock, seconds)
  bool stalled = false;
};

// curl's own low-speed check averages over a window of several seconds, so a
// burst followed by silence is noticed late; this aborts exactly `stall_timeout_s`
// after the last byte (or after the start, when nothing ever arrives).
int on_xferinfo(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* st = static_cast<WriteState*>(user);
  if (now_s() - st->last_data > st->stall_timeout_s) {
    st->stalled = true;
    return 1;
  }
  return 0;
}

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* st = static_cast<WriteState*>(user);
  size_t n = size * nmemb;
  if (!st->checked_status) {
    st->checked_status = true;
    long code = 0;
    curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &code);
    if (st->offset > 0 && code == 200) {
      // No Range support: this body starts at byte 0, so the partial file does too.
      if (::ftruncate(st->fd, 0) != 0 || ::lseek(st->fd, 0, SEEK_SET) != 0) {
        st->error = fmt::format("cannot truncate the partial file: {}", std::strerror(errno));
        return 0;
      }
      st->offset = 0;
      st->restarted = true;
    }
  }
  if (st->max_size && st->offset + st->written + n > st->max_size) {
    st->error = fmt::format("the server sent more than the expected {} bytes", st->max_size);
    return 0;
  }
  const char* p = data;
  size_t left = n;
  while (left > 0) {
    ssize_t w = ::write(st->fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      st->error = fmt::format("cannot write the partial file: {}", std::strerror(errno));
      return 0;
    }
    p += w;
    left -= size_t(w);
  }
  st->written += n;
  st->last_data = now_s();
  if (st->progress) st->progress->update(st->offset + st->written);
  return n;
}

}  // namespace

std::string human_size(uint64_t b) {
  if (b < 1000) return fmt::format("{} B", b);
  if (b < 1000 * 1000) return fmt::format("{:.1f} kB", b / 1e3);
  if (b < uint64_t(1000) * 1000 * 1000) return fmt::format("{:.1f} MB", b / 1e6);
  return fmt::format("{:.2f} GB", b / 1e9);
}

Progress::Progress(Mode mode, std::string label, uint64_t total)
    : mode_(mode), label_(std::move(label)), total_(total), t0_(now_s()),
      bar_(mode == Mode::Bar || mode == Mode::Auto, 30) {
  // A bar (asked for, or Auto) needs a terminal; without one, plain lines.
  if (mode_ == Mode::Auto || mode_ == Mode::Bar) mode_ = bar_.active() ? Mode::Bar : Mode::Lines;
}

void Progress::update(uint64_t done) {
  if (mode_ == Mode::Off) return;
  if (start_done_ == UINT64_MAX) start_done_ = done;
  double t = now_s();
  double speed = (t - t0_) > 0 ? double(done - std::min(done, start_done_)) / (t - t0_) : 0;
  int pct = total_ ? int(std::min<uint64_t>(100, done * 100 / total_)) : 0;
  if (mode_ == Mode::Bar) {
    std::string eta = (speed > 0 && total_ > done) ? fmt::format(" ETA {:.0f}s", double(total_ - done) / speed) : "";
    bar_.draw(total_ ? double(done) / double(total_) : 0.0,
              fmt::format("{} {:3}% {}/{} {}/s{}", label_, pct, human_size(done), human_size(total_),
                          human_size(uint64_t(speed)), eta));
  } else {
    // Lines: one per 10% step, and at least every 10 s, so logs stay short but show life.
    int decile = pct / 10;
    if (decile == last_decile_ && t - last_ < 10) return;
    last_decile_ = decile;
    last_ = t;
    fmt::print(stderr, "{}: {}% ({} of {}, {}/s)\n", label_, pct, human_size(done), human_size(total_),
               human_size(uint64_t(speed)));
  }
}

void Progress::finish(bool ok) {
  if (mode_ != Mode::Bar) return;
  if (!ok && bar_.drawn()) fmt::print(stderr, " failed");
  bar_.finish(true);
}

Transfer http_get(const std::string& url, int fd, uint64_t offset, uint64_t expected_size, uint64_t max_size,
                  const TransferOptions& opts) {
  curl_init_once();
  Transfer out;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  SKIFF_ASSERT(curl != nullptr, "curl_easy_init failed");
  Progress progress(opts.progress, opts.label, expected_size);
  WriteState st;
  st.fd = fd;
  st.offset = offset;
  st.max_size = max_size;
  st.curl = curl.get();
  st.progress = &progress;
  st.stall_timeout_s = opts.stall_timeout_s;
  st.last_data = now_s();
  char errbuf[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);  // 4xx/5xx bodies never reach the file
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "skiff-zoo/1");
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, long(opts.connect_timeout_s * 1000));
  // A stall (not a slow link) is what should abort; see on_xferinfo.
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_xferinfo);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &st);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  // CURLOPT_RANGE rather than RESUME_FROM: curl then hands us a 200 reply from a
  // server without Range support instead of failing, and on_write restarts the file.
  std::string range = fmt::format("{}-", offset);
  if (offset > 0) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.http_code);
  progress.finish(rc == CURLE_OK);
  if (rc == CURLE_OK) {
    out.complete = true;
    return out;
  }
  if (st.stalled) {
    out.error = fmt::format("timed out: no data for {:.0f} s", opts.stall_timeout_s);
    out.retryable = true;
    return out;
  }
  if (!st.error.empty()) {
    out.error = st.error;
    out.retryable = false;
    return out;
  }
  std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
  switch (rc) {
    case CURLE_HTTP_RETURNED_ERROR:
      out.error = fmt::format("HTTP {}", out.http_code);
      // Server errors and throttling can clear up; 404/403 will not. 416 means the
      // partial file is not a prefix the server can continue: restart from 0.
      out.retryable = out.http_code >= 500 || out.http_code == 408 || out.http_code == 429 || out.http_code == 416;
      break;
    case CURLE_OPERATION_TIMEDOUT:
      out.error = fmt::format("timed out ({})", detail);
      out.retryable = true;
      break;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      out.error = detail;
      out.retryable = false;
      break;
    default:
      // Dropped connections, short bodies, resets, DNS hiccups: worth another try.
      out.error = detail;
      out.retryable = true;
  }
  return out;
}

}  // namespace skiff::zoo::detail
