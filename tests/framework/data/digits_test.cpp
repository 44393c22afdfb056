// Tests of framework/data/digits.h against scikit-learn's digits.csv.gz.
#include "framework/data/digits.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "framework/data/dataloader.h"
#include "framework/io/file.h"

namespace skiff::data {
namespace {

TEST(DigitsTest, LoadsAllSamplesWithBalancedClasses) {
  auto path = find_digits_csv();
  if (!path) GTEST_SKIP() << "python3-sklearn is not installed (scripts/setup.sh installs it)";
  DigitsData d = load_digits(*path);
  EXPECT_EQ(d.images.shape(), (Shape{1797, 1, 8, 8}));
  EXPECT_EQ(d.images.dtype(), DType::Float32);
  EXPECT_EQ(d.labels.shape(), (Shape{1797}));
  EXPECT_EQ(d.labels.dtype(), DType::Int64);
  std::vector<int> count(10, 0);
  for (int64_t l : d.labels.to_vector<int64_t>()) count[size_t(l)]++;
  // scikit-learn documents ~180 samples per class.
  for (int c = 0; c < 10; ++c) EXPECT_TRUE(count[size_t(c)] >= 174 && count[size_t(c)] <= 183) << c << ": " << count[c];
  auto px = d.images.to_vector<float>();
  EXPECT_EQ(*std::min_element(px.begin(), px.end()), 0.0f);
  EXPECT_EQ(*std::max_element(px.begin(), px.end()), 1.0f);
  // First sample is a 0: its first row is 0 0 5 13 9 1 0 0 (x / 16).
  EXPECT_EQ(d.labels.to_vector<int64_t>()[0], 0);
  EXPECT_FLOAT_EQ(px[2], 5.0f / 16);
  EXPECT_FLOAT_EQ(px[3], 13.0f / 16);

  auto ds = digits_dataset(*path, /*scale=*/false);
  DataLoader dl(ds, {.batch_size = 64, .shuffle = true, .seed = 1, .num_workers = 2});
  auto b = dl.epoch(0).next();
  EXPECT_EQ(b->at("image").shape(), (Shape{64, 1, 8, 8}));
  EXPECT_EQ(b->at("label").shape(), (Shape{64}));
}

TEST(DigitsTest, MalformedFilesAreIoErrors) {
  auto dir = std::filesystem::temp_directory_path() / ("skiff_digits_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  io::write_file_atomic(dir / "plain.csv.gz", "not gzip");
  EXPECT_THROW(load_digits(dir / "plain.csv.gz"), IoError);
  EXPECT_THROW(load_digits(dir / "missing.csv.gz"), IoError);
  EXPECT_THROW(gunzip(std::string("\x1f\x8b\x08\x00", 4), "trunc"), IoError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace skiff::data
