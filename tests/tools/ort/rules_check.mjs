#!/usr/bin/env node
// The JavaScript PP-OCR port (lib/ppocr.mjs, the reference side of the OCR parity
// check) on the cases tests/suites/ocr/paddle_rules_test.cpp gives skiff, with the
// same values worked out by hand from PaddleOCR's definitions (the arithmetic is
// in that file). Both ports are checked against the definitions, not against each
// other, so a misreading they share shows. The JS port implements only what the
// parity pipeline runs (limit_type max, score_mode fast), so only those cases are here.
//   node tests/tools/ort/rules_check.mjs      exit 0 when every case holds, 1 otherwise
import { loadCv, roundHalfEven } from './lib/common.mjs';
import { ctcDecode, dbPostprocess, detResizeShape, filterDetResults, sortedBoxOrder } from './lib/ppocr.mjs';

const { cv } = await loadCv();
let failures = 0;
const check = (what, got, want) => {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g === w) console.log(`ok   ${what}`);
  else {
    console.log(`FAIL ${what}: got ${g}, want ${w}`);
    failures++;
  }
};
const near = (what, got, want, tol) => {
  if (Math.abs(got - want) <= tol) console.log(`ok   ${what}`);
  else {
    console.log(`FAIL ${what}: got ${got}, want ${want} (tolerance ${tol})`);
    failures++;
  }
};

// A h x w probability map with filled rectangles (inclusive corners).
function probMap(h, w, rects) {
  const m = new Float32Array(h * w);
  for (const [x0, y0, x1, y1, p] of rects)
    for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) m[y * w + x] = p;
  return m;
}
// DBPostProcess + filter_tag_det_res, corners as [x0, y0, x1, y1] of axis-aligned boxes.
function detect(map, h, w, srcH, srcW, opt = {}) {
  const { boxes, scores } = dbPostprocess(cv, map, h, w, srcW, srcH, opt);
  const f = filterDetResults(boxes, scores, srcH, srcW);
  return f.boxes.map((b) => [b[0][0], b[0][1], b[2][0], b[2][1]]);
}

// Min size: a 4 px tall blob (contour 99 x 3) is kept and unclipped to (48,38)-(151,45).
check('min size: sside 3 is not < 3', detect(probMap(100, 200, [[50, 40, 149, 43, 0.9]]), 100, 200, 100, 200),
  [[48, 38, 151, 45]]);
check('min size: a 3 px tall blob is dropped', detect(probMap(100, 200, [[50, 40, 149, 42, 0.9]]), 100, 200, 100, 200), []);
// The unclipped box needs min_size + 2: a 5 px tall blob (contour 99 x 4) with ratio 0.2
// unclips back onto its contour, 4 < 5: dropped (its height 4 > 3 would pass the tag filter).
check('min size + 2 after unclip (ratio 0.2)',
  detect(probMap(100, 200, [[50, 40, 149, 44, 0.9]]), 100, 200, 100, 200, { unclipRatio: 0.2 }), []);
check('min size + 2 after unclip (ratio 1.0)',
  detect(probMap(100, 200, [[50, 40, 149, 44, 0.9]]), 100, 200, 100, 200, { unclipRatio: 1.0 }), [[48, 38, 151, 46]]);
// Scaling rounds half to even: 141 / 200 * 100 = 70.5 -> 70.
const line = probMap(100, 200, [[30, 20, 129, 39, 0.9]]);
check('scaling rounds half to even', detect(line, 100, 200, 50, 100), [[9, 4, 70, 26]]);
check('a 4 px tall box survives filter_tag_det_res', detect(line, 100, 200, 10, 20), [[2, 1, 14, 5]]);
check('a 3 px tall box does not', detect(line, 100, 200, 5, 10), []);
// Fast score of the L: 1600 * 0.9 / 4000 = 0.36 (box_thresh 0.35 keeps it, 0.4 does not).
const ell = probMap(100, 200, [[10, 10, 29, 49, 0.9], [10, 40, 109, 49, 0.9]]);
{
  const { scores } = dbPostprocess(cv, ell, 100, 200, 200, 100, { boxThresh: 0.35 });
  check('fast score of the L: one box', scores.length, 1);
  near('fast score of the L is 0.36', scores[0], 0.36, 1e-6);
  check('fast score of the L: dropped at box_thresh 0.4', dbPostprocess(cv, ell, 100, 200, 200, 100, { boxThresh: 0.4 }).boxes.length, 0);
}
// DetResizeForTest, limit_type max: int() before rounding, half to even.
check('resize 551 x 1000 -> 512 x 960', [detResizeShape(551, 1000).rh, detResizeShape(551, 1000).rw], [512, 960]);
check('resize 200 x 960 is not scaled', [detResizeShape(200, 960).rh, detResizeShape(200, 960).rw], [192, 960]);
check('resize 192 x 256 at 160 -> 128 x 160', [detResizeShape(192, 256, 160).rh, detResizeShape(192, 256, 160).rw], [128, 160]);
check('roundHalfEven(3.5), (10.5)', [roundHalfEven(3.5), roundHalfEven(10.5)], [4, 10]);
// sorted_boxes ties: d c a b; and g e f.
const quad = (x, y) => [[x, y], [x + 30, y], [x + 30, y + 20], [x, y + 20]];
check('reading order: equal x on one line keeps the upper box first',
  sortedBoxOrder([quad(100, 0), quad(100, 5), quad(50, 5), quad(50, 0)]), [3, 2, 0, 1]);
check('reading order: stable for equal corners', sortedBoxOrder([quad(7, 3), quad(7, 3), quad(0, 12.5)]), [2, 0, 1]);
// CTC: ' ' ' ' a _ _ a a ' ' _ ' ' -> " aa  ", score 0.68.
{
  const best = [3, 3, 1, 0, 0, 1, 1, 3, 0, 3];
  const p = [0.9, 0.5, 0.8, 0.99, 0.99, 0.7, 0.95, 0.6, 0.9, 0.4];
  const probs = new Float32Array(best.length * 4);
  best.forEach((b, t) => {
    for (let c = 0; c < 4; c++) probs[t * 4 + c] = c === b ? p[t] : (1 - p[t]) / 3;
  });
  const d = ctcDecode(probs, best.length, 4, ['blank', 'a', 'b', ' ']);
  check('CTC keeps the first step of each run', d.text, ' aa  ');
  near('CTC score is the mean of the kept steps', d.score, 0.68, 1e-6);
}

console.log(`${failures} failure(s)`);
process.exit(failures ? 1 : 0);
