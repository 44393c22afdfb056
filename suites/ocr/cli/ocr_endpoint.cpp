// `skiff serve ocr`: POST /ocr, PaddleX serving's OCR request and result layout.
//
//   {"file": "<base64 image>", "fileType": 1, "textDetThresh": 0.3, "visualize": true}
//   -> {"logId", "errorCode": 0, "errorMsg": "Success", "result": {
//        "ocrResults": [{"prunedResult": {rec_texts, rec_scores, rec_polys, dt_polys, ...},
//                        "ocrImage": "<base64 JPEG>" | null, ...}],
//        "dataInfo": {"type": "image", "width": W, "height": H}}}
//
// The pipeline loads once; the per-request thresholds are ocr::RunOverrides. Requests
// run one at a time per worker (the recognizer batches the lines of each image).
#include <opencv2/core.hpp>

#include <cmath>

#include "framework/data/image_io.h"
#include "framework/io/base64.h"
#include "framework/serve/endpoint.h"
#include "framework/serve/request_fields.h"
#include "framework/serve/settings.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/result_output.h"

namespace skiff::ocr {
namespace {

using nlohmann::json;

/// A float setting as the decimal it was written as (0.3, not 0.30000001192092896).
double round4(float v) { return std::round(double(v) * 1e4) / 1e4; }

struct OcrRequest {
  std::string bytes;  // the encoded image
  RunOverrides overrides;
  bool visualize = false;
};

class OcrEndpoint final : public serve::Endpoint {
 public:
  explicit OcrEndpoint(PipelineConfig config) : pipeline_(std::move(config)) {}

  std::string prepare(serve::Call& call, const serve::RequestLimits& limits) const override {
    const json& body = call.request;
    serve::check_fields(body, {"file", "fileType", "useDocOrientationClassify", "useDocUnwarping",
                               "useTextlineOrientation", "textDetLimitSideLen", "textDetLimitType", "textDetThresh",
                               "textDetBoxThresh", "textDetUnclipRatio", "textRecScoreThresh", "visualize"});
    if (auto type = serve::optional_integer(body, "fileType", 0, 1))
      SKIFF_CHECK(*type == 1, "fileType: 0 (PDF) is not supported; send an image (fileType 1)");
    for (const char* field : {"useDocOrientationClassify", "useDocUnwarping"})
      SKIFF_CHECK(!serve::optional_bool(body, field).value_or(false),
                  "{}: document preprocessing is not part of skiff's OCR pipeline; leave it false", field);
    OcrRequest r;
    RunOverrides& o = r.overrides;
    o.use_textline_orientation = serve::optional_bool(body, "useTextlineOrientation");
    SKIFF_CHECK(!o.use_textline_orientation.value_or(false) || pipeline_.config().use_textline_orientation,
                "useTextlineOrientation: the server runs without the orientation classifier "
                "(--set ocr.use_textline_orientation=true loads it)");
    if (auto n = serve::optional_integer(body, "textDetLimitSideLen", 32, 8192)) o.det_limit_side_len = int(*n);
    if (body.contains("textDetLimitType") && !body["textDetLimitType"].is_null()) {
      const json& t = body["textDetLimitType"];
      SKIFF_CHECK(t == "max" || t == "min", "textDetLimitType: expected \"max\" or \"min\", got {}", t.dump());
      o.det_limit_type = t == "max" ? LimitType::Max : LimitType::Min;
    }
    auto unit = [&](const char* field, std::optional<float>& out) {
      if (auto x = serve::optional_number(body, field, 0, 1)) out = float(*x);
    };
    unit("textDetThresh", o.det_thresh);
    unit("textDetBoxThresh", o.det_box_thresh);
    unit("textRecScoreThresh", o.rec_score_thresh);
    if (auto x = serve::optional_number(body, "textDetUnclipRatio", 0, 10)) o.det_unclip_ratio = float(*x);
    r.visualize = serve::optional_bool(body, "visualize").value_or(false);
    r.bytes = serve::read_file_field(body, "file", limits);
    call.input = std::move(r);
    return {};
  }

  void run(std::span<serve::Call* const> calls) const override {
    for (serve::Call* call : calls) {
      const auto& r = std::any_cast<const OcrRequest&>(call->input);
      const cv::Mat image = data::decode_image_field(r.bytes, "file");
      const OcrResult result = pipeline_.run(image, r.overrides);
      json page = {{"prunedResult", result_json(result)}, {"ocrImage", nullptr},
                   {"docPreprocessingImage", nullptr}, {"inputImage", nullptr}};
      if (r.visualize) page["ocrImage"] = visualization(image, result);
      call->result = {{"ocrResults", json::array({std::move(page)})},
                      {"dataInfo", {{"type", "image"}, {"width", image.cols}, {"height", image.rows}}}};
    }
  }

  const char* image_field() const override { return "file"; }

  json describe() const override {
    const PipelineConfig& c = pipeline_.config();
    return {{"route", "/ocr"},
            {"models", {{"det", c.det_model}, {"rec", c.rec_model}, {"cls", c.use_textline_orientation ? json(c.cls_model) : json(nullptr)}}},
            {"settings", {{"text_det_limit_side_len", c.det.limit_side_len}, {"text_det_thresh", round4(c.db.thresh)},
                          {"text_det_box_thresh", round4(c.db.box_thresh)}, {"text_det_unclip_ratio", round4(c.db.unclip_ratio)},
                          {"text_rec_score_thresh", round4(c.rec_score_thresh)}}}};
  }

 private:
  static std::string visualization(const cv::Mat& image, const OcrResult& result) {
    const std::vector<uint8_t> jpeg = data::encode_image(draw_result_lines(image, result), ".jpg", 90);
    return io::base64_encode({reinterpret_cast<const char*>(jpeg.data()), jpeg.size()});
  }

  Pipeline pipeline_;
};

std::unique_ptr<serve::Endpoint> make_ocr_endpoint(const serve::EndpointSettings& settings) {
  serve::SettingsReader s("ocr", settings);
  PipelineConfig c;
  c.det_model = s.text("det_model", c.det_model);
  c.rec_model = s.text("rec_model", c.rec_model);
  c.cls_model = s.text("cls_model", c.cls_model);
  c.rec_dict = s.text("rec_dict", c.rec_dict);
  c.use_textline_orientation = s.flag("use_textline_orientation", c.use_textline_orientation);
  c.restore_word_spaces = s.flag("restore_spaces", c.restore_word_spaces);
  c.det.limit_side_len = int(s.number("text_det_limit_side_len", c.det.limit_side_len, 32, 8192));
  c.db.thresh = float(s.number("text_det_thresh", c.db.thresh, 0, 1));
  c.db.box_thresh = float(s.number("text_det_box_thresh", c.db.box_thresh, 0, 1));
  c.db.unclip_ratio = float(s.number("text_det_unclip_ratio", c.db.unclip_ratio, 0, 10));
  c.rec_score_thresh = float(s.number("text_rec_score_thresh", c.rec_score_thresh, 0, 1));
  c.rec_batch = int(s.number("batch", c.rec_batch, 1, 256));
  s.finish();
  return std::make_unique<OcrEndpoint>(std::move(c));
}

}  // namespace
}  // namespace skiff::ocr

SKIFF_REGISTER_ENDPOINT("ocr", skiff::ocr::make_ocr_endpoint);
