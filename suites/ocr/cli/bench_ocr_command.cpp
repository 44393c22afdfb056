// `skiff bench ocr IMAGE... [--threads-list 1,2] [--repeat N] [--json]`: latency of
// the PP-OCRv4 pipeline from file to text. Per thread count the pipeline is loaded
// once and warmed up on the first image; each image is then read (cv::imread) and
// OCR'd --repeat times, and the medians of the end-to-end time and of its stages are
// printed. Cold start: `skiff ocr IMAGE` run as a child process, from spawn to exit
// (models already cached). bench/compare_ocr.sh runs the ONNX Runtime pipeline on
// the same images and prints the ratios.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "suites/ocr/pipeline.h"

extern char** environ;

namespace skiff::ocr {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct OcrBenchOptions {
  std::vector<std::string> images;
  std::string threads = "1,2";
  int repeat = 5;
  int warmup = 1;
  int cold_runs = 3;
  bool json = false;
};

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The stages of one end-to-end run, in milliseconds.
struct Sample {
  double e2e = 0, decode = 0, det = 0, cls = 0, rec = 0, post = 0;
};

constexpr const char* kStages[] = {"e2e", "decode", "det", "cls", "rec", "post"};

double stage(const Sample& s, int k) {
  const double v[] = {s.e2e, s.decode, s.det, s.cls, s.rec, s.post};
  return v[k];
}

/// Per-stage medians of a set of samples.
Sample medians(const std::vector<Sample>& runs) {
  double out[6];
  for (int k = 0; k < 6; ++k) {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(stage(r, k));
    out[k] = median(v);
  }
  return Sample{out[0], out[1], out[2], out[3], out[4], out[5]};
}

Sample run_once(const ocr::Pipeline& pipeline, const std::string& file, size_t* lines = nullptr) {
  auto t0 = Clock::now();
  cv::Mat image = ocr::read_image(file);
  auto t1 = Clock::now();
  ocr::OcrResult r = pipeline.run(image);
  auto t2 = Clock::now();
  if (lines) *lines = r.lines.size();
  return Sample{ms_between(t0, t2), ms_between(t0, t1), r.timings.det_ms, r.timings.cls_ms, r.timings.rec_ms,
                r.timings.post_ms};
}

std::vector<int> parse_thread_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream list(text);
  for (std::string part; std::getline(list, part, ',');) {
    int n = std::atoi(part.c_str());
    SKIFF_CHECK(n > 0, "bench ocr: --threads-list expects positive integers separated by commas, got '{}'", text);
    out.push_back(n);
  }
  SKIFF_CHECK(!out.empty(), "bench ocr: --threads-list is empty");
  return out;
}

nlohmann::json sample_json(const Sample& s) {
  nlohmann::json j;
  for (int k = 0; k < 6; ++k) j[fmt::format("{}_ms", kStages[k])] = stage(s, k);
  return j;
}

void print_row(const std::string& name, const Sample& s, const std::string& extra = "") {
  fmt::print("{:<28}{:>10.1f}{:>9.1f}{:>9.1f}{:>9.1f}{:>9.1f}{:>9.1f}  {}\n", name, s.e2e, s.decode, s.det, s.cls,
             s.rec, s.post, extra);
}

/// Milliseconds from spawning `skiff ocr IMAGE --threads N` to its exit (its one
/// result printed), output discarded. Throws when the child fails.
double cold_start_ms(const std::string& image, int threads) {
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::string nt = std::to_string(threads);
  std::vector<std::string> args{exe, "ocr", image, "--threads", nt};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  auto t0 = Clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  SKIFF_CHECK(rc == 0, "bench ocr: cannot start {} ({})", exe, std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  double ms = ms_between(t0, Clock::now());
  SKIFF_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "bench ocr: `skiff ocr {}` failed (status {})", image,
              status);
  return ms;
}

void run_ocr_bench(const OcrBenchOptions& o) {
  SKIFF_CHECK(!o.images.empty(), "bench ocr: no images given");
  SKIFF_CHECK(o.repeat > 0, "bench ocr: --repeat must be positive");
  for (const auto& f : o.images) ocr::read_image(f);  // fail early, naming the file
  std::vector<int> thread_counts = parse_thread_list(o.threads);
  if (!o.json) {
    fmt::print("{:<28}{:>10}{:>9}{:>9}{:>9}{:>9}{:>9}  (medians of {} runs, ms; e2e = imread + pipeline)\n", "image",
               "e2e", "decode", "det", "cls", "rec", "post", o.repeat);
  }
  for (int nt : thread_counts) {
    set_num_threads(nt);
    auto t_load = Clock::now();
    ocr::Pipeline pipeline;
    double load_ms = ms_between(t_load, Clock::now());
    auto t_first = Clock::now();
    run_once(pipeline, o.images.front());
    double first_ms = ms_between(t_first, Clock::now());
    for (int i = 1; i < o.warmup; ++i) run_once(pipeline, o.images.front());
    if (!o.json) fmt::print("-- threads {}: pipeline load {:.0f} ms, first run {:.0f} ms\n", nt, load_ms, first_ms);
    std::vector<Sample> per_image;
    for (const auto& file : o.images) {
      std::vector<Sample> runs;
      size_t lines = 0;
      for (int r = 0; r < o.repeat; ++r) runs.push_back(run_once(pipeline, file, &lines));
      Sample m = medians(runs);
      per_image.push_back(m);
      if (o.json) {
        nlohmann::json j = sample_json(m);
        j["bench"] = "ocr";
        j["image"] = file;
        j["threads"] = nt;
        j["runs"] = o.repeat;
        j["lines"] = lines;
        fmt::print("{}\n", j.dump());
      } else {
        print_row(fs::path(file).filename().string(), m, fmt::format("{} lines", lines));
      }
      std::fflush(stdout);
    }
    Sample overall = medians(per_image);
    Sample sum;
    for (const auto& s : per_image)
      sum = Sample{sum.e2e + s.e2e, sum.decode + s.decode, sum.det + s.det, sum.cls + s.cls, sum.rec + s.rec,
                   sum.post + s.post};
    std::vector<double> cold;
    if (o.cold_runs > 0) {
      cold_start_ms(o.images.front(), nt);  // untimed: page cache and the like
      for (int i = 0; i < o.cold_runs; ++i) cold.push_back(cold_start_ms(o.images.front(), nt));
    }
    if (o.json) {
      nlohmann::json j = sample_json(overall);
      j["bench"] = "ocr";
      j["image"] = "(median)";
      j["threads"] = nt;
      j["images"] = o.images.size();
      j["runs"] = o.repeat;
      j["sum_e2e_ms"] = sum.e2e;
      j["load_ms"] = load_ms;
      j["first_run_ms"] = first_ms;
      if (!cold.empty()) j["cold_start_ms"] = median(cold);
      fmt::print("{}\n", j.dump());
    } else {
      print_row("(median of images)", overall);
      print_row("(sum of images)", sum);
      if (!cold.empty())
        fmt::print("cold start (`skiff ocr {}` as a new process, models cached): median {:.0f} ms of {} runs\n",
                   fs::path(o.images.front()).filename().string(), median(cold), cold.size());
    }
    std::fflush(stdout);
  }
}

void add_bench_ocr_command(CLI::App& bench) {
  auto o = std::make_shared<OcrBenchOptions>();
  auto* cmd = bench.add_subcommand("ocr", "End-to-end OCR latency (imread -> text) per image, with stage split and cold start");
  cmd->add_option("images", o->images, "Image files")->required();
  cmd->add_option("--threads-list", o->threads, "Comma-separated thread counts to run with")->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "Timed runs per image")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->warmup, "Untimed runs on the first image after loading")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--cold-runs", o->cold_runs,
                  "Timed `skiff ocr FIRST_IMAGE` child processes per thread count (0: no cold-start measurement)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o->json, "One JSON object per line (for bench/compare_ocr.sh)");
  cmd->callback([o] { run_ocr_bench(*o); });
}

}  // namespace
}  // namespace skiff::ocr

SKIFF_REGISTER_COMMAND("bench ocr", skiff::ocr::add_bench_ocr_command);
