// `skiff serve [ENDPOINT...] [--model NAME=MODEL...]`: serves the registered
// endpoints (POST /ocr, ...) and models (POST /v1/models/NAME:predict) over HTTP
// until SIGTERM or Ctrl-C, then finishes the requests in flight and exits 0.
#include <fmt/format.h>

#include <csignal>
#include <pthread.h>
#include <thread>

#include "apps/skiff/commands.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/serve/model_endpoint.h"
#include "framework/serve/server.h"

namespace skiff::app {
namespace {

struct ServeOptions {
  std::vector<std::string> endpoints;
  std::vector<std::string> models;    // NAME=MODEL
  std::vector<std::string> settings;  // ENDPOINT.KEY=VALUE
  serve::ServerOptions server;
  double max_body_mb = 48;
  bool quiet = false;
  bool no_ui = false;
};

std::pair<std::string, std::string> split_once(const std::string& text, char sep, const char* option,
                                               const char* form) {
  const size_t at = text.find(sep);
  SKIFF_CHECK(at != std::string::npos && at > 0 && at + 1 < text.size(), "{} '{}': expected {}", option, text, form);
  return {text.substr(0, at), text.substr(at + 1)};
}

/// SIGINT, SIGTERM, and SIGUSR1 (our own wake-up), blocked in the calling thread and so
/// in every thread it starts afterwards: the server's workers, connections and OpenMP
/// teams must not take the default action (exit at once, dropping requests in flight).
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

/// Waits for SIGINT or SIGTERM on a thread of its own and stops the server.
class StopOnSignal {
 public:
  StopOnSignal(sigset_t signals, serve::Server& server) : signals_(signals) {
    waiter_ = std::thread([this, &server] {
      int sig = 0;
      sigwait(&signals_, &sig);
      if (sig == SIGUSR1) return;
      fmt::print(stderr, "skiff serve: {}: finishing the requests in flight, then stopping\n",
                 sig == SIGINT ? "interrupted" : "SIGTERM");
      server.stop();
    });
  }
  ~StopOnSignal() {
    pthread_kill(waiter_.native_handle(), SIGUSR1);  // ends the wait when the server stopped otherwise
    waiter_.join();
  }

 private:
  sigset_t signals_;
  std::thread waiter_;
};

void run_serve(ServeOptions& o) {
  const sigset_t stop_signals = block_stop_signals();  // before any thread starts
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is an error on its socket, not the server's end
  std::map<std::string, serve::EndpointSettings> settings;
  for (const auto& s : o.settings) {
    auto [target, value] = split_once(s, '=', "--set", "ENDPOINT.KEY=VALUE");
    auto [endpoint, key] = split_once(target, '.', "--set", "ENDPOINT.KEY=VALUE");
    settings[endpoint][key] = value;
  }
  for (const auto& [endpoint, _] : settings)
    SKIFF_CHECK(std::find(o.endpoints.begin(), o.endpoints.end(), endpoint) != o.endpoints.end(),
                "--set {}.*: '{}' is not among the endpoints served ({})", endpoint, endpoint,
                o.endpoints.empty() ? std::string("none") : fmt::format("{}", fmt::join(o.endpoints, ", ")));
  SKIFF_CHECK(!o.endpoints.empty() || !o.models.empty(),
              "serve: nothing to serve: name an endpoint ({}) or a model with --model NAME=FILE",
              fmt::join(serve::endpoints().names(), ", "));
  SKIFF_CHECK(o.max_body_mb > 0 && o.max_body_mb <= 4096, "--max-body-mb: expected (0, 4096], got {}", o.max_body_mb);
  o.server.max_body_bytes = size_t(o.max_body_mb * (1 << 20));
  o.server.limits.max_file_bytes = o.server.max_body_bytes;
  o.server.access_log = !o.quiet;
  o.server.web_ui = !o.no_ui;
  if (o.server.threads == 0) o.server.threads = num_threads();

  serve::Server server(o.server);
  std::vector<std::string> routes;
  for (const auto& name : o.endpoints) {
    fmt::print(stderr, "skiff serve: loading {}\n", name);
    server.add_endpoint(name, serve::endpoints().get(name)(settings[name]));
    routes.push_back("POST /" + name);
  }
  for (const auto& m : o.models) {
    auto [name, model] = split_once(m, '=', "--model", "NAME=FILE (an .onnx file, a model.json or a zoo name)");
    fmt::print(stderr, "skiff serve: loading model {} from {}\n", name, model);
    server.add_model(name, serve::make_model_endpoint(model));
    routes.push_back(fmt::format("POST /v1/models/{}:predict", name));
  }
  StopOnSignal stop_on_signal(stop_signals, server);
  const int port = server.bind();
  fmt::print(stderr, "skiff serve: listening on http://{}:{} ({} worker{}, {} thread{} each): {}; GET /health, /metrics{}\n",
             o.server.host, port, o.server.workers, o.server.workers == 1 ? "" : "s",
             std::max(1, o.server.threads / o.server.workers), std::max(1, o.server.threads / o.server.workers) == 1 ? "" : "s",
             fmt::join(routes, ", "), o.server.web_ui ? "; demo pages at /" : "");
  server.serve();
  fmt::print(stderr, "skiff serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand("serve", "Serve pipelines and models over HTTP (PaddleX serving's request layout)");
  cmd->footer(
      "\nRoutes: POST /<endpoint> (e.g. /ocr), POST /v1/models/<name>:predict, GET /v1/endpoints,\n"
      "GET /health, GET /metrics (Prometheus). SIGTERM or Ctrl-C finishes the requests in flight, then exits.\n"
      "\nExamples:\n"
      "  skiff serve ocr --port 8080\n"
      "  skiff serve ocr --set ocr.text_det_limit_side_len=736 --workers 2\n"
      "  skiff serve --model det=ppocr-v4-det --max-batch 8 --max-wait-ms 5\n"
      "  curl -s localhost:8080/ocr -d \"{\\\"file\\\": \\\"$(base64 -w0 photo.jpg)\\\"}\"\n");
  cmd->add_option("endpoints", o->endpoints, "Endpoints to serve, by name (see GET /v1/endpoints)");
  cmd->add_option("--model", o->models, "Serve a model at /v1/models/NAME:predict: NAME=FILE or NAME=ZOO_NAME");
  cmd->add_option("--set", o->settings, "An endpoint's setting, ENDPOINT.KEY=VALUE (e.g. ocr.det_model=det.onnx)");
  serve::ServerOptions& s = o->server;
  cmd->add_option("--host", s.host, "Address to listen on (0.0.0.0: every interface)")->capture_default_str();
  cmd->add_option("--port", s.port, "Port (0: any free one, printed at start)")->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--workers", s.workers, "Requests run at once; they share the --threads budget")
      ->capture_default_str()->check(CLI::Range(1, 256));
  cmd->add_option("--queue", s.queue_capacity, "Requests that may wait for a worker before 503")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--max-batch", s.max_batch, "Most requests run as one batch (model endpoints)")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_option("--max-wait-ms", s.max_wait_ms, "How long a batch waits for more requests")
      ->capture_default_str()->check(CLI::Range(0.0, 10000.0));
  cmd->add_option("--timeout", s.timeout_s, "Seconds from a request's arrival to its answer before 504")
      ->capture_default_str()->check(CLI::Range(0.001, 86400.0));
  cmd->add_option("--read-timeout", s.read_timeout_s, "Seconds a client may stall while sending")
      ->capture_default_str()->check(CLI::Range(0.001, 3600.0));
  cmd->add_option("--max-body-mb", o->max_body_mb, "Largest request body in MiB (413 above)")->capture_default_str();
  cmd->add_option("--files-root", s.limits.files_root,
                  "Let requests name files under this directory instead of sending their bytes");
  cmd->add_flag("--quiet", o->quiet, "No line per request on stderr");
  cmd->add_flag("--no-ui", o->no_ui, "No demo pages at / (the API routes only)");
  cmd->callback([o] { run_serve(*o); });
}

}  // namespace skiff::app
