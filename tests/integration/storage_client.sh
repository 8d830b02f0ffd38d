#!/usr/bin/env bash
# The Cloud Storage client (lib/storage) against a real storage server:
# runs the test program build/tests/test_storage_gcs under
# tests/storage/with_emulator.sh (round trips for every compression, pages
# and globs, parallel ranged reads, resumable uploads, aborts, CRC32C
# mismatches, odd object names, 404, injected 429/503 and cut connections).
# Without Node.js the server cannot run: that is a failure, not a skip.
# needs: tfrec-storage
set -u
cd "$(dirname "$0")/../.."
BUILD=${TFREC_BUILD:-build}
prog=$BUILD/tests/test_storage_gcs
if ! command -v node >/dev/null 2>&1; then
    echo "FAIL storage_client: node is not installed, so the storage test server cannot run (scripts/install-deps.sh installs it)"
    exit 1
fi
if [ ! -x "$prog" ]; then
    echo "FAIL storage_client: $prog is not built"
    exit 1
fi
tests/storage/with_emulator.sh "$prog"
