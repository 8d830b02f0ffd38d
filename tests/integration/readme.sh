#!/usr/bin/env bash
# The README's C example, compiled exactly as written against an installed
# copy of libtfrec (make install + pkg-config), shared and static, and run;
# the flags and subcommands of its tool examples checked against the tools.
# Prints PASS/FAIL lines for tests/run.sh.
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${TFREC_BUILD:-$ROOT/build}
T=$(mktemp -d /tmp/tfrec-readme.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

# The block that follows the marker comment, without its fences.
awk '/<!-- readme-example:c -->/ {on = 1; next}
     on && /^```c$/ {inside = 1; next}
     inside && /^```$/ {exit}
     inside {print}' "$ROOT/README.md" >"$T/example.c"
if [ "$(wc -l <"$T/example.c")" -gt 20 ]; then
    pass "extract the C example from README.md"
else
    fail "extract the C example from README.md" "marker or code block not found"
fi

# The same parts as the build (make's WITH_* switches from $BUILD/parts).
with() { grep -qw -- "$1" "$BUILD/parts" && echo 1 || echo 0; }
if make -C "$ROOT" --no-print-directory BUILD="$BUILD" WITH_IMAGE="$(with tfrec-image)" \
    WITH_BIGTABLE="$(with tfrec-bigtable)" WITH_STORAGE="$(with tfrec-storage)" install PREFIX="$T/usr" >"$T/install.log" 2>&1 &&
    [ -f "$T/usr/lib/pkgconfig/tfrec.pc" ] && [ -f "$T/usr/include/tfrec/tfrec.h" ]; then
    pass "make install PREFIX=..."
else
    fail "make install PREFIX=..." "$(tail -5 "$T/install.log")"
fi
if grep -q "^prefix=$T/usr\$" "$T/usr/lib/pkgconfig/tfrec.pc" 2>/dev/null; then
    pass "installed tfrec.pc names the install prefix"
else
    fail "installed tfrec.pc names the install prefix" "$(head -2 "$T/usr/lib/pkgconfig/tfrec.pc" 2>&1)"
fi

# The tools' examples: every flag the README gives a tool is one the tool
# knows (its --helpfull lists it), and every tfrec subcommand exists.
awk '/^```sh$/ {on = 1; next} on && /^```$/ {on = 0} on' "$ROOT/README.md" |
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' >"$T/commands"
checked=0
while read -r tool rest; do
    case "$tool" in imagenet2tfrec | tfrec2bt | bt2tfrec) ;; *) continue ;; esac
    [ -x "$BUILD/bin/$tool" ] || continue # a build without the tool's part
    help=$("$BUILD/bin/$tool" --helpfull 2>&1)
    for flag in $(echo "$rest" | grep -oE -- '--[a-z_]+' | sort -u); do
        checked=$((checked + 1))
        echo "$help" | grep -qE -- "--(\[no\])?${flag#--}([ =]|$)" ||
            fail "README example flag is known" "$tool $flag is not in $tool --helpfull"
    done
done <"$T/commands"
for sub in $(grep -oE '(^|&& )tfrec [a-z]+' "$T/commands" | awk '{print $NF}' | sort -u); do
    checked=$((checked + 1))
    "$BUILD/bin/tfrec" "$sub" --help >/dev/null 2>&1 || fail "README example subcommand exists" "tfrec $sub --help fails"
done
# A core-only build has the tfrec tool alone: its subcommands are checked.
min=10
grep -qw tfrec-bigtable "$BUILD/parts" || min=2
if [ "$checked" -ge "$min" ] && [ "$fails" -eq 0 ]; then
    pass "README's tool examples use only known flags and subcommands ($checked checked)"
elif [ "$checked" -lt "$min" ]; then
    fail "README's tool examples use only known flags and subcommands" "only $checked found"
fi

export PKG_CONFIG_PATH=$T/usr/lib/pkgconfig
expected='record at offset 0: label 1
record at offset RE: label 2
record at offset RE: label 3'
for kind in shared static; do
    flags=$(pkg-config --cflags --libs tfrec)
    # Static: libtfrec.a plus the shared libraries of its Requires.private
    # (Debian ships no static libcurl dependencies, so not --static).
    req=$(sed -n 's/^Requires.private: //p' "$T/usr/lib/pkgconfig/tfrec.pc")
    [ "$kind" = static ] && flags="$(pkg-config --cflags tfrec) $T/usr/lib/libtfrec.a $(pkg-config --libs $req) -pthread -lm"
    # shellcheck disable=SC2086
    # TFREC_EXTRA_CFLAGS: the sanitizer flags when the library is instrumented.
    if cc -std=c11 -Wall -Wextra -Werror ${TFREC_EXTRA_CFLAGS:-} -o "$T/example-$kind" "$T/example.c" $flags 2>"$T/cc.log"; then
        pass "README example compiles warning-free ($kind)"
    else
        fail "README example compiles warning-free ($kind)" "$(head -20 "$T/cc.log")"
        continue
    fi
    rm -f "$T/demo.tfrecord.gz"
    out=$(cd "$T" && LD_LIBRARY_PATH=$T/usr/lib ./"example-$kind" 2>&1)
    st=$?
    got=$(echo "$out" | sed -E 's/offset [1-9][0-9]*/offset RE/')
    if [ "$st" -eq 0 ] && [ "$got" = "$expected" ]; then
        pass "README example runs and reads back labels 1..3 ($kind)"
    else
        fail "README example runs and reads back labels 1..3 ($kind)" "exit $st: $out"
    fi
    # Independent check of what it wrote: gzip magic, and the tool agrees.
    if [ "$(head -c2 "$T/demo.tfrecord.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
        [ "$("$BUILD/bin/tfrec" count "$T/demo.tfrecord.gz" 2>/dev/null)" = 3 ]; then
        pass "README example output is a 3-record GZIP TFRecord ($kind)"
    else
        fail "README example output is a 3-record GZIP TFRecord ($kind)" "$(ls -l "$T" | tail -3)"
    fi
done
[ "$fails" -eq 0 ]
