#!/bin/sh
# The image's build stage (docker/Dockerfile): build every part and tool,
# `make install` into DESTDIR, keep what runs (tools, shared libraries,
# Python package, man pages, completions) and drop what only builds
# programs (headers, static libraries, pkg-config files).
# tests/python/test_docker_recipe.py runs this script and checks its output
# against deps/runtime.txt.
#   docker/install.sh DESTDIR [BUILD]
set -eu
DESTDIR=$1
BUILD=${2:-build}
PREFIX=/usr/local
cd "$(dirname "$0")/.."
make -j"$(nproc)" BUILD="$BUILD" all
make BUILD="$BUILD" install DESTDIR="$DESTDIR" PREFIX="$PREFIX"
rm -rf "$DESTDIR$PREFIX/include" "$DESTDIR$PREFIX/lib/pkgconfig"
rm -f "$DESTDIR$PREFIX"/lib/libtfrec*.a
