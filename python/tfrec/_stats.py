"""One form for a handle's statistics: a stats() method returning a dict.

Earlier releases spelled it differently per class (bigtable.Writer's
`stats` attribute and get_stats(), bigtable.Reader's `stats` property,
bigtable.Dataset's `stats` attribute). @stats_method keeps those working:
`h.stats()` is the new form; `h.stats` used as a dict (`h.stats["rows"]`,
`dict(h.stats)`, `h.stats == {...}`) still answers, with a
DeprecationWarning, and deprecated_alias() makes get_stats() and the like.
"""

import collections.abc
import functools
import inspect
import warnings

try:
    from typing import TypedDict  # Python 3.8 on
except ImportError:  # 3.7: a plain dict subclass; the .pyi stubs carry the types
    TypedDict = dict

_DICT_USE = ("%s.stats used as a dict is deprecated: call %s.stats(), which returns the dict")


def _warn(message):
    # stacklevel 3: the caller of the Mapping method that warned
    warnings.warn(message, DeprecationWarning, stacklevel=3)


class _BoundStats(collections.abc.Mapping):
    """h.stats: call it for the dict; using it as the dict is deprecated."""

    __slots__ = ("_handle", "_fn")

    def __init__(self, handle, fn):
        self._handle = handle
        self._fn = fn

    def __call__(self):
        return self._fn(self._handle)

    def _old_use(self):
        name = type(self._handle).__name__
        _warn(_DICT_USE % (name, name))
        return self._fn(self._handle)

    def __getitem__(self, key):
        return self._old_use()[key]

    def __iter__(self):
        return iter(self._old_use())

    def __len__(self):
        return len(self._old_use())

    def __repr__(self):
        return repr(self._old_use())


class stats_method:
    """Decorator for a handle's stats(self) -> dict (see the module doc)."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self.__signature__ = inspect.signature(fn)

    def __get__(self, handle, owner=None):
        if handle is None:
            return self
        return _BoundStats(handle, self._fn)

    def __call__(self, handle):
        return self._fn(handle)


def deprecated_alias(new_name, old_name):
    """A method old_name that warns and calls self.<new_name>()."""

    def alias(self):
        warnings.warn("%s.%s() is deprecated: use %s()" % (type(self).__name__, old_name,
                                                          new_name),
                      DeprecationWarning, stacklevel=2)
        return getattr(self, new_name)()

    alias.__name__ = alias.__qualname__ = old_name
    alias.__doc__ = "Deprecated: use %s()." % new_name
    return alias
