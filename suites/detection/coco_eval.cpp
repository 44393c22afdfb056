#include "suites/detection/coco_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "framework/core/error.h"
#include "framework/io/file.h"

// The definition followed is pycocotools' COCOeval (cocoeval.py: evaluateImg,
// accumulate, summarize) and bbIou in maskApi.c; the header states it in full.

namespace skiff::detection {

namespace {

constexpr int T = kCocoNumIouThresholds;
constexpr int R = kCocoNumRecallThresholds;
constexpr int A = kCocoNumAreaRanges;
constexpr int M = kCocoNumMaxDets;
constexpr int kMaxDetsPerImage = kCocoMaxDets[M - 1];
// COCOeval's areaRng: [0, 1e5^2], [0, 32^2], [32^2, 96^2], [96^2, 1e5^2], bounds included.
constexpr double kAreaRange[A][2] = {{0, 1e10}, {0, 32 * 32}, {32 * 32, 96 * 96}, {96 * 96, 1e10}};

bool outside(double area, int a) { return area < kAreaRange[a][0] || area > kAreaRange[a][1]; }

// numpy.linspace(start, stop, n): start + i * ((stop - start) / (n - 1)), the last one exactly stop.
template <size_t N>
std::array<double, N> linspace(double start, double stop) {
  std::array<double, N> v;
  const double step = (stop - start) / double(N - 1);
  for (size_t i = 0; i + 1 < N; ++i) v[i] = double(i) * step + start;
  v[N - 1] = stop;
  return v;
}

// maskApi.c bbIou: against a crowd the union is the detection's own area.
double box_iou(const BoxXywh& d, const BoxXywh& g, bool crowd) {
  const double w = std::min(d[0] + d[2], g[0] + g[2]) - std::max(d[0], g[0]);
  if (w <= 0) return 0;
  const double h = std::min(d[1] + d[3], g[1] + g[3]) - std::max(d[1], g[1]);
  if (h <= 0) return 0;
  const double inter = w * h;
  const double det_area = d[2] * d[3];
  return inter / (crowd ? det_area : det_area + g[2] * g[3] - inter);
}

// One image, one category, one area range (COCOeval.evaluateImg's result).
struct ImageEval {
  std::vector<double> scores;              // [D], descending
  std::vector<uint8_t> matched, ignored;   // [T, D]
  int64_t num_gt = 0;                      // gt not ignored
};

// evaluateImg for one area range. `gts` in file order, `dets` sorted by score and
// cut to kMaxDetsPerImage; iou[d * G + g] in those orders.
ImageEval evaluate_image(const CocoDataset& gt, const std::vector<int64_t>& gts, const std::vector<Detection>& dets,
                         const std::vector<int64_t>& det_order, const std::vector<double>& iou, int a) {
  const size_t G = gts.size(), D = det_order.size();
  const auto& thresholds = coco_iou_thresholds();
  // Ignored gt go last, keeping file order otherwise.
  std::vector<size_t> gi(G);
  std::vector<uint8_t> gt_ignore(G);
  for (size_t g = 0; g < G; ++g) {
    const CocoAnnotation& ann = gt.annotations[size_t(gts[g])];
    gt_ignore[g] = ann.iscrowd || outside(ann.area, a);
  }
  std::iota(gi.begin(), gi.end(), size_t(0));
  std::stable_sort(gi.begin(), gi.end(), [&](size_t x, size_t y) { return gt_ignore[x] < gt_ignore[y]; });

  ImageEval e;
  e.scores.resize(D);
  e.matched.assign(T * D, 0);
  e.ignored.assign(T * D, 0);
  for (size_t d = 0; d < D; ++d) e.scores[d] = dets[size_t(det_order[d])].score;
  for (size_t g = 0; g < G; ++g) e.num_gt += !gt_ignore[g];

  std::vector<uint8_t> gt_taken(G);
  for (int t = 0; t < T; ++t) {
    std::fill(gt_taken.begin(), gt_taken.end(), 0);
    for (size_t d = 0; d < D; ++d) {
      double best = std::min(thresholds[size_t(t)], 1 - 1e-10);
      int64_t m = -1;  // position in gi
      for (size_t p = 0; p < G; ++p) {
        const size_t g = gi[p];
        const bool crowd = gt.annotations[size_t(gts[g])].iscrowd;
        if (gt_taken[p] && !crowd) continue;
        // Matched to a regular gt already: the ignored ones (all after it) cannot take over.
        if (m > -1 && !gt_ignore[gi[size_t(m)]] && gt_ignore[g]) break;
        if (iou[d * G + g] < best) continue;
        best = iou[d * G + g];
        m = int64_t(p);
      }
      if (m == -1) continue;
      e.matched[size_t(t) * D + d] = 1;
      e.ignored[size_t(t) * D + d] = gt_ignore[gi[size_t(m)]];
      gt_taken[size_t(m)] = 1;
    }
  }
  // Unmatched detections outside the area range are not counted either.
  for (size_t d = 0; d < D; ++d) {
    const BoxXywh& b = dets[size_t(det_order[d])].bbox;
    if (!outside(b[2] * b[3], a)) continue;
    for (int t = 0; t < T; ++t)
      if (!e.matched[size_t(t) * D + d]) e.ignored[size_t(t) * D + d] = 1;
  }
  return e;
}

// COCOeval.accumulate for one category, area range and maxDets: writes
// precision[t, :, k, a, m] and recall[t, k, a, m] (left at -1 when there is no gt).
void accumulate(const std::vector<ImageEval>& images, int64_t k, int a, int m, CocoEvalResult& out) {
  if (images.empty()) return;
  const int64_t K = out.num_categories;
  const size_t max_det = size_t(kCocoMaxDets[size_t(m)]);
  struct Ref {
    double score;
    uint32_t image;
    uint32_t det;
  };
  std::vector<Ref> refs;
  int64_t num_gt = 0;
  for (size_t i = 0; i < images.size(); ++i) {
    const size_t n = std::min(max_det, images[i].scores.size());
    for (size_t d = 0; d < n; ++d) refs.push_back({images[i].scores[d], uint32_t(i), uint32_t(d)});
    num_gt += images[i].num_gt;
  }
  if (num_gt == 0) return;
  std::stable_sort(refs.begin(), refs.end(), [](const Ref& x, const Ref& y) { return x.score > y.score; });

  const size_t nd = refs.size();
  const auto& rec_thresholds = coco_recall_thresholds();
  std::vector<double> rc(nd), pr(nd);
  for (int t = 0; t < T; ++t) {
    double tp = 0, fp = 0;
    for (size_t i = 0; i < nd; ++i) {
      const ImageEval& e = images[refs[i].image];
      const size_t at = size_t(t) * e.scores.size() + refs[i].det;
      if (!e.ignored[at]) (e.matched[at] ? tp : fp) += 1;
      rc[i] = tp / double(num_gt);
      pr[i] = tp / (fp + tp + std::numeric_limits<double>::epsilon());
    }
    out.recall[size_t(((t * K + k) * A + a) * M + m)] = nd ? rc[nd - 1] : 0;
    // The envelope: precision at recall r is the best precision at any recall >= r.
    for (size_t i = nd; i-- > 1;) pr[i - 1] = std::max(pr[i - 1], pr[i]);
    for (int r = 0; r < R; ++r) {
      const size_t i = size_t(std::lower_bound(rc.begin(), rc.end(), rec_thresholds[size_t(r)]) - rc.begin());
      out.precision[size_t((((t * R + r) * K + k) * A + a) * M + m)] = i < nd ? pr[i] : 0;
    }
  }
}

// Mean of the values > -1, or -1 when there is none (COCOeval.summarize).
struct Mean {
  double sum = 0;
  int64_t n = 0;
  void add(double v) {
    if (v > -1) sum += v, ++n;
  }
  double get() const { return n ? sum / double(n) : -1; }
};

// ap: average precision, else recall; t = -1 for all thresholds.
double summarize(const CocoEvalResult& res, bool ap, int t, int a, int m) {
  Mean mean;
  for (int ti = 0; ti < T; ++ti) {
    if (t >= 0 && ti != t) continue;
    for (int64_t k = 0; k < res.num_categories; ++k) {
      if (ap)
        for (int r = 0; r < R; ++r) mean.add(res.precision_at(ti, r, k, a, m));
      else
        mean.add(res.recall_at(ti, k, a, m));
    }
  }
  return mean.get();
}

void check_detection(const CocoDataset& gt, const Detection& d, size_t i) {
  SKIFF_CHECK(gt.image_index(d.image_id) >= 0, "coco eval: detection {}: image id {} is not in the ground truth", i,
              d.image_id);
  SKIFF_CHECK(gt.category_index(d.category_id) >= 0,
              "coco eval: detection {}: category id {} is not in the ground truth", i, d.category_id);
  bool finite = std::isfinite(d.score);
  for (double v : d.bbox) finite = finite && std::isfinite(v);
  SKIFF_CHECK(finite && d.bbox[2] >= 0 && d.bbox[3] >= 0,
              "coco eval: detection {}: expected a finite score and box with width, height >= 0, got [{}] score {}",
              i, fmt::join(d.bbox, ", "), d.score);
}

}  // namespace

const std::array<double, kCocoNumIouThresholds>& coco_iou_thresholds() {
  static const auto v = linspace<kCocoNumIouThresholds>(0.5, 0.95);
  return v;
}

const std::array<double, kCocoNumRecallThresholds>& coco_recall_thresholds() {
  static const auto v = linspace<kCocoNumRecallThresholds>(0.0, 1.0);
  return v;
}

double CocoEvalResult::precision_at(int t, int r, int64_t k, int a, int m) const {
  return precision[size_t((((t * R + r) * num_categories + k) * A + a) * M + m)];
}

double CocoEvalResult::recall_at(int t, int64_t k, int a, int m) const {
  return recall[size_t(((t * num_categories + k) * A + a) * M + m)];
}

CocoEvalResult evaluate_coco(const CocoDataset& gt, const std::vector<Detection>& detections) {
  for (size_t i = 0; i < detections.size(); ++i) check_detection(gt, detections[i], i);

  // Categories and images in ascending id order, as COCOeval's Params sorts them.
  std::vector<int64_t> cats(gt.categories.size()), imgs(gt.images.size());
  std::iota(cats.begin(), cats.end(), int64_t(0));
  std::iota(imgs.begin(), imgs.end(), int64_t(0));
  std::sort(cats.begin(), cats.end(), [&](int64_t x, int64_t y) {
    return gt.categories[size_t(x)].id < gt.categories[size_t(y)].id;
  });
  std::sort(imgs.begin(), imgs.end(),
            [&](int64_t x, int64_t y) { return gt.images[size_t(x)].id < gt.images[size_t(y)].id; });
  std::vector<int64_t> cat_rank(cats.size()), img_rank(imgs.size());
  for (size_t i = 0; i < cats.size(); ++i) cat_rank[size_t(cats[i])] = int64_t(i);
  for (size_t i = 0; i < imgs.size(); ++i) img_rank[size_t(imgs[i])] = int64_t(i);

  CocoEvalResult res;
  const int64_t K = int64_t(cats.size());
  res.num_categories = K;
  res.num_images = int64_t(imgs.size());
  res.num_detections = int64_t(detections.size());
  res.precision.assign(size_t(T * R * K * A * M), -1.0);
  res.recall.assign(size_t(T * K * A * M), -1.0);

  // (category rank, image rank, index) of every gt and detection, grouped by
  // category then image; stable, so file order survives within a group.
  struct Key {
    int64_t k, i, idx;
  };
  auto by_group = [](const Key& x, const Key& y) { return x.k != y.k ? x.k < y.k : x.i < y.i; };
  std::vector<Key> gkeys, dkeys;
  for (size_t j = 0; j < gt.annotations.size(); ++j) {
    const CocoAnnotation& ann = gt.annotations[j];
    gkeys.push_back({cat_rank[size_t(gt.category_index(ann.category_id))], img_rank[size_t(gt.image_index(ann.image_id))],
                     int64_t(j)});
  }
  for (size_t j = 0; j < detections.size(); ++j) {
    const Detection& d = detections[j];
    dkeys.push_back({cat_rank[size_t(gt.category_index(d.category_id))], img_rank[size_t(gt.image_index(d.image_id))],
                     int64_t(j)});
  }
  std::stable_sort(gkeys.begin(), gkeys.end(), by_group);
  std::stable_sort(dkeys.begin(), dkeys.end(), by_group);

  size_t gp = 0, dp = 0;
  std::vector<int64_t> gts, det_order;
  std::vector<double> iou;
  for (int64_t k = 0; k < K; ++k) {
    std::array<std::vector<ImageEval>, A> evals;
    for (;;) {
      // Next image with a gt or a detection of category k.
      const bool g_here = gp < gkeys.size() && gkeys[gp].k == k;
      const bool d_here = dp < dkeys.size() && dkeys[dp].k == k;
      if (!g_here && !d_here) break;
      const int64_t i = !d_here ? gkeys[gp].i : !g_here ? dkeys[dp].i : std::min(gkeys[gp].i, dkeys[dp].i);
      gts.clear();
      det_order.clear();
      for (; gp < gkeys.size() && gkeys[gp].k == k && gkeys[gp].i == i; ++gp) gts.push_back(gkeys[gp].idx);
      for (; dp < dkeys.size() && dkeys[dp].k == k && dkeys[dp].i == i; ++dp) det_order.push_back(dkeys[dp].idx);
      std::stable_sort(det_order.begin(), det_order.end(), [&](int64_t x, int64_t y) {
        return detections[size_t(x)].score > detections[size_t(y)].score;
      });
      if (det_order.size() > size_t(kMaxDetsPerImage)) det_order.resize(size_t(kMaxDetsPerImage));
      const size_t G = gts.size();
      iou.assign(det_order.size() * G, 0.0);
      for (size_t d = 0; d < det_order.size(); ++d)
        for (size_t g = 0; g < G; ++g) {
          const CocoAnnotation& ann = gt.annotations[size_t(gts[g])];
          iou[d * G + g] = box_iou(detections[size_t(det_order[d])].bbox, ann.bbox, ann.iscrowd);
        }
      for (int a = 0; a < A; ++a) evals[size_t(a)].push_back(evaluate_image(gt, gts, detections, det_order, iou, a));
    }
    for (int a = 0; a < A; ++a)
      for (int m = 0; m < M; ++m) accumulate(evals[size_t(a)], k, a, m, res);
  }

  // stats as COCOeval.summarize(): AP at maxDets 100, AR at maxDets 1, 10, 100.
  res.stats = {summarize(res, true, -1, 0, 2), summarize(res, true, 0, 0, 2),  summarize(res, true, 5, 0, 2),
               summarize(res, true, -1, 1, 2), summarize(res, true, -1, 2, 2), summarize(res, true, -1, 3, 2),
               summarize(res, false, -1, 0, 0), summarize(res, false, -1, 0, 1), summarize(res, false, -1, 0, 2),
               summarize(res, false, -1, 1, 2), summarize(res, false, -1, 2, 2), summarize(res, false, -1, 3, 2)};

  for (int64_t k = 0; k < K; ++k) {
    const CocoCategory& c = gt.categories[size_t(cats[size_t(k)])];
    CocoClassAp cls{c.id, c.name, 0, -1, -1};
    for (const CocoAnnotation& ann : gt.annotations) cls.num_gt += ann.category_id == c.id && !ann.iscrowd;
    Mean all, at50;
    for (int t = 0; t < T; ++t)
      for (int r = 0; r < R; ++r) {
        all.add(res.precision_at(t, r, k, 0, 2));
        if (t == 0) at50.add(res.precision_at(t, r, k, 0, 2));
      }
    cls.ap = all.get();
    cls.ap50 = at50.get();
    res.per_class.push_back(std::move(cls));
  }
  return res;
}

std::string coco_summary_text(const CocoEvalResult& result) {
  struct Line {
    bool ap;
    const char* iou;
    int area, max_dets;
  };
  static constexpr Line kLines[12] = {
      {true, "0.50:0.95", 0, 100}, {true, "0.50", 0, 100},       {true, "0.75", 0, 100},
      {true, "0.50:0.95", 1, 100}, {true, "0.50:0.95", 2, 100},  {true, "0.50:0.95", 3, 100},
      {false, "0.50:0.95", 0, 1},  {false, "0.50:0.95", 0, 10},  {false, "0.50:0.95", 0, 100},
      {false, "0.50:0.95", 1, 100}, {false, "0.50:0.95", 2, 100}, {false, "0.50:0.95", 3, 100}};
  std::string out;
  for (int i = 0; i < 12; ++i) {
    const Line& l = kLines[i];
    // printf's %.3f rounds the exact binary value half-to-even, as Python's format does.
    char value[64];
    std::snprintf(value, sizeof(value), "%.3f", result.stats[size_t(i)]);
    out += fmt::format(" {:<18} {} @[ IoU={:<9} | area={:>6} | maxDets={:>3} ] = {}\n",
                       l.ap ? "Average Precision" : "Average Recall", l.ap ? "(AP)" : "(AR)", l.iou, kCocoAreaNames[size_t(l.area)],
                       l.max_dets, value);
  }
  return out;
}

nlohmann::json coco_eval_json(const CocoEvalResult& result) {
  nlohmann::json stats = nlohmann::json::object();
  for (size_t i = 0; i < kCocoStatNames.size(); ++i) stats[kCocoStatNames[i]] = result.stats[i];
  nlohmann::json per_class = nlohmann::json::array();
  for (const CocoClassAp& c : result.per_class)
    per_class.push_back(
        {{"category_id", c.category_id}, {"name", c.name}, {"num_gt", c.num_gt}, {"AP", c.ap}, {"AP50", c.ap50}});
  return {{"stats", stats},
          {"per_class", per_class},
          {"num_images", result.num_images},
          {"num_categories", result.num_categories},
          {"num_detections", result.num_detections}};
}

void write_coco_eval_json(const std::filesystem::path& path, const CocoEvalResult& result) {
  io::write_file_atomic(path, coco_eval_json(result).dump(2) + "\n");
}

}  // namespace skiff::detection
