#pragma once
/// \file config.h
/// YAML configuration files in the PaddleOCR / PaddleDetection style: `_BASE_`
/// inheritance with deep merge, and "key.path=value" overrides from the command
/// line. This layer only assembles the tree; what the keys mean is checked by
/// whoever reads it (suite registries, the science recipes).
///
///   # configs/ocr/rec_finetune.yml
///   _BASE_: [../base/optimizer.yml, ../base/rec_reader.yml]   # relative to this file
///   Global: {epoch_num: 10}
///
///   YAML::Node c = config::load_config("configs/ocr/rec_finetune.yml",
///                                      {"Global.epoch_num=5", "Optimizer.lr.learning_rate=0.001"});
///
/// Rules:
///  - Bases load first, each with its own bases, in list order; a later base
///    wins over an earlier one and the file itself wins over all of them.
///  - Deep merge: maps merge key by key, recursively; any other value (scalar,
///    list, null) replaces what was there.
///  - Anchors and aliases work within one file (the YAML parser resolves them).
///    An alias is its anchor's node, as in PyYAML (which PaddleOCR reads configs
///    with): an override through one use changes every use. Write a section
///    out instead of aliasing it to give it its own values.
///  - Overrides apply last, in order; each value is parsed as YAML, so
///    `-o Train.loader.batch_size=[8,16]` sets a list, and a number indexes a
///    list: `-o Train.dataset.transforms.3.RecResizeImg.image_shape=[3,32,160]`.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace skiff::config {

/// Reads `path` with its bases and applies `overrides`.
/// \throws IoError naming the file (and the file that listed it as a base) when
/// a file is missing; ValueError with file and line for YAML syntax errors, a
/// document that is not a map, a `_BASE_` that is not a path or list of paths,
/// a base cycle (listing the chain) or a malformed override.
YAML::Node load_config(const std::string& path, const std::vector<std::string>& overrides = {});

/// Merges `from` into `into` by the rules above (`into` is modified; `from` is
/// copied, never aliased).
void deep_merge(YAML::Node& into, const YAML::Node& from);

/// A scalar holding `value` as its shortest round-trip decimal ("0.3", where
/// assigning the double would store 0.29999999999999999).
YAML::Node number_node(double value);

/// Sets "a.b.c=value" (value parsed as YAML) in `root`, creating missing maps.
/// Within a list a key is an entry's index (`Train.dataset.transforms.3.RecResizeImg.image_shape=[3,32,160]`).
/// \throws ValueError for a missing '=', an empty key, a value that is not
/// YAML, a path through a value that is not a map or list, or a list index
/// that is not a number or is out of range.
void apply_override(YAML::Node& root, const std::string& assignment);

/// A map key as text (what yaml-cpp's as<std::string>() gives for a scalar).
/// \throws ConfigError "<file>:<line>: a key must be a plain value, ..." for a null
///   key or a list or map used as a key (`? [a, b]: 1`), which YAML allows.
std::string key_text(const YAML::Node& key, const std::string& file);

/// Deepest nesting of maps and lists load_config and to_yaml walk. YAML anchors let a
/// file nest a map inside itself (`a: &x {b: *x}`); past this depth it is an error.
inline constexpr int kMaxConfigDepth = 256;

/// The tree as YAML text, ending with a newline: maps in block style, lists of
/// scalars on one line.
std::string to_yaml(const YAML::Node& root);

}  // namespace skiff::config
