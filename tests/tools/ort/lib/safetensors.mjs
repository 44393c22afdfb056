// Minimal safetensors reader/writer (https://huggingface.co/docs/safetensors).
// Layout: u64 little-endian header length N, N bytes of JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str}},
// then the data buffer; offsets are relative to the buffer start and the tensors
// tile the buffer without gaps. The header is padded with spaces to a multiple of
// 8 bytes so that every tensor in the buffer starts 8-byte aligned.
import fs from 'node:fs';

// safetensors dtype -> [typed array constructor, ORT tensor type]
const DTYPES = {
  F64: [Float64Array, 'float64'],
  F32: [Float32Array, 'float32'],
  I64: [BigInt64Array, 'int64'],
  U64: [BigUint64Array, 'uint64'],
  I32: [Int32Array, 'int32'],
  U32: [Uint32Array, 'uint32'],
  I16: [Int16Array, 'int16'],
  U16: [Uint16Array, 'uint16'],
  I8: [Int8Array, 'int8'],
  U8: [Uint8Array, 'uint8'],
  BOOL: [Uint8Array, 'bool'],
};
const ORT_TO_ST = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v[1], k]));

export class SafetensorsError extends Error {}

function numel(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

// Returns {tensors: Map<name, {dtype, shape, data}>, metadata}. `data` is a typed
// array holding a copy of the bytes (so it is aligned whatever the file offset).
export function readSafetensors(path) {
  let buf;
  try {
    buf = fs.readFileSync(path);
  } catch (e) {
    throw new SafetensorsError(`cannot read ${path}: ${e.message}`);
  }
  if (buf.length < 8) throw new SafetensorsError(`${path}: ${buf.length} bytes, shorter than the 8-byte header length`);
  const n = buf.readBigUInt64LE(0);
  if (n > BigInt(buf.length - 8)) throw new SafetensorsError(`${path}: header length ${n} exceeds the file (truncated?)`);
  const hlen = Number(n);
  let header;
  try {
    header = JSON.parse(buf.subarray(8, 8 + hlen).toString('utf8'));
  } catch (e) {
    throw new SafetensorsError(`${path}: header is not valid JSON (${e.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header))
    throw new SafetensorsError(`${path}: header is not a JSON object`);
  const dataStart = 8 + hlen;
  const bufferSize = buf.length - dataStart;
  const tensors = new Map();
  let metadata = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = info;
      continue;
    }
    const fail = (what) => {
      throw new SafetensorsError(`${path}: tensor '${name}': ${what}`);
    };
    if (!info || typeof info !== 'object') fail('entry is not an object');
    const spec = DTYPES[info.dtype];
    if (!spec) fail(`unsupported dtype '${info.dtype}'`);
    if (!Array.isArray(info.shape) || !info.shape.every((d) => Number.isInteger(d) && d >= 0)) fail('bad shape');
    const off = info.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isInteger(d) && d >= 0)) fail('bad data_offsets');
    const [begin, end] = off;
    const [Ctor, ortType] = spec;
    const nbytes = numel(info.shape) * Ctor.BYTES_PER_ELEMENT;
    if (end < begin || end > bufferSize) fail(`data_offsets [${begin}, ${end}] outside the ${bufferSize}-byte buffer`);
    if (end - begin !== nbytes) fail(`data_offsets hold ${end - begin} bytes, dtype and shape need ${nbytes}`);
    const bytes = new Uint8Array(nbytes);
    buf.copy(bytes, 0, dataStart + begin, dataStart + end);
    const data = new Ctor(bytes.buffer, 0, nbytes / Ctor.BYTES_PER_ELEMENT);
    tensors.set(name, { dtype: info.dtype, ortType, shape: info.shape.slice(), data });
  }
  return { tensors, metadata };
}

function stDtypeOf(t) {
  if (t.dtype) return t.dtype;
  if (t.data instanceof Float32Array) return 'F32';
  if (t.data instanceof Float64Array) return 'F64';
  if (t.data instanceof BigInt64Array) return 'I64';
  if (t.data instanceof Int32Array) return 'I32';
  if (t.data instanceof Uint8Array) return 'U8';
  throw new SafetensorsError('cannot infer the dtype of a tensor; pass {dtype}');
}

export function ortTypeToSafetensors(type) {
  const d = ORT_TO_ST[type];
  if (!d) throw new SafetensorsError(`ORT type '${type}' has no safetensors dtype here`);
  return d;
}

// `entries`: iterable of [name, {shape, data: TypedArray, dtype?}] written in the
// order given (little-endian host assumed, as on x86-64 and arm64).
export function writeSafetensors(path, entries, metadata = undefined) {
  const header = {};
  if (metadata && Object.keys(metadata).length) header.__metadata__ = metadata;
  const chunks = [];
  let offset = 0;
  for (const [name, t] of entries) {
    if (name === '__metadata__') throw new SafetensorsError("'__metadata__' cannot name a tensor");
    const dtype = stDtypeOf(t);
    const Ctor = DTYPES[dtype][0];
    if (!(t.data instanceof Ctor)) throw new SafetensorsError(`tensor '${name}': data is not a ${Ctor.name} for ${dtype}`);
    if (numel(t.shape) !== t.data.length)
      throw new SafetensorsError(`tensor '${name}': shape [${t.shape}] does not match ${t.data.length} elements`);
    const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    header[name] = { dtype, shape: t.shape.map(Number), data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
    chunks.push(bytes);
  }
  let json = JSON.stringify(header);
  const hbytes = Buffer.byteLength(json, 'utf8');
  json += ' '.repeat((8 - (hbytes % 8)) % 8);
  const hbuf = Buffer.from(json, 'utf8');
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(hbuf.length));
  fs.writeFileSync(path, Buffer.concat([prefix, hbuf, ...chunks]));
}
