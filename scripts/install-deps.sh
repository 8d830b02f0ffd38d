#!/bin/sh
# Install the Debian packages libtfrec needs to build, test and benchmark:
# the lists deps/build.txt, deps/test.txt and deps/runtime.txt (one package
# a line, '#' comments; docker/Dockerfile installs build.txt in its build
# stage and runtime.txt in the image).
set -e
DEPS="$(dirname "$0")/../deps"
PKGS=$(sed 's/#.*//' "$DEPS/build.txt" "$DEPS/test.txt" "$DEPS/runtime.txt" | tr -s ' \n' '\n' | grep . | sort -u)
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
