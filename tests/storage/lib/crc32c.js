"use strict";
// CRC32C (Castagnoli), slicing-by-8, so the test server can check an
// upload's checksum as its chunks arrive instead of re-reading the object.
const T = [];
for (let k = 0; k < 8; k++) T.push(new Int32Array(256));
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
  T[0][n] = c;
}
for (let n = 0; n < 256; n++) {
  for (let k = 1; k < 8; k++) T[k][n] = (T[k - 1][n] >>> 8) ^ T[0][T[k - 1][n] & 0xff];
}
const [T0, T1, T2, T3, T4, T5, T6, T7] = T;

// Extends `crc` (a finished CRC32C of the bytes before, 0 for none) over buf.
// Reads 8 bytes at a time as two little-endian words (x86-64 and arm64).
function update(crc, buf) {
  let c = ~crc;
  let i = 0;
  const head = Math.min(buf.length, (4 - (buf.byteOffset & 3)) & 3);
  for (; i < head; i++) c = (c >>> 8) ^ T0[(c ^ buf[i]) & 0xff];
  const pairs = (buf.length - i) >>> 3;
  // An empty view still needs an aligned offset, which a short buffer lacks.
  const w = pairs ? new Int32Array(buf.buffer, buf.byteOffset + i, pairs * 2) : [];
  for (let j = 0; j < w.length; j += 2) {
    const a = c ^ w[j];
    const b = w[j + 1];
    c =
      T7[a & 0xff] ^
      T6[(a >>> 8) & 0xff] ^
      T5[(a >>> 16) & 0xff] ^
      T4[a >>> 24] ^
      T3[b & 0xff] ^
      T2[(b >>> 8) & 0xff] ^
      T1[(b >>> 16) & 0xff] ^
      T0[b >>> 24];
  }
  for (i += pairs * 8; i < buf.length; i++) c = (c >>> 8) ^ T0[(c ^ buf[i]) & 0xff];
  return ~c >>> 0;
}

// The form GCS uses in JSON metadata and x-goog-hash: base64 of 4 big-endian bytes.
function toBase64(crc) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc >>> 0);
  return b.toString("base64");
}

module.exports = { update, toBase64 };
