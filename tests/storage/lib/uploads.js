"use strict";
// Uploads the way Cloud Storage does them, in front of the emulator (which
// finalizes a resumable session on its first PUT and checks no hashes):
// - resumable sessions: chunked PUTs with Content-Range get 308 + Range
//   until the final one; a non-final chunk commits only whole 256 KiB
//   units, like the real service may, so clients must honour Range;
//   `bytes */TOTAL` / `bytes */*` query the session; DELETE cancels (499);
//   a connection lost mid-chunk keeps the whole units received;
// - media and multipart uploads, streamed / buffered;
// - crc32c / md5Hash from the object metadata or an X-Goog-Hash header are
//   checked at finalize: a mismatch is 400 and no object appears;
// - ifGenerationMatch is honoured (412).
const fs = require("fs");
const crypto = require("crypto");
const crc32c = require("./crc32c");
const { sendError } = require("./downloads");

const UPLOAD_PATH = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/;
const UNIT = 256 * 1024;
const MAX_JSON = 1 << 20;
const MAX_MULTIPART = 512 << 20;

class Hasher {
  constructor() {
    this.crc = 0;
    this.md5 = crypto.createHash("md5");
  }

  update(buf) {
    this.crc = crc32c.update(this.crc, buf);
    this.md5.update(buf);
  }
}

function httpError(status, message) {
  const e = new Error(message);
  e.status = status;
  return e;
}

function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const parts = [];
    let n = 0;
    req.on("data", (b) => {
      n += b.length;
      if (n > limit) {
        reject(httpError(413, `request body over ${limit} bytes`));
        req.destroy();
        return;
      }
      parts.push(b);
    });
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
    req.on("close", () => req.complete || reject(httpError(400, "connection closed before the body ended")));
  });
}

function sendJson(res, status, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json; charset=UTF-8", "Content-Length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

function sendEmpty(res, status, headers = {}) {
  res.writeHead(status, { "Content-Length": "0", ...headers });
  res.end();
}

// The hashes a client asked the server to check: from the object resource
// and/or an X-Goog-Hash header ("crc32c=<b64>,md5=<b64>").
function expectedHashes(metadata, goog) {
  const want = {};
  if (metadata && metadata.crc32c) want.crc32c = String(metadata.crc32c);
  if (metadata && metadata.md5Hash) want.md5 = String(metadata.md5Hash);
  for (const part of String(goog || "").split(",")) {
    const m = /^\s*(crc32c|md5)=(.+?)\s*$/.exec(part);
    if (m) want[m[1]] = m[2];
  }
  return want;
}

// Splits a multipart/related upload (metadata part, then media part)
// without copying the media (the emulator's parser copies it three times).
function parseRelated(ctype, body) {
  const m = /^multipart\/related\s*;.*\bboundary=(?:"([^"]+)"|([^\s;]+))/i.exec(ctype);
  if (!m) throw httpError(400, `bad Content-Type for a multipart upload: ${ctype}`);
  const delim = Buffer.from(`--${m[1] || m[2]}`);
  const parts = [];
  let at = body.indexOf(delim);
  while (at !== -1 && parts.length < 3) {
    const start = at + delim.length;
    if (body.subarray(start, start + 2).toString() === "--") break;
    const next = body.indexOf(delim, start);
    if (next === -1) break;
    // The part runs from the line after the delimiter to the CRLF before the next.
    const end = next >= 2 && body[next - 2] === 13 && body[next - 1] === 10 ? next - 2 : next;
    const head = body.indexOf("\r\n\r\n", start);
    if (head === -1 || head > end) throw httpError(400, "multipart part without headers");
    parts.push(body.subarray(head + 4, end));
    at = next;
  }
  if (parts.length !== 2) throw httpError(400, `multipart upload with ${parts.length} parts, want 2`);
  return { metadataRaw: parts[0].toString("utf8"), dataRaw: parts[1] };
}

class Uploads {
  constructor(store) {
    this.store = store;
    this.sessions = new Map();
  }

  // Serves the request if it is an upload; returns false otherwise.
  handle(req, res, url) {
    const m = UPLOAD_PATH.exec(url.pathname);
    if (!m) return false;
    const bucket = decodeURIComponent(m[1]);
    const q = url.searchParams;
    const id = q.get("upload_id");
    const run = (p) =>
      p.catch((e) => {
        if (res.headersSent || res.destroyed) return;
        if (e.status) sendError(res, e.status, e.message);
        else {
          console.error(`gcs_emulator: ${req.method} ${req.url}: ${e.stack}`);
          sendError(res, 500, e.message);
        }
      });
    if (id !== null) {
      const s = this.sessions.get(id);
      if (!s) {
        req.resume();
        sendError(res, 404, `No such upload session: ${id}`);
      } else if (req.method === "DELETE") this.cancel(s, req, res);
      else if (req.method === "PUT" || req.method === "POST") this.chunk(s, req, res);
      else return false;
      return true;
    }
    if (req.method !== "POST") return false;
    const type = q.get("uploadType") || req.headers["x-goog-upload-protocol"] || "media";
    if (type === "resumable") run(this.start(bucket, req, res, q));
    else if (type === "multipart") run(this.multipart(bucket, req, res, q));
    else if (type === "media") run(this.media(bucket, req, res, q));
    else sendError(res, 400, `unknown uploadType ${type}`);
    return true;
  }

  async start(bucket, req, res, q) {
    const body = await readBody(req, MAX_JSON);
    let metadata = {};
    if (body.length) {
      try {
        metadata = JSON.parse(body.toString("utf8"));
      } catch (e) {
        throw httpError(400, `bad JSON object resource: ${e.message}`);
      }
    }
    const name = q.get("name") || metadata.name;
    if (!name) throw httpError(400, "Required parameter: name");
    if (req.headers["x-upload-content-type"] && !metadata.contentType)
      metadata.contentType = req.headers["x-upload-content-type"];
    const total = req.headers["x-upload-content-length"];
    const id = crypto.randomBytes(16).toString("hex");
    const staging = this.store.stagingPath();
    const s = {
      id,
      bucket,
      name,
      metadata,
      ifGenerationMatch: q.get("ifGenerationMatch"),
      declaredTotal: total !== undefined ? Number(total) : null,
      staging,
      fd: fs.openSync(staging, "w+"),
      committed: 0,
      hasher: new Hasher(),
      state: "active",
      result: null,
      failure: null,
      active: null,
    };
    this.sessions.set(id, s);
    const loc = new URL(`http://${req.headers.host || "127.0.0.1"}${req.url}`);
    loc.searchParams.set("uploadType", "resumable");
    loc.searchParams.set("name", name);
    loc.searchParams.set("upload_id", id);
    sendEmpty(res, 200, { Location: loc.toString(), "X-GUploader-UploadID": id });
  }

  // Ends a session: closes its staging file, removes it unless committed.
  close(s, state) {
    s.state = state;
    if (s.active) s.active.abort();
    if (s.fd !== null) fs.closeSync(s.fd);
    s.fd = null;
    if (state !== "final") fs.rmSync(s.staging, { force: true });
  }

  cancel(s, req, res) {
    req.resume();
    if (s.state === "active") this.close(s, "cancelled");
    sendEmpty(res, 499);
  }

  // 308 with what is committed, the answer to every non-final request.
  sendIncomplete(s, res) {
    sendEmpty(res, 308, s.committed > 0 ? { Range: `bytes=0-${s.committed - 1}` } : {});
  }

  // Checks the hashes and the precondition, then makes the object; returns
  // [status, body].
  finalize(s, goog) {
    fs.ftruncateSync(s.fd, s.committed);
    const md5 = s.hasher.md5.digest("base64");
    const crc = s.hasher.crc;
    const fail = (status, message) => {
      s.failure = { status, message };
      this.close(s, "failed");
      return s.failure;
    };
    const want = expectedHashes(s.metadata, goog);
    if (want.crc32c !== undefined && want.crc32c !== crc32c.toBase64(crc))
      return fail(400, `Provided CRC32C "${want.crc32c}" doesn't match calculated CRC32C "${crc32c.toBase64(crc)}".`);
    if (want.md5 !== undefined && want.md5 !== md5)
      return fail(400, `Provided MD5 hash "${want.md5}" doesn't match calculated MD5 hash "${md5}".`);
    if (s.ifGenerationMatch !== null && this.store.generationOf(s.bucket, s.name) !== s.ifGenerationMatch)
      return fail(412, "At least one of the pre-conditions you specified did not hold.");
    this.close(s, "final");
    s.result = this.store.commit({ bucket: s.bucket, name: s.name, stagingPath: s.staging, size: s.committed, crc, md5, metadata: s.metadata });
    return null;
  }

  sendFinal(s, res) {
    if (s.state === "final") sendJson(res, 200, s.result);
    else if (s.state === "failed") sendError(res, s.failure.status, s.failure.message);
    else sendEmpty(res, 499);
  }

  chunk(s, req, res) {
    if (s.state !== "active") {
      req.resume();
      this.sendFinal(s, res);
      return;
    }
    const cr = req.headers["content-range"];
    let start = 0;
    let end = null; // inclusive; null: wherever the body ends
    let total = null; // null: not known yet
    if (cr !== undefined) {
      const m = /^bytes (?:\*|(\d+)-(\d+|\*))\/(\d+|\*)$/.exec(cr.trim());
      if (!m) {
        req.resume();
        sendError(res, 400, `bad Content-Range: ${cr}`);
        return;
      }
      total = m[3] === "*" ? null : Number(m[3]);
      if (m[1] === undefined) {
        // A status query; with the total it also finalizes a complete upload.
        req.resume();
        if (s.active) s.active.abort();
        if (total !== null && total === s.committed) {
          this.finalize(s, req.headers["x-goog-hash"]);
          this.sendFinal(s, res);
        } else if (total !== null && total < s.committed) {
          sendError(res, 400, `total ${total} is less than the ${s.committed} bytes committed`);
        } else this.sendIncomplete(s, res);
        return;
      }
      start = Number(m[1]);
      end = m[2] === "*" ? null : Number(m[2]);
      if ((end !== null && end < start) || (end !== null && total !== null && end >= total)) {
        req.resume();
        sendError(res, 400, `bad Content-Range: ${cr}`);
        return;
      }
    }
    // The body is the rest of the object when its end or the total says so.
    const final = end === null || (total !== null && end + 1 === total);
    if (s.active) s.active.abort();
    if (start > s.committed) {
      req.resume();
      sendError(res, 400, `chunk starts at byte ${start} but only ${s.committed} bytes are committed`);
      return;
    }
    if (final && total !== null && s.declaredTotal !== null && total !== s.declaredTotal) {
      req.resume();
      sendError(res, 400, `total ${total} differs from X-Upload-Content-Length ${s.declaredTotal}`);
      return;
    }
    this.receive(s, req, res, { start, end, total, final });
  }

  // Streams a chunk into the staging file. Bytes already committed (a
  // resent overlap) are skipped; whole 256 KiB units are hashed and
  // committed as they arrive, the rest when the final chunk ends.
  receive(s, req, res, { start, end, total, final }) {
    const base = s.committed;
    let skip = base - start;
    let got = 0; // bytes written at base..
    let seen = 0; // body bytes received
    const pend = [];
    const want = end === null ? null : end - start + 1;
    const ctx = { done: false };
    const hashTo = (target) => {
      while (s.committed < target) {
        const b = pend[0];
        const n = Math.min(b.length, target - s.committed);
        s.hasher.update(b.subarray(0, n));
        s.committed += n;
        if (n === b.length) pend.shift();
        else pend[0] = b.subarray(n);
      }
    };
    const stop = () => {
      ctx.done = true;
      pend.length = 0;
      if (s.active === ctx) s.active = null;
    };
    ctx.abort = () => {
      stop();
      req.socket.destroy();
    };
    s.active = ctx;
    req.on("data", (b) => {
      if (ctx.done) return;
      seen += b.length;
      if (want !== null && seen > want) {
        stop();
        sendError(res, 400, `body longer than the ${want} bytes of Content-Range`);
        req.resume();
        return;
      }
      if (skip > 0) {
        const n = Math.min(skip, b.length);
        skip -= n;
        b = b.subarray(n);
        if (!b.length) return;
      }
      fs.writeSync(s.fd, b, 0, b.length, base + got);
      got += b.length;
      pend.push(b);
      hashTo(base + got - ((base + got) % UNIT));
    });
    req.on("end", () => {
      if (ctx.done) return;
      if (want !== null && seen !== want) {
        stop();
        sendError(res, 400, `body had ${seen} bytes, Content-Range declared ${want}`);
        return;
      }
      if (!final) {
        stop();
        this.sendIncomplete(s, res);
        return;
      }
      hashTo(base + got);
      stop();
      if (total !== null && s.committed !== total) {
        sendError(res, 400, `upload ended at byte ${s.committed}, total declared ${total}`);
        return;
      }
      this.finalize(s, req.headers["x-goog-hash"]);
      this.sendFinal(s, res);
    });
    // A lost connection keeps the whole units already committed.
    req.on("close", () => req.complete || stop());
  }

  // One-shot uploads go through a throwaway session so the checks match.
  oneShot(bucket, name, metadata, q) {
    const staging = this.store.stagingPath();
    return {
      bucket,
      name,
      metadata,
      ifGenerationMatch: q.get("ifGenerationMatch"),
      staging,
      fd: fs.openSync(staging, "w+"),
      committed: 0,
      hasher: new Hasher(),
      state: "active",
      active: null,
    };
  }

  async multipart(bucket, req, res, q) {
    const ctype = req.headers["content-type"] || "";
    const body = await readBody(req, MAX_MULTIPART);
    const parsed = parseRelated(ctype, body);
    let metadata;
    try {
      metadata = JSON.parse(parsed.metadataRaw || "{}");
    } catch (e) {
      throw httpError(400, `bad JSON object resource: ${e.message}`);
    }
    const name = q.get("name") || metadata.name;
    if (!name) throw httpError(400, "Required parameter: name");
    const s = this.oneShot(bucket, name, metadata, q);
    fs.writeSync(s.fd, parsed.dataRaw, 0, parsed.dataRaw.length, 0);
    s.hasher.update(parsed.dataRaw);
    s.committed = parsed.dataRaw.length;
    this.finalize(s, req.headers["x-goog-hash"]);
    this.sendFinal(s, res);
  }

  async media(bucket, req, res, q) {
    const name = q.get("name");
    if (!name) {
      req.resume();
      throw httpError(400, "Required parameter: name");
    }
    const metadata = { contentType: req.headers["content-type"] };
    const s = this.oneShot(bucket, name, metadata, q);
    await new Promise((resolve, reject) => {
      req.on("data", (b) => {
        fs.writeSync(s.fd, b, 0, b.length, s.committed);
        s.hasher.update(b);
        s.committed += b.length;
      });
      req.on("end", resolve);
      req.on("close", () => {
        if (req.complete) return;
        this.close(s, "failed");
        reject(httpError(400, "connection closed before the body ended"));
      });
    });
    this.finalize(s, req.headers["x-goog-hash"]);
    this.sendFinal(s, res);
  }
}

module.exports = { Uploads };
