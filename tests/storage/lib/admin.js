"use strict";
// The admin port: JSON requests that arm faults and inspect the server.
// Routes are listed in tests/storage/README.md.
const fs = require("fs");

function reply(res, status, obj) {
  const body = JSON.stringify(obj) + "\n";
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on("data", (b) => parts.push(b));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8").trim();
      try {
        resolve(text ? JSON.parse(text) : {});
      } catch (e) {
        reject(new Error(`bad JSON: ${e.message}`));
      }
    });
    req.on("error", reject);
  });
}

// Flips every bit of one stored byte; the object's crc32c and md5Hash stay
// as they were, so only a client that checks what it read notices.
function corrupt(store, spec) {
  const obj = store.lookup(spec.bucket, spec.object);
  if (!obj) return [404, { error: `no object ${spec.bucket}/${spec.object}` }];
  const size = Number(obj.metadata.size);
  const offset = spec.offset === undefined ? Math.floor(size / 2) : Number(spec.offset);
  if (!Number.isInteger(offset) || offset < 0 || offset >= size)
    return [400, { error: `offset ${spec.offset} outside the object's ${size} bytes` }];
  const fd = fs.openSync(obj.diskPath, "r+");
  try {
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, offset);
    b[0] ^= 0xff;
    fs.writeSync(fd, b, 0, 1, offset);
  } finally {
    fs.closeSync(fd);
  }
  return [200, { offset }];
}

async function route(ctx, req, url) {
  const { controls, store, uploads, emulator } = ctx;
  const key = `${req.method} ${url.pathname}`;
  const body = req.method === "POST" ? await readJson(req) : {};
  switch (key) {
    case "GET /health":
      return [200, { ok: true }];
    case "POST /inject":
      controls.addInjection(body);
      return [200, { pending: controls.pending() }];
    case "POST /cut":
      controls.addCut(body);
      return [200, { pending: controls.pending() }];
    case "POST /corrupt":
      return corrupt(store, body);
    case "POST /list-cap":
      controls.listCap = Number(body.max_results) || 0;
      return [200, { max_results: controls.listCap }];
    case "POST /token":
      controls.token = body.token ? String(body.token) : null;
      return [200, { token: controls.token }];
    case "GET /pending":
      return [200, { pending: controls.pending() }];
    case "GET /log":
      return [200, { requests: controls.log }];
    case "GET /sessions": {
      const list = [...uploads.sessions.values()].map((s) => ({ id: s.id, bucket: s.bucket, name: s.name, state: s.state, committed: s.committed }));
      return [200, { sessions: list }];
    }
    case "POST /reset": {
      const objects = body.objects !== false;
      controls.reset();
      if (objects) {
        for (const s of uploads.sessions.values()) if (s.state === "active") uploads.close(s, "cancelled");
        uploads.sessions.clear();
        emulator.reset();
      }
      return [200, { reset: objects ? "controls and objects" : "controls" }];
    }
    default:
      return [404, { error: `no admin route ${key}` }];
  }
}

function handleAdmin(ctx, req, res) {
  const url = new URL(req.url, "http://127.0.0.1");
  route(ctx, req, url).then(
    ([status, obj]) => reply(res, status, obj),
    (e) => reply(res, 400, { error: e.message }),
  );
}

module.exports = { handleAdmin };
