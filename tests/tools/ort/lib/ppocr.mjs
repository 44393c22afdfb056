// PP-OCR pre- and post-processing shared by make_fixtures.mjs and ocr_pipeline.mjs.
// Written after PaddleOCR's tools/infer/predict_{det,cls,rec,system}.py,
// tools/infer/utility.py and ppocr/postprocess/{db,rec,cls}_postprocess.py.
// NumPy float32 arithmetic is reproduced with Math.fround where the order of
// rounding can change a result.
import fs from 'node:fs';
import ClipperLib from 'clipper-lib';
import { roundHalfEven } from './common.mjs';
import { bgrToMat, matToBGR } from './image.mjs';

const f32 = Math.fround;

// ---------------------------------------------------------------- detector ----

// DetResizeForTest, limit_type "max": the long side is scaled down to at most
// `limitSideLen`, then both sides are rounded (half to even) to multiples of 32.
export function detResizeShape(h, w, limitSideLen = 960) {
  let ratio = 1.0;
  if (Math.max(h, w) > limitSideLen) ratio = h > w ? limitSideLen / h : limitSideLen / w;
  let rh = Math.trunc(h * ratio);
  let rw = Math.trunc(w * ratio);
  rh = Math.max(roundHalfEven(rh / 32) * 32, 32);
  rw = Math.max(roundHalfEven(rw / 32) * 32, 32);
  return { rh, rw, ratioH: rh / h, ratioW: rw / w };
}

const DET_MEAN = [0.485, 0.456, 0.406].map(f32);
const DET_STD = [0.229, 0.224, 0.225].map(f32);
const INV255 = f32(1 / 255);

// NormalizeImage + ToCHWImage on an HWC uint8 image in BGR order (PaddleOCR
// applies the ImageNet mean/std, listed in RGB order, to the BGR channels as is):
// (x * float32(1/255) - mean[c]) / std[c], all in float32. Writes into `out` at `offset`.
export function detNormalize(img, out = new Float32Array(3 * img.height * img.width), offset = 0) {
  const { width: w, height: h, data } = img;
  const plane = h * w;
  for (let c = 0; c < 3; c++) {
    const m = DET_MEAN[c];
    const s = DET_STD[c];
    const o = offset + c * plane;
    for (let i = 0; i < plane; i++) out[o + i] = f32(f32(f32(data[3 * i + c] * INV255) - m) / s);
  }
  return out;
}

export function resizeBGR(cv, img, w, h, interpolation) {
  const src = bgrToMat(cv, img);
  const dst = new cv.Mat();
  cv.resize(src, dst, new cv.Size(w, h), 0, 0, interpolation ?? cv.INTER_LINEAR);
  const out = matToBGR(dst);
  src.delete();
  dst.delete();
  return out;
}

// Detector input for one image: {tensor data, shape, ratios}.
export function detPreprocess(cv, img, limitSideLen = 960) {
  const { rh, rw, ratioH, ratioW } = detResizeShape(img.height, img.width, limitSideLen);
  const resized = resizeBGR(cv, img, rw, rh);
  return { data: detNormalize(resized), shape: [1, 3, rh, rw], ratioH, ratioW };
}

// cv2.boxPoints order sorted by x, then arranged clockwise from the top-left:
// PaddleOCR's DBPostProcess.get_mini_boxes. `points` is an int32 cv.Mat (N x 1 x 2).
function getMiniBoxes(cv, pointsMat) {
  const rect = cv.minAreaRect(pointsMat);
  const pts = cv.boxPoints(rect).map((p) => [p.x, p.y]);
  pts.sort((a, b) => a[0] - b[0]); // Array.prototype.sort is stable, like Python's sorted
  let i1, i2, i3, i4;
  if (pts[1][1] > pts[0][1]) [i1, i4] = [0, 1];
  else [i1, i4] = [1, 0];
  if (pts[3][1] > pts[2][1]) [i2, i3] = [2, 3];
  else [i2, i3] = [3, 2];
  return { box: [pts[i1], pts[i2], pts[i3], pts[i4]], sside: Math.min(rect.size.width, rect.size.height) };
}

// Mean of `pred` inside the polygon `box` (float points), over its bounding box:
// DBPostProcess.box_score_fast.
function boxScoreFast(cv, pred, h, w, box) {
  const xs = box.map((p) => p[0]);
  const ys = box.map((p) => p[1]);
  const clip = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
  const xmin = clip(Math.floor(Math.min(...xs)), 0, w - 1);
  const xmax = clip(Math.ceil(Math.max(...xs)), 0, w - 1);
  const ymin = clip(Math.floor(Math.min(...ys)), 0, h - 1);
  const ymax = clip(Math.ceil(Math.max(...ys)), 0, h - 1);
  const mh = ymax - ymin + 1;
  const mw = xmax - xmin + 1;
  const mask = cv.Mat.zeros(mh, mw, cv.CV_8UC1);
  // (box - [xmin, ymin]).astype(int32): float32 subtraction, truncation toward zero
  const flat = [];
  for (const [x, y] of box) flat.push(Math.trunc(f32(x - xmin)), Math.trunc(f32(y - ymin)));
  const poly = cv.matFromArray(box.length, 1, cv.CV_32SC2, flat);
  const polys = new cv.MatVector();
  polys.push_back(poly);
  cv.fillPoly(mask, polys, new cv.Scalar(1));
  let sum = 0;
  let n = 0;
  const md = mask.data;
  for (let y = 0; y < mh; y++) {
    const row = (ymin + y) * w + xmin;
    for (let x = 0; x < mw; x++) {
      if (md[y * mw + x]) {
        sum += pred[row + x];
        n++;
      }
    }
  }
  polys.delete();
  poly.delete();
  mask.delete();
  return n ? sum / n : 0;
}

// Shapely area and perimeter of the closed polygon, then a pyclipper round-join
// offset by area * ratio / perimeter. pyclipper converts the float corners to
// integers by truncation. Returns the list of offset paths.
function unclip(box, unclipRatio) {
  let area2 = 0;
  let length = 0;
  for (let i = 0; i < box.length; i++) {
    const [x0, y0] = box[i];
    const [x1, y1] = box[(i + 1) % box.length];
    area2 += x0 * y1 - x1 * y0;
    length += Math.hypot(x1 - x0, y1 - y0);
  }
  const distance = ((Math.abs(area2) / 2) * unclipRatio) / length;
  const co = new ClipperLib.ClipperOffset(2.0, 0.25);
  co.AddPath(
    box.map(([x, y]) => ({ X: Math.trunc(x), Y: Math.trunc(y) })),
    ClipperLib.JoinType.jtRound,
    ClipperLib.EndType.etClosedPolygon,
  );
  const solution = new ClipperLib.Paths();
  co.Execute(solution, distance);
  return solution;
}

// DBPostProcess.boxes_from_bitmap (box_type "quad", score_mode "fast") on one
// probability map `pred` (Float32Array, h x w). Returns boxes in the source image
// frame (dest_w x dest_h) with integer corners, and their scores.
export function dbPostprocess(cv, pred, h, w, destW, destH, opt = {}) {
  const thresh = opt.thresh ?? 0.3;
  const boxThresh = opt.boxThresh ?? 0.6;
  const unclipRatio = opt.unclipRatio ?? 1.5;
  const maxCandidates = opt.maxCandidates ?? 1000;
  const minSize = 3;
  const bitmap = new cv.Mat(h, w, cv.CV_8UC1);
  const bd = bitmap.data;
  const t = f32(thresh);
  for (let i = 0; i < h * w; i++) bd[i] = pred[i] > t ? 255 : 0;
  const contours = new cv.MatVector();
  const hierarchy = new cv.Mat();
  cv.findContours(bitmap, contours, hierarchy, cv.RETR_LIST, cv.CHAIN_APPROX_SIMPLE);
  const boxes = [];
  const scores = [];
  const n = Math.min(contours.size(), maxCandidates);
  for (let i = 0; i < n; i++) {
    const contour = contours.get(i);
    const { box: points, sside } = getMiniBoxes(cv, contour);
    contour.delete();
    if (sside < minSize) continue;
    const score = boxScoreFast(cv, pred, h, w, points);
    if (boxThresh > score) continue;
    const expanded = unclip(points, unclipRatio);
    if (expanded.length !== 1 || expanded[0].length === 0) continue;
    const flat = [];
    for (const p of expanded[0]) flat.push(p.X, p.Y);
    const eMat = cv.matFromArray(expanded[0].length, 1, cv.CV_32SC2, flat);
    const { box, sside: sside2 } = getMiniBoxes(cv, eMat);
    eMat.delete();
    if (sside2 < minSize + 2) continue;
    // np.clip(np.round(box / width * dest_width), 0, dest_width) in float32
    const out = box.map(([x, y]) => [
      Math.min(Math.max(roundHalfEven(f32(f32(x / w) * destW)), 0), destW),
      Math.min(Math.max(roundHalfEven(f32(f32(y / h) * destH)), 0), destH),
    ]);
    boxes.push(out);
    scores.push(score);
  }
  contours.delete();
  hierarchy.delete();
  bitmap.delete();
  return { boxes, scores };
}

// TextDetector.order_points_clockwise: top-left has the smallest x+y, bottom-right
// the largest; of the other two, top-right has the smaller y-x (np.argmin/argmax
// take the first on ties, np.delete removes both picked indices).
function orderPointsClockwise(pts) {
  const s = pts.map((p) => p[0] + p[1]);
  let amin = 0;
  let amax = 0;
  for (let i = 1; i < 4; i++) {
    if (s[i] < s[amin]) amin = i;
    if (s[i] > s[amax]) amax = i;
  }
  const tmp = pts.filter((_, i) => i !== amin && i !== amax);
  const diff = tmp.map((p) => p[1] - p[0]);
  let dmin = 0;
  let dmax = 0;
  for (let i = 1; i < tmp.length; i++) {
    if (diff[i] < diff[dmin]) dmin = i;
    if (diff[i] > diff[dmax]) dmax = i;
  }
  return [pts[amin], tmp[dmin], pts[amax], tmp[dmax]];
}

const norm32 = (a, b) => f32(Math.sqrt(f32(f32((a[0] - b[0]) ** 2) + f32((a[1] - b[1]) ** 2))));

// TextDetector.filter_tag_det_res: order corners, clip to the image, drop boxes
// whose first edge or first side is at most 3 pixels. Keeps `scores` aligned.
export function filterDetResults(boxes, scores, imgH, imgW) {
  const outBoxes = [];
  const outScores = [];
  boxes.forEach((b, k) => {
    let box = orderPointsClockwise(b);
    box = box.map(([x, y]) => [
      Math.trunc(Math.min(Math.max(x, 0), imgW - 1)),
      Math.trunc(Math.min(Math.max(y, 0), imgH - 1)),
    ]);
    const rw = Math.trunc(norm32(box[0], box[1]));
    const rh = Math.trunc(norm32(box[0], box[3]));
    if (rw <= 3 || rh <= 3) return;
    outBoxes.push(box);
    outScores.push(scores[k]);
  });
  return { boxes: outBoxes, scores: outScores };
}

// predict_system.sorted_boxes: sort by the top-left corner (y, then x), then
// bubble boxes on nearly the same line (|dy| < 10) into left-to-right order.
// Returns the permutation (indices into `boxes`).
export function sortedBoxOrder(boxes) {
  const idx = boxes.map((_, i) => i);
  idx.sort((a, b) => boxes[a][0][1] - boxes[b][0][1] || boxes[a][0][0] - boxes[b][0][0]);
  for (let i = 0; i < idx.length - 1; i++) {
    for (let j = i; j >= 0; j--) {
      const bj = boxes[idx[j]][0];
      const bn = boxes[idx[j + 1]][0];
      if (Math.abs(bn[1] - bj[1]) < 10 && bn[0] < bj[0]) {
        [idx[j], idx[j + 1]] = [idx[j + 1], idx[j]];
      } else {
        break;
      }
    }
  }
  return idx;
}

// utility.get_rotate_crop_image: perspective crop of the quad to a
// width x height image (bicubic, replicated border); crops at least 1.5 times
// taller than wide are turned 90 degrees counter-clockwise (np.rot90).
export function getRotateCropImage(cv, srcMat, box) {
  const cw = Math.trunc(Math.max(norm32(box[0], box[1]), norm32(box[2], box[3])));
  const ch = Math.trunc(Math.max(norm32(box[0], box[3]), norm32(box[1], box[2])));
  const src = cv.matFromArray(4, 1, cv.CV_32FC2, box.flat());
  const dst = cv.matFromArray(4, 1, cv.CV_32FC2, [0, 0, cw, 0, cw, ch, 0, ch]);
  const M = cv.getPerspectiveTransform(src, dst);
  const crop = new cv.Mat();
  cv.warpPerspective(srcMat, crop, M, new cv.Size(cw, ch), cv.INTER_CUBIC, cv.BORDER_REPLICATE, new cv.Scalar());
  src.delete();
  dst.delete();
  M.delete();
  let out = crop;
  if (crop.rows / crop.cols >= 1.5) {
    out = new cv.Mat();
    cv.rotate(crop, out, cv.ROTATE_90_COUNTERCLOCKWISE);
    crop.delete();
  }
  const img = matToBGR(out);
  out.delete();
  return img;
}

export function rotate180(img) {
  const n = img.width * img.height;
  const data = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    const j = n - 1 - i;
    data[3 * i] = img.data[3 * j];
    data[3 * i + 1] = img.data[3 * j + 1];
    data[3 * i + 2] = img.data[3 * j + 2];
  }
  return { width: img.width, height: img.height, data };
}

// ------------------------------------------------------- classifier, recognizer --

// resize_norm_img of predict_cls / predict_rec: resize to height imgH keeping the
// aspect ratio (width ceil(imgH * w / h), at most imgW; bilinear), scale to
// [-1, 1] as ((x / 255) - 0.5) / 0.5 in float32, channels in BGR order, and pad
// with zeros on the right up to imgW. Writes into `out` at `offset`.
export function resizeNormPad(cv, img, imgH, imgW, out, offset) {
  const ratio = img.width / img.height;
  const resizedW = Math.ceil(imgH * ratio) > imgW ? imgW : Math.ceil(imgH * ratio);
  const r = resizeBGR(cv, img, resizedW, imgH);
  const plane = imgH * imgW;
  for (let c = 0; c < 3; c++) {
    const o = offset + c * plane;
    for (let y = 0; y < imgH; y++) {
      for (let x = 0; x < imgW; x++) {
        out[o + y * imgW + x] = x < resizedW ? f32(f32(f32(r.data[3 * (y * resizedW + x) + c] / 255) - 0.5) / 0.5) : 0;
      }
    }
  }
  return out;
}

// Character list of CTCLabelDecode: "blank", the dictionary lines, then " ".
export function loadCharacters(dictPath) {
  const text = fs.readFileSync(dictPath, 'utf8');
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return ['blank', ...lines.map((l) => l.replace(/\r$/, '')), ' '];
}

// CTCLabelDecode (greedy): argmax per step, merge repeats, drop blanks (index 0);
// the score is the mean of the kept steps' probabilities (0 if none).
export function ctcDecode(probs, T, C, characters, offset = 0) {
  let text = '';
  let sum = 0;
  let kept = 0;
  let prev = -1;
  for (let t = 0; t < T; t++) {
    const base = offset + t * C;
    let best = 0;
    let bestP = probs[base];
    for (let c = 1; c < C; c++) {
      if (probs[base + c] > bestP) {
        bestP = probs[base + c];
        best = c;
      }
    }
    if (best !== 0 && best !== prev) {
      text += characters[best] ?? '';
      sum += bestP;
      kept++;
    }
    prev = best;
  }
  return { text, score: kept ? f32(sum / kept) : 0 };
}
