"""Install the tfrec Python bindings (pure Python; libtfrec.so is found at run time).

Works offline with Debian's python3-setuptools: there is deliberately no
pyproject.toml build requirement, so pip builds with the installed
setuptools instead of fetching one.

    pip install --no-build-isolation --no-deps ./python   # into a venv, or --target/--user
    python3 setup.py install --prefix=...                 # without pip

The package finds an installed libtfrec.so.1 at import (make install, then
ldconfig; see tfrec/_lib.py for the search order) or raises
LibraryNotFoundError saying what to install. libtfrec*.so* files (the core
libtfrec.so and the optional parts libtfrec-image.so, libtfrec-bigtable.so)
copied into python/tfrec/ before installing are shipped inside the package
and found there first after TFREC_LIBRARY: `make python-wheel` does that in
a copy of this directory and builds a wheel tagged for this platform.
"""

import glob
import os

from setuptools import setup
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


class BinaryDistribution(Distribution):
    """With shared libraries inside, the package is this platform's only:
    the wheel gets the interpreter and platform tag instead of py3-none-any."""

    def has_ext_modules(self):
        return bool(glob.glob(os.path.join(HERE, "tfrec", "libtfrec*.so*")))


setup(
    name="tfrec",
    version="1.1.0",  # = TFREC_VERSION_STRING (include/tfrec/version.h), checked by the tests
    description="ctypes bindings for libtfrec: TFRecord files and tf.Example without TensorFlow",
    packages=["tfrec"],
    package_data={"tfrec": ["libtfrec*.so*"]},
    python_requires=">=3.7",
    zip_safe=False,
    distclass=BinaryDistribution,
)
