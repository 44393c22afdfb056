// YAML recipes as `skiff train -c main.yml -o key=value` reads them. The input holds
// three parts (fuzz_support.h): base.yml, main.yml (which may name base.yml, or itself,
// in _BASE_) and the -o overrides, one per line.
#include "framework/config/config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = skiff::fuzz::split_parts(skiff::fuzz::as_text(data, size), 3);
  skiff::fuzz::write_scratch_file("config/base.yml", parts[0]);
  auto main_path = skiff::fuzz::write_scratch_file("config/main.yml", parts[1]);
  std::vector<std::string> overrides;
  std::string_view rest = parts[2];
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    if (!line.empty()) overrides.emplace_back(line);
    if (eol == std::string_view::npos) break;
    rest.remove_prefix(eol + 1);
  }
  skiff::fuzz::expect_clean_errors("config", [&] {
    YAML::Node root = skiff::config::load_config(main_path.string(), overrides);
    (void)skiff::config::to_yaml(root);
  });
  return 0;
}
