"""The documents' claims about imagenet2tfrec and the setup, checked
against the real thing: the manifest example of docs/imagenet.md has the
keys (top level, options, counts, shard entries) and the version of a
manifest the tool writes; docs/datasets.md says what `make deps` installs
as scripts/install-deps.sh does (the lists in deps/)."""
# needs: tfrec-image
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))
import make_images  # noqa: E402


def doc_manifest():
    text = open(os.path.join(REPO, "docs", "imagenet.md"), encoding="utf-8").read()
    section = text[text.index("## Manifest"):]
    return re.search(r"```json\n(.*?)```", section, re.S).group(1)


def keys_of(block):
    """Top-level keys, and the keys listed inside "name": {...} or the first
    entry of "name": [{...}], of the (not strictly JSON) example."""
    depth, top = 0, []
    for m in re.finditer(r'"([a-z_0-9]+)"\s*:|[{}\[\]]', block):
        tok = m.group(0)
        if tok in "{[":
            depth += 1
        elif tok in "}]":
            depth -= 1
        elif depth == 1:
            top.append(m.group(1))
    out = {"": top}
    for name in ("options", "counts"):
        inner = re.search(r'"%s":\s*\{(.*?)\}' % name, block, re.S).group(1)
        out[name] = re.findall(r'"([a-z_0-9]+)"', inner)
    shard = re.search(r'"shards":\s*\[\{(.*?)\}', block, re.S).group(1)
    out["shards"] = re.findall(r'"([a-z_0-9]+)"\s*:', shard)
    return out


def test_manifest_example_matches_real_output(imagenet2tfrec_bin, tmp_path):
    raw = str(tmp_path / "raw")
    make_images.cmd_samples(raw, train=6, validation=2, classes=2, seed=1)
    out = str(tmp_path / "out")
    r = subprocess.run([imagenet2tfrec_bin, "--quiet", "--raw_data_dir", raw, "--output_dir", out,
                        "--train_shards=1", "--validation_shards=1"],
                       stderr=subprocess.PIPE, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, "manifest.json")) as f:
        real = json.load(f)
    block = doc_manifest()
    doc = keys_of(block)
    version = re.search(r'"version":\s*"([^"]*)"', block).group(1)
    assert version == real["version"], "docs/imagenet.md shows version %s, the tool writes %s" % (
        version, real["version"])
    assert set(doc[""]) == set(real), "top-level keys"
    assert set(doc["options"]) <= set(real["options"]), "options keys the tool does not write"
    assert set(doc["counts"]) == set(real["counts"]), "counts keys"
    assert set(doc["shards"]) == set(real["shards"][0]), "shard entry keys"


def test_datasets_doc_says_what_make_deps_installs():
    text = open(os.path.join(REPO, "docs", "datasets.md"), encoding="utf-8").read()
    # make deps (scripts/install-deps.sh) installs the packages of deps/*.txt
    deps = []
    for name in ("build.txt", "test.txt", "runtime.txt"):
        with open(os.path.join(REPO, "deps", name), encoding="utf-8") as f:
            deps += [w for line in f for w in line.split("#", 1)[0].split()]
    assert "deps/" in open(os.path.join(REPO, "scripts", "install-deps.sh")).read()
    flat = " ".join(text.split())
    installed = "python3-torch" in deps
    says_not = re.search(r"`make deps` does not install (that package|`?python3-torch)", flat)
    says_yes = "which `make deps` installs" in flat
    assert installed == says_yes and installed != bool(says_not)
