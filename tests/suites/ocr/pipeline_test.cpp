// End-to-end OCR with the real PP-OCRv4 models (pulled from the zoo on first
// use): the bundled sample, images the project renders with known text
// (Chinese, English, digits, mixed; rotated, upside down, noisy, coloured),
// images without text, bad files, thread safety and bounded memory.
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "framework/core/error.h"
#include "suites/ocr/font.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/synth.h"

namespace skiff::ocr {
namespace {

namespace fs = std::filesystem;

const Pipeline& pipeline() {
  static Pipeline p;
  return p;
}

/// Code points without spaces: PP-OCRv4's Chinese recognizer often drops the
/// space between words set far apart, so accuracy is measured on the characters.
std::vector<std::string> chars_no_space(const std::string& s) {
  std::vector<std::string> out;
  for (auto& c : split_utf8(s))
    if (c != " ") out.push_back(c);
  return out;
}

size_t edit_distance(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// The recognised line whose box centre lies inside the expected quad (the closest centre otherwise).
const OcrLine* match_line(const OcrResult& r, const std::array<cv::Point2f, 4>& quad) {
  std::vector<cv::Point2f> poly(quad.begin(), quad.end());
  cv::Point2f centre = (quad[0] + quad[2]) * 0.5f;
  const OcrLine* best = nullptr;
  double best_d = 1e30;
  for (const auto& l : r.lines) {
    cv::Point2f c = (l.quad.pts[0] + l.quad.pts[2]) * 0.5f;
    double d = cv::norm(c - centre);
    if (cv::pointPolygonTest(poly, c, false) >= 0) d = 0;
    if (d < best_d) best_d = d, best = &l;
  }
  return best_d < 40 ? best : nullptr;
}

TEST(OcrPipeline, ReadsTheBundledSample) {
  cv::Mat img = read_image(std::string(SKIFF_SOURCE_DIR) + "/assets/samples/ocr_sample.png");
  OcrResult r = pipeline().run(img);
  std::ifstream f(std::string(SKIFF_SOURCE_DIR) + "/assets/samples/ocr_sample.txt");
  std::vector<std::string> expected;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) expected.push_back(line);
  ASSERT_EQ(r.lines.size(), expected.size());
  size_t errors = 0, total = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    auto want = chars_no_space(expected[i]);
    errors += edit_distance(chars_no_space(r.lines[i].text), want);
    total += want.size();
    EXPECT_GE(r.lines[i].score, 0.5f);
  }
  double accuracy = 1.0 - double(errors) / double(total);
  std::printf("sample: %zu lines, character accuracy %.4f\n", r.lines.size(), accuracy);
  EXPECT_GE(accuracy, 0.98);
  EXPECT_EQ(r.lines[0].text, "鲜果时光便利店");
  EXPECT_EQ(r.lines.back().text, "谢谢惠顾，欢迎再次光临");
  EXPECT_EQ(r.lines[r.lines.size() - 2].text, "Thank you for shopping with us!");
}

TEST(OcrPipeline, RestoresWordSpacesOnlyBetweenLatinCharacters) {
  cv::Mat img = read_image(std::string(SKIFF_SOURCE_DIR) + "/assets/samples/ocr_sample.png");
  OcrResult spaced = pipeline().run(img);
  PipelineConfig config;
  config.restore_word_spaces = false;
  OcrResult plain = Pipeline(config).run(img);
  ASSERT_EQ(spaced.lines.size(), plain.lines.size());
  // The recognizer's greedy path reads the letter-spaced heading without its spaces.
  EXPECT_EQ(plain.lines[1].text, "FRESHTIMEMART");
  EXPECT_EQ(spaced.lines[1].text, "FRESH TIME MART");
  for (size_t i = 0; i < plain.lines.size(); ++i) {
    EXPECT_EQ(chars_no_space(spaced.lines[i].text), chars_no_space(plain.lines[i].text)) << plain.lines[i].text;
    EXPECT_EQ(spaced.lines[i].score, plain.lines[i].score);
  }
  // Chinese text gets no spaces: the store name, the address and the thank-you line are unchanged.
  for (size_t i : {size_t(0), size_t(2), plain.lines.size() - 1}) EXPECT_EQ(spaced.lines[i].text, plain.lines[i].text);
}

TEST(OcrPipeline, SyntheticImagesReachCharacterAccuracy) {
  SynthOptions opt;  // ±5° rotation, 15% upside-down lines, noise, gradients, dark backgrounds
  size_t errors = 0, total = 0, upside_down = 0, lines = 0, found_exact = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SynthImage s = render_synth_image(opt, seed);
    OcrResult r = pipeline().run(s.image);
    for (const auto& gt : s.lines) {
      auto want = chars_no_space(gt.text);
      const OcrLine* got = match_line(r, gt.quad);
      size_t e = got ? edit_distance(chars_no_space(got->text), want) : want.size();
      errors += std::min(e, want.size());
      total += want.size();
      upside_down += gt.upside_down;
      ++lines;
      found_exact += e == 0;
    }
  }
  double accuracy = 1.0 - double(errors) / double(total);
  std::printf("synthetic: %zu lines (%zu upside down), %zu exact, character accuracy %.4f\n", lines, upside_down,
              found_exact, accuracy);
  EXPECT_GT(upside_down, 0u);
  // Measured: 73 lines (16 upside down), 70 read exactly, character accuracy 0.9964.
  EXPECT_GE(accuracy, 0.985);
}

TEST(OcrPipeline, ImageWithoutTextGivesEmptyResult) {
  cv::Mat blank(480, 640, CV_8UC3, cv::Scalar(235, 240, 245));
  OcrResult r = pipeline().run(blank);
  EXPECT_TRUE(r.lines.empty());
  EXPECT_TRUE(r.detections.empty());
  cv::Mat tiny(5, 7, CV_8UC3, cv::Scalar(0, 0, 0));
  EXPECT_TRUE(pipeline().run(tiny).lines.empty());
}

TEST(OcrPipeline, GrayAndHugeImagesWork) {
  SynthImage s = render_synth_image(SynthOptions{}, 99);
  cv::Mat gray;
  cv::cvtColor(s.image, gray, cv::COLOR_BGR2GRAY);
  EXPECT_FALSE(pipeline().run(gray).lines.empty());
  cv::Mat huge;
  cv::resize(s.image, huge, {}, 8.0, 8.0, cv::INTER_LINEAR);  // ~5000 x 3800: resized to 960 for detection
  OcrResult r = pipeline().run(huge);
  EXPECT_FALSE(r.lines.empty());
}

TEST(OcrPipeline, BadFilesAreIoErrorsNamingTheFile) {
  fs::path dir = fs::temp_directory_path() / "skiff_ocr_bad_files";
  fs::create_directories(dir);
  std::ofstream(dir / "empty.jpg").close();
  std::ofstream(dir / "corrupt.png") << "this is not a png";
  for (auto name : {"empty.jpg", "corrupt.png", "missing.png"}) {
    std::string path = (dir / name).string();
    try {
      read_image(path);
      ADD_FAILURE() << name << " was read";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
  EXPECT_THROW(pipeline().run(cv::Mat()), ValueError);
}

TEST(OcrPipeline, ConcurrentRunsGiveTheSameLines) {
  std::vector<cv::Mat> images;
  for (uint64_t seed : {3, 4, 5}) images.push_back(render_synth_image(SynthOptions{}, seed).image);
  std::vector<std::vector<std::string>> serial, parallel(images.size());
  for (const auto& img : images) {
    serial.emplace_back();
    for (const auto& l : pipeline().run(img).lines) serial.back().push_back(l.text);
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < images.size(); ++i)
    threads.emplace_back([&, i] {
      for (const auto& l : pipeline().run(images[i]).lines) parallel[i].push_back(l.text);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(serial, parallel);
}

long resident_kb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

TEST(OcrPipeline, MemoryStaysBoundedOverAThousandImages) {
  // Small one-line images of varying sizes, so shapes (and cached plans) change.
  SynthOptions opt;
  opt.min_lines = 1;
  opt.max_lines = 2;
  std::vector<cv::Mat> images;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    opt.width = 160 + int(seed) * 16;
    opt.height = 64 + int(seed % 3) * 16;
    images.push_back(render_synth_image(opt, 1000 + seed).image);
  }
  long after_warmup = 0;
  for (int i = 0; i < 1000; ++i) {
    pipeline().run(images[size_t(i) % images.size()]);
    if (i == 19) after_warmup = resident_kb();
  }
  long end = resident_kb();
  std::printf("resident: %ld KiB after 20 images, %ld KiB after 1000\n", after_warmup, end);
  EXPECT_LE(double(end), double(after_warmup) * 1.10);
}

}  // namespace
}  // namespace skiff::ocr
