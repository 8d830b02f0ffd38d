"""The examples in docs/python.md that show their output run as written and
print what the document says they print."""
# needs: tfrec-image tfrec-bigtable tfrec-storage
import ast
import inspect
import os
import re
import subprocess
import sys

from bindings_env import PYTHON_DIR, REPO, load_tfrec


def doc_text():
    return open(os.path.join(REPO, "docs", "python.md"), encoding="utf-8").read()


def doc_blocks():
    return re.findall(r"```python\n(.*?)```", doc_text(), re.S)


def runnable_examples():
    """(code, output) of every Python block followed by "Its output:"."""
    block = r"```%s\n((?:(?!```).)*)```"  # one fenced block, not running into the next
    return re.findall(block % "python" + r"\n\nIts output:\n\n" + block % "text", doc_text(), re.S)


def run_example(build_dir, tmp_path, code):
    script = tmp_path / "example.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR,
               TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_every_python_block_is_valid_syntax():
    code = doc_blocks()
    assert len(code) >= 5
    for block in code:
        ast.parse(block)


def test_pipeline_example_runs_as_documented(build_dir, tmp_path):
    pipeline = [(c, o) for c, o in runnable_examples() if "ThreadPoolExecutor" in c]
    assert len(pipeline) == 1
    code, output = pipeline[0]
    stdout = run_example(build_dir, tmp_path, code)
    assert stdout == output
    # facts that do not depend on our code: 8 images per class, sizes as drawn
    lines = stdout.splitlines()
    labels = [int(x) for line in lines[1:] for x in re.findall(r"\d+", line.split("labels")[1])]
    assert sorted(labels) == [1] * 8 + [2] * 8
    assert all("(64, 48)" in line for line in lines[1:])


def test_api_examples_run_as_documented(build_dir, tmp_path):
    """The Dataset and storage examples: their printed output as shown."""
    examples = [(c, o) for c, o in runnable_examples() if "ThreadPoolExecutor" not in c]
    apis = {api for c, _ in examples for api in ("tfrec.Dataset(", "tfrec.storage.") if api in c}
    assert apis == {"tfrec.Dataset(", "tfrec.storage."}
    for i, (code, output) in enumerate(examples):
        d = tmp_path / str(i)
        d.mkdir()
        assert run_example(build_dir, d, code) == output, code


def test_dataset_example_output_is_a_shuffled_sharded_epoch(build_dir, tmp_path):
    """What the documented Dataset output must hold whatever the shuffle:
    each epoch is 15 distinct ids of the 30 written, and the epochs differ."""
    code = [c for c, _ in runnable_examples() if "tfrec.Dataset(" in c][0]
    epochs = [ast.literal_eval(line.split(" ", 2)[2])
              for line in run_example(build_dir, tmp_path, code).splitlines()
              if line.startswith("epoch ")]
    assert len(epochs) == 2
    for ids in epochs:
        assert len(ids) == len(set(ids)) == 15 and set(ids) <= set(range(30))
    assert epochs[0] != epochs[1]


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
