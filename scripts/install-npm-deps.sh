#!/bin/sh
# Install the npm packages the storage tests and benchmark use (the Cloud
# Storage emulator inside firebase-tools and the official Node.js client as
# an independent peer), pinned by tests/storage/package-lock.json.
#
# They go to $TFREC_NPM_DIR (default ~/.cache/tfrec-npm): outside the source
# tree, so a fresh clone on the same machine (CI) reuses them, and once they
# are there no network is needed. Prints the directory on stdout.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${TFREC_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tfrec-npm}
src=$root/tests/storage

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    SUDO=
    [ "$(id -u)" = 0 ] || SUDO=sudo
    echo "installing: nodejs npm" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

mkdir -p "$dir"
# One install at a time: tests started in parallel may all call this.
exec 9>"$dir/.install.lock"
flock 9

want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$want" ] &&
    [ -f "$dir/node_modules/firebase-tools/package.json" ] &&
    [ -f "$dir/node_modules/@google-cloud/storage/package.json" ]; then
    echo "$dir"
    exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dir/"
rm -f "$dir/.installed"
echo "installing npm packages into $dir (pinned by tests/storage/package-lock.json)" >&2
# --ignore-scripts: nothing the tests use needs a build step, and install
# scripts are where packages fetch extra binaries.
(cd "$dir" && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error >&2)
echo "$want" >"$dir/.installed"
echo "$dir"
