#!/usr/bin/env bash
# The symbols the libraries of every built part give to their users:
# - a static library defines only tfrec_-prefixed globals (generated
#   protobuf-c code included), and no global is defined by two of them;
# - a shared library exports only what include/tfrec/*.h declares, every
#   export in a public version node (TFREC_1.0, or the TFREC_1.<minor> node
#   of the release that added it, lib/libtfrec.map), none exported by two
#   libraries; the exception is the TFREC_PRIVATE_<version> node of
#   libtfrec.so and libtfrec-gcp.so (the parts others require): the
#   internals the other parts call, exactly those marked TFREC_PRIVATE_API
#   in lib/, each used by a part;
# - sonames are lib<part>.so.<major>, and the parts depend on libtfrec.so.
# Prints PASS/FAIL lines for tests/run.sh.
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${TFREC_BUILD:-$ROOT/build}
T=$(mktemp -d /tmp/tfrec-symbols.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
check() { # name file-of-offenders
    if [ -s "$2" ]; then fail "$1" "$(head -10 "$2" | tr '\n' ' ')"; else pass "$1"; fi
}

VERSION=$(sed -n 's/^#define TFREC_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/include/tfrec/version.h")
MAJOR=${VERSION%%.*}
PARTS=$(cat "$BUILD/parts")
PRIVATE=TFREC_PRIVATE_$VERSION

# Functions the public headers declare (comments stripped first).
for h in "$ROOT"/include/tfrec/*.h; do
    gcc -fpreprocessed -dD -E -P "$h" 2>/dev/null
done | grep -oE '\btfrec_[A-Za-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*($//' | sort -u >"$T/public"
if grep -qx tfrec_reader_open "$T/public" && grep -qx tfrec_version "$T/public"; then
    pass "public declarations found in include/tfrec ($(wc -l <"$T/public"))"
else
    fail "public declarations found in include/tfrec" "tfrec_reader_open or tfrec_version missing"
fi
# Internals exported to the other parts: the marked declarations.
grep -rhoE 'TFREC_PRIVATE_API[^(]*\btfrec_[A-Za-z0-9_]+[[:space:]]*\(' "$ROOT/lib" --include='*.h' |
    grep -oE 'tfrec_[A-Za-z0-9_]+[[:space:]]*\($' | sed 's/[[:space:]]*($//' | sort -u >"$T/private.marked"

: >"$T/all-static"
: >"$T/all-shared"
for p in $PARTS; do
    a=$BUILD/lib$p.a
    so=$BUILD/lib$p.so.$VERSION
    nm -g --defined-only "$a" | awk 'NF == 3 {print $3}' | sort -u >"$T/$p.static"
    # (__odr_asan.*: AddressSanitizer's ODR indicators in instrumented builds)
    grep -v -e '^tfrec_' -e '^__odr_asan\.tfrec_' "$T/$p.static" >"$T/bad" || true
    check "lib$p.a: every global symbol is tfrec_-prefixed ($(wc -l <"$T/$p.static"))" "$T/bad"
    cat "$T/$p.static" >>"$T/all-static"

    # "addr T name@@NODE" for each export; "A NODE" lines are the nodes themselves.
    nm -D --defined-only "$so" | awk '$2 != "A" {print $3}' | sort -u >"$T/$p.dyn"
    sed 's/@@.*//' "$T/$p.dyn" >>"$T/all-shared"
    has_private=; case $p in tfrec | tfrec-gcp) has_private=1 ;; esac
    grep -vE "@@TFREC_$MAJOR\.[0-9]+\$" "$T/$p.dyn" | { if [ -n "$has_private" ]; then grep -v "@@$PRIVATE\$"; else cat; fi; } >"$T/bad" || true
    check "lib$p.so: every export is in a node TFREC_$MAJOR.<minor>$([ -n "$has_private" ] && echo " or $PRIVATE")" "$T/bad"
    sed -nE "s/@@TFREC_$MAJOR\.[0-9]+\$//p" "$T/$p.dyn" | comm -23 - "$T/public" >"$T/bad"
    check "lib$p.so: every TFREC_$MAJOR.<minor> export is declared in include/tfrec ($(grep -cE "@@TFREC_$MAJOR\.[0-9]+\$" "$T/$p.dyn"))" "$T/bad"
    # A node per minor release up to this one: nothing newer than the headers.
    MINOR=$(sed -n 's/^#define TFREC_VERSION_MINOR \([0-9]*\)/\1/p' "$ROOT/include/tfrec/version.h")
    sed -nE "s/.*@@TFREC_$MAJOR\.([0-9]+)\$/\1/p" "$T/$p.dyn" | sort -un | awk -v m="$MINOR" '$1 > m' >"$T/bad"
    check "lib$p.so: no node newer than TFREC_$MAJOR.$MINOR" "$T/bad"
    [ "$(grep -c . "$T/$p.dyn")" -gt 0 ] || fail "lib$p.so exports something" "no exports"

    soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    if [ "$soname" = "lib$p.so.$MAJOR" ]; then
        pass "lib$p.so: soname $soname"
    else
        fail "lib$p.so: soname lib$p.so.$MAJOR" "got '$soname'"
    fi
    if [ "$p" != tfrec ]; then
        if readelf -d "$so" | grep -q "(NEEDED).*\[libtfrec.so.$MAJOR\]"; then
            pass "lib$p.so depends on libtfrec.so.$MAJOR"
        else
            fail "lib$p.so depends on libtfrec.so.$MAJOR" "$(readelf -d "$so" | grep NEEDED | tr '\n' ' ')"
        fi
    fi
done

sort "$T/all-static" | uniq -d >"$T/bad"
check "no global symbol is defined in two static libraries" "$T/bad"
sort "$T/all-shared" | uniq -d >"$T/bad"
check "no symbol is exported by two shared libraries" "$T/bad"

for p in tfrec tfrec-gcp; do [ -f "$T/$p.dyn" ] && sed -n "s/@@$PRIVATE\$//p" "$T/$p.dyn"; done | sort -u >"$T/private.exported"
# lib/gauth's marks count only when libtfrec-gcp.so is built.
if ! echo " $PARTS " | grep -q " tfrec-gcp "; then
    grep -rhoE 'TFREC_PRIVATE_API[^(]*\btfrec_[A-Za-z0-9_]+[[:space:]]*\(' "$ROOT/lib/gauth" --include='*.h' |
        grep -oE 'tfrec_[A-Za-z0-9_]+' | sort -u | comm -23 "$T/private.marked" - >"$T/marked.core"
    mv "$T/marked.core" "$T/private.marked"
fi
if [ -s "$T/private.exported" ] && cmp -s "$T/private.exported" "$T/private.marked"; then
    pass "libtfrec.so and libtfrec-gcp.so export under $PRIVATE exactly what lib/ marks TFREC_PRIVATE_API"
else
    fail "libtfrec.so and libtfrec-gcp.so export under $PRIVATE exactly what lib/ marks TFREC_PRIVATE_API" \
        "exported: $(tr '\n' ' ' <"$T/private.exported"); marked: $(tr '\n' ' ' <"$T/private.marked")"
fi
# Every private export is there for a part that calls it (when all are built).
if [ "$(echo $PARTS | wc -w)" -gt 1 ]; then
    for p in $PARTS; do
        [ "$p" = tfrec ] || nm -D --undefined-only "$BUILD/lib$p.so.$VERSION"
    done | awk '{print $2}' | sed -n "s/@$PRIVATE\$//p" | sort -u >"$T/private.used"
    if [ "$PARTS" = "tfrec tfrec-image tfrec-gcp tfrec-bigtable tfrec-storage" ]; then
        comm -23 "$T/private.exported" "$T/private.used" >"$T/bad"
        check "every $PRIVATE export is called by another part" "$T/bad"
    fi
    [ -s "$T/private.used" ] && pass "the parts bind to $PRIVATE ($(wc -l <"$T/private.used") symbols)" ||
        fail "the parts bind to $PRIVATE" "no reference found"
fi
[ "$fails" -eq 0 ]
