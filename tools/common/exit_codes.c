#include "exit_codes.h"

#include "tfrec/error.h"

int cli_exit_for(int rc)
{
    switch (rc) {
    case TFREC_OK:
    case TFREC_END: return EXIT_OK;
    case TFREC_E_TRUNCATED:
    case TFREC_E_BAD_LENGTH_CRC:
    case TFREC_E_BAD_DATA_CRC:
    case TFREC_E_RECORD_TOO_LARGE:
    case TFREC_E_TRAILING_GARBAGE:
    case TFREC_E_COMPRESSION:
    case TFREC_E_PARSE:
    case TFREC_E_IMAGE: return EXIT_DATA;
    case TFREC_E_INVALID: return EXIT_USAGE;
    default: return EXIT_IO;
    }
}
