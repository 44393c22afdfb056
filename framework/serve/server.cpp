#include "framework/serve/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <random>
#include <regex>

#include "framework/core/error.h"
#include "framework/core/splitmix.h"
#include "framework/core/threading.h"
#include "framework/serve/web_assets.h"

namespace skiff::serve {
namespace {

using nlohmann::json;

constexpr const char* kJson = "application/json";

struct Failure {
  int status;
  std::string message;
};

/// The HTTP status and message of a failed request: bad input is the client's (400),
/// anything else is the server's (500).
Failure failure_of(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    const int code = e.exit_code();
    return {code == kExitBadInput ? 400 : code == kExitNotImplemented ? 501 : 500, e.full_message()};
  } catch (const json::exception& e) {
    return {400, fmt::format("malformed request: {}", e.what())};
  } catch (const std::bad_alloc&) {
    return {500, "out of memory"};
  } catch (const std::exception& e) {
    return {500, e.what()};
  } catch (...) {
    return {500, "unknown error"};
  }
}

const char* default_message(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "no such route";
    case 405: return "method not allowed";
    case 413: return "the request body is larger than the server's limit";
    case 414: return "the request URI is too long";
    default: return "error";
  }
}

/// Route names are literal paths: quote what a regex would read otherwise.
std::string regex_quote(const std::string& s) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(s, special, R"(\$&)");
}

/// Server-sent events from a worker to the connection writing them.
struct EventChannel {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> events;
  bool finished = false;
  std::atomic<bool> client_gone{false};

  bool push(std::string event) {
    {
      std::lock_guard<std::mutex> lock(mu);
      events.push_back(std::move(event));
    }
    cv.notify_one();
    return !client_gone;
  }
};

std::string sse(const json& data) { return "data: " + data.dump() + "\n\n"; }

}  // namespace

json envelope(const std::string& log_id, int error_code, const std::string& message, json result) {
  return {{"logId", log_id}, {"errorCode", error_code}, {"errorMsg", message}, {"result", std::move(result)}};
}

Server::Server(ServerOptions options) : options_(std::move(options)), http_(std::make_unique<httplib::Server>()) {
  SKIFF_CHECK(options_.workers > 0, "serve: --workers must be positive, got {}", options_.workers);
  SKIFF_CHECK(options_.timeout_s > 0 && options_.read_timeout_s > 0, "serve: timeouts must be positive");
  const int budget = options_.threads > 0 ? options_.threads : num_threads();
  QueueOptions q;
  q.workers = options_.workers;
  q.threads_per_worker = std::max(1, budget / options_.workers);
  q.capacity = options_.queue_capacity;
  q.max_batch = options_.max_batch;
  q.max_wait = std::chrono::microseconds(int64_t(options_.max_wait_ms * 1000));
  queue_ = std::make_unique<WorkQueue>(q, &metrics_);
  log_id_seed_ = std::random_device{}();
  log_id_seed_ = log_id_seed_ << 32 ^ std::random_device{}();
}

Server::~Server() {
  stop();
  queue_->shutdown();
}

void Server::add_endpoint(const std::string& name, std::unique_ptr<Endpoint> endpoint) {
  SKIFF_CHECK(!bound_, "serve: add endpoints before bind()");
  SKIFF_CHECK(!endpoints_.count(name), "serve: endpoint '{}' added twice", name);
  endpoints_.emplace(name, std::move(endpoint));
}

void Server::add_model(const std::string& name, std::unique_ptr<Endpoint> model) {
  SKIFF_CHECK(!bound_, "serve: add models before bind()");
  SKIFF_CHECK(!name.empty() && name.find_first_of("/: ") == std::string::npos,
              "serve: model name '{}' may not be empty or contain '/', ':' or spaces", name);
  SKIFF_CHECK(!models_.count(name), "serve: model '{}' added twice", name);
  models_.emplace(name, std::move(model));
}

std::string Server::new_log_id() {
  const uint64_t n = requests_.fetch_add(1);
  return fmt::format("{:016x}{:08x}", splitmix64(log_id_seed_ ^ n), uint32_t(n));
}

void Server::finish(const std::string& route, Clock::time_point start, int status, const std::string& log_id,
                    const std::string& client, const std::string& what) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  metrics_.record_request(route, status, seconds);
  metrics_.add_in_flight(-1);
  if (options_.access_log)
    fmt::print(stderr, "skiff serve: {} {} {} {:.1f} ms {}\n", client, what, status, seconds * 1e3, log_id);
}

void Server::handle(const std::string& route, const Endpoint& endpoint, const httplib::Request& req,
                    httplib::Response& res, const httplib::ContentReader& content) {
  const auto start = Clock::now();
  metrics_.add_in_flight(1);
  const std::string log_id = new_log_id();
  auto reply = [&](int status, const std::string& message, json result = nullptr) {
    res.status = status;
    res.set_content(envelope(log_id, status == 200 ? 0 : status, message, std::move(result)).dump(), kJson);
    finish(route, start, status, log_id, req.remote_addr, req.method + " " + req.path);
  };
  auto job = std::make_shared<Job>();
  job->endpoint = &endpoint;
  job->deadline = start + std::chrono::microseconds(int64_t(options_.timeout_s * 1e6));
  // The body is read here rather than by httplib, which would refuse a JSON body over
  // 8 KiB sent as application/x-www-form-urlencoded (curl -d's default) with 413.
  std::string body;
  if (!content([&](const char* data, size_t size) {
        body.append(data, size);
        return true;
      }))
    return res.status == 413 ? reply(413, fmt::format("the request body is larger than the server's limit ({} bytes)",
                                                      options_.max_body_bytes))
                             : reply(400, "the request body could not be read (the client stopped sending?)");
  try {
    try {
      job->call.request = json::parse(body);
    } catch (const json::parse_error& e) {
      return reply(400, fmt::format("the request body is not JSON ({})", e.what()));
    }
    job->batch_key = endpoint.prepare(job->call, options_.limits);
  } catch (...) {
    const Failure f = failure_of(std::current_exception());
    return reply(f.status, f.message);
  }
  if (endpoint.streams(job->call))
    return stream(route, std::move(job), start, log_id, req.remote_addr, "POST " + req.path, res);
  if (!queue_->push(job)) {
    res.set_header("Retry-After", "1");
    return reply(503, fmt::format("the server is busy ({} requests waiting); retry later", queue_->depth()));
  }
  if (!job->wait_until(job->deadline) || job->expired())
    return reply(504, fmt::format("no answer within {} s (the server's --timeout)", options_.timeout_s));
  if (job->error()) {
    const Failure f = failure_of(job->error());
    return reply(f.status, f.message);
  }
  reply(200, "Success", std::move(job->call.result));
}

void Server::stream(const std::string& route, std::shared_ptr<Job> job, Clock::time_point start, std::string log_id,
                    std::string client, std::string what, httplib::Response& res) {
  auto channel = std::make_shared<EventChannel>();
  job->call.emit = [channel](const json& event) { return channel->push(sse(event)); };
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, route, job, channel, start, log_id, client, what](size_t, httplib::DataSink& sink) {
        // The whole stream is written in this one call: wait for the worker's events and pass them on.
        auto send = [&](const std::string& text) {
          if (!channel->client_gone && !sink.write(text.data(), text.size())) channel->client_gone = true;
        };
        int status = 200;
        std::string message = "Success";
        if (!queue_->push(job)) {
          status = 503, message = "the server is busy; retry later";
        } else {
          std::thread waiter([job, channel] {
            job->wait_until(Clock::time_point::max());
            {
              std::lock_guard<std::mutex> lock(channel->mu);
              channel->finished = true;
            }
            channel->cv.notify_one();
          });
          std::unique_lock<std::mutex> lock(channel->mu);
          for (;;) {
            channel->cv.wait(lock, [&] { return channel->finished || !channel->events.empty(); });
            while (!channel->events.empty()) {
              std::string event = std::move(channel->events.front());
              channel->events.pop_front();
              lock.unlock();
              send(event);
              lock.lock();
            }
            if (channel->finished) break;
          }
          lock.unlock();
          waiter.join();
          if (job->expired()) {
            status = 504, message = fmt::format("no answer within {} s (the server's --timeout)", options_.timeout_s);
          } else if (job->error()) {
            const Failure f = failure_of(job->error());
            status = f.status, message = f.message;
          }
        }
        send(sse(envelope(log_id, status == 200 ? 0 : status, message, status == 200 ? job->call.result : json())));
        sink.done();
        // The log line holds the stream's outcome: its HTTP status was 200 before the events began.
        finish(route, start, status, log_id, client, what);
        return true;
      });
}

void Server::add_routes() {
  auto& http = *http_;
  for (const auto& [name, endpoint] : endpoints_) {
    const Endpoint* ep = endpoint.get();
    const std::string route = name;
    http.Post("/" + regex_quote(name),
              [this, ep, route](const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader& content) { handle(route, *ep, req, res, content); });
  }
  http.Post(R"(/v1/models/([^/]+):predict)", [this](const httplib::Request& req, httplib::Response& res,
                                                     const httplib::ContentReader& content) {
    const std::string name = req.matches[1];
    auto it = models_.find(name);
    if (it == models_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, m] : models_) names.push_back(n);
      const std::string hint = closest_match(name, names);
      res.status = 404;
      res.set_content(envelope(new_log_id(), 404,
                               fmt::format("no model named '{}'{}", name,
                                           hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)))
                          .dump(),
                      kJson);
      metrics_.record_request("predict", 404, 0);
      return;
    }
    handle("predict", *it->second, req, res, content);
  });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(envelope(new_log_id(), 0, "Healthy", {{"status", "ok"}}).dump(), kJson);
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.prometheus_text(options_.queue_capacity, options_.workers),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/v1/endpoints", [this](const httplib::Request&, httplib::Response& res) {
    json endpoints = json::object(), models = json::object();
    for (const auto& [name, ep] : endpoints_) {
      endpoints[name] = ep->describe();
      if (const char* field = ep->image_field()) endpoints[name]["imageField"] = field;
    }
    for (const auto& [name, m] : models_) models[name] = m->describe();
    res.set_content(envelope(new_log_id(), 0, "Success", {{"endpoints", endpoints}, {"models", models}}).dump(),
                    kJson);
  });
  if (options_.web_ui) {
    // The demo pages, from memory: a name that is not an embedded asset is a 404, never a file.
    auto asset = [](const WebAsset& a, httplib::Response& res) {
      res.set_content(std::string(a.bytes), std::string(content_type_of(a.name)));
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Content-Type-Options", "nosniff");
    };
    http.Get("/", [asset](const httplib::Request&, httplib::Response& res) { asset(*find_web_asset("index.html"), res); });
    http.Get(R"(/static/([A-Za-z0-9_.-]+))", [asset](const httplib::Request& req, httplib::Response& res) {
      if (const WebAsset* a = find_web_asset(req.matches[1].str())) return asset(*a, res);
      res.status = 404;
    });
  }
  // httplib's own refusals (404, 413, ...) get the envelope too.
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    res.set_content(envelope(new_log_id(), res.status, fmt::format("{}: {} {}", default_message(res.status),
                                                                   req.method, req.path))
                        .dump(),
                    kJson);
  });
}

int Server::bind() {
  SKIFF_CHECK(!bound_, "serve: bind() called twice");
  add_routes();
  auto& http = *http_;
  const int http_threads =
      options_.http_threads > 0 ? options_.http_threads : int(options_.queue_capacity) + options_.workers + 8;
  http.new_task_queue = [http_threads] { return new httplib::ThreadPool(size_t(http_threads)); };
  http.set_payload_max_length(options_.max_body_bytes);
  const auto read_us = int64_t(options_.read_timeout_s * 1e6);
  http.set_read_timeout(read_us / 1000000, read_us % 1000000);
  http.set_write_timeout(time_t(std::max(1.0, options_.timeout_s)), 0);
  http.set_keep_alive_timeout(5);
  int port = options_.port;
  if (port == 0) {
    port = http.bind_to_any_port(options_.host);
    SKIFF_CHECK_T(IoError, port > 0, "serve: cannot listen on {} (any port)", options_.host);
  } else {
    SKIFF_CHECK_T(IoError, http.bind_to_port(options_.host, port), "serve: cannot listen on {}:{} ({})",
                  options_.host, port, "the port is taken, or the address is not this machine's");
  }
  bound_ = true;
  return port;
}

void Server::serve() {
  SKIFF_CHECK(bound_, "serve: call bind() before serve()");
  http_->listen_after_bind();  // returns after stop(), once every connection's handler has returned
  queue_->shutdown();
}

void Server::stop() {
  if (http_) http_->stop();
}

bool Server::running() const { return http_ && http_->is_running(); }

}  // namespace skiff::serve
