#include "suites/ocr/train/rec_data.h"

#include <filesystem>
#include <fstream>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/preprocess.h"
#include "suites/ocr/train/label_file.h"

namespace skiff::ocr {

namespace fs = std::filesystem;

std::vector<RecSample> read_rec_labels(const std::vector<std::string>& label_files, const std::string& data_dir) {
  std::vector<RecSample> out;
  read_label_lines(label_files, data_dir, "image_path<TAB>text",
                   [&](const LabelLine& l) { out.push_back({l.image, l.label}); });
  return out;
}

std::vector<std::string> utf8_chars(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    auto c = uint8_t(text[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    n = std::min(n, text.size() - i);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

CharEncoder::CharEncoder(const Charset& charset) {
  for (size_t i = 1; i < charset.size(); ++i) index_.emplace(charset.at(i), int64_t(i));  // first entry wins
}

std::vector<int64_t> CharEncoder::encode(const std::string& text, int* dropped) const {
  std::vector<int64_t> out;
  for (const auto& ch : utf8_chars(text)) {
    auto it = index_.find(ch);
    if (it != index_.end())
      out.push_back(it->second);
    else if (dropped)
      ++*dropped;
  }
  return out;
}

RecDataset::RecDataset(std::vector<RecSample> samples, const Charset& charset, RecDataOptions options)
    : options_(options) {
  SKIFF_CHECK(options_.height >= 8 && options_.width >= options_.height,
              "recognition images need height >= 8 and width >= height, got {}x{}", options_.height, options_.width);
  SKIFF_CHECK(options_.max_text_length >= 1, "max_text_length must be >= 1, got {}", options_.max_text_length);
  CharEncoder encoder(charset);
  for (auto& s : samples) {
    auto label = encoder.encode(s.text);
    if (label.empty() || int(label.size()) > options_.max_text_length) {
      ++skipped_;
      continue;
    }
    if (!fs::exists(s.image)) throw IoError(fmt::format("{}: image listed in the labels does not exist", s.image));
    samples_.push_back(std::move(s));
    labels_.push_back(std::move(label));
  }
  SKIFF_CHECK(!samples_.empty(), "no usable text line: all {} were empty after dropping characters missing from the "
              "dictionary, or longer than max_text_length {}", skipped_, options_.max_text_length);
}

data::Example RecDataset::get(int64_t index) const {
  Generator gen{uint64_t(index)};
  return get(index, gen);
}

namespace {

// PaddleOCR RecAug-like distortions of a BGR line image, each with probability p.
cv::Mat augment(const cv::Mat& src, Generator& gen, double p) {
  cv::Mat img = src.clone();
  auto chance = [&] { return gen.uniform() < p; };
  if (chance() && img.rows > 8) {  // crop a few rows off the top and bottom
    int top = int(gen.uniform() * img.rows * 0.08), bottom = int(gen.uniform() * img.rows * 0.08);
    img = img.rowRange(top, img.rows - bottom).clone();
  }
  if (chance()) {
    int k = gen.uniform() < 0.5 ? 3 : 5;
    cv::GaussianBlur(img, img, {k, k}, 0);
  }
  if (chance()) {
    double alpha = 0.7 + 0.6 * gen.uniform(), beta = -30 + 60 * gen.uniform();
    img.convertTo(img, -1, alpha, beta);
  }
  if (chance()) {
    cv::Mat noise(img.size(), CV_32FC3);
    double sigma = 12 * gen.uniform();
    for (int y = 0; y < noise.rows; ++y) {
      auto* row = noise.ptr<float>(y);
      for (int x = 0; x < noise.cols * 3; ++x) row[x] = float(sigma * gen.normal());
    }
    cv::Mat f;
    img.convertTo(f, CV_32FC3);
    f += noise;
    f.convertTo(img, CV_8UC3);
  }
  return img;
}

}  // namespace

data::Example RecDataset::get(int64_t index, Generator& gen) const {
  SKIFF_CHECK_INDEX(index >= 0 && index < size(), "sample {} out of range [0, {})", index, size());
  cv::Mat image = to_bgr8(read_image(samples_[size_t(index)].image));
  if (options_.augment) image = augment(image, gen, options_.augment_prob);

  Tensor x = empty({3, options_.height, options_.width}, DType::Float32);
  RecPreprocessParams p{.height = options_.height, .base_width = options_.width, .fixed_width = options_.width};
  std::span<float> out(x.data<float>(), size_t(x.numel()));
  preprocess_rec_batch(std::span<const cv::Mat>(&image, 1), out, p);

  const auto& label = labels_[size_t(index)];
  Tensor y = zeros({options_.max_text_length}, DType::Int64);
  std::copy(label.begin(), label.end(), y.data<int64_t>());
  return {{"image", x}, {"label", y}, {"length", full({}, double(label.size()), DType::Int64)}};
}

}  // namespace skiff::ocr
