#!/bin/sh
# Install the Debian packages libtfrec needs to build, test and benchmark.
set -e
PKGS="build-essential binutils pkg-config zlib1g-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
 libgrpc-dev libcurl4-openssl-dev libssl-dev libjpeg62-turbo-dev libpng-dev libisal-dev
 python3 python3-pytest python3-protobuf python3-crc32c python3-pil python3-jwt python3-torch python3-cryptography
 python3-distributed python3-yaml
 python3-pip python3-setuptools python3-wheel mypy
 golang-go golang-google-cloud-dev clang-format nginx-core
 clang libclang-rt-14-dev"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
# One dpkg query for all: packages not listed as installed are missing.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null | awk '/ ok installed$/ {print $1}')
missing=
for p in $PKGS; do
    echo "$installed" | grep -qx "$p" || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 && "$(dirname "$0")/install-npm-deps.sh" >/dev/null
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
