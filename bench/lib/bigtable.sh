# Sourced by the Bigtable benchmarks (bench/bigtable.sh, bench/bigtable_read.sh):
# moves to the repository root (ROOT, TFREC_ROOT, TFREC_BUILD exported),
# makes a work directory removed on exit (WORK, named after $1), builds Go's
# official client peer offline from Debian's golang-google-cloud-dev
# (BTPEER, exported when it builds) and prints the machine line.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$(pwd)
export TFREC_ROOT=$ROOT
export TFREC_BUILD=${TFREC_BUILD:-$ROOT/build}
WORK=$(mktemp -d "/tmp/$1.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if command -v go >/dev/null && [ -d /usr/share/gocode/src/cloud.google.com/go/bigtable ]; then
    if (cd bench/go/btpeer && GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= \
            GOCACHE="$WORK/gocache" go build -o "$WORK/btpeer" .) 2>"$WORK/go.log"; then
        export BTPEER=$WORK/btpeer
    else
        echo "Go peer did not build:"; cat "$WORK/go.log"
    fi
else
    echo "Go peer unavailable: install golang-go and golang-google-cloud-dev"
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); emulator and client share them"
