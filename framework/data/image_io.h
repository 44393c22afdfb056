#pragma once
/// \file image_io.h
/// Image file decoding and encoding on the codec libraries directly (libpng,
/// libjpeg-turbo, a small BMP reader/writer), without OpenCV's imgcodecs.
///
/// Why not cv::imread: Debian's libopencv_imgcodecs pulls in ~140 shared
/// libraries (GDAL, GDCM, OpenEXR, ...); loading them made every `skiff`
/// invocation spend ~0.3 s in the dynamic loader. This module links only
/// libpng and libjpeg.
///
/// Decoding matches cv::imread(path, cv::IMREAD_COLOR) pixel for pixel for the
/// supported formats: the result is always 8-bit, 3-channel BGR; gray is
/// replicated, alpha is dropped (not composited), 16-bit PNG samples keep their
/// high byte, and the EXIF orientation of a JPEG is applied. The format is
/// detected from the magic bytes, never from the file name:
///   - PNG: every color type and bit depth, interlaced or not.
///   - JPEG: baseline and progressive; YCbCr, grayscale, CMYK/YCCK (Adobe
///     inverted CMYK, converted like OpenCV). Decoded with libjpeg's defaults
///     (JDCT_ISLOW, fancy upsampling) straight into BGR, as OpenCV does.
///   - BMP: uncompressed 24- and 32-bit, and 8-bit palette images.
///
/// The decoder is meant for untrusted input: truncated or corrupt data, sizes
/// above kMaxImagePixels, and unsupported formats throw IoError naming the
/// image; nothing is allocated for the pixels before the header is validated.
///
/// This header exposes cv::Mat, unlike the other framework/data headers
/// (STYLE 2.8): its callers (data/vision.cpp, the OCR suite) work on cv::Mat
/// already, and a tensor round trip would copy every image twice. It lives in
/// skiff_data rather than skiff_io because skiff_data is the module that owns
/// the OpenCV dependency; skiff_io stays OpenCV-free. Include it only from code
/// that links opencv_core.

#include <cstdint>
#include <opencv2/core/mat.hpp>
#include <span>
#include <string>
#include <vector>

namespace skiff::data {

/// Largest image the decoders accept (width * height), 2^28 pixels (768 MiB
/// as BGR). Larger headers are rejected before any pixel memory is allocated.
inline constexpr int64_t kMaxImagePixels = int64_t(1) << 28;

/// Decodes PNG, JPEG or BMP bytes into an 8-bit BGR image [rows, cols, 3]
/// (CV_8UC3), identical to cv::imdecode(bytes, cv::IMREAD_COLOR).
/// \param name_for_errors the file name (or a description) quoted in errors.
/// \throws IoError "cannot decode image '<name>': <reason>" for empty input, an
/// unknown or unsupported format, corrupt or truncated data, or an image larger
/// than kMaxImagePixels.
cv::Mat decode_image(std::span<const uint8_t> bytes, const std::string& name_for_errors);

/// decode_image for bytes a client sent in a request field (`skiff serve`, the C API):
/// the same checks, but bad bytes are the client's mistake, so a ValueError naming
/// `field` rather than an IoError. \throws ValueError.
cv::Mat decode_image_field(std::string_view bytes, const std::string& field);

/// Reads and decodes an image file (see decode_image).
/// \throws IoError naming `path` when it is missing, a directory, unreadable,
/// empty, corrupt or in an unsupported format.
cv::Mat read_image_file(const std::string& path);

/// Encodes an 8-bit image (CV_8UC3 BGR or CV_8UC1 gray) as ".png", ".jpg" /
/// ".jpeg" or ".bmp" (case-insensitive, leading dot optional).
/// \param jpeg_quality 0..100, JPEG only (libjpeg's standard tables, 4:2:0
/// chroma subsampling, as cv::imencode).
/// \param png_compression zlib level 0..9, PNG only.
/// \throws ValueError for an empty image, another depth or channel count, or a
/// quality/level out of range; IoError for an unknown extension.
std::vector<uint8_t> encode_image(const cv::Mat& image, const std::string& ext, int jpeg_quality = 95,
                                  int png_compression = 3);

/// Encodes `image` in the format named by the extension of `path` (see
/// encode_image) and replaces the file atomically (io::write_file_atomic): a
/// reader sees the old file or the complete new one.
/// \throws IoError naming `path` (unknown extension, unwritable directory).
void write_image_file(const std::string& path, const cv::Mat& image);

/// Whether `path` names an image by its extension (.jpg, .png, .bmp, .tif, .webp, .ppm, ...).
bool has_image_extension(const std::string& path);

/// What image commands (`skiff ocr`, `skiff det`) accept as inputs: a directory
/// gives its image files (sorted), a pattern with * ? [ that names no file is
/// expanded as a glob, anything else is kept as is, so a missing file is
/// reported as unreadable in its turn. Warns on stderr, prefixed by `command`,
/// about a directory without images.
std::vector<std::string> expand_image_inputs(const std::vector<std::string>& args, const std::string& command);

}  // namespace skiff::data
