#!/usr/bin/env python3
"""Golden numbers for skiff's COCO evaluation (suites/detection/coco_eval.h).

Makes a random-ish COCO ground truth and a results file from a fixed seed, runs
pycocotools' COCOeval (bbox) on them and writes into tests/data/detection/:

  coco_random_gt.json        the ground truth
  coco_random_results.json   the detections
  coco_random_expected.json  pycocotools' 12 stats, its summary lines and the
                             per-category AP (precision[:, :, k, all, 100] mean)

The C++ test (CocoEvalGolden in tests/suites/detection/coco_eval_test.cpp)
reads the three files; it does not need Python. Rerun this only to change the
data: the files are committed.

    python3 tests/tools/coco/make_golden.py [--seed 19] [--out tests/data/detection]

Needs numpy and pycocotools importable (PYTHONPATH may point at a pycocotools
checkout built with `python3 setup.py build_ext --inplace`).
"""
import argparse
import contextlib
import io
import json
import os
import random
import sys

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
import pycocotools


def two_decimals(v):
    return round(v, 2)


def make_data(seed):
    rng = random.Random(seed)
    # Ids out of order and with gaps; category 9 gets no ground truth.
    image_ids = rng.sample(range(1, 500), 40)
    categories = [{"id": c, "name": f"cat{c}", "supercategory": "thing"} for c in (7, 2, 9, 15, 4)]
    gt_cats = [7, 2, 15, 4]
    images = [{"id": i, "file_name": f"{i:06d}.jpg", "width": 640, "height": 480} for i in image_ids]
    annotations, results = [], []

    def random_box():
        # Sides spread over small, medium and large areas.
        w = rng.choice([rng.uniform(4, 30), rng.uniform(30, 90), rng.uniform(90, 300)])
        h = w * rng.uniform(0.5, 2.0)
        return [two_decimals(rng.uniform(0, 600)), two_decimals(rng.uniform(0, 440)), two_decimals(w), two_decimals(h)]

    def score():
        # Coarse scores, so ties across and within images occur.
        return round(rng.choice([rng.uniform(0, 1), round(rng.uniform(0, 1) * 20) / 20]), 4)

    for n, image_id in enumerate(image_ids):
        crowded = n == 3  # one image with more than 100 detections of one category
        num_gt = 0 if n % 9 == 5 else rng.randint(1, 12)
        if crowded:
            num_gt = 60
        for _ in range(num_gt):
            cat = 7 if crowded else rng.choice(gt_cats)
            box = random_box()
            crowd = 1 if rng.random() < 0.06 else 0
            # COCO's area is the segmentation's, a little less than the box's.
            area = two_decimals(box[2] * box[3] * rng.uniform(0.55, 1.0))
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "category_id": cat,
                                "bbox": box, "area": area, "iscrowd": crowd, "segmentation": []})
            copies = 3 if crowded else (2 if rng.random() < 0.1 else 1)
            for _ in range(copies):
                if rng.random() < 0.2:
                    continue  # missed
                jitter = rng.choice([0.02, 0.08, 0.2])
                x, y, w, h = box
                det = [two_decimals(x + rng.gauss(0, jitter * w)), two_decimals(y + rng.gauss(0, jitter * h)),
                       two_decimals(max(0.5, w * (1 + rng.gauss(0, jitter)))),
                       two_decimals(max(0.5, h * (1 + rng.gauss(0, jitter))))]
                det_cat = cat if rng.random() < 0.9 else rng.choice([c["id"] for c in categories])
                results.append({"image_id": image_id, "category_id": det_cat, "bbox": det, "score": score()})
        for _ in range(rng.randint(0, 4)):  # false positives anywhere, category 9 included
            results.append({"image_id": image_id, "category_id": rng.choice([c["id"] for c in categories]),
                            "bbox": random_box(), "score": score()})
    rng.shuffle(results)
    gt = {"images": images, "annotations": annotations, "categories": categories}
    return gt, results


def evaluate(gt_path, results_path):
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(gt_path)
        coco_dt = coco_gt.loadRes(results_path)
    ev = COCOeval(coco_gt, coco_dt, "bbox")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    summary = [line for line in out.getvalue().splitlines() if line.startswith(" Average")]
    per_class = []
    for k, cat_id in enumerate(ev.params.catIds):
        p = ev.eval["precision"][:, :, k, 0, -1]
        per_class.append({"category_id": int(cat_id),
                          "AP": float(np.mean(p[p > -1])) if (p > -1).any() else -1.0})
    return [float(s) for s in ev.stats], summary, per_class


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "../../data/detection"))
    args = parser.parse_args()
    gt, results = make_data(args.seed)
    os.makedirs(args.out, exist_ok=True)
    gt_path = os.path.join(args.out, "coco_random_gt.json")
    results_path = os.path.join(args.out, "coco_random_results.json")
    with open(gt_path, "w") as f:
        json.dump(gt, f)
        f.write("\n")
    with open(results_path, "w") as f:
        json.dump(results, f)
        f.write("\n")
    stats, summary, per_class = evaluate(gt_path, results_path)
    expected = {"generator": "tests/tools/coco/make_golden.py", "seed": args.seed,
                "pycocotools": getattr(pycocotools, "__version__", "unknown"), "numpy": np.__version__,
                "num_annotations": len(gt["annotations"]), "num_detections": len(results),
                "stats": stats, "summary": summary, "per_class": per_class}
    with open(os.path.join(args.out, "coco_random_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
