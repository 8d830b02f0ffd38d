"""docker/Dockerfile's parts, tested without a container engine: the
build stage's docker/install.sh run into a DESTDIR gives the tools, the
shared libraries and the Python package; `ldd` of every installed binary
and library resolves each needed library to a file of a Debian package that
deps/runtime.txt names or that those packages depend on (dpkg -S,
dpkg-query), and the libraries the project's files name directly (their
NEEDED entries) belong to packages deps/runtime.txt names itself. The
Dockerfile installs exactly deps/runtime.txt in the image, from
debian:12-slim, and deps/build.txt in the build stage; docs/docker.md's
build command is the one the Dockerfile says."""
# needs: tfrec-image tfrec-bigtable tfrec-storage
import os
import re
import subprocess

import pytest

from bindings_env import REPO

DOCKERFILE = os.path.join(REPO, "docker", "Dockerfile")


def package_list(name):
    with open(os.path.join(REPO, "deps", name), encoding="utf-8") as f:
        return [w for line in f for w in line.split("#", 1)[0].split()]


def stages():
    """[(FROM line, [instructions])] of the Dockerfile."""
    out = []
    text = open(DOCKERFILE, encoding="utf-8").read().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("FROM "):
            out.append((line, []))
        else:
            out[-1][1].append(" ".join(line.split()))
    return out


def test_dockerfile_installs_the_lists():
    (build_from, build), (final_from, final) = stages()
    assert build_from == "FROM debian:12-slim AS build" and final_from == "FROM debian:12-slim"
    assert any("deps/build.txt" in i and "apt-get install" in i for i in build), build
    assert any("docker/install.sh /out" in i for i in build), build
    # the image: the runtime list and what the build stage installed, nothing else
    runs = [i for i in final if i.startswith("RUN ")]
    installs = [i for i in runs if "apt-get install" in i]
    assert len(installs) == 1 and "/tmp/runtime.txt" in installs[0], runs
    assert "COPY deps/runtime.txt /tmp/runtime.txt" in final
    assert "COPY --from=build /out/ /" in final
    assert not any("-dev" in i for i in final)
    for pkg in package_list("runtime.txt"):
        assert not pkg.endswith("-dev"), pkg


def test_docs_say_how_to_build_and_push():
    doc = open(os.path.join(REPO, "docs", "docker.md"), encoding="utf-8").read()
    m = re.search(r"docker build -f docker/Dockerfile -t (\S+) \.", doc)
    assert m, "docs/docker.md has no docker build command"
    assert "docker push %s" % m.group(1) in doc
    assert "docker build -f docker/Dockerfile -t REGISTRY/libtfrec:VERSION ." in \
        open(DOCKERFILE, encoding="utf-8").read()


@pytest.fixture(scope="module")
def installed(build_dir, tmp_path_factory):
    parts = open(os.path.join(build_dir, "parts")).read().split()
    if parts != ["tfrec", "tfrec-image", "tfrec-gcp", "tfrec-bigtable", "tfrec-storage"]:
        pytest.fail("the image holds every part; this build has %s" % parts)
    dest = tmp_path_factory.mktemp("image")
    out = subprocess.run([os.path.join(REPO, "docker", "install.sh"), str(dest), build_dir],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return dest


def elf_files(root):
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p) and open(p, "rb").read(4) == b"\x7fELF":
                yield p


def variants(path):
    """The names dpkg may know a library file by (merged /usr: some under
    /lib, some under /usr/lib; the file itself or the symlink)."""
    out = [path, os.path.realpath(path)]
    for p in list(out):
        if p.startswith("/usr/lib/"):
            out.append(p[len("/usr"):])
        elif p.startswith("/lib"):
            out.append("/usr" + p)
    return out


def owners(paths):
    """{path: the Debian package owning it, or None}, in one dpkg -S call."""
    tries = {p: variants(p) for p in paths}
    names = sorted({v for vs in tries.values() for v in vs})
    out = subprocess.run(["dpkg", "-S"] + names, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        pkgs, _, path = line.partition(": ")
        found[path.strip()] = pkgs.split(",")[0].split(":")[0].strip()
    return {p: next((found[v] for v in vs if v in found), None) for p, vs in tries.items()}


def dependency_closure(names):
    """The packages apt installs for `names`: them and, recursively, their
    Depends and Pre-Depends (any alternative, virtual packages through
    Provides), as the installed packages declare them."""
    out = subprocess.run(["dpkg-query", "-W", "-f",
                          "${Package}\t${Depends}, ${Pre-Depends}\t${Provides}\n"],
                         capture_output=True, text=True, check=True).stdout
    deps, provides = {}, {}
    for line in out.splitlines():
        pkg, dep, prov = (line.split("\t") + ["", ""])[:3]
        deps[pkg] = [[re.sub(r"[:(].*", "", alt).strip() for alt in item.split("|")]
                     for item in dep.split(",") if item.strip()]
        for p in prov.split(","):
            p = re.sub(r"[:(].*", "", p).strip()
            if p:
                provides.setdefault(p, []).append(pkg)
    seen, todo = set(), list(names)
    while todo:
        p = todo.pop()
        for real in [p] + provides.get(p, []):
            if real in seen or real not in deps:
                continue
            seen.add(real)
            for alts in deps[real]:
                todo.extend(alts)
    return seen


def test_installed_files_need_only_the_runtime_packages(installed):
    prefix = installed / "usr" / "local"
    assert sorted(os.listdir(prefix)) == ["bin", "lib", "share"]
    assert sorted(os.listdir(prefix / "bin")) == ["bt2tfrec", "imagenet2tfrec", "tfrec", "tfrec2bt"]
    assert not [f for f in os.listdir(prefix / "lib") if f.endswith(".a")]
    runtime = package_list("runtime.txt")
    closure = dependency_closure(runtime)
    files = list(elf_files(installed))
    assert len(files) == 4 + 5, files  # the tools and the five parts
    env = dict(os.environ, LD_LIBRARY_PATH=str(prefix / "lib"))  # ldconfig's job in the image
    problems = []
    loads, needed = {}, {}
    for f in files:
        out = subprocess.run(["ldd", f], capture_output=True, text=True, env=env)
        assert out.returncode == 0, (f, out.stderr)
        loads[f] = {}
        for line in out.stdout.splitlines():
            if "not found" in line:
                problems.append("%s: %s" % (f, line.strip()))
            m = re.match(r"\s*(\S+) => (\S+)", line)
            if m and not m.group(2).startswith(str(installed)):
                loads[f][m.group(1)] = m.group(2)
        dyn = subprocess.run(["readelf", "-d", f], capture_output=True, text=True).stdout
        needed[f] = [lib for lib in re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn)
                     if not lib.startswith("libtfrec") and lib != "ld-linux-x86-64.so.2"]
    pkg_of = owners({p for libs in loads.values() for p in libs.values()})
    for f in files:
        name = os.path.basename(f)
        for lib, path in loads[f].items():
            if pkg_of[path] not in closure:
                problems.append("%s needs %s from %s, not in deps/runtime.txt or what it "
                                "pulls in" % (name, lib, pkg_of[path]))
        # what our own files name directly belongs to a package listed by name
        for lib in needed[f]:
            pkg = pkg_of.get(loads[f].get(lib))
            if pkg not in runtime:
                problems.append("%s names %s (package %s), which deps/runtime.txt does not "
                                "list" % (name, lib, pkg))
    assert not problems, "\n".join(problems)


def test_installed_python_package_and_tools_run(installed):
    prefix = installed / "usr" / "local"
    (site,) = [str(prefix / "lib" / d / "dist-packages") for d in os.listdir(prefix / "lib")
               if d.startswith("python3")]
    env = {k: v for k, v in os.environ.items()
           if k not in ("TFREC_LIBRARY", "TFREC_BUILD", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = site
    out = subprocess.run(["/usr/bin/python3", "-c",
                          "import tfrec; print(sorted(p for p, f in tfrec.parts().items() if f))"],
                         capture_output=True, text=True, env=env, cwd="/", timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr(sorted(["tfrec", "tfrec-image", "tfrec-gcp",
                                              "tfrec-bigtable", "tfrec-storage"]))
    for tool in os.listdir(prefix / "bin"):
        r = subprocess.run([str(prefix / "bin" / tool), "--version"], capture_output=True,
                           env=env, timeout=60)
        assert r.returncode == 0, (tool, r.stderr)
    assert sorted(os.listdir(prefix / "share" / "man" / "man1")) == \
        ["bt2tfrec.1", "imagenet2tfrec.1", "tfrec.1", "tfrec2bt.1"]
