// `skiff launch`: starts the ranks of a distributed run on this machine (one process per
// rank, like torchrun / paddle.distributed.launch), gives each its rank environment and a
// log file, shows rank 0's output, and stops the group when a rank fails.
#include <fmt/format.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "apps/skiff/commands.h"
#include "framework/core/error.h"

namespace skiff::app {
namespace {

namespace fs = std::filesystem;

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master;  // ADDR:PORT
  std::string log_dir = "log";
  int threads_per_proc = 0;
  int timeout_s = 0;
  int zero_stage = -1;
  std::vector<std::string> command;
};

// A free TCP port on the loopback interface, for a one-machine run without --master.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  SKIFF_CHECK_T(IoError, fd >= 0, "skiff launch: cannot open a socket to find a free port");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  close(fd);
  SKIFF_CHECK_T(IoError, ok, "skiff launch: cannot find a free port on 127.0.0.1 (give one with --master)");
  return ntohs(a.sin_port);
}

std::pair<std::string, int> parse_master(const std::string& s) {
  auto colon = s.rfind(':');
  SKIFF_CHECK(colon != std::string::npos && colon > 0, "--master '{}' must look like ADDR:PORT", s);
  int port = 0;
  try {
    size_t used = 0;
    port = std::stoi(s.substr(colon + 1), &used);
    SKIFF_CHECK(used == s.size() - colon - 1, "");
  } catch (...) {
    port = 0;
  }
  SKIFF_CHECK(port >= 1 && port <= 65535, "--master '{}': the port must be a number in [1, 65535]", s);
  return {s.substr(0, colon), port};
}

// The last `n` lines of a file (for the failing rank's error).
std::string tail(const fs::path& file, int n) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (int(lines.size()) > n) lines.erase(lines.begin());
  }
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

std::atomic<int> g_forward_signal{0};
void on_signal(int sig) { g_forward_signal.store(sig); }

struct Rank {
  int global = 0;
  pid_t pid = -1;
  fs::path log;
  bool running = false;
};

// Copies a child's output pipe to the log file and to this process's stream (rank 0),
// until the pipe closes, or until `ranks_done` is set and the pipe has been quiet for a
// moment (a rank's own children may keep it open after the rank is gone).
std::thread echo(int fd, fs::path log, FILE* to, const std::atomic<bool>& ranks_done) {
  return std::thread([fd, log = std::move(log), to, &ranks_done] {
    std::ofstream out(log, std::ios::app | std::ios::binary);
    char buf[4096];
    while (true) {
      pollfd p{fd, POLLIN, 0};
      int ready = poll(&p, 1, 200);
      if (ready == 0) {
        if (ranks_done.load()) break;
        continue;
      }
      if (ready < 0 && errno == EINTR) continue;
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.write(buf, n);
      out.flush();
      std::fwrite(buf, 1, size_t(n), to);
      std::fflush(to);
    }
    close(fd);
  });
}

int run_launch(const LaunchOptions& o) {
  SKIFF_CHECK(!o.command.empty(), "skiff launch: no command to run (put it after --, e.g. skiff launch "
              "--nproc_per_node 2 -- skiff train -c recipe.yml)");
  SKIFF_CHECK(o.node_rank >= 0 && o.node_rank < o.nnodes, "--node_rank {} must be in [0, --nnodes {})", o.node_rank,
              o.nnodes);
  SKIFF_CHECK(o.nnodes == 1 || !o.master.empty(), "--nnodes {} needs --master ADDR:PORT (node 0's address, the "
              "same on every node)", o.nnodes);
  auto [addr, port] = o.master.empty() ? std::pair<std::string, int>{"127.0.0.1", free_port()} : parse_master(o.master);
  const int world = o.nnodes * o.nproc_per_node;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = o.threads_per_proc > 0 ? o.threads_per_proc : std::max(1, cores / o.nproc_per_node);
  fs::create_directories(o.log_dir);

  // `skiff ...` runs this very executable, whatever PATH says.
  std::vector<std::string> argv_s = o.command;
  if (argv_s[0] == "skiff") argv_s[0] = fs::read_symlink("/proc/self/exe").string();
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::fprintf(stderr, "skiff launch: %d rank(s) on this node (ranks %d..%d of %d), master %s:%d, %d thread(s) each, "
               "logs in %s\n", o.nproc_per_node, o.node_rank * o.nproc_per_node,
               (o.node_rank + 1) * o.nproc_per_node - 1, world, addr.c_str(), port, threads, o.log_dir.c_str());
  std::vector<Rank> ranks(size_t(o.nproc_per_node));
  std::vector<std::thread> echoes;
  std::atomic<bool> ranks_done{false};
  for (int local = 0; local < o.nproc_per_node; ++local) {
    Rank& r = ranks[size_t(local)];
    r.global = o.node_rank * o.nproc_per_node + local;
    r.log = fs::path(o.log_dir) / fmt::format("rank_{}.log", r.global);
    std::ofstream(r.log, std::ios::trunc);
    const bool shown = local == 0;  // the first rank of the node is echoed to the terminal
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (shown) SKIFF_CHECK_T(IoError, pipe(out_pipe) == 0 && pipe(err_pipe) == 0, "skiff launch: pipe failed");
    pid_t pid = fork();
    SKIFF_CHECK_T(IoError, pid >= 0, "skiff launch: fork failed: {}", std::strerror(errno));
    if (pid == 0) {
      // A process group per rank: stopping a rank stops what it started too, and the
      // terminal's Ctrl-C reaches the ranks once, through this launcher.
      setpgid(0, 0);
      setenv("SKIFF_RANK", std::to_string(r.global).c_str(), 1);
      setenv("SKIFF_LOCAL_RANK", std::to_string(local).c_str(), 1);
      setenv("SKIFF_WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("SKIFF_LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node).c_str(), 1);
      setenv("SKIFF_MASTER_ADDR", addr.c_str(), 1);
      setenv("SKIFF_MASTER_PORT", std::to_string(port).c_str(), 1);
      if (o.timeout_s > 0) setenv("SKIFF_DIST_TIMEOUT", std::to_string(o.timeout_s).c_str(), 1);
      if (o.zero_stage >= 0) setenv("SKIFF_ZERO_STAGE", std::to_string(o.zero_stage).c_str(), 1);
      setenv("SKIFF_NUM_THREADS", std::to_string(threads).c_str(), o.threads_per_proc > 0 ? 1 : 0);
      if (shown) {
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
      } else {
        int fd = open(r.log.c_str(), O_WRONLY | O_APPEND);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
      }
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "skiff launch: cannot run '%s': %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    setpgid(pid, pid);  // as the child does: whichever runs first
    if (shown) {
      close(out_pipe[1]), close(err_pipe[1]);
      echoes.push_back(echo(out_pipe[0], r.log, stdout, ranks_done));
      echoes.push_back(echo(err_pipe[0], r.log, stderr, ranks_done));
    }
    r.pid = pid;
    r.running = true;
    std::fprintf(stderr, "skiff launch: rank %d is pid %d, log %s\n", r.global, int(pid), r.log.c_str());
  }

  // Wait for the ranks; the first failure stops the others.
  int exit_code = 0;
  bool failed = false;
  auto stop_others = [&](int sig) {
    for (Rank& r : ranks)
      if (r.running) kill(-r.pid, sig);
  };
  auto deadline = std::chrono::steady_clock::time_point::max();
  int running = o.nproc_per_node;
  while (running > 0) {
    if (int sig = g_forward_signal.exchange(0)) {
      std::fprintf(stderr, "skiff launch: passing %s on to the ranks\n", strsignal(sig));
      stop_others(sig);
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        stop_others(SIGKILL);
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (Rank& r : ranks) {
      if (r.pid != pid || !r.running) continue;
      r.running = false;
      --running;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (code != 0 && !failed) {
        failed = true;
        exit_code = code;
        std::string how = WIFEXITED(status) ? fmt::format("exited with code {}", code)
                                            : fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                                                          strsignal(WTERMSIG(status)));
        std::fprintf(stderr, "skiff launch: rank %d %s; stopping the other ranks. The end of its log (%s):\n%s",
                     r.global, how.c_str(), r.log.c_str(), tail(r.log, 15).c_str());
        stop_others(SIGTERM);
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      }
    }
  }
  ranks_done.store(true);
  for (auto& t : echoes) t.join();
  if (!failed) std::fprintf(stderr, "skiff launch: all %d rank(s) finished\n", o.nproc_per_node);
  return exit_code;
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto o = std::make_shared<LaunchOptions>();
  auto* cmd = app.add_subcommand("launch", "Run a command as the ranks of a distributed job (data-parallel training)");
  cmd->footer(
      "Each rank gets SKIFF_RANK, SKIFF_LOCAL_RANK, SKIFF_WORLD_SIZE, SKIFF_MASTER_ADDR/PORT and\n"
      "SKIFF_NUM_THREADS; skiff train then trains data-parallel (gradients averaged over the ranks,\n"
      "each rank on its shard of the data, rank 0 writes the output). Rank logs: LOG_DIR/rank_N.log;\n"
      "rank 0's output is shown here too. When a rank fails, the others are stopped and its exit\n"
      "code is returned.\n\n"
      "Example:\n  skiff launch --nproc_per_node 2 -- skiff train -c configs/science/fno_burgers.yml");
  cmd->add_option("--nproc_per_node", o->nproc_per_node, "Ranks (processes) on this machine")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--nnodes", o->nnodes, "Machines in the job")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--node_rank", o->node_rank, "This machine's number, 0 .. nnodes-1")->capture_default_str();
  cmd->add_option("--master", o->master, "ADDR:PORT where rank 0 (on node 0) listens for the others "
                  "(default for one machine: 127.0.0.1 and a free port)");
  cmd->add_option("--log_dir", o->log_dir, "Where the ranks' logs go")->capture_default_str();
  cmd->add_option("--threads_per_proc", o->threads_per_proc, "CPU threads of each rank (default: the cores "
                  "divided by --nproc_per_node, unless SKIFF_NUM_THREADS is set)")->check(CLI::Range(1, 4096));
  cmd->add_option("--timeout", o->timeout_s, "Seconds a rank waits for a silent peer before failing (default 300)")
      ->check(CLI::Range(1, 86400 * 7));
  cmd->add_option("--zero_stage", o->zero_stage, "1: shard the optimizer state across the ranks (ZeRO stage 1) "
                  "in skiff train, for any recipe (a recipe may also set Global.zero_stage)")->check(CLI::Range(0, 1));
  cmd->add_option("command", o->command, "The command each rank runs (after --)")->required();
  cmd->callback([o] {
    int code = run_launch(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace skiff::app
