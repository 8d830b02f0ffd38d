"""The package's type hints (python/tfrec/*.pyi, shipped with py.typed):
Debian's mypy finds them consistent with the modules at run time
(stubtest, with typing/stubtest_allowlist.txt for the justified
exceptions), type-checks the Python examples of README.md and docs/ and
typing/usage.py without an error, and reports each wrong use in
typing/misuse.py."""
# needs: tfrec-image tfrec-bigtable tfrec-storage
import ast
import os
import re
import subprocess
import sys

import pytest

from bindings_env import PYTHON_DIR, REPO

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "typing")
CONFIG = os.path.join(HERE, "mypy.ini")

# Names the docs' examples leave to the reader, with the types they stand for
# (declared before an example that uses one without binding it).
GIVEN = {"serialized_example": "bytes", "jpeg_bytes": "bytes", "records": "list[bytes]",
         "path": "str", "files": "list[str]", "rank": "int", "world": "int",
         "num_records": "int", "epochs": "int", "plan": "tfrec.bigtable.SplitPlan"}


def with_given_names(code):
    """import tfrec and the GIVEN names the example does not bind itself."""
    bound = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    decl = ["%s: %s" % (n, t) for n, t in GIVEN.items() if n not in bound and n in code]
    return "\n".join(["import tfrec"] + decl) + "\n" + code


@pytest.fixture(scope="module")
def mypy_env(build_dir):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed: make deps (scripts/install-deps.sh) installs "
                    "Debian's mypy")
    return dict(os.environ, PYTHONPATH=PYTHON_DIR, MYPYPATH=PYTHON_DIR,
                TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))


@pytest.fixture(scope="module")
def mypy_run(mypy_env, build_dir, tmp_path_factory):
    """One mypy run over typing/usage.py, typing/misuse.py and the docs'
    examples: (the example files, mypy's output). Its cache stays in the
    build directory, so that a second run skips the standard library."""
    d = tmp_path_factory.mktemp("typing")
    examples = []
    for name, code in doc_examples():
        f = d / (name + ".py")
        f.write_text(with_given_names(code))
        examples.append(str(f))
    # From a directory outside python/, so that tfrec is found once (MYPYPATH).
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", CONFIG,
                          "--cache-dir", os.path.join(build_dir, "mypy-cache"),
                          os.path.join(HERE, "usage.py"), os.path.join(HERE, "misuse.py"),
                          *examples],
                         capture_output=True, text=True, env=mypy_env, cwd=d, timeout=900)
    return examples, out.stdout + out.stderr


def errors_in(output, name):
    """Line numbers of the errors mypy reported in files called name."""
    return {int(n) for n in re.findall(r"^(?:.*/)?%s:(\d+): error:" % re.escape(name), output,
                                       re.M)}


def doc_examples():
    """(name, code) of every ```python block of README.md and docs/**/*.md."""
    pages = [os.path.join(REPO, "README.md")]
    for d, _, names in sorted(os.walk(os.path.join(REPO, "docs"))):
        pages += [os.path.join(d, n) for n in sorted(names) if n.endswith(".md")]
    out = []
    for page in pages:
        text = open(page, encoding="utf-8").read()
        stem = re.sub(r"\W", "_", os.path.relpath(page, REPO)[:-3])
        for i, code in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
            out.append(("doc_%s_%d" % (stem, i), code))
    return out


def test_stubs_match_the_runtime(mypy_env, tmp_path):
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", CONFIG,
                          "--allowlist", os.path.join(HERE, "stubtest_allowlist.txt"),
                          "tfrec"],
                         capture_output=True, text=True, env=mypy_env, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found" in out.stdout
    # every public module has its stub, and the package says it is typed
    public = {f[:-3] for f in os.listdir(os.path.join(PYTHON_DIR, "tfrec"))
              if f.endswith(".py") and not f.startswith("_")} | {"__init__"}
    stubs = {f[:-4] for f in os.listdir(os.path.join(PYTHON_DIR, "tfrec")) if f.endswith(".pyi")}
    assert stubs == public
    assert os.path.exists(os.path.join(PYTHON_DIR, "tfrec", "py.typed"))


def test_docs_examples_and_typed_usage_check(mypy_run):
    examples, out = mypy_run
    assert len(examples) >= 15 and any("bigtable" in open(f).read() for f in examples)
    for f in examples + [os.path.join(HERE, "usage.py")]:
        assert not errors_in(out, os.path.basename(f)), out
    # mypy ran over all of them (and found errors only in misuse.py)
    assert "Found %d errors in 1 file (checked %d source files)" % (
        len(errors_in(out, "misuse.py")), len(examples) + 2) in out, out


def test_wrong_uses_are_reported(mypy_run):
    _, out = mypy_run
    src = os.path.join(HERE, "misuse.py")
    want = {i for i, line in enumerate(open(src, encoding="utf-8"), 1)
            if re.search(r"\S  # error: ", line)}
    assert len(want) >= 8
    assert errors_in(out, "misuse.py") == want, out
