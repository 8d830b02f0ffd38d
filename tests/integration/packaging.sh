#!/usr/bin/env bash
# What `make install` gives a user, and `make uninstall` takes back:
#  - installed into a non-system PREFIX, every tool starts without
#    LD_LIBRARY_PATH, and every installed shared part resolves the parts it
#    requires from PREFIX/lib without it;
#  - each tool's man page renders with `man -l`, without warnings, and
#    names every flag its --helpfull lists (each tfrec command's too);
#  - the bash completions complete tfrec's commands, each command's flags
#    and every tool's flags, by calling the completion function as bash
#    does (COMP_WORDS, COMP_CWORD);
#  - `make uninstall` leaves nothing but empty directories, with DESTDIR
#    too.
# Usage: tests/integration/packaging.sh (TFREC_BUILD: the build directory)
source "$(dirname "$0")/lib/common.sh"
it_tmpdir packaging
PARTS=$(cat "$BUILD/parts")
has() { case " $PARTS " in *" $1 "*) echo 1 ;; *) echo 0 ;; esac; }
mk() {
    make -C "$ROOT" --no-print-directory BUILD="$BUILD" WITH_IMAGE="$(has tfrec-image)" \
        WITH_BIGTABLE="$(has tfrec-bigtable)" WITH_STORAGE="$(has tfrec-storage)" "$@"
}
TOOLS=$(ls "$BIN")
VERSION=$(sed -n 's/^#define TFREC_VERSION_STRING "\(.*\)"/\1/p' include/tfrec/version.h)

P=$T/x
if mk install PREFIX="$P" >"$T/install.log" 2>&1; then
    pass "make install PREFIX=$P"
else
    fail "make install PREFIX=$P" "$(tail -5 "$T/install.log")"
    it_finish packaging
fi

# --- the installed programs start from a non-system prefix
bad=
for t in $TOOLS; do
    out=$(cd / && env -u LD_LIBRARY_PATH -u TFREC_LIBRARY "$P/bin/$t" --version 2>&1) &&
        [[ $out == *"$VERSION"* ]] || bad="$bad $t($out)"
done
[ -z "$bad" ] && pass "installed tools start without LD_LIBRARY_PATH ($(echo $TOOLS))" ||
    fail "installed tools start without LD_LIBRARY_PATH" "$bad"
bad=
for so in "$P"/lib/libtfrec*.so.1; do
    # every libtfrec part a shared part needs resolves to PREFIX/lib
    miss=$(env -u LD_LIBRARY_PATH ldd "$so" | awk '/libtfrec/ && $3 !~ "^'"$P"'/lib/" {print $1 "=>" $3}')
    [ -z "$miss" ] || bad="$bad $(basename "$so"): $miss"
done
[ -z "$bad" ] && pass "installed shared parts find the parts they require in PREFIX/lib" ||
    fail "installed shared parts find the parts they require in PREFIX/lib" "$bad"

# --- man pages
# The flags a help text lists, as it prints them (--name, --[no]name),
# found here independently of scripts/helpdoc.sh.
help_flags() {
    grep -E '^ {2,6}(-[A-Za-z0-9], )?--[[a-z]' | sed -E 's/^ +(-[A-Za-z0-9], )?//; s/[= ].*//' | sort -u
}
helps() { # tool: every --helpfull text of it (tfrec: each command's too)
    "$BIN/$1" --helpfull 2>&1
    if [ "$1" = tfrec ]; then
        for c in $(tfrec_commands); do "$BIN/tfrec" "$c" --helpfull 2>&1; done
    fi
}
tfrec_commands() {
    "$BIN/tfrec" --helpfull 2>&1 | awk '/^Commands:$/ {on = 1; next} on && /^ +[a-z]/ {print $1; next} on {exit}'
}
for t in $TOOLS; do
    page=$P/share/man/man1/$t.1
    [ -f "$page" ] || { fail "man page of $t installed" "no $page"; continue; }
    text=$(LC_ALL=C.UTF-8 MANWIDTH=250 man --warnings -l "$page" 2>"$T/man.err" | col -b)
    if [ -s "$T/man.err" ] || [[ $text != *"$t - "* ]]; then
        fail "man -l $t.1 renders" "$(head -3 "$T/man.err")"
        continue
    fi
    flags=$(helps "$t" | help_flags)
    missing=
    for f in $flags; do
        grep -qF -- "$f" <<<"$text" || missing="$missing $f"
    done
    n=$(wc -w <<<"$flags")
    [ "$n" -ge 5 ] && [ -z "$missing" ] && pass "man -l $t.1 renders and names all $n flags of its --helpfull" ||
        fail "man -l $t.1 names every flag of --helpfull" "missing:$missing (of $n)"
done
cmds=$(tfrec_commands)
text=$(LC_ALL=C.UTF-8 MANWIDTH=250 man -l "$P/share/man/man1/tfrec.1" 2>/dev/null | col -b)
missing=
for c in $cmds; do grep -q "^COMMAND ${c^^}\$" <<<"$text" || missing="$missing $c"; done
[ -n "$cmds" ] && [ -z "$missing" ] && pass "tfrec.1 has a section per command ($(echo $cmds))" ||
    fail "tfrec.1 has a section per command" "missing:$missing"

# --- bash completion
complete_words() { # tool word... : what the completion offers for the last word
    local tool=$1
    shift
    bash --norc --noprofile -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        fn=$(complete -p "$1" | sed -E "s/.* -F ([^ ]+) .*/\1/")
        "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$P/share/bash-completion/completions/$tool" "$tool" "$@"
}
check_completion() { # name expected tool word...
    local name=$1 want=$2 got
    shift 2
    got=$(complete_words "$@" | tr '\n' ' ')
    [ "$got" = "$want" ] && pass "completion: $name" || fail "completion: $name" "got '$got', want '$want'"
}
check_completion "tfrec subcommand prefix 'co'" "convert count " tfrec co
# bash splits "--flagfile=x" into three words: x is the flag's value, not a command
check_completion "tfrec subcommand after --flagfile=x" "verify " tfrec --flagfile = x ve
check_completion "tfrec count flag prefix '--in'" "--index --input-compression= " tfrec count --in
check_completion "tfrec head flags differ from count's ('--re')" "--records= " tfrec head --re
if [ "$(has tfrec-bigtable)" = 1 ]; then
    check_completion "tfrec2bt flag prefix '--progress'" "--progress_file= " tfrec2bt --progress
    check_completion "tfrec2bt boolean flag and its negation ('--nodry')" "--nodry_run " tfrec2bt --nodry
    check_completion "tfrec2bt --row_key_order= values" "reversed sequential " tfrec2bt --row_key_order =
fi
if [ "$(has tfrec-image)" = 1 ]; then
    check_completion "imagenet2tfrec --layout=f value" "folders " imagenet2tfrec --layout = f
fi
for t in $TOOLS; do
    [ "$t" = tfrec ] && continue
    want=$("$BIN/$t" --helpfull 2>&1 | help_flags | sed 's/^--\[no\]/--/')
    got=$(complete_words "$t" -- | sed 's/=$//')
    missing=$(comm -23 <(sort -u <<<"$want") <(sort -u <<<"$got") | tr '\n' ' ')
    [ -z "$missing" ] && [ -n "$got" ] && pass "completion offers every flag of $t --helpfull ($(wc -l <<<"$want"))" ||
        fail "completion offers every flag of $t --helpfull" "missing: $missing"
done

# --- uninstall
if mk uninstall PREFIX="$P" >"$T/uninstall.log" 2>&1; then
    # a Python run from the install may have left bytecode: gone too
    left=$(find "$P" ! -type d)
    [ -z "$left" ] && pass "make uninstall PREFIX=... leaves only empty directories" ||
        fail "make uninstall PREFIX=... leaves only empty directories" "$(echo $left | head -c 400)"
else
    fail "make uninstall PREFIX=..." "$(tail -5 "$T/uninstall.log")"
fi
D=$T/dest
SITE=$D/opt/tfrec/lib/python$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages/tfrec
if mk install DESTDIR="$D" PREFIX=/opt/tfrec >"$T/install2.log" 2>&1 && [ -x "$D/opt/tfrec/bin/tfrec" ] &&
    [ -f "$SITE/_lib.py" ] && mkdir "$SITE/__pycache__" && touch "$SITE/__pycache__/_lib.cpython-311.pyc" &&
    mk uninstall DESTDIR="$D" PREFIX=/opt/tfrec >>"$T/install2.log" 2>&1; then
    left=$(find "$D" ! -type d)
    [ -z "$left" ] && pass "make install + uninstall DESTDIR=... PREFIX=/opt/tfrec leaves only empty directories" ||
        fail "make uninstall DESTDIR=... leaves only empty directories" "$(echo $left | head -c 400)"
else
    fail "make install + uninstall DESTDIR=... PREFIX=/opt/tfrec" "$(tail -5 "$T/install2.log")"
fi
it_finish packaging
