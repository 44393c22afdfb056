#!/usr/bin/env node
// Draws a deterministic test page for ocr_pipeline.mjs with OpenCV's Hershey
// fonts: lines of several sizes and colours, one tilted by a few degrees and one
// upside down (for the orientation classifier). Writes PNG or JPEG by extension.
//   node make_test_image.mjs OUT.png|OUT.jpg [--width 800] [--height 600]
import path from 'node:path';
import { runMain, parseArgs, UsageError, loadCv } from './lib/common.mjs';
import { writePNGFromBGR, writeJPEGFromBGR, matToBGR } from './lib/image.mjs';

const USAGE = `
usage: node make_test_image.mjs OUT.png|OUT.jpg [--width 800] [--height 600]
`;

function pasteLine(cv, page, { text, x, y, scale, thick, color, angle = 0, upsideDown = false }) {
  const font = cv.FONT_HERSHEY_SIMPLEX;
  // opencv-js has no getTextSize: a Hershey simplex glyph is at most ~22 units
  // wide and the cap height 21 units (times `scale`); the patch is white, so a
  // generous estimate costs nothing.
  const pad = Math.round(10 * scale);
  const capH = Math.ceil(22 * scale);
  const w = Math.ceil(text.length * 22 * scale) + 2 * pad;
  const h = capH + Math.ceil(10 * scale) + 2 * pad;
  const patch = new cv.Mat(h, w, cv.CV_8UC3, new cv.Scalar(255, 255, 255, 255));
  cv.putText(patch, text, new cv.Point(pad, pad + capH), font, scale, new cv.Scalar(...color, 255), thick, cv.LINE_AA);
  let img = patch;
  if (upsideDown) {
    img = new cv.Mat();
    cv.rotate(patch, img, cv.ROTATE_180);
    patch.delete();
  }
  if (angle) {
    const diag = Math.ceil(Math.hypot(w, h));
    const big = new cv.Mat();
    cv.copyMakeBorder(img, big, (diag - h) >> 1, (diag - h) >> 1, (diag - w) >> 1, (diag - w) >> 1, cv.BORDER_CONSTANT, new cv.Scalar(255, 255, 255, 255));
    const M = cv.getRotationMatrix2D(new cv.Point(big.cols / 2, big.rows / 2), angle, 1);
    const rot = new cv.Mat();
    cv.warpAffine(big, rot, M, new cv.Size(big.cols, big.rows), cv.INTER_LINEAR, cv.BORDER_CONSTANT, new cv.Scalar(255, 255, 255, 255));
    img.delete();
    big.delete();
    M.delete();
    img = rot;
  }
  // multiply-blend (dark ink over the page)
  const pd = page.data;
  const id = img.data;
  for (let yy = 0; yy < img.rows; yy++) {
    for (let xx = 0; xx < img.cols; xx++) {
      const py = y + yy;
      const px = x + xx;
      if (py < 0 || px < 0 || py >= page.rows || px >= page.cols) continue;
      for (let c = 0; c < 3; c++) {
        const i = (py * page.cols + px) * 3 + c;
        pd[i] = Math.round((pd[i] * id[(yy * img.cols + xx) * 3 + c]) / 255);
      }
    }
  }
  img.delete();
}

runMain('make_test_image', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), {
    width: { type: 'int', default: 800, min: 64 },
    height: { type: 'int', default: 600, min: 64 },
  });
  if (opts.help) {
    process.stdout.write(USAGE.trimStart());
    return;
  }
  if (positional.length !== 1) throw new UsageError('give one output path');
  const out = positional[0];
  const ext = path.extname(out).toLowerCase();
  if (!['.png', '.jpg', '.jpeg'].includes(ext)) throw new UsageError('the output must end in .png, .jpg or .jpeg');
  const { cv } = await loadCv();
  const { width: W, height: H } = opts;
  const page = new cv.Mat(H, W, cv.CV_8UC3, new cv.Scalar(238, 242, 245, 255));
  const s = W / 800;
  const lines = [
    { text: 'Invoice No. 20240917', x: 40 * s, y: 30 * s, scale: 1.3 * s, thick: 3, color: [20, 20, 20] },
    { text: 'Deep learning toolkit skiff', x: 40 * s, y: 110 * s, scale: 1.0 * s, thick: 2, color: [90, 30, 10] },
    { text: 'Total: 1234.56 USD', x: 40 * s, y: 180 * s, scale: 1.1 * s, thick: 2, color: [30, 30, 140] },
    { text: 'ONNX Runtime reference', x: 420 * s, y: 185 * s, scale: 0.8 * s, thick: 2, color: [40, 40, 40] },
    { text: 'tilted line of text', x: 40 * s, y: 260 * s, scale: 1.0 * s, thick: 2, color: [20, 60, 20], angle: 6 },
    { text: 'Upside 42', x: 60 * s, y: 330 * s, scale: 1.2 * s, thick: 2, color: [10, 10, 10], upsideDown: true },
    { text: 'small print 0123456789', x: 450 * s, y: 420 * s, scale: 0.6 * s, thick: 1, color: [60, 60, 60] },
    { text: 'THE END', x: 520 * s, y: 500 * s, scale: 1.4 * s, thick: 3, color: [0, 0, 0] },
  ];
  for (const l of lines) pasteLine(cv, page, { ...l, x: Math.round(l.x), y: Math.round(l.y) });
  const img = matToBGR(page);
  page.delete();
  if (ext === '.png') writePNGFromBGR(out, img);
  else writeJPEGFromBGR(out, img, 92);
  console.log(`wrote ${out} (${W}x${H})`);
});
