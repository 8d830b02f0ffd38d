#!/bin/sh
# Generate a tool's man page or bash completion from its own --helpfull, so
# that neither can drift from the flags the tool accepts.
#
#   scripts/helpdoc.sh man TOOL_BINARY VERSION > TOOL.1
#   scripts/helpdoc.sh completion TOOL_BINARY > TOOL
#
# The help texts share one layout (tools/common/flags.c): a usage line,
# prose, section headers ending in ':' at column 0, flag lines indented as
# "  -c, --name=VALUE   text" or "      --[no]name   text" with indented
# continuation lines. `tfrec` has commands ("Commands:" lists them); each
# command's flags come from `tfrec COMMAND --helpfull`.
set -eu
mode=$1 bin=$2
tool=$(basename "$bin")

help_of() { "$bin" "$@" --helpfull 2>&1; }

# The command names listed under "Commands:" (tfrec only; empty otherwise).
commands() {
    help_of | awk '/^Commands:$/ {on = 1; next} on && /^ +[a-z]/ {print $1; next} on {exit}'
}

# Every flag name a help text lists, one a line: --name (booleans also
# --noname), with a trailing '=' when it takes a value; short forms -c.
flags_of() {
    awk '/^(  |   |    |     |      )(-[A-Za-z0-9], )?--[[a-z]/ {
        spec = $0; sub(/^ +/, "", spec); sub(/  .*/, "", spec)
        n = split(spec, f, ", ")
        for (i = 1; i <= n; i++) {
            s = f[i]
            if (s ~ /^-[A-Za-z0-9]$/) { print s; continue }
            eq = index(s, "=") ? "=" : ""; sub(/[= ].*/, "", s)
            if (s ~ /^--\[no\]/) { sub(/^--\[no\]/, "", s); print "--" s; print "--no" s }
            else print s eq
        }
    }'
}

# "--flag) COMPREPLY=(...); return 0 ;;" for each flag whose help spec
# lists its values (--flag=a|b|c; not metavariables such as FILE|DIR).
values_of() {
    help_of | awk '/^(  |   |    |     |      )(-[A-Za-z0-9], )?--[a-z_-]+=[A-Za-z0-9_-]+(\|[A-Za-z0-9_-]+)+( |$)/ {
        spec = $0; sub(/^ +(-[A-Za-z0-9], )?/, "", spec); sub(/ .*/, "", spec)
        flag = spec; sub(/=.*/, "", flag); vals = spec; sub(/^[^=]*=/, "", vals)
        if (vals ~ /(^|\|)(FILE|DIR|PATH|PATTERN|GLOB|N)(\||$)/ || seen[flag]++) next
        gsub(/\|/, " ", vals)
        printf "%s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return 0 ;;\n", flag, vals
    }'
}

man_page() {
    version=$1
    upper=$(echo "$tool" | tr a-z A-Z)
    # NAME's one line: a summary is no flag, so it may be written here
    case $tool in
        tfrec) desc="inspect, verify, index and convert TFRecord files" ;;
        tfrec2bt) desc="load TFRecord files into Cloud Bigtable, one record per row" ;;
        bt2tfrec) desc="export Cloud Bigtable rows to TFRecord files" ;;
        imagenet2tfrec) desc="convert ImageNet (JPEG tree or official tarballs) to TFRecord shards" ;;
        *) desc=$(help_of | awk 'NR > 1 && NF && !/^ / {print; exit}') ;;
    esac
    printf '.TH %s 1 "" "libtfrec %s" "User Commands"\n.nh\n.ad l\n' "$upper" "$version"
    printf '.SH NAME\n%s \\- %s\n' "$tool" "$(printf '%s' "$desc" | sed 's/\\/\\e/g; s/-/\\-/g')"
    {
        help_of | to_roff "DESCRIPTION"
        for c in $(commands); do
            # each command's own flags and text; the common flags and the
            # exit status, the same for all, appear once above
            "$bin" "$c" --help 2>&1 | to_roff "COMMAND $c" skip_common
        done
        first=$(commands | head -n 1)
        if [ -n "$first" ]; then
            help_of "$first" | awk '/^Common flags/ {on = 1} on && !NF {exit} on' |
                to_roff "COMMON FLAGS" "" nousage
        fi
    }
    printf '.SH "SEE ALSO"\nThe libtfrec documentation: docs/tools.md and docs/tfrec\\-tool.md in the source tree.\n'
}

# Help text on stdin -> roff: the usage lines become SYNOPSIS (or the
# section's first paragraph), headers .SS, flag and command lines .TP.
to_roff() {
    awk -v title="$1" -v skip="${2:-}" -v nousage="${3:-}" '
    function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); if (s ~ /^[.\x27]/) s = "\\&" s; return s }
    { line[NR] = $0 }
    END {
        n = NR; i = 1
        if (title == "DESCRIPTION") print ".SH SYNOPSIS"; else printf ".SH \"%s\"\n", toupper(title)
        # usage: the first line and the lines indented under it
        while (!nousage && i <= n && (i == 1 || line[i] ~ /^ +[^ ]/)) {
            u = line[i]; sub(/^ *[Uu]sage: */, "", u); sub(/^ +/, "", u)
            print ".B " esc(u); print ".br"; i++
        }
        if (title == "DESCRIPTION") print ".SH DESCRIPTION"
        print ".PP"
        dropping = 0
        for (; i <= n; i++) {
            l = line[i]
            if (l == "") { dropping = 0; intp = 0; print ".PP"; continue }
            if (skip && (l ~ /^Exit status:/ || l ~ /^--helpfull also lists/)) dropping = 1
            if (dropping) continue
            if (l ~ /^[^ ].*:$/ && i < n && line[i + 1] ~ /^ +[-a-z]/) {
                h = l; sub(/:$/, "", h); printf ".SS \"%s\"\n", esc(h); intp = 0; continue
            }
            if (l ~ /^(  |   |    |     |      )(-[A-Za-z0-9], )?--/ || l ~ /^  [a-z][a-z0-9-]* +[^ ]/) {
                spec = l; sub(/^ +/, "", spec); text = ""
                if (match(spec, /   */)) { text = substr(spec, RSTART + RLENGTH); spec = substr(spec, 1, RSTART - 1) }
                print ".TP"; print ".B " esc(spec); intp = 1
                if (text != "") print esc(text)
                while (i < n && line[i + 1] ~ /^     +[^ ]/ && line[i + 1] !~ /^(  |   |    |     |      )(-[A-Za-z0-9], )?--/) {
                    i++; t = line[i]; sub(/^ +/, "", t); print esc(t)
                }
                continue
            }
            if (intp) { print ".PP"; intp = 0 }
            t = l; sub(/^ +/, "", t); print esc(t)
        }
    }'
}

completion() {
    fn=_$(echo "$tool" | tr -c 'A-Za-z0-9\n' _)
    cmds=$(commands | tr '\n' ' ' | sed 's/ $//')
    echo "# bash completion for $tool, generated from '$tool --helpfull' by scripts/helpdoc.sh"
    echo "$fn() {"
    echo '    local cur=${COMP_WORDS[COMP_CWORD]} cmd= i flags'
    if [ -n "$cmds" ]; then
        # bash splits --flag=value into "--flag" "=" "value": a word after
        # "=" is a value, not the command
        echo '    for ((i = 1; i < COMP_CWORD; i++)); do'
        echo '        case ${COMP_WORDS[i]} in -*|=) continue ;; esac'
        echo '        [[ ${COMP_WORDS[i-1]} == = ]] || { cmd=${COMP_WORDS[i]}; break; }'
        echo '    done'
        echo '    if [[ -z $cmd ]]; then'
        printf '        if [[ $cur != -* ]]; then COMPREPLY=($(compgen -W "%s" -- "$cur")); return; fi\n' "$cmds"
        # before a command: the flags every command takes that need none
        echo '        flags="--help --helpfull --version"'
        echo '    fi'
        echo '    case $cmd in'
        for c in $cmds; do
            printf '        %s) flags="%s" ;;\n' "$c" "$(help_of "$c" | flags_of | sort -u | tr '\n' ' ' | sed 's/ $//')"
        done
        echo '    esac'
    else
        printf '    flags="%s"\n' "$(help_of | flags_of | sort -u | tr '\n' ' ' | sed 's/ $//')"
    fi
    # the values of a flag written --flag=a|b|c in the help
    cases=$(values_of | sed 's/^/            /')
    if [ -n "$cases" ]; then
        echo '    local prev=${COMP_WORDS[COMP_CWORD-1]} flag='
        echo '    if [[ $cur == = ]]; then flag=$prev cur=; elif [[ $prev == = ]]; then flag=${COMP_WORDS[COMP_CWORD-2]}; fi'
        echo '    if [[ -n $flag ]]; then'
        echo '        case $flag in'
        echo "$cases"
        echo '        esac'
        echo '    fi'
    fi
    # a flag whose value follows '=' gets no space after it; anything else
    # (values, files) falls back to file names
    echo '    if [[ $cur == -* ]]; then'
    echo '        COMPREPLY=($(compgen -W "$flags" -- "$cur"))'
    echo '        [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null'
    echo '        return 0'
    echo '    fi'
    echo '    COMPREPLY=($(compgen -f -- "$cur"))'
    echo '}'
    echo "complete -o default -F $fn $tool"
}

case $mode in
    man) man_page "${3:?VERSION}" ;;
    completion) completion ;;
    *) echo "usage: $0 man TOOL_BINARY VERSION | completion TOOL_BINARY" >&2; exit 2 ;;
esac
