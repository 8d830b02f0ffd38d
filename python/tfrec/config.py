"""Process-wide settings (include/tfrec/config.h, docs/config.md).

Every setting the library takes from the environment can be set here
instead, by the environment variable's name: set_config("TFREC_BT_POLLERS",
"2"), set_config("GOOGLE_APPLICATION_CREDENTIALS", "/path/key.json"). A set
value wins over the environment; "" means unset; None forgets the set value.
Set them before opening the handles they concern.
"""

from ctypes import POINTER, c_char_p, c_int, c_size_t, create_string_buffer

from ._lib import _proto, lib
from .errors import error_for

_proto("tfrec_config_set", c_int, c_char_p, c_char_p)
_proto("tfrec_config_get", c_int, c_char_p, c_char_p, c_size_t)
_proto("tfrec_config_use_environment", None, c_int)
_proto("tfrec_config_name", c_char_p, c_size_t, POINTER(c_char_p))

_NOT_FOUND = -11  # TFREC_E_NOT_FOUND


def set_config(name, value):
    """Set `name` (an environment variable's name) to `value` (str), or
    forget an earlier set with None. ValueError for an unknown name."""
    rc = lib.tfrec_config_set(name.encode(), None if value is None else str(value).encode())
    if rc:
        raise error_for(rc)


def get_config(name):
    """The value in effect for `name`, or None when unset."""
    buf = create_string_buffer(8192)
    rc = lib.tfrec_config_get(name.encode(), buf, len(buf))
    if rc == _NOT_FOUND:
        return None
    if rc:
        raise error_for(rc)
    return buf.value.decode()


def use_environment(on):
    """False: the library stops reading the environment (only set_config
    values count); True: it reads it again."""
    lib.tfrec_config_use_environment(1 if on else 0)


def config_names():
    """The names of every setting, in the library's table order."""
    names, i = [], 0
    while True:
        n = lib.tfrec_config_name(i, None)
        if n is None:
            return names
        names.append(n.decode())
        i += 1
