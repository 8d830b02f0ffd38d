#!/usr/bin/env bash
# Programs built against an installed copy (make install DESTDIR=...) with
# nothing but pkg-config link only the part they use: a record writer with
# `pkg-config --libs tfrec` needs none of gRPC, curl, libjpeg, libpng; an
# image program with `tfrec-image` gets libjpeg/libpng but no gRPC or curl;
# a Bigtable program with `tfrec-bigtable` no image libraries. Also linked
# statically from the .a files with `pkg-config --static`.
# Prints PASS/FAIL lines for tests/run.sh.
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${TFREC_BUILD:-$ROOT/build}
T=$(mktemp -d /tmp/tfrec-modular.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
PARTS=$(cat "$BUILD/parts")
VERSION=$(sed -n 's/^#define TFREC_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/include/tfrec/version.h")
MAJOR=${VERSION%%.*}
has() { case " $PARTS " in *" $1 "*) echo 1 ;; *) echo 0 ;; esac; }

# Install this build's parts (the same switches it was built with).
DEST=$T/dest
if make -C "$ROOT" --no-print-directory BUILD="$BUILD" WITH_IMAGE="$(has tfrec-image)" \
    WITH_BIGTABLE="$(has tfrec-bigtable)" WITH_STORAGE="$(has tfrec-storage)" install DESTDIR="$DEST" PREFIX=/usr >"$T/install.log" 2>&1; then
    pass "make install DESTDIR=... PREFIX=/usr"
else
    fail "make install DESTDIR=... PREFIX=/usr" "$(tail -5 "$T/install.log")"
fi
LIB=$DEST/usr/lib
for p in $PARTS; do
    if [ -f "$LIB/pkgconfig/$p.pc" ] && [ -f "$LIB/lib$p.a" ] && [ -L "$LIB/lib$p.so" ] &&
        [ -L "$LIB/lib$p.so.$MAJOR" ] && [ -f "$LIB/lib$p.so.$VERSION" ]; then
        pass "installed lib$p.a, lib$p.so -> lib$p.so.$MAJOR -> lib$p.so.$VERSION and $p.pc"
    else
        fail "installed lib$p.a, lib$p.so -> lib$p.so.$MAJOR -> lib$p.so.$VERSION and $p.pc" "$(ls "$LIB" "$LIB/pkgconfig" | tr '\n' ' ')"
    fi
done
missing=
for h in version.h common.h error.h record.h example.h tfrec.h; do
    [ -f "$DEST/usr/include/tfrec/$h" ] || missing="$missing $h"
done
[ -z "$missing" ] && pass "core headers installed (version.h, common.h, record.h, ...)" ||
    fail "core headers installed" "missing:$missing"
# The headers of a part left out are not installed.
[ "$(has tfrec-bigtable)" = 1 ] || { [ ! -e "$DEST/usr/include/tfrec/bigtable.h" ] &&
    pass "bigtable.h not installed without tfrec-bigtable" ||
    fail "bigtable.h not installed without tfrec-bigtable" "present"; }
[ "$(has tfrec-image)" = 1 ] || { [ ! -e "$DEST/usr/include/tfrec/image.h" ] &&
    pass "image.h not installed without tfrec-image" ||
    fail "image.h not installed without tfrec-image" "present"; }

# pkg-config prefixes the .pc's /usr paths with the sysroot (the DESTDIR).
export PKG_CONFIG_PATH=$LIB/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEST

# build NAME PART KIND: compile $T/NAME.c against part PART, shared or static.
build() {
    local flags
    if [ "$3" = shared ]; then
        flags=$(pkg-config --cflags --libs "$2") || return 1
    else
        # The part's archives by path, then its dependencies' shared libraries.
        flags=$(pkg-config --cflags --static --libs "$2" |
            sed -E "s#-l(tfrec[a-z-]*)( |\$)#$LIB/lib\\1.a #g") || return 1
    fi
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror ${TFREC_EXTRA_CFLAGS:-} -o "$T/$1-$3" "$T/$1.c" $flags 2>"$T/cc.log"
}
# linked NAME KIND: the libraries the dynamic loader maps for it.
linked() { LD_LIBRARY_PATH=$LIB ldd "$T/$1-$2" | awk '{print $1}'; }

# A record writer: the record API only (verified with the tfrec tool),
# through the umbrella header, which must compile whatever parts are installed.
cat >"$T/records.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <tfrec/tfrec.h>

int main(int argc, char **argv)
{
    if (argc != 2 || TFREC_CHECK_VERSION() != TFREC_OK) return 2;
    tfrec_writer *w;
    if (tfrec_writer_open(&w, argv[1], NULL) != TFREC_OK) return 1;
    for (int i = 0; i < 5; i++) {
        char rec[32];
        snprintf(rec, sizeof rec, "record %d", i);
        if (tfrec_writer_write(w, (const uint8_t *)rec, strlen(rec)) != TFREC_OK) return 1;
    }
    int rc = tfrec_writer_close(w);
    tfrec_writer_free(w);
    printf("%s %d\n", tfrec_version(), rc);
    return rc == TFREC_OK ? 0 : 1;
}
EOF
for kind in shared static; do
    if ! build records tfrec $kind; then
        fail "record program builds with pkg-config tfrec ($kind)" "$(head -5 "$T/cc.log")"
        continue
    fi
    pass "record program builds with pkg-config tfrec ($kind)"
    rm -f "$T/r.tfrecord"
    out=$(LD_LIBRARY_PATH=$LIB "$T/records-$kind" "$T/r.tfrecord" 2>&1)
    n=$("$BUILD/bin/tfrec" count "$T/r.tfrecord" 2>&1)
    if [ "$out" = "$VERSION 0" ] &&
        [ "$n" = 5 ]; then
        pass "record program writes 5 records ($kind)"
    else
        fail "record program writes 5 records ($kind)" "said '$out', tfrec count '$n'"
    fi
    linked records $kind >"$T/ldd"
    if grep -qiE 'grpc|gpr|curl|jpeg|png|absl|tfrec-' "$T/ldd"; then
        fail "record program links none of gRPC, curl, jpeg, png ($kind)" "$(tr '\n' ' ' <"$T/ldd")"
    else
        pass "record program links none of gRPC, curl, jpeg, png ($kind)"
    fi
done
# The shared one uses the installed libtfrec.so.MAJOR, not another copy.
if LD_LIBRARY_PATH=$LIB ldd "$T/records-shared" | grep -q "libtfrec.so.$MAJOR => $LIB/libtfrec.so.$MAJOR"; then
    pass "record program runs on the installed libtfrec.so.$MAJOR"
else
    fail "record program runs on the installed libtfrec.so.$MAJOR" "$(LD_LIBRARY_PATH=$LIB ldd "$T/records-shared" | grep tfrec)"
fi

if [ "$(has tfrec-image)" = 1 ]; then
    cat >"$T/image.c" <<'EOF'
#include <stdio.h>
#include <tfrec/image.h>
#include <tfrec/record.h>

int main(void)
{
    /* One function of each library: the image part and the core. */
    printf("%s %s\n", tfrec_image_colorspace_name(TFREC_CS_RGB),
           tfrec_compression_name(TFREC_COMPRESSION_GZIP));
    return 0;
}
EOF
    for kind in shared static; do
        if ! build image tfrec-image $kind; then
            fail "image program builds with pkg-config tfrec-image ($kind)" "$(head -5 "$T/cc.log")"
            continue
        fi
        out=$(LD_LIBRARY_PATH=$LIB "$T/image-$kind" 2>&1)
        linked image $kind >"$T/ldd"
        if [ "$out" = "RGB GZIP" ]; then
            pass "image program builds and runs with pkg-config tfrec-image ($kind)"
        else
            fail "image program builds and runs with pkg-config tfrec-image ($kind)" "$out"
        fi
        want="libjpeg"
        [ $kind = shared ] && want="libtfrec-image.so.$MAJOR libtfrec.so.$MAJOR libjpeg"
        for lib in $want; do
            grep -q "^$lib" "$T/ldd" || fail "image program links $lib ($kind)" "$(tr '\n' ' ' <"$T/ldd")"
        done
        if grep -qiE 'grpc|gpr|curl|absl|bigtable' "$T/ldd"; then
            fail "image program links neither gRPC nor curl ($kind)" "$(tr '\n' ' ' <"$T/ldd")"
        else
            pass "image program links neither gRPC nor curl ($kind)"
        fi
    done
fi

if [ "$(has tfrec-bigtable)" = 1 ]; then
    cat >"$T/bt.c" <<'EOF'
#include <stdio.h>
#include <tfrec/bigtable.h>

int main(void)
{
    printf("%s %d\n", tfrec_bt_code_name(14), tfrec_bt_key_width(1281167));
    return 0;
}
EOF
    if build bt tfrec-bigtable shared && [ "$(LD_LIBRARY_PATH=$LIB "$T/bt-shared" 2>&1)" = "UNAVAILABLE 7" ]; then
        pass "Bigtable program builds and runs with pkg-config tfrec-bigtable"
        linked bt shared >"$T/ldd"
        if grep -q '^libgrpc' "$T/ldd" && ! grep -qiE 'jpeg|png' "$T/ldd"; then
            pass "Bigtable program links gRPC and no image library"
        else
            fail "Bigtable program links gRPC and no image library" "$(tr '\n' ' ' <"$T/ldd")"
        fi
    else
        fail "Bigtable program builds and runs with pkg-config tfrec-bigtable" \
            "$(head -5 "$T/cc.log") $(LD_LIBRARY_PATH=$LIB "$T/bt-shared" 2>&1)"
    fi
fi
[ "$fails" -eq 0 ]
