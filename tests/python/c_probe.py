"""Ask the C compiler about the public headers (include/tfrec/*.h).

values(): compile and run a program that prints C expressions (sizeof,
offsetof, enum constants), so the test compares against what the compiler
computes, never against a list copied by hand.
check(): compile declarations and statements without running them (calls
with typed arguments, _Static_assert), so C's type checking judges them.
"""
import glob
import os
import subprocess

from bindings_env import REPO

INCLUDE = os.path.join(REPO, "include")
CC = os.environ.get("CC", "cc")
# Mistakes the probes exist to catch are errors, not warnings.
FLAGS = ["-std=gnu11", "-I" + INCLUDE, "-Werror=incompatible-pointer-types",
         "-Werror=int-conversion", "-Werror=implicit-function-declaration"]

# The kind of a C expression: integer (signed or not), floating, char, or
# anything else (pointers, arrays, structs), to compare with ctypes' types.
KIND_MACRO = r"""
#define TFREC_PROBE_KIND(x) _Generic((x), _Bool: "uint", char: "char", \
    signed char: "int", short: "int", int: "int", long: "int", long long: "int", \
    unsigned char: "uint", unsigned short: "uint", unsigned int: "uint", \
    unsigned long: "uint", unsigned long long: "uint", \
    float: "float", double: "float", long double: "float", default: "other")
"""


class CompileError(Exception):
    pass


def headers():
    """Every public header, so no probe depends on which ones tfrec.h includes."""
    return sorted(os.path.relpath(p, INCLUDE)
                  for p in glob.glob(os.path.join(INCLUDE, "tfrec", "*.h")))


def source(body):
    lines = ["#include <stddef.h>", "#include <stdint.h>", "#include <stdio.h>"]
    lines += ["#include <%s>" % h for h in headers()]
    return "\n".join(lines) + "\n" + KIND_MACRO + "\n" + body + "\n"


def _compile(tmpdir, name, text, extra):
    path = os.path.join(str(tmpdir), name + ".c")
    with open(path, "w") as f:
        f.write(text)
    res = subprocess.run([CC] + FLAGS + extra + [path], capture_output=True, text=True)
    if res.returncode != 0:
        errors = [line for line in res.stderr.splitlines() if "error" in line]
        raise CompileError("%s does not compile:\n%s" % (path, "\n".join(errors) or res.stderr))
    return path


def _c_string(s):
    assert '"' not in s and "\\" not in s, s
    return '"%s"' % s


def values(tmpdir, queries):
    """{key: value} for queries [(key, C expression, "int" | "str")]."""
    body = ["int main(void)", "{"]
    for key, expr, kind in queries:
        if kind == "int":
            line = 'printf("%%s\\t%%lld\\n", %s, (long long)(%s));'
        else:
            line = 'printf("%%s\\t%%s\\n", %s, %s);'
        body.append("    " + line % (_c_string(key), expr))
    body += ["    return 0;", "}"]
    exe = os.path.join(str(tmpdir), "probe_values")
    _compile(tmpdir, "probe_values", source("\n".join(body)), ["-o", exe])
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    kinds = {key: kind for key, _, kind in queries}
    result = {}
    for line in out.splitlines():
        key, value = line.split("\t", 1)
        result[key] = int(value) if kinds[key] == "int" else value
    return result


def check(tmpdir, statements, declarations=()):
    """Compile statements (inside a function that is never called) and
    declarations at file scope; CompileError carries the compiler's errors."""
    body = list(declarations) + ["void tfrec_probe_check(void);",
                                 "void tfrec_probe_check(void)", "{"]
    body += ["    " + s for s in statements] + ["}"]
    return _compile(tmpdir, "probe_check", source("\n".join(body)), ["-fsyntax-only"])
