#!/usr/bin/env bash
# The Markdown holds together: every relative link of README.md and
# docs/**/*.md resolves (files and #anchors), no page cites a .md file that
# does not exist, and every docs/ page says who it is for
# (tests/integration/lib/doc_links.py). Prints PASS/FAIL lines for
# tests/run.sh.
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
exec /usr/bin/python3 "$ROOT/tests/integration/lib/doc_links.py" "$ROOT"
