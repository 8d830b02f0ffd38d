"use strict";
// The object store of firebase-tools' Cloud Storage emulator, seen from the
// compatibility layer: look up an object's blob, and commit an upload that
// the layer staged and checksummed itself (the emulator would re-read the
// whole object and hash it byte by byte, about 100 MB/s).
const fs = require("fs");
const path = require("path");
const crc32c = require("./crc32c");

class Store {
  constructor(emulator, storageModules) {
    this.emulator = emulator;
    this.files = emulator._files;
    this.persistence = emulator._persistence;
    this.layer = emulator.adminStorageLayer;
    this.StoredFile = storageModules.files.StoredFile;
    this.StoredFileMetadata = storageModules.metadata.StoredFileMetadata;
    this.ObjectMetadata = storageModules.metadata.CloudStorageObjectMetadata;
    this.lastGeneration = 0;
    this.stagingSeq = 0;
  }

  key(bucket, name) {
    return this.layer.path(bucket, name);
  }

  lookup(bucket, name) {
    const key = this.key(bucket, name);
    const file = this.files.get(key);
    if (!file) return null;
    return { metadata: file.metadata, diskPath: this.persistence.getDiskPath(key) };
  }

  crcBase64(md) {
    return crc32c.toBase64(Number(md.crc32c));
  }

  generationOf(bucket, name) {
    const obj = this.lookup(bucket, name);
    return obj ? String(obj.metadata.generation) : "0";
  }

  // A new file next to the blobs (same file system, so commit is a rename).
  stagingPath() {
    const dir = path.join(this.persistence.dirPath, "staging");
    fs.mkdirSync(dir, { recursive: true });
    return path.join(dir, `${process.pid}-${++this.stagingSeq}`);
  }

  // Makes the staged file the object's current generation; returns the
  // object's JSON resource. Generations are unique and increasing (the
  // emulator uses milliseconds, so two writes in one millisecond collide).
  commit({ bucket, name, stagingPath, size, crc, md5, metadata }) {
    this.layer.createBucket(bucket);
    const key = this.key(bucket, name);
    const generation = Math.max(Date.now() * 1000, this.lastGeneration + 1);
    this.lastGeneration = generation;
    const field = (f) => (metadata && metadata[f] !== null ? metadata[f] : undefined);
    const md = new this.StoredFileMetadata(
      {
        name,
        bucket,
        generation,
        contentType: field("contentType"),
        contentDisposition: field("contentDisposition"),
        contentEncoding: field("contentEncoding"),
        contentLanguage: field("contentLanguage"),
        cacheControl: field("cacheControl"),
        customMetadata: field("metadata"),
        size,
        md5Hash: md5,
        crc32c: String(crc),
      },
      this.emulator._cloudFunctions,
    );
    this.persistence.deleteFile(key, true);
    const diskName = this.persistence.generateNewDiskName();
    fs.renameSync(stagingPath, path.join(this.persistence.dirPath, encodeURIComponent(diskName)));
    this.persistence._diskPathMap.set(key, diskName);
    this.files.set(key, new this.StoredFile(md));
    return new this.ObjectMetadata(md);
  }
}

module.exports = { Store };
