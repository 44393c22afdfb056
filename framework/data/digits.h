#pragma once
/// \file digits.h
/// The UCI optical-digits set as shipped by scikit-learn (load_digits): 1797
/// grayscale 8x8 images of handwritten digits 0-9, pixel values 0..16.
///
/// The data is read from scikit-learn's `digits.csv.gz` (Debian package
/// python3-sklearn), so nothing is downloaded: each CSV row holds 64 pixel values
/// in row-major order followed by the label.

#include <filesystem>
#include <optional>

#include "framework/data/dataset.h"

namespace skiff::data {

/// The whole set in memory.
struct DigitsData {
  Tensor images;  ///< [1797, 1, 8, 8] float32, values 0..16 (divided by 16 when scaled)
  Tensor labels;  ///< [1797] int64 in 0..9
};

/// Where digits.csv.gz is: $SKIFF_DIGITS_CSV if set, else the python3-sklearn
/// install locations; nullopt if none exists.
std::optional<std::filesystem::path> find_digits_csv();

/// Loads the set. `path` empty: find_digits_csv(). `scale`: divide pixels by 16
/// so they lie in [0, 1]. \throws IoError if the file is missing, not gzip, or a
/// row is malformed (the message names the file and the line).
DigitsData load_digits(const std::filesystem::path& path = {}, bool scale = true);

/// The set as a Dataset of {"image": [1, 8, 8] float32, "label": [] int64}.
std::shared_ptr<TensorDataset> digits_dataset(const std::filesystem::path& path = {}, bool scale = true);

/// Inflates gzip (or zlib) data. `name` appears in errors. \throws IoError.
std::string gunzip(std::string_view compressed, std::string_view name);

}  // namespace skiff::data
