// The compositional image-caption set (synth.h).
#include "suites/multimodal/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <numbers>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/core/splitmix.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"

namespace skiff::multimodal {
namespace {

namespace fs = std::filesystem;

struct Rand {
  Generator g;
  explicit Rand(uint64_t seed) : g(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * g.uniform(); }
  int below(int n) { return int(g.next_u64() % uint64_t(n)); }
  bool chance(double p) { return g.uniform() < p; }
};

// BGR centres of the colour names; each object draws its own shade around one.
const cv::Vec3d kColorBgr[] = {{40, 40, 215}, {45, 175, 45}, {215, 75, 35}, {40, 215, 225}, {165, 45, 150}, {25, 135, 245}};

const std::vector<std::string>& relation_words() {
  static const std::vector<std::string> r{"left of", "right of", "above", "below"};
  return r;
}

std::string plural(const std::string& shape) { return shape == "cross" ? "crosses" : shape + "s"; }
/// "a" or "an" and the phrase ("an orange star").
std::string indefinite(const std::string& phrase) {
  return (std::string("aeiou").find(phrase[0]) != std::string::npos ? "an " : "a ") + phrase;
}
std::string number_word(int n) { return n == 2 ? "two" : "three"; }

/// Background: flat, gradient or noise, in greys with a faint tint (never an object colour).
cv::Mat background(Rand& r, int size) {
  auto tone = [&] {
    const double g = r.uniform(85, 205);
    return cv::Vec3d(g + r.uniform(-12, 12), g + r.uniform(-12, 12), g + r.uniform(-12, 12));
  };
  cv::Mat img(size, size, CV_8UC3);
  const int kind = r.below(3);
  const cv::Vec3d a = tone(), b = tone();
  const bool vertical = r.chance(0.5);
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      const double t = kind == 1 ? double(vertical ? y : x) / (size - 1) : 0.0;
      cv::Vec3d c = a * (1 - t) + b * t;
      if (kind == 2) c += cv::Vec3d::all(r.uniform(-14, 14));
      img.at<cv::Vec3b>(y, x) = cv::Vec3b(cv::saturate_cast<uchar>(c[0]), cv::saturate_cast<uchar>(c[1]),
                                          cv::saturate_cast<uchar>(c[2]));
    }
  return img;
}

cv::Scalar shade(Rand& r, int color) {
  const cv::Vec3d& c = kColorBgr[color];
  return cv::Scalar(std::clamp(c[0] + r.uniform(-22, 22), 0.0, 255.0), std::clamp(c[1] + r.uniform(-22, 22), 0.0, 255.0),
                    std::clamp(c[2] + r.uniform(-22, 22), 0.0, 255.0));
}

/// Shape `shape` of radius `radius` (half its extent) centred at (cx, cy), filled with `fill`.
void draw_shape(cv::Mat& img, int shape, double cx, double cy, double radius, double tilt, const cv::Scalar& fill) {
  std::vector<cv::Point> pts;
  auto polar = [&](double rad, double angle) {
    pts.emplace_back(int(std::lround(cx + rad * std::cos(angle + tilt))), int(std::lround(cy + rad * std::sin(angle + tilt))));
  };
  const double pi = std::numbers::pi;
  switch (shape) {
    case 0:  // circle
      cv::circle(img, {int(std::lround(cx)), int(std::lround(cy))}, int(std::lround(radius)), fill, cv::FILLED, cv::LINE_8);
      return;
    case 1:  // square
      for (int k = 0; k < 4; ++k) polar(radius * 1.2, pi / 4 + k * pi / 2);
      break;
    case 2:  // triangle, pointing up
      for (int k = 0; k < 3; ++k) polar(radius * 1.15, -pi / 2 + k * 2 * pi / 3);
      break;
    case 3:  // five-pointed star
      for (int k = 0; k < 10; ++k) polar(k % 2 ? radius * 0.45 : radius * 1.1, -pi / 2 + k * pi / 5);
      break;
    case 4: {  // cross (a plus sign)
      const double a = radius, w = radius * 0.33;
      const double xy[12][2] = {{-w, -a}, {w, -a}, {w, -w}, {a, -w}, {a, w}, {w, w}, {w, a}, {-w, a}, {-w, w}, {-a, w}, {-a, -w}, {-w, -w}};
      for (const auto& p : xy)
        pts.emplace_back(int(std::lround(cx + p[0] * std::cos(tilt) - p[1] * std::sin(tilt))),
                         int(std::lround(cy + p[0] * std::sin(tilt) + p[1] * std::cos(tilt))));
      break;
    }
    default:  // diamond: a rhombus taller than wide
      pts.emplace_back(int(std::lround(cx)), int(std::lround(cy - radius * 1.1)));
      pts.emplace_back(int(std::lround(cx + radius * 0.7)), int(std::lround(cy)));
      pts.emplace_back(int(std::lround(cx)), int(std::lround(cy + radius * 1.1)));
      pts.emplace_back(int(std::lround(cx - radius * 0.7)), int(std::lround(cy)));
      break;
  }
  cv::fillPoly(img, std::vector<std::vector<cv::Point>>{pts}, fill, cv::LINE_8);
}

/// A colour-shape pair allowed in `split`.
std::pair<int, int> pick_pair(Rand& r, SynthSplit split) {
  const int shapes = int(synth_shapes().size()), colors = int(synth_colors().size());
  for (;;) {
    const int s = r.below(shapes), c = r.below(colors);
    if (held_out_pair(s, c) == (split == SynthSplit::Heldout)) return {s, c};
  }
}

std::string object_name(int shape, int color) { return synth_colors()[size_t(color)] + " " + synth_shapes()[size_t(shape)]; }

SynthScene single(Rand& r, SynthSplit split, int size) {
  SynthScene s{background(r, size), {}, "", "single"};
  const auto [shape, color] = pick_pair(r, split);
  const bool large = r.chance(0.5);
  const double radius = size * (large ? r.uniform(0.27, 0.33) : r.uniform(0.13, 0.17));
  const double margin = radius * 1.25 + 1;
  draw_shape(s.image, shape, r.uniform(margin, size - margin), r.uniform(margin, size - margin), radius,
             r.uniform(-0.2, 0.2), shade(r, color));
  const std::string name = object_name(shape, color);
  s.label = name;
  s.captions = {fmt::format("a {} {}", large ? "large" : "small", name), indefinite(name), "one " + name};
  return s;
}

SynthScene count(Rand& r, SynthSplit split, int size) {
  SynthScene s{background(r, size), {}, "", "count"};
  const auto [shape, color] = pick_pair(r, split);
  const int n = 2 + r.below(2);
  // n of the 3 x 3 cells, an object inside each.
  std::vector<int> cells{0, 1, 2, 3, 4, 5, 6, 7, 8};
  for (int i = 0; i < n; ++i) std::swap(cells[size_t(i)], cells[size_t(i + r.below(9 - i))]);
  const double cell = size / 3.0, radius = cell * r.uniform(0.3, 0.36);
  for (int i = 0; i < n; ++i) {
    const int c = cells[size_t(i)];
    const double cx = (c % 3 + 0.5) * cell + r.uniform(-0.08, 0.08) * cell;
    const double cy = (c / 3 + 0.5) * cell + r.uniform(-0.08, 0.08) * cell;
    draw_shape(s.image, shape, cx, cy, radius, r.uniform(-0.2, 0.2), shade(r, color));
  }
  const std::string things = synth_colors()[size_t(color)] + " " + plural(synth_shapes()[size_t(shape)]);
  s.captions = {number_word(n) + " " + things, number_word(n) + " small " + things};
  return s;
}

SynthScene relation(Rand& r, SynthSplit split, int size) {
  SynthScene s{background(r, size), {}, "", "relation"};
  auto [s1, c1] = pick_pair(r, split);
  auto [s2, c2] = pick_pair(r, split == SynthSplit::Heldout ? SynthSplit::Train : split);
  while (s2 == s1) std::tie(s2, c2) = pick_pair(r, split == SynthSplit::Heldout ? SynthSplit::Train : split);
  const int rel = r.below(4);  // the first object is <rel> the second
  const double radius = size * r.uniform(0.12, 0.15);
  // Along the relation's axis the first object sits in one third, the second in the other.
  const double near = r.uniform(0.2, 0.3) * size, far = r.uniform(0.7, 0.8) * size;
  const double a1 = r.uniform(0.28, 0.72) * size, a2 = r.uniform(0.28, 0.72) * size;
  double x1, y1, x2, y2;
  if (rel < 2) {  // left of / right of
    x1 = rel == 0 ? near : far, x2 = rel == 0 ? far : near, y1 = a1, y2 = a2;
  } else {  // above / below
    y1 = rel == 2 ? near : far, y2 = rel == 2 ? far : near, x1 = a1, x2 = a2;
  }
  draw_shape(s.image, s1, x1, y1, radius, r.uniform(-0.2, 0.2), shade(r, c1));
  draw_shape(s.image, s2, x2, y2, radius, r.uniform(-0.2, 0.2), shade(r, c2));
  static const int inverse[] = {1, 0, 3, 2};
  const auto& words = relation_words();
  s.captions = {fmt::format("{} {} {}", indefinite(object_name(s1, c1)), words[size_t(rel)], indefinite(object_name(s2, c2))),
                fmt::format("{} {} {}", indefinite(object_name(s2, c2)), words[size_t(inverse[rel])],
                            indefinite(object_name(s1, c1)))};
  return s;
}

SynthScene word(Rand& r, int size) {
  SynthScene s{background(r, size), {}, "", "word"};
  const std::string& w = synth_words()[size_t(r.below(int(synth_words().size())))];
  const int color = r.below(int(synth_colors().size()));
  const int thickness = size >= 96 ? 2 : 1;
  int baseline = 0;
  const cv::Size unit = cv::getTextSize(w, cv::FONT_HERSHEY_SIMPLEX, 1.0, thickness, &baseline);
  const double scale = r.uniform(0.6, 0.85) * size / unit.width;
  const cv::Size text = cv::getTextSize(w, cv::FONT_HERSHEY_SIMPLEX, scale, thickness, &baseline);
  const int x = int(r.uniform(0, std::max(1, size - text.width)));
  const int y = int(r.uniform(text.height + 1, std::max(text.height + 2, size - baseline - 1)));
  cv::putText(s.image, w, {x, y}, cv::FONT_HERSHEY_SIMPLEX, scale, shade(r, color), thickness, cv::LINE_8);
  s.captions = {fmt::format("the word {} written in {}", w, synth_colors()[size_t(color)]),
                fmt::format("{} written in {} letters", w, synth_colors()[size_t(color)])};
  return s;
}

const char* split_name(SynthSplit s) { return s == SynthSplit::Train ? "train" : s == SynthSplit::Val ? "val" : "heldout"; }

}  // namespace

const std::vector<std::string>& synth_shapes() {
  static const std::vector<std::string> v{"circle", "square", "triangle", "star", "cross", "diamond"};
  return v;
}
const std::vector<std::string>& synth_colors() {
  static const std::vector<std::string> v{"red", "green", "blue", "yellow", "purple", "orange"};
  return v;
}
const std::vector<std::string>& synth_words() {
  static const std::vector<std::string> v{"cat", "dog", "sun", "tree", "car", "fish", "bird", "book"};
  return v;
}

std::vector<std::string> synth_caption_words() {
  std::set<std::string> w{"a",     "an",   "the",  "one",   "two",  "three",   "small",   "large",  "left",
                          "right", "of",   "above", "below", "word",   "written", "in",     "letters",
                          "photo", "picture"};
  for (const std::string& s : synth_shapes()) w.insert(s), w.insert(plural(s));
  for (const std::string& c : synth_colors()) w.insert(c);
  for (const std::string& x : synth_words()) w.insert(x);
  return {w.begin(), w.end()};
}

// One pair per shape and per colour: colour = (shape + 2) mod 6 (circle-blue, square-yellow,
// triangle-purple, star-orange, cross-red, diamond-green).
bool held_out_pair(int shape, int color) { return color == (shape + 2) % int(synth_colors().size()); }

SynthScene render_synth_scene(SynthSplit split, uint64_t seed, int size) {
  SKIFF_CHECK(size >= 32 && size <= 1024, "mm synth: --size: expected 32..1024, got {}", size);
  Rand r(seed);
  if (split == SynthSplit::Heldout) return single(r, split, size);
  const double u = r.uniform(0, 1);
  if (u < 0.45) return single(r, split, size);
  if (u < 0.65) return count(r, split, size);
  if (u < 0.9) return relation(r, split, size);
  return word(r, size);
}

void write_synth_mm_dataset(const std::string& dir, const SynthCounts& counts, uint64_t seed, int size,
                            const std::function<void(int, int)>& progress) {
  SKIFF_CHECK(counts.train >= 0 && counts.val >= 0 && counts.heldout >= 0,
              "mm synth: image counts must be >= 0, got train {}, val {}, heldout {}", counts.train, counts.val,
              counts.heldout);
  SKIFF_CHECK(size >= 32 && size <= 1024, "mm synth: --size: expected 32..1024, got {}", size);
  const fs::path root(dir);
  std::error_code ec;
  fs::create_directories(root / "images", ec);
  SKIFF_CHECK_T(IoError, !ec, "mm synth: cannot create '{}': {}", (root / "images").string(), ec.message());
  // An older synth.json would make a half-rewritten set look complete.
  fs::remove(root / "synth.json", ec);
  SKIFF_CHECK_T(IoError, !ec, "mm synth: cannot remove the old '{}': {}", (root / "synth.json").string(), ec.message());
  const int total = counts.train + counts.val + counts.heldout;
  int done = 0;
  nlohmann::ordered_json summary{{"size", size}, {"seed", seed}};
  for (SynthSplit split : {SynthSplit::Train, SynthSplit::Val, SynthSplit::Heldout}) {
    const int n = split == SynthSplit::Train ? counts.train : split == SynthSplit::Val ? counts.val : counts.heldout;
    nlohmann::ordered_json images = nlohmann::ordered_json::array(), anns = nlohmann::ordered_json::array();
    std::string tsv;
    std::map<std::string, int> kinds;
    for (int i = 0; i < n; ++i) {
      const uint64_t image_seed = splitmix64(seed) ^ splitmix64((uint64_t(split) << 40) + uint64_t(i) + 1);
      const SynthScene s = render_synth_scene(split, image_seed, size);
      const std::string name = fmt::format("{}_{:06d}.png", split_name(split), i);
      const std::vector<uint8_t> png = data::encode_image(s.image, ".png");
      io::write_file_atomic(root / "images" / name, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
      nlohmann::ordered_json entry{{"id", i}, {"file_name", name}, {"width", size}, {"height", size}};
      if (!s.label.empty()) entry["label"] = s.label;
      images.push_back(entry);
      for (const std::string& c : s.captions) {
        anns.push_back({{"id", int64_t(anns.size())}, {"image_id", i}, {"caption", c}});
        tsv += "images/" + name + "\t" + c + "\n";
      }
      ++kinds[s.kind];
      if (progress) progress(++done, total);
    }
    const std::string base = std::string("captions_") + split_name(split);
    io::write_file_atomic(root / (base + ".json"),
                          nlohmann::ordered_json{{"images", images}, {"annotations", anns}}.dump(1) + "\n");
    io::write_file_atomic(root / (base + ".tsv"), tsv);
    summary["splits"][split_name(split)] = {{"images", n}, {"captions", anns.size()}, {"scenes", kinds}};
  }
  nlohmann::ordered_json held = nlohmann::ordered_json::array();
  for (int s = 0; s < int(synth_shapes().size()); ++s)
    for (int c = 0; c < int(synth_colors().size()); ++c)
      if (held_out_pair(s, c)) held.push_back(object_name(s, c));
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (const std::string& w : synth_caption_words()) vocab += w + "\n";
  io::write_file_atomic(root / "vocab.txt", vocab);
  std::string classes;  // every colour-shape pair: the zero-shot candidates
  for (const std::string& c : synth_colors())
    for (const std::string& sh : synth_shapes()) classes += c + " " + sh + "\n";
  io::write_file_atomic(root / "classes.txt", classes);
  summary["shapes"] = synth_shapes();
  summary["colors"] = synth_colors();
  summary["words"] = synth_words();
  summary["held_out_pairs"] = held;
  io::write_file_atomic(root / "synth.json", summary.dump(1) + "\n");
}

}  // namespace skiff::multimodal
