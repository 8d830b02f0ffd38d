"use strict";
// Test controls of the storage test server: faults armed through the admin
// port and applied to the next matching requests on the storage port.
// Every control is consumed by the requests it hits, so a test arms exactly
// the faults it wants and can check (GET /pending) that all of them fired.

const LOG_MAX = 20000;

function matcher(spec, defaultMethods) {
  const methods = spec.method ? [String(spec.method).toUpperCase()] : defaultMethods;
  const path = spec.path ? new RegExp(spec.path) : null;
  return (req) => (!methods || methods.includes(req.method)) && (!path || path.test(req.url));
}

function count(v, dflt) {
  const n = v === undefined ? dflt : Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a count: ${v}`);
  return n;
}

class Controls {
  constructor() {
    this.reset();
  }

  reset() {
    this.injections = [];
    this.cuts = [];
    this.listCap = 0;
    this.token = null;
    this.log = [];
  }

  // {status, count=1, method, path, delay_ms, retry_after}: the next `count`
  // matching requests are answered with `status` (after `delay_ms`), or only
  // delayed and then served normally when status is 0.
  addInjection(spec) {
    const status = count(spec.status, 0);
    if (status !== 0 && (status < 100 || status > 599)) throw new Error(`bad status ${status}`);
    const inj = {
      kind: "inject",
      spec,
      status,
      left: count(spec.count, 1),
      delayMs: count(spec.delay_ms, 0),
      retryAfter: spec.retry_after === undefined ? null : String(spec.retry_after),
      match: matcher(spec, null),
    };
    this.injections.push(inj);
    return inj;
  }

  // {direction: "download"|"upload", after: bytes, count=1, method, path}:
  // the connection of the next `count` matching requests is cut once `after`
  // bytes of the response body (download) or request body (upload) passed.
  addCut(spec) {
    const dir = spec.direction;
    if (dir !== "download" && dir !== "upload") throw new Error("direction must be download or upload");
    const cut = {
      kind: "cut",
      spec,
      direction: dir,
      after: count(spec.after, 0),
      left: count(spec.count, 1),
      match: matcher(spec, dir === "download" ? ["GET"] : ["PUT", "POST"]),
    };
    this.cuts.push(cut);
    return cut;
  }

  take(list, req) {
    const hit = list.find((c) => c.left > 0 && c.match(req));
    if (hit) hit.left--;
    return hit || null;
  }

  takeInjection(req) {
    return this.take(this.injections, req);
  }

  takeCut(req) {
    return this.take(this.cuts, req);
  }

  pending() {
    return [...this.injections, ...this.cuts]
      .filter((c) => c.left > 0)
      .map((c) => ({ kind: c.kind, left: c.left, ...c.spec }));
  }

  record(entry) {
    if (this.log.length >= LOG_MAX) this.log.shift();
    this.log.push(entry);
  }
}

// Cuts the request body after `after` bytes: the bytes before the cut reach
// whoever reads the body, then the socket is destroyed as if the network
// failed. Works below any body parser because it wraps the stream's push.
function cutRequestBody(req, after) {
  let seen = 0;
  const push = req.push.bind(req);
  req.push = (chunk, enc) => {
    if (chunk === null || req.destroyed) return push(chunk, enc);
    if (seen + chunk.length <= after) {
      seen += chunk.length;
      return push(chunk, enc);
    }
    const keep = after - seen;
    seen = after;
    if (keep > 0) push(chunk.subarray(0, keep), enc);
    setImmediate(() => req.socket.destroy());
    return false;
  };
}

// Cuts the response body after `after` bytes: what was written before the
// cut is flushed to the client, then the socket is destroyed.
function cutResponseBody(res, after) {
  let sent = 0;
  let cut = false;
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  const kill = () => res.socket && res.socket.destroy();
  // Writes what fits before the cut; returns write()'s answer, or null
  // once the connection is being cut.
  const pass = (chunk, enc, cb) => {
    if (cut) return null;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, typeof enc === "string" ? enc : "utf8");
    if (sent + buf.length <= after) {
      sent += buf.length;
      return write(buf, cb);
    }
    cut = true;
    const keep = after - sent;
    sent = after;
    if (!res.headersSent) res.flushHeaders();
    if (keep > 0) write(buf.subarray(0, keep), kill);
    else setImmediate(kill);
    return null;
  };
  res.write = (chunk, enc, cb) => {
    if (typeof enc === "function") [cb, enc] = [enc, undefined];
    const ok = pass(chunk, enc, cb);
    return ok === null ? false : ok;
  };
  res.end = (chunk, enc, cb) => {
    if (typeof chunk === "function") [cb, chunk] = [chunk, undefined];
    if (typeof enc === "function") [cb, enc] = [enc, undefined];
    if (chunk !== undefined && chunk !== null && pass(chunk, enc) === null) return res;
    if (cut) return res;
    if (sent >= after && after === 0) {
      // Nothing may pass: cut before the (empty) body ends.
      cut = true;
      if (!res.headersSent) res.flushHeaders();
      setImmediate(kill);
      return res;
    }
    return end(cb);
  };
}

module.exports = { Controls, cutRequestBody, cutResponseBody };
