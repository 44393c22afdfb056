// Image decoding/encoding to the layout OpenCV uses: 8-bit, H x W x 3, BGR order,
// rows packed. Decoding follows cv2.imread(path, IMREAD_COLOR): grey is replicated
// to three channels and an alpha channel is dropped (not blended). EXIF
// orientation is not applied (cv2.imread would rotate such JPEGs).
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function deps() {
  try {
    return { PNG: require('pngjs').PNG, jpeg: require('jpeg-js') };
  } catch (e) {
    throw new Error(`${e.message}\nrun: (cd tests/tools/ort && npm ci)`);
  }
}

// Returns {width, height, data: Uint8Array(height*width*3) in BGR order}.
export function readImageBGR(path) {
  let buf;
  try {
    buf = fs.readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read image '${path}': ${e.message}`);
  }
  const { PNG, jpeg } = deps();
  let rgba, width, height;
  if (buf.length >= 8 && buf.readUInt32BE(0) === 0x89504e47) {
    let png;
    try {
      png = PNG.sync.read(buf);
    } catch (e) {
      throw new Error(`'${path}' is not a readable PNG: ${e.message}`);
    }
    ({ width, height } = png);
    rgba = png.data;
  } else if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) {
    let img;
    try {
      img = jpeg.decode(buf, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: 400, maxMemoryUsageInMB: 4096 });
    } catch (e) {
      throw new Error(`'${path}' is not a readable JPEG: ${e.message}`);
    }
    ({ width, height } = img);
    rgba = img.data;
  } else {
    throw new Error(`'${path}' is neither a PNG nor a JPEG`);
  }
  const n = width * height;
  const data = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    data[3 * i] = rgba[4 * i + 2];
    data[3 * i + 1] = rgba[4 * i + 1];
    data[3 * i + 2] = rgba[4 * i];
  }
  return { width, height, data };
}

export function writePNGFromBGR(path, img) {
  const { PNG } = deps();
  const png = new PNG({ width: img.width, height: img.height });
  const n = img.width * img.height;
  for (let i = 0; i < n; i++) {
    png.data[4 * i] = img.data[3 * i + 2];
    png.data[4 * i + 1] = img.data[3 * i + 1];
    png.data[4 * i + 2] = img.data[3 * i];
    png.data[4 * i + 3] = 255;
  }
  fs.writeFileSync(path, PNG.sync.write(png));
}

export function writeJPEGFromBGR(path, img, quality = 95) {
  const { jpeg } = deps();
  const n = img.width * img.height;
  const rgba = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    rgba[4 * i] = img.data[3 * i + 2];
    rgba[4 * i + 1] = img.data[3 * i + 1];
    rgba[4 * i + 2] = img.data[3 * i];
    rgba[4 * i + 3] = 255;
  }
  fs.writeFileSync(path, jpeg.encode({ data: rgba, width: img.width, height: img.height }, quality).data);
}

// BGR image <-> cv.Mat (CV_8UC3). The caller deletes the Mat.
export function bgrToMat(cv, img) {
  const m = new cv.Mat(img.height, img.width, cv.CV_8UC3);
  m.data.set(img.data);
  return m;
}

export function matToBGR(mat) {
  return { width: mat.cols, height: mat.rows, data: new Uint8Array(mat.data) };
}
