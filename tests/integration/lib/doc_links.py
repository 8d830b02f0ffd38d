"""Check the project's Markdown: README.md and docs/**/*.md.

- Every relative link ([text](target), [label]: target) resolves: the file
  or directory exists, and a #fragment names a heading of the target page
  (GitHub's anchor rules) or of the page itself.
- A Markdown file cited by name in a code span (`docs/x.md`, `DESIGN.md`)
  exists, relative to the page or to the repository root.
- Every docs/ page says who it is for near its top: a line starting with
  "For:" or "Who it is for" within the first 15 lines.

Usage: python3 doc_links.py REPO_ROOT. Prints PASS/FAIL lines (tests/run.sh
counts them) and exits 1 on any failure.
"""
import glob
import os
import re
import sys
import unicodedata

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_LINK = re.compile(r"(?<!\\)!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
MD_NAME = re.compile(r"^[A-Za-z0-9_./-]+\.md$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def pages():
    found = [os.path.join(ROOT, "README.md")]
    found += sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return [p for p in found if os.path.isfile(p)]


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield n, line


def slug(heading):
    """GitHub's anchor for a heading: markup dropped, lower case,
    punctuation other than '-' and '_' removed, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").lower()
    out = []
    for ch in text:
        if ch in "-_ " or ch.isalnum() or unicodedata.category(ch).startswith("M"):
            out.append("-" if ch == " " else ch)
    return "".join(out)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        result = set()
        with open(path, encoding="utf-8") as f:
            for _, line in prose_lines(f.read()):
                m = HEADING.match(line)
                if not m:
                    continue
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                result.add(s if n == 0 else "%s-%d" % (s, n))
                for a in re.findall(r'<a\s+(?:name|id)="([^"]+)"', line):
                    result.add(a)
        _anchors[path] = result
    return _anchors[path]


def check_link(page, target):
    """None when the link resolves, else why not."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
        return None
    path, _, frag = target.partition("#")
    if path:
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), path))
        if not os.path.exists(resolved):
            return "no such file: %s" % os.path.relpath(resolved, ROOT)
    else:
        resolved = page
    if frag and resolved.endswith(".md") and os.path.isfile(resolved):
        if frag not in anchors(resolved):
            return "no heading #%s in %s" % (frag, os.path.relpath(resolved, ROOT))
    return None


def main():
    failures = 0
    links = 0
    for page in pages():
        rel = os.path.relpath(page, ROOT)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        bad = []
        for n, line in prose_lines(text):
            targets = INLINE_LINK.findall(CODE_SPAN.sub("", line))
            m = REF_DEF.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                links += 1
                why = check_link(page, target)
                if why:
                    bad.append("%s:%d: (%s) %s" % (rel, n, target, why))
            for _, span in CODE_SPAN.findall(line):
                span = span.strip()
                if MD_NAME.match(span) and "*" not in span:
                    here = os.path.join(os.path.dirname(page), span)
                    if not (os.path.exists(here) or os.path.exists(os.path.join(ROOT, span))):
                        bad.append("%s:%d: `%s` names a file that does not exist" % (rel, n, span))
        if bad:
            failures += 1
            print("FAIL links of %s:\n    %s" % (rel, "\n    ".join(bad)))
        else:
            print("PASS links of %s" % rel)
        if rel.startswith("docs" + os.sep):
            top = text.splitlines()[:15]
            if any(re.match(r"^(For:|Who it is for)", line) for line in top):
                print("PASS %s says who it is for" % rel)
            else:
                failures += 1
                print("FAIL %s says who it is for: no line starting with 'For:' or "
                      "'Who it is for' in its first 15 lines" % rel)
    if links < 50:
        print("FAIL only %d links found: is the parser broken?" % links)
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
