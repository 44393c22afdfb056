// skiff_ocr_word_spaces: measures the word-space restoration of `skiff ocr`
// (ocr::WordSpaceParams, suites/ocr/ctc_decode.h) on rendered images with known text.
//
// Renders COUNT images from the lines of TEXTS (ocr::render_synth_image with seeds
// SEED, SEED+1, ...: rotation, upside-down lines, noise, coloured backgrounds), runs the
// whole pipeline on each, matches every ground-truth line to the read line whose box
// holds its centre, takes that line's CTC path (Pipeline::align_lines on the same crop)
// and decodes it twice: plain greedy (PaddleOCR's text, "before") and with word spaces
// restored ("after"). Character accuracy = 1 - edit distance / length, in code points,
// spaces counted; reported over every line and over the lines whose text is right once
// spaces are removed (there only the spaces can be wrong).
//
//   skiff_ocr_word_spaces --texts FILE [--seed S] [--count N] [--space_prob P] [--weak_prob W]
//                         [--pitch_ratio R] [--gap_steps G] [--sweep] [--show]
//   skiff_ocr_word_spaces --explain IMAGE
// --sweep prints the accuracy of a grid of parameters instead (tuning); --show prints
// every line whose spaces are wrong. `--explain IMAGE` prints, for each line read in
// IMAGE, the evidence at each gap between two characters (timesteps, pitch, space
// probability) instead. bench/ocr_word_spaces.sh runs the tuning and the
// held-out sets.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <opencv2/imgproc.hpp>

#include "suites/ocr/crop.h"
#include "suites/ocr/font.h"
#include "suites/ocr/orientation.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/synth.h"

namespace {

using namespace skiff::ocr;

struct Line {
  std::string gt;
  std::optional<CtcAlignment> path;  // none when no read line matches
};

std::vector<std::string> code_points(const std::string& s) { return split_utf8(s); }

std::string without_spaces(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
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

// The read line whose box centre lies inside the expected quad (the closest centre otherwise),
// as tests/suites/ocr/pipeline_test.cpp matches them.
int match_line(const OcrResult& r, const std::array<cv::Point2f, 4>& quad) {
  std::vector<cv::Point2f> poly(quad.begin(), quad.end());
  const cv::Point2f centre = (quad[0] + quad[2]) * 0.5f;
  int best = -1;
  double best_d = 1e30;
  for (size_t i = 0; i < r.lines.size(); ++i) {
    const cv::Point2f c = (r.lines[i].quad.pts[0] + r.lines[i].quad.pts[2]) * 0.5f;
    double d = cv::norm(c - centre);
    if (cv::pointPolygonTest(poly, c, false) >= 0) d = 0;
    if (d < best_d) best_d = d, best = int(i);
  }
  return best_d < 40 ? best : -1;
}

struct Score {
  size_t lines = 0, exact = 0, errors = 0, total = 0;
  double accuracy() const { return total ? 1.0 - double(errors) / double(total) : 1.0; }
  void add(const std::string& got, const std::string& gt) {
    const auto want = code_points(gt);
    const size_t e = std::min(edit_distance(code_points(got), want), want.size());
    ++lines;
    exact += e == 0;
    errors += e;
    total += want.size();
  }
};

struct Report {
  Score all_before, all_after, right_before, right_after;
  size_t spaces_right = 0, spaces_wrong = 0, spaces_missed = 0;  // restored spaces on the "right" lines
};

// Line pitch as ctc_text() computes it (median distance between consecutive ASCII characters).
float line_pitch(const CtcAlignment& a, const Charset& cs) {
  std::vector<int> d;
  auto ascii = [&](const CtcChar& c) {
    const std::string& s = cs.at(size_t(c.cls));
    return s.size() == 1 && s[0] > ' ' && s[0] <= '~';
  };
  for (size_t i = 1; i < a.chars.size(); ++i)
    if (ascii(a.chars[i - 1]) && ascii(a.chars[i])) d.push_back(a.chars[i].first - a.chars[i - 1].first);
  if (d.empty()) return 0;
  std::sort(d.begin(), d.end());
  const size_t m = d.size() / 2;
  return d.size() % 2 ? float(d[m]) : 0.5f * float(d[m - 1] + d[m]);
}

// One row per gap between two characters of the lines whose spaceless text is right:
// features and whether the ground truth has a space there (for tuning outside this tool).
void dump_gaps(const std::vector<Line>& lines, const Charset& cs, const std::string& file) {
  std::ofstream out(file);
  out << "left\tright\tdist\tblanks\tpitch\tspace_prob\twant\thad\tline\n";
  for (const auto& l : lines) {
    if (!l.path || without_spaces(ctc_text(*l.path, cs).text) != without_spaces(l.gt)) continue;
    const CtcAlignment& a = *l.path;
    const float pitch = line_pitch(a, cs);
    const auto gt = code_points(l.gt);
    size_t g = 0;  // position in gt
    for (size_t k = 0; k < a.chars.size(); ++k) {
      const std::string& c = cs.at(size_t(a.chars[k].cls));
      bool want = false;
      while (g < gt.size() && gt[g] == " ") ++g, want = true;
      if (c == " ") continue;  // the model's own space
      ++g;
      if (k == 0) continue;
      const CtcChar &p = a.chars[k - 1], &q = a.chars[k];
      float sp = 0;
      for (int t = p.last + 1; t < q.first && !a.space_probs.empty(); ++t) sp = std::max(sp, a.space_probs[size_t(t)]);
      const bool had = cs.at(size_t(p.cls)) == " ";
      const CtcChar& pp = had && k >= 2 ? a.chars[k - 2] : p;
      out << cs.at(size_t(pp.cls)) << '\t' << c << '\t' << q.first - pp.first << '\t' << q.first - p.last - 1 << '\t'
          << pitch << '\t' << sp << '\t' << want << '\t' << had << '\t' << l.gt << '\n';
    }
  }
}

Report evaluate(const std::vector<Line>& lines, const Charset& cs, const WordSpaceParams& params, bool show) {
  Report rep;
  for (const auto& l : lines) {
    const std::string before = l.path ? ctc_text(*l.path, cs).text : "";
    const std::string after = l.path ? ctc_text(*l.path, cs, params).text : "";
    rep.all_before.add(before, l.gt);
    rep.all_after.add(after, l.gt);
    if (!l.path || without_spaces(before) != without_spaces(l.gt)) continue;
    rep.right_before.add(before, l.gt);
    rep.right_after.add(after, l.gt);
    // Same characters: compare, per gap between two ASCII characters (where spaces are
    // restored), space or not. Spaces next to CJK characters are never restored.
    auto gaps = [](const std::string& s) {
      std::vector<std::pair<std::string, bool>> g;  // character, space after it
      for (const auto& c : code_points(s))
        if (c == " ") {
          if (!g.empty()) g.back().second = true;
        } else {
          g.push_back({c, false});
        }
      return g;
    };
    auto ascii = [](const std::string& c) { return c.size() == 1 && c[0] > ' ' && c[0] <= '~'; };
    const auto want = gaps(l.gt), got = gaps(after), had = gaps(before);
    for (size_t i = 0; i + 1 < want.size() && i + 1 < got.size(); ++i) {
      if (had[i].second || !ascii(want[i].first) || !ascii(want[i + 1].first)) continue;
      if (got[i].second && want[i].second) ++rep.spaces_right;
      if (got[i].second && !want[i].second) ++rep.spaces_wrong;
      if (!got[i].second && want[i].second) ++rep.spaces_missed;
    }
    if (show && after != l.gt) fmt::print("  want '{}'\n   got '{}' (greedy '{}')\n", l.gt, after, before);
  }
  return rep;
}

void print_report(const Report& r) {
  fmt::print("all lines:              {:4} lines, character accuracy {:.4f} -> {:.4f}, exact {} -> {}\n",
             r.all_before.lines, r.all_before.accuracy(), r.all_after.accuracy(), r.all_before.exact,
             r.all_after.exact);
  fmt::print("spaceless text right:   {:4} lines, character accuracy {:.4f} -> {:.4f}, exact {} -> {}\n",
             r.right_before.lines, r.right_before.accuracy(), r.right_after.accuracy(), r.right_before.exact,
             r.right_after.exact);
  fmt::print("restored spaces between ASCII characters on those lines: {} right, {} wrong, {} still missing\n",
             r.spaces_right, r.spaces_wrong, r.spaces_missed);
}

// Per line of `image`: greedy text, then per pair of neighbouring characters the distance
// between their first steps, the blank steps between them and the space class's largest
// probability on those steps.
void explain(const Pipeline& pipeline, const std::string& image_path) {
  const cv::Mat image = read_image(image_path);
  const OcrResult r = pipeline.run(image);
  std::vector<cv::Mat> crops;
  for (const auto& l : r.lines) {
    cv::Mat crop = crop_text_region(image, l.quad);
    crops.push_back(l.angle == 180 ? rotate_180(crop) : crop);
  }
  const auto paths = pipeline.align_lines(crops);
  const Charset& cs = pipeline.charset();
  for (size_t i = 0; i < paths.size(); ++i) {
    const CtcAlignment& a = paths[i];
    fmt::print("'{}' -> '{}' ({} steps)\n", ctc_text(a, cs).text, r.lines[i].text, a.timesteps);
    for (size_t k = 1; k < a.chars.size(); ++k) {
      const CtcChar &p = a.chars[k - 1], &c = a.chars[k];
      float sp = 0;
      for (int t = p.last + 1; t < c.first && !a.space_probs.empty(); ++t) sp = std::max(sp, a.space_probs[size_t(t)]);
      fmt::print("  {}|{}  dist {:2}  blanks {:2}  space {:.4f}\n", cs.at(size_t(p.cls)), cs.at(size_t(c.cls)),
                 c.first - p.first, c.first - p.last - 1, sp);
    }
  }
}

void sweep(const std::vector<Line>& lines, const Charset& cs) {
  struct Row {
    WordSpaceParams p;
    Report r;
  };
  std::vector<Row> rows;
  const float off = 2.0f;  // a probability that switches a rule off
  for (float strong : {0.003f, 0.005f, 0.008f, 0.01f, 0.015f, 0.02f, 0.03f, 0.05f, 0.1f, off})
    for (float weak : {0.0003f, 0.0005f, 0.001f, 0.002f, off})
      for (float ratio : {1.4f, 1.5f, 1.6f, 1.7f, 1.8f, 2.0f, 2.5f})
        for (int steps : {3}) {
          WordSpaceParams p{strong, weak, ratio, steps};
          rows.push_back({p, evaluate(lines, cs, p, false)});
        }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.r.right_after.accuracy() > b.r.right_after.accuracy();
  });
  fmt::print("space_prob weak_prob pitch_ratio gap_steps  acc(spaceless right)  acc(all)  right wrong missing\n");
  auto prob = [&](float p) { return p >= off ? std::string("off") : fmt::format("{:g}", p); };
  for (const auto& row : rows)
    fmt::print("{:10} {:9} {:11g} {:9}  {:20.4f}  {:8.4f}  {:5} {:5} {:7}\n", prob(row.p.min_space_prob),
               prob(row.p.weak_space_prob), row.p.min_pitch_ratio, row.p.min_gap_steps, row.r.right_after.accuracy(),
               row.r.all_after.accuracy(), row.r.spaces_right, row.r.spaces_wrong, row.r.spaces_missed);
}

}  // namespace

int main(int argc, char** argv) {
  std::string texts_file, explain_image, dump_file;
  uint64_t seed = 1;
  int count = 40;
  bool do_sweep = false, show = false;
  WordSpaceParams params;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--texts" && has_value) texts_file = argv[++i];
    else if (a == "--seed" && has_value) seed = std::stoull(argv[++i]);
    else if (a == "--count" && has_value) count = std::stoi(argv[++i]);
    else if (a == "--space_prob" && has_value) params.min_space_prob = std::stof(argv[++i]);
    else if (a == "--weak_prob" && has_value) params.weak_space_prob = std::stof(argv[++i]);
    else if (a == "--pitch_ratio" && has_value) params.min_pitch_ratio = std::stof(argv[++i]);
    else if (a == "--gap_steps" && has_value) params.min_gap_steps = std::stoi(argv[++i]);
    else if (a == "--explain" && has_value) explain_image = argv[++i];
    else if (a == "--sweep") do_sweep = true;
    else if (a == "--dump" && has_value) dump_file = argv[++i];
    else if (a == "--show") show = true;
    else {
      fmt::print(stderr, "usage: skiff_ocr_word_spaces --texts FILE [--seed S] [--count N] [--space_prob P] "
                         "[--weak_prob W] [--pitch_ratio R] [--gap_steps G] [--sweep] [--show] | --explain IMAGE\n");
      return 2;
    }
  }
  try {
    if (!explain_image.empty()) {
      PipelineConfig config;
      config.word_spaces = params;
      explain(Pipeline(config), explain_image);
      return 0;
    }
    SynthOptions synth;
    std::ifstream in(texts_file);
    if (!in) throw skiff::IoError(fmt::format("{}: cannot open the texts file", texts_file));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) synth.texts.push_back(line);

    PipelineConfig config;
    config.word_spaces = params;
    Pipeline pipeline(config);
    std::vector<Line> lines;
    size_t disagreements = 0;
    for (int k = 0; k < count; ++k) {
      const SynthImage s = render_synth_image(synth, seed + uint64_t(k));
      const OcrResult r = pipeline.run(s.image);
      // The crops run() read, turned as the classifier turned them.
      std::vector<cv::Mat> crops;
      for (const auto& l : r.lines) {
        cv::Mat crop = crop_text_region(s.image, l.quad);
        crops.push_back(l.angle == 180 ? rotate_180(crop) : crop);
      }
      const std::vector<CtcAlignment> paths = pipeline.align_lines(crops);
      for (size_t i = 0; i < paths.size(); ++i)
        disagreements += ctc_text(paths[i], pipeline.charset(), params).text != r.lines[i].text;
      for (const auto& gt : s.lines) {
        const int m = match_line(r, gt.quad);
        lines.push_back({gt.text, m >= 0 ? std::optional<CtcAlignment>(paths[size_t(m)]) : std::nullopt});
      }
    }
    fmt::print("{}: {} images from seed {}, {} lines\n", texts_file, count, seed, lines.size());
    if (disagreements)  // the re-read crops must decode as run() decoded them
      fmt::print("warning: {} lines decode differently from Pipeline::run\n", disagreements);
    if (!dump_file.empty()) dump_gaps(lines, pipeline.charset(), dump_file);
    if (do_sweep) {
      sweep(lines, pipeline.charset());
    } else {
      fmt::print("params: space_prob {:g}, weak_prob {:g}, pitch_ratio {:g}, gap_steps {}\n", params.min_space_prob,
                 params.weak_space_prob, params.min_pitch_ratio, params.min_gap_steps);
      print_report(evaluate(lines, pipeline.charset(), params, show));
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "skiff_ocr_word_spaces: {}\n", e.what());
    return 1;
  }
  return 0;
}
