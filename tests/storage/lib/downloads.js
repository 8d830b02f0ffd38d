"use strict";
// Media downloads (alt=media), served by streaming the stored blob from
// disk: the emulator itself reads the whole object into memory for every
// request, ignores `generation=`, and answers a Range past the end with the
// whole object where Cloud Storage answers 416.
const fs = require("fs");

const MEDIA_PATH = /^(?:\/download)?(?:\/storage\/v1)?\/b\/([^/]+)\/o\/(.+)$/;

function sendError(res, status, message) {
  const body = JSON.stringify({ error: { code: status, message, errors: [{ message, domain: "global" }] } });
  res.writeHead(status, { "Content-Type": "application/json; charset=UTF-8", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

// Parses one "bytes=" range against `size`: {start, end} (inclusive),
// "unsatisfiable", or null when the header is absent or not understood
// (then the whole object is sent, as HTTP says).
function parseRange(header, size) {
  if (!header) return null;
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*(?:,.*)?$/.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === "" ? Infinity : Number(m[2]);
  if (last < start) return null;
  if (start >= size) return "unsatisfiable";
  const end = Math.min(last, size - 1);
  return { start, end };
}

// Serves the request if it is a media download; returns false otherwise.
function handleDownload(store, req, res, url) {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (url.searchParams.get("alt") !== "media") return false;
  const m = MEDIA_PATH.exec(url.pathname);
  if (!m) return false;
  const bucket = decodeURIComponent(m[1]);
  const name = decodeURIComponent(m[2]);
  const obj = store.lookup(bucket, name);
  if (obj && obj.metadata.contentEncoding === "gzip") return false; // the emulator's transcoding
  const gen = url.searchParams.get("generation");
  if (!obj || (gen !== null && gen !== String(obj.metadata.generation))) {
    sendError(res, 404, `No such object: ${bucket}/${name}${gen !== null ? `#${gen}` : ""}`);
    return true;
  }
  const md = obj.metadata;
  const size = Number(md.size);
  const headers = {
    "Content-Type": md.contentType || "application/octet-stream",
    "Accept-Ranges": "bytes",
    ETag: md.etag,
    "x-goog-generation": String(md.generation),
    "x-goog-metageneration": String(md.metageneration),
    "x-goog-stored-content-length": String(size),
    "x-goog-stored-content-encoding": "identity",
    "x-goog-storage-class": md.storageClass,
    "x-goog-hash": `crc32c=${store.crcBase64(md)},md5=${md.md5Hash}`,
  };
  const range = parseRange(req.headers.range, size);
  if (range === "unsatisfiable") {
    res.setHeader("Content-Range", `bytes */${size}`);
    sendError(res, 416, "Request range not satisfiable");
    return true;
  }
  let start = 0;
  let end = size - 1;
  let status = 200;
  if (range) {
    ({ start, end } = range);
    status = 206;
    headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
  }
  headers["Content-Length"] = String(end - start + 1);
  res.writeHead(status, headers);
  if (req.method === "HEAD" || size === 0) {
    res.end();
    return true;
  }
  // The stream keeps the file open, so an overwrite during the download
  // (which replaces the blob) cannot mix two generations.
  const fd = fs.openSync(obj.diskPath, "r");
  const stream = fs.createReadStream(null, { fd, start, end, highWaterMark: 1 << 20 });
  stream.on("error", (err) => {
    console.error(`gcs_emulator: reading ${bucket}/${name}: ${err.message}`);
    res.destroy();
  });
  res.on("close", () => stream.destroy());
  stream.pipe(res);
  return true;
}

module.exports = { handleDownload, sendError, parseRange };
