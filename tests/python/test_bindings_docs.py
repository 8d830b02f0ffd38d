"""The tf.data-style example in docs/python.md runs as written and prints
what the document says it prints."""
import ast
import os
import re
import subprocess
import sys

from bindings_env import PYTHON_DIR, REPO


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
