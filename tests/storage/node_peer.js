#!/usr/bin/env node
"use strict";
// The official Node.js client (@google-cloud/storage) as an independent
// peer: it checks what our library wrote, writes what our library reads,
// and is the benchmark's reference. Talks to $STORAGE_EMULATOR_HOST.
//
//   node_peer.js upload LOCAL gs://B/O [--chunk BYTES | --simple]
//   node_peer.js download gs://B/O LOCAL [--chunks BYTES --concurrency N]
//   node_peer.js upload-many LIST CONCURRENCY [--chunk BYTES | --simple]
//   node_peer.js download-many LIST CONCURRENCY
//   node_peer.js meta gs://B/O
// LIST holds "SRC DEST" lines. CRC32C validation is on unless
// --no-validation. --chunk: resumable upload in chunks of BYTES (default:
// resumable, one streamed request); --simple: one multipart request.
// --chunks: parallel ranged download (the client's transfer manager).
// Prints {"bytes": N, "seconds": S} (meta: the object resource).
const fs = require("fs");
const os = require("os");
const path = require("path");

const npmDir = process.env.TFREC_NPM_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "tfrec-npm");
const { Storage, TransferManager } = require(path.join(npmDir, "node_modules", "@google-cloud", "storage"));

function parse(argv) {
  const pos = [];
  const opt = { validation: "crc32c" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--chunk") opt.chunk = Number(argv[++i]);
    else if (a === "--chunks") opt.chunks = Number(argv[++i]);
    else if (a === "--concurrency") opt.concurrency = Number(argv[++i]);
    else if (a === "--simple") opt.simple = true;
    else if (a === "--no-validation") opt.validation = false;
    else if (a.startsWith("--")) throw new Error(`unknown option ${a}`);
    else pos.push(a);
  }
  return { pos, opt };
}

function gsName(url) {
  const m = /^gs:\/\/([^/]+)\/(.+)$/.exec(url);
  if (!m) throw new Error(`not a gs:// object name: ${url}`);
  return { bucket: m[1], object: m[2] };
}

function readList(file) {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => l.trim().split(/\s+/));
}

// Runs fn over items with at most n in flight.
async function pool(items, n, fn) {
  let next = 0;
  const run = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.max(1, n) }, run));
}

async function main() {
  const { pos, opt } = parse(process.argv.slice(2));
  const endpoint = process.env.STORAGE_EMULATOR_HOST;
  if (!endpoint) throw new Error("STORAGE_EMULATOR_HOST is not set");
  const storage = new Storage({ apiEndpoint: endpoint, projectId: "tfrec-test" });
  const file = (url) => {
    const { bucket, object } = gsName(url);
    return storage.bucket(bucket).file(object);
  };
  const upload = async (local, url) => {
    const { bucket, object } = gsName(url);
    const o = { destination: object, validation: opt.validation, resumable: !opt.simple };
    if (opt.chunk) o.chunkSize = opt.chunk;
    await storage.bucket(bucket).upload(local, o);
    return fs.statSync(local).size;
  };
  const download = async (url, local) => {
    if (opt.chunks) {
      const f = file(url);
      const tm = new TransferManager(f.bucket);
      await tm.downloadFileInChunks(f, {
        destination: local,
        chunkSizeBytes: opt.chunks,
        concurrencyLimit: opt.concurrency || 4,
        validation: opt.validation,
        noReturnData: true,
      });
    } else {
      await file(url).download({ destination: local, validation: opt.validation });
    }
    return fs.statSync(local).size;
  };

  const [cmd, ...args] = pos;
  const t0 = process.hrtime.bigint();
  let bytes = 0;
  if (cmd === "upload" && args.length === 2) bytes = await upload(args[0], args[1]);
  else if (cmd === "download" && args.length === 2) bytes = await download(args[0], args[1]);
  else if ((cmd === "upload-many" || cmd === "download-many") && args.length === 2) {
    const fn = cmd === "upload-many" ? upload : download;
    await pool(readList(args[0]), Number(args[1]), async ([src, dest]) => {
      bytes += await fn(src, dest);
    });
  } else if (cmd === "meta" && args.length === 1) {
    const [md] = await file(args[0]).getMetadata();
    process.stdout.write(JSON.stringify(md) + "\n");
    return;
  } else throw new Error("usage: see the comment at the top of node_peer.js");
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  process.stdout.write(JSON.stringify({ bytes, seconds }) + "\n");
}

main().catch((e) => {
  process.stderr.write(`node_peer: ${e.code ? `[${e.code}] ` : ""}${e.message}\n`);
  process.exit(1);
});
