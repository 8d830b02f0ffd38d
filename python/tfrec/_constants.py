"""The values of the C enums the bindings use, under their C names.

tests/python/test_c_layout.py compiles every module-level TFREC_* integer
of the package against the C headers and compares the values, so a name
defined here (or in any other module of the package) that drifts from C,
or no longer exists there, fails the tests.
"""

# error.h: enum tfrec_status
TFREC_OK = 0
TFREC_END = 1
TFREC_E_INVALID = -1
TFREC_E_NOMEM = -2
TFREC_E_IO = -3
TFREC_E_TRUNCATED = -4
TFREC_E_BAD_LENGTH_CRC = -5
TFREC_E_BAD_DATA_CRC = -6
TFREC_E_RECORD_TOO_LARGE = -7
TFREC_E_TRAILING_GARBAGE = -8
TFREC_E_COMPRESSION = -9
TFREC_E_PARSE = -10
TFREC_E_NOT_FOUND = -11
TFREC_E_UNSUPPORTED = -12
TFREC_E_IMAGE = -13
TFREC_E_NETWORK = -14
TFREC_E_STATE = -15

# record.h: enum tfrec_compression
TFREC_COMPRESSION_AUTO = 0
TFREC_COMPRESSION_NONE = 1
TFREC_COMPRESSION_ZLIB = 2
TFREC_COMPRESSION_GZIP = 3

# example.h: enum tfrec_feature_type
TFREC_FEATURE_NONE = 0
TFREC_FEATURE_BYTES = 1
TFREC_FEATURE_FLOAT = 2
TFREC_FEATURE_INT64 = 3

# image.h: enum tfrec_verify_level
TFREC_VERIFY_DEFAULT = 0
TFREC_VERIFY_HEADER = 1
TFREC_VERIFY_FAST = 2
TFREC_VERIFY_FULL = 3

# imagenet.h: enum tfrec_input_layout, enum tfrec_on_error
TFREC_LAYOUT_IMAGENET = 0
TFREC_LAYOUT_FOLDERS = 1
TFREC_LAYOUT_CSV = 2
TFREC_ON_ERROR_STOP = 0
TFREC_ON_ERROR_SKIP = 1
