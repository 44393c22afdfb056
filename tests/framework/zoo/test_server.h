#pragma once
// A real HTTP server on 127.0.0.1 (cpp-httplib) for the zoo tests, serving
// registered files under /<mode>/<name> with injected faults:
//   ok        the file, with Range support (206)
//   truncated 200 with a body of half the file, always (ignores Range)
//   wrong     200 with the right length but different bytes
//   error500  HTTP 500
//   notfound  HTTP 404
//   stall     a quarter of the file, then nothing (the client must time out)
//   drop      first request: half the file, then the connection is cut;
//             later requests are served with Range support
//   slow      like ok, in small chunks with pauses (to overlap concurrent clients)
// It records every request so tests can assert what the client did.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace skiff::zoo::test {

struct RequestLog {
  std::string path;
  std::string range;    // the Range header, "" if none
  uint64_t body_bytes;  // bytes the handler meant to send
};

class TestServer {
 public:
  TestServer() {
    svr_.Get(R"(/(\w+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    for (int i = 0; i < 500 && !svr_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~TestServer() {
    stopping_ = true;
    svr_.stop();
    thread_.join();
  }

  void add_file(const std::string& name, std::string bytes) {
    std::lock_guard<std::mutex> g(mu_);
    files_[name] = std::move(bytes);
  }
  std::string url(const std::string& mode, const std::string& name) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + mode + "/" + name;
  }
  std::vector<RequestLog> requests(const std::string& prefix = "") const {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<RequestLog> out;
    for (const auto& r : log_)
      if (r.path.rfind(prefix, 0) == 0) out.push_back(r);
    return out;
  }
  int port() const { return port_; }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    std::string mode = req.matches[1], name = req.matches[2];
    std::string range = req.get_header_value("Range");
    // httplib slices bodies by Range on its own; the faults need full control, so
    // Range is implemented below and the parsed ranges are dropped here.
    const_cast<httplib::Request&>(req).ranges.clear();
    std::string body;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = files_.find(name);
      if (it == files_.end() || mode == "notfound") {
        res.status = 404;
        log_.push_back({req.path, range, 0});
        return;
      }
      body = it->second;
    }
    uint64_t from = 0;
    if (range.rfind("bytes=", 0) == 0) from = std::stoull(range.substr(6));
    auto record = [&](uint64_t n) {
      std::lock_guard<std::mutex> g(mu_);
      log_.push_back({req.path, range, n});
    };
    auto serve_range = [&](std::string data) {
      if (from > 0 && mode != "truncated") {
        if (from >= data.size()) {
          res.status = 416;
          record(0);
          return;
        }
        res.status = 206;
        res.set_header("Content-Range", "bytes " + std::to_string(from) + "-" + std::to_string(data.size() - 1) +
                                            "/" + std::to_string(data.size()));
        data = data.substr(from);
      } else {
        res.status = 200;
      }
      record(data.size());
      res.set_content(data, "application/octet-stream");
    };
    if (mode == "ok") return serve_range(body);
    if (mode == "truncated") {
      res.status = 200;
      record(body.size() / 2);
      res.set_content(body.substr(0, body.size() / 2), "application/octet-stream");
      return;
    }
    if (mode == "wrong") {
      for (auto& c : body) c = char(c ^ 0x5a);
      return serve_range(body);
    }
    if (mode == "error500") {
      record(0);
      res.status = 500;
      res.set_content("internal error", "text/plain");
      return;
    }
    bool first_drop = false;
    if (mode == "drop") {
      std::lock_guard<std::mutex> g(mu_);
      first_drop = !dropped_[name];
      dropped_[name] = true;
    }
    if (mode == "drop" && !first_drop) return serve_range(body);
    if (mode == "stall" || mode == "drop" || mode == "slow") {
      // Stream with a declared full length so that stopping early looks like a cut or a stall.
      uint64_t start = mode == "slow" ? from : 0;
      uint64_t stop_at = mode == "stall" ? body.size() / 4 : mode == "drop" ? body.size() / 2 : body.size();
      if (start > 0) {
        res.status = 206;
        res.set_header("Content-Range", "bytes " + std::to_string(start) + "-" + std::to_string(body.size() - 1) +
                                            "/" + std::to_string(body.size()));
      }
      record(stop_at - start);
      auto shared = std::make_shared<std::string>(std::move(body));
      res.set_content_provider(
          shared->size() - start, "application/octet-stream",
          [this, shared, start, stop_at, mode](size_t offset, size_t, httplib::DataSink& sink) {
            uint64_t pos = start + offset;
            if (pos >= stop_at) {
              if (mode == "stall") {
                for (int i = 0; i < 500 && !stopping_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
              }
              return false;  // cut the connection
            }
            size_t chunk = std::min<uint64_t>(mode == "slow" ? 4096 : 65536, stop_at - pos);
            if (mode == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return sink.write(shared->data() + pos, chunk);
          });
      return;
    }
    res.status = 400;
  }

  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::map<std::string, std::string> files_;
  std::map<std::string, bool> dropped_;
  std::vector<RequestLog> log_;
};

}  // namespace skiff::zoo::test
