#!/usr/bin/env node
"use strict";
// A Cloud Storage server for tests: firebase-tools' storage emulator run
// without the firebase CLI (which needs Java for its rules engine), behind a
// compatibility layer that makes uploads and downloads behave like the real
// service, plus test controls on a separate admin port. Loopback only.
//
// Usage: node gcs_emulator.js [--port N] [--admin-port N]
// Prints "gcs_emulator port=P admin=A" once both ports listen.
// Packages come from $TFREC_NPM_DIR (scripts/install-npm-deps.sh).
// See tests/storage/README.md for the routes and controls.
const fs = require("fs");
const http = require("http");
const os = require("os");
const path = require("path");
const { Controls, cutRequestBody, cutResponseBody } = require("./lib/controls");
const { handleDownload, sendError } = require("./lib/downloads");
const { Uploads } = require("./lib/uploads");
const { Store } = require("./lib/store");
const { handleAdmin } = require("./lib/admin");

function parseArgs(argv) {
  const opts = { port: 0, adminPort: 0 };
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = argv[i].includes("=") ? argv[i].split(/=(.*)/s) : [argv[i], argv[++i]];
    if (k === "--port") opts.port = Number(v);
    else if (k === "--admin-port") opts.adminPort = Number(v);
    else {
      console.error(`gcs_emulator: unknown argument ${k}`);
      process.exit(2);
    }
  }
  return opts;
}

const npmDir = process.env.TFREC_NPM_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "tfrec-npm");
const toolsDir = path.join(npmDir, "node_modules", "firebase-tools");
if (!fs.existsSync(path.join(toolsDir, "package.json"))) {
  console.error(`gcs_emulator: firebase-tools not found in ${npmDir}: run scripts/install-npm-deps.sh`);
  process.exit(3);
}
const lib = (m) => require(path.join(toolsDir, "lib", m));

// Express 4 ignores the promise an async handler returns, so a rejected
// one would kill the process: route it to the error handler instead.
const Layer = require(require.resolve("express/lib/router/layer", { paths: [toolsDir] }));
Layer.prototype.handle_request = function handle(req, res, next) {
  const fn = this.handle;
  if (fn.length > 3) return next();
  try {
    const r = fn(req, res, next);
    if (r && typeof r.catch === "function") r.catch(next);
  } catch (err) {
    next(err);
  }
};

// Blobs in a private directory: the emulator's default is one fixed path
// under $TMPDIR that concurrent instances would share and delete.
const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), "tfrec-gcs-"));
const { StorageEmulator } = lib("emulator/storage");
class TestStorageEmulator extends StorageEmulator {
  getPersistenceTmpDir() {
    return blobDir;
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const emulator = new TestStorageEmulator({ projectId: "tfrec-test", host: "127.0.0.1", port: 1, auto_download: false });
  // The rules engine is a Java program; the JSON API routes used here
  // never consult rules, so it is replaced by no-ops.
  emulator._rulesRuntime = { start: async () => {}, stop: async () => {} };
  emulator._rulesManager = { start: async () => ({ errors: [], warnings: [] }), stop: async () => {}, getRuleset: () => undefined };
  const { EmulatorRegistry } = lib("emulator/registry");
  // Route handlers ask the registry for the emulator's address.
  EmulatorRegistry.set(emulator.getName(), emulator);
  const app = await lib("emulator/storage/server").createApp("tfrec-test", emulator);
  app.use((err, req, res, next) => {
    const status = err.status || err.statusCode || 500;
    if (status >= 500) console.error(`gcs_emulator: ${req.method} ${req.url}: ${err.stack || err}`);
    if (res.headersSent) return res.destroy();
    sendError(res, status, err.message || String(err));
  });

  const store = new Store(emulator, {
    files: lib("emulator/storage/files"),
    metadata: lib("emulator/storage/metadata"),
  });
  const uploads = new Uploads(store);
  const controls = new Controls();

  const serve = async (req, res) => {
    const entry = { t: Date.now(), method: req.method, url: req.url, range: req.headers.range, contentRange: req.headers["content-range"] };
    res.on("close", () => {
      entry.status = res.headersSent ? res.statusCode : 0;
      entry.completed = res.writableFinished;
      controls.record(entry);
    });
    if (controls.token !== null && req.headers.authorization !== `Bearer ${controls.token}`) {
      req.resume();
      return sendError(res, 401, "Invalid Credentials");
    }
    const inj = controls.takeInjection(req);
    if (inj) {
      entry.injected = inj.status;
      if (inj.delayMs) await new Promise((r) => setTimeout(r, inj.delayMs));
      if (inj.status) {
        req.resume();
        if (inj.retryAfter !== null) res.setHeader("Retry-After", inj.retryAfter);
        return sendError(res, inj.status, `injected by the test: ${inj.status}`);
      }
    }
    const cut = controls.takeCut(req);
    if (cut) {
      entry.cut = `${cut.direction}@${cut.after}`;
      if (cut.direction === "upload") cutRequestBody(req, cut.after);
      else cutResponseBody(res, cut.after);
    }
    const url = new URL(req.url, "http://127.0.0.1");
    if (controls.listCap > 0 && req.method === "GET" && /\/b\/[^/]+\/o$/.test(url.pathname)) {
      const asked = Number(url.searchParams.get("maxResults")) || Infinity;
      url.searchParams.set("maxResults", String(Math.min(asked, controls.listCap)));
      req.url = url.pathname + url.search;
    }
    if (uploads.handle(req, res, url)) return;
    if (handleDownload(store, req, res, url)) return;
    app(req, res);
  };

  const server = http.createServer((req, res) =>
    serve(req, res).catch((e) => {
      console.error(`gcs_emulator: ${req.method} ${req.url}: ${e.stack}`);
      if (!res.headersSent) sendError(res, 500, e.message);
      else res.destroy();
    }),
  );
  server.on("connection", (sock) => sock.setNoDelay(true));
  // Long uploads and downloads are the point; idle keep-alive connections
  // may stay as long as clients like.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 120000;
  server.headersTimeout = 60000;
  const admin = http.createServer((req, res) => handleAdmin({ controls, store, uploads, emulator }, req, res));

  const listen = (srv, port) =>
    new Promise((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(port, "127.0.0.1", () => resolve(srv.address().port));
    });
  const port = await listen(server, opts.port);
  emulator.args.port = port;
  const adminPort = await listen(admin, opts.adminPort);
  process.stdout.write(`gcs_emulator port=${port} admin=${adminPort}\n`);

  const stop = () => {
    server.close();
    admin.close();
    fs.rmSync(blobDir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("SIGHUP", stop);
}

process.on("exit", () => fs.rmSync(blobDir, { recursive: true, force: true }));
main().catch((e) => {
  console.error(`gcs_emulator: ${e.stack || e}`);
  process.exit(1);
});
