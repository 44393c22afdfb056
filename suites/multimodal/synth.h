#pragma once
/// \file synth.h
/// A compositional image-caption set for training and testing image-text models without
/// downloads (`skiff mm synth DIR`). Each image (64 x 64 by default) shows one of four scenes on
/// a flat, gradient or noise background of low saturation:
///  - single   one object: "a large red triangle", "a red triangle";
///  - count    two or three equal small objects: "two green circles";
///  - relation two objects of different shapes: "a red triangle left of a blue circle", and the
///             converse "a blue circle right of a red triangle" (left of / right of / above / below);
///  - word     a word written in a colour: "the word tree written in yellow".
/// Objects have a shape (6), colour (6) and size (small, large). Six colour-shape pairs, one
/// per shape and one per colour, are held out: the train and val splits never show them, the
/// heldout split shows them in single-object scenes, so zero-shot accuracy on it measures
/// generalisation to unseen combinations rather than memory.
///
/// Files: images/<split>_<id>.png; captions_<split>.json in the COCO captions layout (images
/// with id, file_name, width, height and, for single-object scenes, "label": "red triangle";
/// annotations with id, image_id, caption); captions_<split>.tsv with "file<TAB>caption" lines;
/// vocab.txt, a BERT vocabulary of every caption word ([PAD], [UNK], [CLS], [SEP], [MASK] first)
/// for the text tower; classes.txt, every colour-shape pair (the zero-shot candidates); synth.json (vocabulary, held-out pairs, counts), written last. The same
/// seed gives the same bytes.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

namespace skiff::multimodal {

/// The attribute vocabularies.
const std::vector<std::string>& synth_shapes();   ///< circle square triangle star cross diamond
const std::vector<std::string>& synth_colors();   ///< red green blue yellow purple orange
const std::vector<std::string>& synth_words();    ///< the words a "word" scene may write

/// Every word a caption (or a default zero-shot prompt) can hold, sorted: the vocabulary of the
/// word-level tokenizer mm synth writes (vocab.txt, BERT's format).
std::vector<std::string> synth_caption_words();

/// Whether shape s with colour c (indices into the vocabularies) is a held-out pair.
bool held_out_pair(int shape, int color);

enum class SynthSplit { Train, Val, Heldout };

struct SynthScene {
  cv::Mat image;                      ///< BGR, CV_8UC3
  std::vector<std::string> captions;  ///< one to three paraphrases
  std::string label;                  ///< "red triangle" for single-object scenes, else ""
  std::string kind;                   ///< single, count, relation, word
};

/// One scene of `split` (Heldout: single-object scenes of held-out pairs). Deterministic in seed.
/// \throws ValueError if size is outside 32..1024.
SynthScene render_synth_scene(SynthSplit split, uint64_t seed, int size = 64);

struct SynthCounts {
  int train = 1000, val = 200, heldout = 200;
};

/// Writes the three splits into dir (see the file comment); progress(done, total) after each image.
/// \throws ValueError for negative counts or a bad size; IoError when a file cannot be written.
void write_synth_mm_dataset(const std::string& dir, const SynthCounts& counts, uint64_t seed, int size,
                            const std::function<void(int, int)>& progress = {});

}  // namespace skiff::multimodal
