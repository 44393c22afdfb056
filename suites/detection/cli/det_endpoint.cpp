// `skiff serve det`: POST /det, object detection in PaddleX serving's layout.
//
//   {"image": "<base64 image>", "threshold": 0.5, "visualize": true}
//   -> {"logId", "errorCode": 0, "errorMsg": "Success", "result": {
//        "detectedObjects": [{"bbox": [x0, y0, x1, y1], "categoryId": 0,
//                             "categoryName": "person", "score": 0.93}],
//        "image": "<base64 JPEG with the boxes drawn>" | null}}
//
// A request's threshold may raise the server's (`--set det.threshold`), not lower it:
// the detector drops the boxes below the server's before anything else sees them.
#include <cmath>

#include "framework/data/image_io.h"
#include "framework/io/base64.h"
#include "framework/serve/endpoint.h"
#include "framework/serve/request_fields.h"
#include "framework/serve/settings.h"
#include "suites/detection/deploy_config.h"
#include "suites/detection/detector.h"
#include "suites/detection/draw.h"

namespace skiff::detection {
namespace {

using nlohmann::json;

struct DetRequest {
  std::string bytes;
  float threshold = 0;
  bool visualize = false;
};

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

class DetEndpoint final : public serve::Endpoint {
 public:
  explicit DetEndpoint(DetectorConfig config) : detector_(std::move(config)) {}

  std::string prepare(serve::Call& call, const serve::RequestLimits& limits) const override {
    const json& body = call.request;
    serve::check_fields(body, {"image", "threshold", "visualize"});
    DetRequest r;
    const float floor = detector_.config().score_threshold;
    r.threshold = float(serve::optional_number(body, "threshold", 0, 1).value_or(floor));
    SKIFF_CHECK(r.threshold >= floor,
                "threshold: {} is below the server's {} (--set det.threshold), which bounds it", r.threshold, floor);
    r.visualize = serve::optional_bool(body, "visualize").value_or(false);
    r.bytes = serve::read_file_field(body, "image", limits);
    call.input = std::move(r);
    return {};
  }

  void run(std::span<serve::Call* const> calls) const override {
    for (serve::Call* call : calls) {
      const auto& r = std::any_cast<const DetRequest&>(call->input);
      const cv::Mat image = data::decode_image_field(r.bytes, "image");
      DetectionResult found = detector_.detect(image);
      std::erase_if(found.boxes, [&](const DetectedBox& b) { return b.score < r.threshold; });
      json objects = json::array();
      for (const auto& b : found.boxes)
        objects.push_back({{"bbox", {round3(b.box.x0), round3(b.box.y0), round3(b.box.x1), round3(b.box.y1)}},
                           {"categoryId", b.class_id},
                           {"categoryName", detector_.label(b.class_id)},
                           {"score", round3(b.score)}});
      json picture = nullptr;
      if (r.visualize) {
        const cv::Mat drawn = draw_detections(image, found.boxes, [&](int c) { return detector_.label(c); });
        const std::vector<uint8_t> jpeg = data::encode_image(drawn, ".jpg", 90);
        picture = io::base64_encode({reinterpret_cast<const char*>(jpeg.data()), jpeg.size()});
      }
      call->result = {{"detectedObjects", std::move(objects)}, {"image", std::move(picture)}};
    }
  }

  const char* image_field() const override { return "image"; }

  json describe() const override {
    const DetectorConfig& c = detector_.config();
    return {{"route", "/det"},
            {"model", c.model},
            {"classes", c.labels.size()},
            {"settings", {{"threshold", round3(c.score_threshold)}, {"nms_iou", round3(c.nms_iou)}, {"topk", c.max_detections}}}};
  }

 private:
  Detector detector_;
};

std::unique_ptr<serve::Endpoint> make_det_endpoint(const serve::EndpointSettings& settings) {
  serve::SettingsReader s("det", settings);
  const std::string model_dir = s.text("model_dir", "");
  DetectorConfig c = model_dir.empty() ? DetectorConfig{} : read_deploy_config(model_dir);
  c.model = s.text("model", c.model);
  c.score_threshold = float(s.number("threshold", c.score_threshold, 0, 1));
  c.nms_iou = float(s.number("nms_iou", c.nms_iou, 0, 1));
  c.max_detections = int(s.number("topk", c.max_detections, 1, 10000));
  s.finish();
  return std::make_unique<DetEndpoint>(std::move(c));
}

}  // namespace
}  // namespace skiff::detection

SKIFF_REGISTER_ENDPOINT("det", skiff::detection::make_det_endpoint);
