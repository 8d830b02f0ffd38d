/* CRCs of buffer stretches from checkpoints; see span_crc.h. */
#include "record/span_crc.h"

#include <stdlib.h>
#include <string.h>

#include "crc32c/crc32c_shift.h"
#include "tfrec/crc32c.h"
#include "util/vec.h"

/* 64 bytes between checkpoints: their memory is 1/16 of the buffer's, and
 * the ends of a stretch cost less than the shift itself. Shorter stretches
 * are cheaper to CRC directly. */
enum { SPAN_STEP = 64, SPAN_DIRECT = 4 * SPAN_STEP };

static uint32_t direct(const uint8_t *win, uint64_t win_pos, uint64_t at, uint64_t len,
                       uint64_t *work)
{
    *work += len;
    return tfrec_crc32c(win + (at - win_pos), (size_t)len);
}

void tfrec_span_crc_reset(span_crc *s)
{
    s->n = 0;
}

void tfrec_span_crc_free(span_crc *s)
{
    free(s->ck);
    memset(s, 0, sizeof *s);
}

/* Make the checkpoints usable for a stretch starting at `at`: every
 * checkpoint from the last one on must still be inside the window, since
 * extending reads the bytes after it. Otherwise start afresh at `at`. */
static int prepare(span_crc *s, uint64_t win_pos, uint64_t at)
{
    if (s->n && at >= s->base && s->base + (uint64_t)(s->n - 1) * SPAN_STEP >= win_pos) {
        /* Entries behind the window are of no further use: drop them when
         * they are the larger part (moving the rest is then paid for). */
        size_t stale = (size_t)((win_pos - (s->base < win_pos ? s->base : win_pos)) / SPAN_STEP);
        if (stale > 1024 && stale >= s->n / 2) {
            memmove(s->ck, s->ck + stale, (s->n - stale) * sizeof *s->ck);
            s->n -= stale;
            s->base += (uint64_t)stale * SPAN_STEP;
        }
        return 0;
    }
    if (tfrec_vec_reserve(&s->ck, &s->cap, 1, 1024))
        return -1;
    s->base = at;
    s->ck[0] = 0; /* the CRC of nothing: the origin is `at` */
    s->n = 1;
    return 0;
}

uint32_t tfrec_span_crc(span_crc *s, const uint8_t *win, uint64_t win_pos, size_t win_len,
                        uint64_t at, uint64_t len, uint64_t *work)
{
    (void)win_len; /* [at, at + len) is inside the window: the caller checked */
    if (len < SPAN_DIRECT || prepare(s, win_pos, at) < 0)
        return direct(win, win_pos, at, len, work);
    uint64_t end = at + len;
    size_t ka = (size_t)((at - s->base + SPAN_STEP - 1) / SPAN_STEP); /* first checkpoint >= at */
    size_t ke = (size_t)((end - s->base) / SPAN_STEP);                /* last one <= end */
    if (ka >= ke)
        return direct(win, win_pos, at, len, work);
    if (ke >= s->n) {
        if (tfrec_vec_reserve(&s->ck, &s->cap, ke + 1, 1024))
            return direct(win, win_pos, at, len, work);
        for (; s->n <= ke; s->n++) {
            uint64_t from = s->base + (uint64_t)(s->n - 1) * SPAN_STEP;
            s->ck[s->n] = tfrec_crc32c_extend(s->ck[s->n - 1], win + (from - win_pos), SPAN_STEP);
            *work += SPAN_STEP;
        }
    }
    /* With C(x) the CRC from the origin to x and A = [at, a), M = [a, end)
     * for the checkpoint a:
     *   CRC(A M) = shift(CRC(A), |M|) ^ CRC(M)
     *   C(end)   = shift(C(a), |M|) ^ CRC(M)
     * so CRC(A M) = shift(CRC(A) ^ C(a), |M|) ^ C(end). */
    uint64_t a = s->base + (uint64_t)ka * SPAN_STEP, e = s->base + (uint64_t)ke * SPAN_STEP;
    uint32_t head = direct(win, win_pos, at, a - at, work);
    *work += end - e;
    uint32_t c_end = tfrec_crc32c_extend(s->ck[ke], win + (e - win_pos), (size_t)(end - e));
    return tfrec_crc32c_shift(head ^ s->ck[ka], end - a) ^ c_end;
}
