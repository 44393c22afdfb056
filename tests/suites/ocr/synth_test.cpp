// Tests of the synthetic text renderer, the CJK font lookup, the dataset writer
// and the committed sample image.
#include "suites/ocr/synth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "framework/core/error.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "suites/ocr/font.h"

namespace skiff::ocr {
namespace {

namespace fs = std::filesystem;

// Options whose background is one flat colour and whose pixels carry no noise,
// so "ink" is simply "differs from the corner pixel".
SynthOptions flat_options() {
  SynthOptions o;
  o.gradient_prob = 0;
  o.max_noise_sigma = 0;
  o.max_rotation_deg = 0;
  return o;
}

cv::Mat ink_mask(const cv::Mat& img, int threshold = 40) {
  const cv::Vec3b bg = img.at<cv::Vec3b>(0, 0);
  cv::Mat diff;
  cv::absdiff(img, cv::Scalar(bg[0], bg[1], bg[2]), diff);
  cv::Mat gray;
  cv::transform(diff, gray, cv::Matx13f(1, 1, 1));  // sum of channel differences
  return gray > threshold;
}

cv::Mat quads_mask(cv::Size size, const std::vector<SynthLine>& lines, int dilate = 0) {
  cv::Mat m = cv::Mat::zeros(size, CV_8UC1);
  for (const SynthLine& l : lines) {
    std::vector<cv::Point> poly;
    for (const cv::Point2f& p : l.quad) poly.emplace_back(cvRound(p.x), cvRound(p.y));
    cv::fillPoly(m, std::vector{poly}, 255);
  }
  if (dilate > 0) cv::dilate(m, m, cv::Mat::ones(2 * dilate + 1, 2 * dilate + 1, CV_8UC1));
  return m;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("skiff_synth_" + tag + "_" + std::to_string(getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Sets an environment variable for one scope and restores the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::vector<std::string> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string s; std::getline(in, s);) lines.push_back(s);
  return lines;
}

TEST(SynthTest, SameSeedGivesSamePixels) {
  const SynthImage a = render_synth_image({}, 7), b = render_synth_image({}, 7);
  ASSERT_EQ(a.image.size(), b.image.size());
  EXPECT_EQ(cv::norm(a.image, b.image, cv::NORM_INF), 0.0);
  ASSERT_EQ(a.lines.size(), b.lines.size());
  for (size_t i = 0; i < a.lines.size(); ++i) {
    EXPECT_EQ(a.lines[i].text, b.lines[i].text);
    EXPECT_EQ(a.lines[i].quad, b.lines[i].quad);
  }
}

TEST(SynthTest, DifferentSeedsDiffer) {
  std::set<std::string> first_texts;
  for (uint64_t seed = 0; seed < 6; ++seed)
    first_texts.insert(render_synth_image({}, seed).lines[0].text);
  EXPECT_GE(first_texts.size(), 5u);
  const SynthImage a = render_synth_image({}, 1), b = render_synth_image({}, 2);
  EXPECT_TRUE(a.image.size() != b.image.size() || cv::norm(a.image, b.image, cv::NORM_L1) > 0);
}

TEST(SynthTest, ImagesAndQuadsAreWellFormed) {
  SynthOptions o;
  o.width = 500;
  o.height = 400;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const SynthImage s = render_synth_image(o, seed);
    ASSERT_EQ(s.image.type(), CV_8UC3);
    EXPECT_GE(s.image.cols, o.width);  // rotation only grows the canvas
    EXPECT_GE(s.image.rows, o.height);
    ASSERT_FALSE(s.lines.empty());
    EXPECT_LE(static_cast<int>(s.lines.size()), o.max_lines);
    for (const SynthLine& l : s.lines) {
      EXPECT_FALSE(l.text.empty());
      EXPECT_EQ(l.text.front() != ' ' && l.text.back() != ' ', true) << l.text;
      for (const cv::Point2f& p : l.quad) {
        EXPECT_GE(p.x, 0);
        EXPECT_GE(p.y, 0);
        EXPECT_LE(p.x, s.image.cols);
        EXPECT_LE(p.y, s.image.rows);
      }
      // Clockwise from the top-left in image coordinates: positive area in y-down axes.
      double area2 = 0;
      for (int k = 0; k < 4; ++k) area2 += l.quad[k].cross(l.quad[(k + 1) % 4]);
      EXPECT_GT(area2, 0);
      EXPECT_LT(l.quad[0].x, l.quad[1].x);
      EXPECT_LT(l.quad[0].y, l.quad[3].y);
      // Font range 20..48 px: the box height stays in a plausible band.
      const double h = cv::norm(l.quad[0] - l.quad[3]);
      EXPECT_GE(h, 12);
      EXPECT_LE(h, 80);
    }
    // Lines do not overlap.
    const cv::Mat all = quads_mask(s.image.size(), s.lines);
    int sum = 0;
    for (const SynthLine& l : s.lines) sum += cv::countNonZero(quads_mask(s.image.size(), {l}));
    EXPECT_LE(sum - cv::countNonZero(all), static_cast<int>(s.lines.size()) * 4);
  }
}

TEST(SynthTest, QuadsCoverTheInk) {
  for (uint64_t seed = 0; seed < 8; ++seed) {
    const SynthImage s = render_synth_image(flat_options(), seed);
    const cv::Mat ink = ink_mask(s.image);
    const cv::Mat inside = quads_mask(s.image.size(), s.lines);
    EXPECT_EQ(cv::countNonZero(ink & ~inside), 0) << "seed " << seed;
    for (const SynthLine& l : s.lines) {
      const cv::Mat one = quads_mask(s.image.size(), {l});
      // Every box holds real text: a good share of strongly contrasting pixels.
      const double ink_share =
          cv::countNonZero(ink & one) / static_cast<double>(cv::countNonZero(one));
      EXPECT_GT(ink_share, 0.05) << l.text;
      const cv::Mat strong = ink_mask(s.image, 3 * 100 / 2);
      EXPECT_GT(cv::countNonZero(strong & one), 10) << l.text;
    }
  }
}

TEST(SynthTest, RotatedQuadsStillCoverTheInk) {
  SynthOptions o = flat_options();
  o.max_rotation_deg = 5;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    const SynthImage s = render_synth_image(o, seed);
    const cv::Mat ink = ink_mask(s.image, 60);
    const cv::Mat near = quads_mask(s.image.size(), s.lines, 2);
    EXPECT_LE(cv::countNonZero(ink & ~near), cv::countNonZero(ink) / 500) << "seed " << seed;
    for (const SynthLine& l : s.lines)
      EXPECT_GT(cv::countNonZero(ink & quads_mask(s.image.size(), {l})), 10) << l.text;
  }
}

TEST(SynthTest, GradientAndNoiseKeepContrast) {
  SynthOptions o;
  o.gradient_prob = 1;
  o.max_noise_sigma = 8;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    const SynthImage s = render_synth_image(o, seed);
    cv::Mat gray;
    cv::cvtColor(s.image, gray, cv::COLOR_BGR2GRAY);
    const cv::Mat inside = quads_mask(s.image.size(), s.lines);
    const cv::Mat outside = ~quads_mask(s.image.size(), s.lines, 3);
    double lo, hi;
    cv::minMaxLoc(gray, &lo, &hi, nullptr, nullptr, inside);
    const double bg = cv::mean(gray, outside)[0];
    // The most contrasting text pixel is far from the mean background.
    EXPECT_GT(std::max(std::abs(hi - bg), std::abs(lo - bg)), 90) << "seed " << seed;
  }
}

TEST(SynthTest, UpsideDownLinesAreFlippedInPlace) {
  SynthOptions up = flat_options(), down = flat_options();
  up.upside_down_prob = 0;
  down.upside_down_prob = 1;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const SynthImage a = render_synth_image(up, seed), b = render_synth_image(down, seed);
    ASSERT_EQ(a.lines.size(), b.lines.size());
    for (size_t i = 0; i < a.lines.size(); ++i) {
      EXPECT_FALSE(a.lines[i].upside_down);
      EXPECT_TRUE(b.lines[i].upside_down);
      EXPECT_EQ(a.lines[i].text, b.lines[i].text);
      EXPECT_EQ(a.lines[i].quad, b.lines[i].quad);
      // Same layout, the text turned by 180°: the upright crops agree.
      const cv::Mat ca = crop_synth_line(a.image, a.lines[i]),
                    cb = crop_synth_line(b.image, b.lines[i]);
      ASSERT_EQ(ca.size(), cb.size());
      EXPECT_LT(cv::norm(ca, cb, cv::NORM_L1) / ca.total(), 1.0) << a.lines[i].text;
      // ... while the raw pixels differ (the line is not symmetric).
      cv::Mat raw_a = a.image(cv::boundingRect(
          std::vector<cv::Point2f>(a.lines[i].quad.begin(), a.lines[i].quad.end())));
      cv::Mat raw_b = b.image(cv::boundingRect(
          std::vector<cv::Point2f>(b.lines[i].quad.begin(), b.lines[i].quad.end())));
      EXPECT_GT(cv::norm(raw_a, raw_b, cv::NORM_L1), 0) << a.lines[i].text;
    }
  }
}

TEST(SynthTest, CorpusIsVaried) {
  std::set<std::string> distinct;
  int chinese = 0, latin = 0, digit = 0, mixed = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const std::string s = synth_corpus_line(seed);
    ASSERT_FALSE(s.empty());
    distinct.insert(s);
    const bool has_cjk = std::any_of(s.begin(), s.end(),
                                     [](char c) { return static_cast<unsigned char>(c) >= 0xE4; });
    const bool has_latin = std::any_of(
        s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    const bool has_digit = std::any_of(
        s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    chinese += has_cjk;
    latin += has_latin;
    digit += has_digit;
    mixed += has_cjk && (has_latin || has_digit);
  }
  EXPECT_GE(distinct.size(), 250u);
  EXPECT_GE(chinese, 100);
  EXPECT_GE(latin, 60);
  EXPECT_GE(digit, 100);
  EXPECT_GE(mixed, 40);
}

TEST(SynthTest, CustomTextsAndFontRange) {
  SynthOptions o = flat_options();
  o.texts = {"你好，世界", "skiff 2024"};
  o.min_font_px = o.max_font_px = 30;
  o.min_lines = o.max_lines = 4;
  const SynthImage s = render_synth_image(o, 3);
  EXPECT_EQ(s.lines.size(), 4u);
  for (const SynthLine& l : s.lines) {
    EXPECT_TRUE(l.text == o.texts[0] || l.text == o.texts[1]) << l.text;
    const double h = cv::norm(l.quad[0] - l.quad[3]);
    EXPECT_GT(h, 20);
    EXPECT_LT(h, 40);
  }
}

TEST(SynthTest, LongTextIsShrunkThenCut) {
  SynthOptions o = flat_options();
  o.width = 200;
  o.texts = {"这是一段非常非常非常非常非常长的文字，画布根本放不下"};
  const SynthImage s = render_synth_image(o, 5);
  ASSERT_FALSE(s.lines.empty());
  for (const SynthLine& l : s.lines) {
    EXPECT_LT(l.text.size(), o.texts[0].size());
    EXPECT_EQ(o.texts[0].rfind(l.text, 0), 0u) << "a prefix of the text, got " << l.text;
    EXPECT_LE(l.quad[1].x, o.width);
  }
}

TEST(SynthTest, RejectsBadOptions) {
  SynthOptions o;
  o.width = 10;
  EXPECT_THROW(render_synth_image(o, 0), ValueError);
  o = {};
  o.min_font_px = 50;
  o.max_font_px = 20;
  EXPECT_THROW(render_synth_image(o, 0), ValueError);
  o = {};
  o.upside_down_prob = 1.5f;
  EXPECT_THROW(render_synth_image(o, 0), ValueError);
  o = {};
  o.texts = {"tab\there"};
  EXPECT_THROW(render_synth_image(o, 0), ValueError);
  EXPECT_THROW(write_synth_dataset("/tmp/unused", -1, 0), ValueError);
}

TEST(FontTest, MissingOverrideFileIsAnIoError) {
  ScopedEnv env("SKIFF_FONT", "/nonexistent/skiff/NoSuchFont.ttc");
  try {
    find_cjk_font();
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/skiff/NoSuchFont.ttc"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("SKIFF_FONT"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Font(FontSource{"/nonexistent/skiff/NoSuchFont.ttc", 0}), IoError);
}

TEST(FontTest, NotAFontIsAnIoError) {
  TempDir dir("notafont");
  fs::create_directories(dir.path);
  io::write_file_atomic(dir.path / "bogus.ttf", "this is not a font");
  EXPECT_THROW(Font(FontSource{(dir.path / "bogus.ttf").string(), 0}), IoError);
}

TEST(FontTest, FindsNotoSimplifiedChineseAndRendersIt) {
  const FontSource src = find_cjk_font();
  EXPECT_TRUE(fs::is_regular_file(src.path)) << src.path;
  const Font& font = Font::cjk();
  const cv::Mat m = font.render_mask("汉字 OCR 123", 32);
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m.type(), CV_8UC1);
  EXPECT_GT(m.cols, 4 * m.rows / 2);
  EXPECT_LT(m.rows, 40);
  EXPECT_TRUE(font.render_mask("   ", 32).empty());
  EXPECT_EQ(font.measure("汉字", 32), font.render_mask("汉字", 32).size());
  // The ink box is tight: every border row/column holds some ink.
  EXPECT_GT(cv::countNonZero(m.row(0)), 0);
  EXPECT_GT(cv::countNonZero(m.col(m.cols - 1)), 0);
  EXPECT_THROW(font.render_mask("x", 2), ValueError);
}

TEST(FontTest, RendersConcurrently) {
  // One shared Font used from several threads gives the same pixels as serial use.
  const SynthImage expected = render_synth_image({}, 99);
  std::vector<cv::Mat> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&got, t] { got[t] = render_synth_image({}, 99).image; });
  for (std::thread& th : threads) th.join();
  for (const cv::Mat& m : got) EXPECT_EQ(cv::norm(m, expected.image, cv::NORM_INF), 0.0);
}

TEST(FontTest, SplitUtf8) {
  EXPECT_EQ(split_utf8("a汉¥1"), (std::vector<std::string>{"a", "汉", "¥", "1"}));
  EXPECT_EQ(split_utf8("\xff"
                       "b"),
            (std::vector<std::string>{"\xff", "b"}));
}

TEST(SynthDatasetTest, WritesPaddleOcrLabelsAtomically) {
  TempDir dir("dataset");
  SynthOptions o;
  o.width = 320;
  o.height = 240;
  o.upside_down_prob = 0.5f;
  write_synth_dataset(dir.path.string(), 3, 42, o);

  const auto det = read_lines(dir.path / "det_gt.txt");
  ASSERT_EQ(det.size(), 3u);
  size_t n_boxes = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t tab = det[i].find('\t');
    ASSERT_NE(tab, std::string::npos);
    const std::string rel = det[i].substr(0, tab);
    EXPECT_EQ(rel, fmt::format("img_{:05d}.jpg", i));
    const cv::Mat img = data::read_image_file((dir.path / rel).string());
    ASSERT_FALSE(img.empty()) << rel;
    const auto labels = nlohmann::json::parse(det[i].substr(tab + 1));
    ASSERT_TRUE(labels.is_array());
    ASSERT_FALSE(labels.empty());
    for (const auto& l : labels) {
      ASSERT_TRUE(l.at("transcription").is_string());
      EXPECT_FALSE(l["transcription"].get<std::string>().empty());
      const auto& pts = l.at("points");
      ASSERT_EQ(pts.size(), 4u);
      for (const auto& p : pts) {
        ASSERT_EQ(p.size(), 2u);
        ASSERT_TRUE(p[0].is_number_integer());
        EXPECT_GE(p[0].get<int>(), 0);
        EXPECT_LT(p[0].get<int>(), img.cols);
        EXPECT_GE(p[1].get<int>(), 0);
        EXPECT_LT(p[1].get<int>(), img.rows);
      }
    }
    n_boxes += labels.size();
  }

  const auto rec = read_lines(dir.path / "rec_gt.txt");
  EXPECT_EQ(rec.size(), n_boxes);
  for (const std::string& line : rec) {
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos);
    EXPECT_EQ(line.rfind("crops/", 0), 0u);
    const cv::Mat crop = data::read_image_file((dir.path / line.substr(0, tab)).string());
    ASSERT_FALSE(crop.empty()) << line;
    EXPECT_GT(crop.cols, 0);
    EXPECT_FALSE(line.substr(tab + 1).empty());
  }

  for (const auto& e : fs::recursive_directory_iterator(dir.path))
    EXPECT_FALSE(io::is_atomic_temp_name(e.path().filename().string())) << e.path();

  // Same seed, same labels; the image files are byte-identical too.
  TempDir again("dataset2");
  write_synth_dataset(again.path.string(), 3, 42, o);
  EXPECT_EQ(io::read_file(again.path / "det_gt.txt"), io::read_file(dir.path / "det_gt.txt"));
  EXPECT_EQ(io::read_file(again.path / "img_00002.jpg"), io::read_file(dir.path / "img_00002.jpg"));
}

// The committed sample image and its expected texts. Regenerate both with
//   SKIFF_REGENERATE_SAMPLE=1 skiff_ocr_test --gtest_filter='SampleReceiptTest.*'
TEST(SampleReceiptTest, MatchesCommittedSample) {
  const fs::path dir = fs::path(SKIFF_SOURCE_DIR) / "assets" / "samples";
  const SynthImage s = render_sample_receipt();
  if (const char* regen = std::getenv("SKIFF_REGENERATE_SAMPLE");
      regen && std::string(regen) == "1") {
    const std::vector<uint8_t> png = data::encode_image(s.image, ".png", 95, 9);
    fs::create_directories(dir);
    io::write_file_atomic(dir / "ocr_sample.png", std::string(png.begin(), png.end()));
    std::string txt;
    for (const SynthLine& l : s.lines) txt += l.text + "\n";
    io::write_file_atomic(dir / "ocr_sample.txt", txt);
  }
  EXPECT_EQ(s.image.cols, 800);
  const cv::Mat committed = data::read_image_file((dir / "ocr_sample.png").string());
  ASSERT_FALSE(committed.empty()) << "missing " << (dir / "ocr_sample.png");
  ASSERT_EQ(committed.size(), s.image.size());
  // Same font file: identical. Another FreeType build may move a few edge
  // pixels, so only a small average difference is required.
  EXPECT_LT(cv::norm(committed, s.image, cv::NORM_L1) / s.image.total(), 2.0);

  const auto expected = read_lines(dir / "ocr_sample.txt");
  ASSERT_EQ(expected.size(), s.lines.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(s.lines[i].text, expected[i]);
  const std::vector<std::string> known = {
      "鲜果时光便利店",         "FRESH TIME MART",           "地址：上海市浦东新区张江路188号",
      "电话：021-5888 1234",    "商品 数量 单价 金额",       "有机牛奶 1 12.80 12.80",
      "全麦面包 2 15.00 30.00", "新鲜草莓 1 29.90 29.90",    "精品咖啡 2 18.50 37.00",
      "合计：109.70元",         "日期：2024-05-18 14:32:07", "Thank you for shopping with us!",
      "谢谢惠顾，欢迎再次光临"};
  EXPECT_EQ(expected, known);
}

TEST(SampleReceiptTest, LinesAreInReadingOrderAndCoverTheInk) {
  const SynthImage s = render_sample_receipt();
  for (size_t i = 1; i < s.lines.size(); ++i)
    EXPECT_GT(s.lines[i].quad[0].y, s.lines[i - 1].quad[3].y);
  const cv::Mat ink = ink_mask(s.image);
  EXPECT_EQ(cv::countNonZero(ink & ~quads_mask(s.image.size(), s.lines)), 0);
  for (const SynthLine& l : s.lines) EXPECT_FALSE(l.upside_down);
}

}  // namespace
}  // namespace skiff::ocr
