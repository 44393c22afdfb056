#include "framework/core/threading.h"

#include <omp.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "framework/core/error.h"

namespace skiff {

static std::once_flag g_init;

namespace {

struct Listeners {
  std::mutex mu;
  std::vector<void (*)(int)> fns;
  int last = 0;  // the count set so far (0: never set)
};

Listeners& listeners() {
  static auto* l = new Listeners();  // leaked: used from static initializers of other libraries
  return *l;
}

void notify(int n) {
  Listeners& l = listeners();
  std::lock_guard<std::mutex> lock(l.mu);
  l.last = n;
  for (auto fn : l.fns) fn(n);
}

}  // namespace

void add_thread_count_listener(void (*fn)(int)) {
  Listeners& l = listeners();
  std::lock_guard<std::mutex> lock(l.mu);
  l.fns.push_back(fn);
  if (l.last > 0) fn(l.last);
}

void init_threads_from_env() {
  std::call_once(g_init, [] {
    if (const char* s = std::getenv("SKIFF_NUM_THREADS"); s && *s) {
      char* end = nullptr;
      long n = std::strtol(s, &end, 10);
      SKIFF_CHECK(end && *end == 0 && n > 0 && n <= 4096,
                  "SKIFF_NUM_THREADS: expected a positive integer, got '{}'", s);
      omp_set_num_threads(int(n));
      notify(int(n));
    }
  });
}

int num_threads() {
  init_threads_from_env();
  return omp_get_max_threads();
}

void set_num_threads(int n) {
  init_threads_from_env();
  SKIFF_CHECK(n > 0, "set_num_threads: expected a positive count, got {}", n);
  omp_set_num_threads(n);
  notify(n);
}

void set_num_threads_for_this_thread(int n) {
  init_threads_from_env();
  SKIFF_CHECK(n > 0, "set_num_threads_for_this_thread: expected a positive count, got {}", n);
  omp_set_num_threads(n);  // an ICV of the calling thread's task: other threads keep theirs
}

}  // namespace skiff
