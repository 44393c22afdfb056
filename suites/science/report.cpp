#include "suites/science/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"
#include "framework/train/plot.h"

namespace skiff::science {

using train::Curve;
using train::line_panel;
using train::padded_range;
using train::panel_row;

namespace {
constexpr const char* kFormat = "skiff.science.solution/1";
}  // namespace

void save_solution(const std::string& path, PinnSolver& solver, const ScienceRecipe& recipe) {
  io::Metadata meta{
      {kModelFormatKey, kFormat}, {kModelRecipeKey, recipe_text(recipe.root)}, {"recipe_file", recipe.file}};
  io::save_safetensors(path, solver.net().state_dict(), meta);
}

Solution load_solution(const std::string& path) {
  io::SafetensorsFile f = io::load_safetensors(path);
  YAML::Node root = stored_recipe(f.metadata, path, kFormat, "a skiff science solution");
  Solution s{parse_recipe(root, path + " (stored recipe)"), nullptr};
  s.solver = s.recipe.make_solver();
  try {
    s.solver->net().load_state_dict(f.tensors);
  } catch (const Error& e) {
    throw ValueError(fmt::format("'{}': the weights do not fit the stored recipe: {}", path, e.what()));
  }
  return s;
}

nlohmann::json evaluation_json(const Evaluation& e) {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& f : e.errors)
    fields[f.name] = {{"unit", f.unit}, {"rel_l2", f.rel_l2}, {"max_abs_error", f.max_abs},
                      {"reference_max_abs", f.ref_max_abs}};
  return {{"fields", fields}, {"figures", e.figures}};
}

void write_json(const std::string& path, const nlohmann::json& j) { io::write_file_atomic(path, j.dump(2) + "\n"); }

namespace {

// One panel: the field (x to the right, y up) scaled to ~300 px on its long
// side, viridis colours, and a colour bar with min / max labels.
cv::Mat panel(const std::vector<double>& values, const std::vector<bool>& inside, int64_t nx, int64_t ny,
              const std::string& title, const std::string& caption) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < values.size(); ++i)
    if (inside[i]) lo = std::min(lo, values[i]), hi = std::max(hi, values[i]);
  if (!(hi > lo)) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 1e-6);
  cv::Mat f(int(ny), int(nx), CV_32F), mask(int(ny), int(nx), CV_8U);
  for (int64_t i = 0; i < nx; ++i)
    for (int64_t j = 0; j < ny; ++j) {
      size_t k = size_t(i * ny + j);
      f.at<float>(int(ny - 1 - j), int(i)) = inside[k] ? float((values[k] - lo) / (hi - lo) * 255.0) : 0.f;
      mask.at<uint8_t>(int(ny - 1 - j), int(i)) = inside[k] ? 255 : 0;
    }
  const double scale = 300.0 / double(std::max(nx, ny));
  cv::Size size(std::max(1, int(nx * scale)), std::max(1, int(ny * scale)));
  cv::resize(f, f, size, 0, 0, cv::INTER_LINEAR);
  cv::resize(mask, mask, size, 0, 0, cv::INTER_NEAREST);
  cv::Mat gray, colour;
  f.convertTo(gray, CV_8U);
  cv::applyColorMap(gray, colour, cv::COLORMAP_VIRIDIS);
  colour.setTo(cv::Scalar(255, 255, 255), ~mask);

  const int bar_w = 16, label_w = 90, top = 28, pad = 8, bottom = 22;
  cv::Mat out(size.height + top + bottom, pad + size.width + pad + bar_w + label_w, CV_8UC3,
              cv::Scalar(255, 255, 255));
  colour.copyTo(out(cv::Rect(pad, top, size.width, size.height)));
  cv::Mat ramp(size.height, 1, CV_8U);
  for (int r = 0; r < size.height; ++r) ramp.at<uint8_t>(r) = uint8_t(255 - r * 255 / std::max(1, size.height - 1));
  cv::Mat bar;
  cv::applyColorMap(ramp, bar, cv::COLORMAP_VIRIDIS);
  cv::resize(bar, bar, cv::Size(bar_w, size.height), 0, 0, cv::INTER_NEAREST);
  const int bx = pad + size.width + pad;
  bar.copyTo(out(cv::Rect(bx, top, bar_w, size.height)));
  auto text = [&](const std::string& s, int x, int y, double sz = 0.4) {
    cv::putText(out, s, cv::Point(x, y), cv::FONT_HERSHEY_SIMPLEX, sz, cv::Scalar(0, 0, 0), 1, cv::LINE_AA);
  };
  text(title, pad, 18, 0.5);
  text(caption, pad, top + size.height + 16, 0.38);
  for (int t = 0; t <= 4; ++t) {
    double v = hi - (hi - lo) * t / 4.0;
    int y = top + int(std::lround((size.height - 1) * t / 4.0));
    cv::line(out, cv::Point(bx + bar_w, y), cv::Point(bx + bar_w + 3, y), cv::Scalar(0, 0, 0));
    text(fmt::format("{:.3g}", v), bx + bar_w + 5, std::clamp(y + 4, top + 8, top + size.height));
  }
  return out;
}

// The caption under a field panel: which input runs along which image axis.
std::string axes_caption(const std::vector<std::string>& inputs, const Box& b) {
  return fmt::format("{} right [{:.3g}, {:.3g}], {} up [{:.3g}, {:.3g}]", inputs[0], b.lo[0], b.hi[0], inputs[1],
                     b.lo[1], b.hi[1]);
}

// For a 1-D spatial domain over time: the field along x at four times,
// prediction (red, dashed) over reference (black), like the figures of the
// PINN literature. dir/<field>_snapshots.png per field.
std::vector<std::string> write_snapshots(const std::string& dir, PinnSolver& solver, const TimeDomain& td,
                                         int64_t nx) {
  const Box b = td.space().bounds();
  const std::vector<double> fractions{0.25, 0.5, 0.75, 1.0};
  std::vector<double> xs, pts;
  for (int64_t i = 0; i < nx; ++i) xs.push_back(b.lo[0] + (b.hi[0] - b.lo[0]) * double(i) / double(nx - 1));
  for (double f : fractions)
    for (double x : xs) pts.insert(pts.end(), {x, td.t0() + (td.t1() - td.t0()) * f});
  Tensor p = from_vector(pts, Shape{int64_t(pts.size()) / 2, 2});
  auto pred = solver.predict(p);
  auto ref = solver.problem().reference(p);
  const auto inputs = solver.problem().inputs();
  std::vector<std::string> written;
  for (size_t k = 0; k < pred.size(); ++k) {
    auto pv = pred[k].values.to_vector<double>();
    std::vector<double> rv = k < ref.size() ? ref[k].values.to_vector<double>() : std::vector<double>{};
    const auto [lo, hi] = padded_range({pv, rv});
    std::vector<cv::Mat> panels;
    for (size_t s = 0; s < fractions.size(); ++s) {
      auto slice = [&](const std::vector<double>& v) {
        return std::vector<double>(v.begin() + long(s * xs.size()), v.begin() + long((s + 1) * xs.size()));
      };
      std::vector<Curve> curves;
      if (!rv.empty()) curves.push_back({slice(rv), cv::Scalar(0, 0, 0), false});
      curves.push_back({slice(pv), cv::Scalar(40, 40, 220), true});
      const double t = td.t0() + (td.t1() - td.t0()) * fractions[s];
      panels.push_back(line_panel(xs, curves, lo, hi, fmt::format("{} at {} = {:.3g}", pred[k].name, inputs[1], t),
                                  inputs[0]));
    }
    cv::Mat img =
        panel_row(panels, rv.empty() ? "red dashed: prediction" : "black: reference, red dashed: prediction");
    std::string path = (std::filesystem::path(dir) / (pred[k].name + "_snapshots.png")).string();
    data::write_image_file(path, img);
    written.push_back(path);
  }
  return written;
}

}  // namespace

std::vector<std::string> write_field_images(const std::string& dir, PinnSolver& solver,
                                            const std::vector<int64_t>& grid) {
  const auto domain = solver.problem().domain();  // keeps the geometry alive
  const Geometry& g = *domain;
  if (g.dim() != 2 || grid.size() != 2) return {};
  std::vector<bool> inside;
  Tensor pts = grid_points(g, grid, &inside);
  auto pred = solver.predict(pts);
  auto ref = solver.problem().reference(pts);
  const std::string caption = axes_caption(solver.problem().inputs(), g.bounds());
  std::vector<std::string> written;
  // Scatter values at the kept points back onto the full grid.
  auto on_grid = [&](const Tensor& v) {
    std::vector<double> full(inside.size(), 0.0);
    auto src = v.to_vector<double>();
    for (size_t i = 0, k = 0; i < inside.size(); ++i)
      if (inside[i]) full[i] = src[k++];
    return full;
  };
  for (size_t k = 0; k < pred.size(); ++k) {
    std::string unit = pred[k].unit.empty() ? "" : " [" + pred[k].unit + "]";
    std::vector<cv::Mat> panels{panel(on_grid(pred[k].values), inside, grid[0], grid[1], pred[k].name + unit + " prediction", caption)};
    if (k < ref.size()) {
      panels.push_back(panel(on_grid(ref[k].values), inside, grid[0], grid[1], pred[k].name + " reference", caption));
      Tensor err = abs(pred[k].values - ref[k].values);
      panels.push_back(panel(on_grid(err), inside, grid[0], grid[1], "|error|", caption));
    }
    cv::Mat img;
    cv::hconcat(panels, img);
    std::string path = (std::filesystem::path(dir) / (pred[k].name + ".png")).string();
    data::write_image_file(path, img);
    written.push_back(path);
  }
  if (const auto* td = dynamic_cast<const TimeDomain*>(&g); td && td->space().dim() == 1) {
    auto more = write_snapshots(dir, solver, *td, grid[0]);
    written.insert(written.end(), more.begin(), more.end());
  }
  return written;
}

}  // namespace skiff::science
