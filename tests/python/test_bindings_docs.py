"""The tf.data-style example in docs/python.md runs as written and prints
what the document says it prints."""
# needs: tfrec-image tfrec-bigtable
import ast
import inspect
import os
import re
import subprocess
import sys

from bindings_env import PYTHON_DIR, REPO, load_tfrec


def doc_blocks():
    text = open(os.path.join(REPO, "docs", "python.md"), encoding="utf-8").read()
    code = re.findall(r"```python\n(.*?)```", text, re.S)
    output = re.findall(r"Its output:\n\n```text\n(.*?)```", text, re.S)
    return code, output


def test_every_python_block_is_valid_syntax():
    code, _ = doc_blocks()
    assert len(code) >= 5
    for block in code:
        ast.parse(block)


def test_pipeline_example_runs_as_documented(build_dir, tmp_path):
    code, output = doc_blocks()
    script = tmp_path / "example.py"
    script.write_text(code[-1])
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR,
               TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout == output[0]
    # facts that do not depend on our code: 8 images per class, sizes as drawn
    lines = res.stdout.splitlines()
    labels = [int(x) for line in lines[1:] for x in re.findall(r"\d+", line.split("labels")[1])]
    assert sorted(labels) == [1] * 8 + [2] * 8
    assert all("(64, 48)" in line for line in lines[1:])


def readme_python_block():
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README.md has no Python example"
    return blocks[0]


def test_readme_python_example_calls_the_real_api(build_dir):
    """The README's Python example needs data and a Bigtable, so it is not
    run here; instead every call it makes into tfrec is resolved against the
    package and bound to the callee's real signature (names, keywords and
    argument counts), including methods of objects bound by `with ... as`."""
    tfrec = load_tfrec(build_dir)
    tree = ast.parse(readme_python_block())
    bound = {}  # variable name -> class, from `with tfrec.X(...) as name`

    def dotted(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return parts[::-1]
        return None

    def resolve(func):
        parts = dotted(func)
        if not parts:
            return None, False
        if parts[0] == "tfrec":
            obj = tfrec
        elif parts[0] in bound:
            obj = bound[parts[0]]
        else:
            return None, False
        for name in parts[1:]:
            assert hasattr(obj, name), "README calls %s, which does not exist" % ".".join(parts)
            obj = getattr(obj, name)
        return obj, parts[0] in bound

    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                obj, _ = resolve(item.context_expr.func) if isinstance(item.context_expr, ast.Call) else (None, False)
                if obj is not None and isinstance(item.optional_vars, ast.Name):
                    assert hasattr(obj, "__enter__") and hasattr(obj, "__exit__")
                    bound[item.optional_vars.id] = obj
    checked = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        obj, is_method = resolve(node.func)
        if obj is None:
            continue
        sig = inspect.signature(obj)
        args = [None] * (len(node.args) + (1 if is_method else 0))
        sig.bind(*args, **{k.arg: None for k in node.keywords})  # TypeError if wrong
        checked += 1
    assert checked >= 6, "only %d calls into tfrec found" % checked
