/* Resampling a window of an RGB image with a triangle filter whose support
 * grows with the shrink factor (antialiased bilinear), in 22-bit fixed
 * point (int32 sums: the triangle's weights are non-negative and sum to
 * 2^22, so 255 * 2^22 + 2^21 stays below 2^31), horizontal pass first with
 * 8-bit rounding in between: the same
 * arithmetic as PIL's Image.resize(BILINEAR), so torchvision's transforms
 * over PIL images and this decoder agree to within rounding. Only the
 * window's pixels are computed. */
#include "image/image_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/errors.h"

#define PRECISION_BITS 22

typedef struct axis {
    int *first; /* per output index: first source index */
    int *count; /* weights used */
    int32_t *w; /* ksize weights per output index */
    int ksize;
} axis;

static double triangle(double x)
{
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* Weights for outputs [from, from + n) of a source of in samples scaled to
 * out samples. */
static int axis_init(axis *a, int in, int out, int from, int n)
{
    double scale = (double)in / out, fscale = scale > 1.0 ? scale : 1.0;
    double support = fscale; /* the triangle's support is 1 at scale 1 */
    a->ksize = (int)ceil(support) * 2 + 1;
    a->first = malloc((size_t)n * sizeof *a->first);
    a->count = malloc((size_t)n * sizeof *a->count);
    a->w = malloc((size_t)n * (size_t)a->ksize * sizeof *a->w);
    if (!a->first || !a->count || !a->w)
        return TFREC_E_NOMEM;
    double k[64 + 1];
    if (a->ksize > 64)
        return TFREC_E_INVALID; /* callers shrink by at most 8 here (DCT scaling did the rest) */
    for (int i = 0; i < n; i++) {
        double center = (from + i + 0.5) * scale;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        if (lo < 0)
            lo = 0;
        if (hi > in)
            hi = in;
        double sum = 0;
        int m = hi - lo;
        for (int j = 0; j < m; j++)
            sum += k[j] = triangle((j + lo - center + 0.5) / fscale);
        int32_t *w = a->w + (size_t)i * (size_t)a->ksize;
        for (int j = 0; j < m; j++) {
            double v = sum > 0 ? k[j] / sum : 0;
            w[j] = (int32_t)(v < 0 ? v * (1 << PRECISION_BITS) - 0.5
                                   : v * (1 << PRECISION_BITS) + 0.5);
        }
        a->first[i] = lo;
        a->count[i] = m;
    }
    return TFREC_OK;
}

static void axis_free(axis *a)
{
    free(a->first);
    free(a->count);
    free(a->w);
}

static inline uint8_t clip8(int32_t v)
{
    v >>= PRECISION_BITS;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

int tfrec_img_resample_window(const uint8_t *src, int sw, int sh, int rw, int rh, int x0, int y0,
                              int ow, int oh, int flip, uint8_t *out)
{
    if (sw < 1 || sh < 1 || rw < 1 || rh < 1 || x0 < 0 || y0 < 0 || x0 + ow > rw || y0 + oh > rh ||
        (double)sw / rw > 30 || (double)sh / rh > 30)
        return tfrec_fail(NULL, TFREC_E_INVALID, "resample: bad window");
    axis ax = { 0 }, ay = { 0 };
    uint8_t *tmp = NULL;
    int32_t *acc = NULL; /* one output row's sums */
    int rc = axis_init(&ax, sw, rw, x0, ow);
    if (rc == TFREC_OK)
        rc = axis_init(&ay, sh, rh, y0, oh);
    int row0 = oh ? ay.first[0] : 0, rows = oh ? ay.first[oh - 1] + ay.count[oh - 1] - row0 : 0;
    size_t stride = (size_t)ow * 3;
    if (rc == TFREC_OK && !(tmp = tfrec_img_scratch_get(IMG_SCRATCH_ROWS, (size_t)rows * stride)))
        rc = TFREC_E_NOMEM;
    if (rc == TFREC_OK && !(acc = tfrec_img_scratch_get(IMG_SCRATCH_SUMS, stride * sizeof *acc)))
        rc = TFREC_E_NOMEM;
    if (rc < 0) {
        tfrec_img_scratch_put(IMG_SCRATCH_ROWS, tmp);
        axis_free(&ax);
        axis_free(&ay);
        return tfrec_fail(NULL, rc, "resample: %s",
                          rc == TFREC_E_NOMEM ? "out of memory" : "shrink factor too large");
    }
    /* Horizontal pass over the source rows the window needs. */
    for (int y = 0; y < rows; y++) {
        const uint8_t *s = src + (size_t)(row0 + y) * (size_t)sw * 3;
        uint8_t *t = tmp + (size_t)y * stride;
        for (int x = 0; x < ow; x++) {
            const int32_t *w = ax.w + (size_t)x * (size_t)ax.ksize;
            const uint8_t *p = s + (size_t)ax.first[x] * 3;
            int32_t r = 1 << (PRECISION_BITS - 1), g = r, b = r;
            for (int j = 0; j < ax.count[x]; j++, p += 3) {
                r += p[0] * w[j];
                g += p[1] * w[j];
                b += p[2] * w[j];
            }
            uint8_t *o = t + (size_t)(flip ? ow - 1 - x : x) * 3;
            o[0] = clip8(r);
            o[1] = clip8(g);
            o[2] = clip8(b);
        }
    }
    /* Vertical pass, tap by tap over whole rows: the inner loop runs over
     * contiguous bytes and vectorises. */
    for (int y = 0; y < oh; y++) {
        const int32_t *w = ay.w + (size_t)y * (size_t)ay.ksize;
        const uint8_t *base = tmp + (size_t)(ay.first[y] - row0) * stride;
        uint8_t *o = out + (size_t)y * stride;
        for (size_t x = 0; x < stride; x++)
            acc[x] = 1 << (PRECISION_BITS - 1);
        for (int j = 0; j < ay.count[y]; j++) {
            const uint8_t *p = base + (size_t)j * stride;
            int32_t wj = w[j];
            for (size_t x = 0; x < stride; x++)
                acc[x] += (int32_t)p[x] * wj;
        }
        for (size_t x = 0; x < stride; x++)
            o[x] = clip8(acc[x]);
    }
    tfrec_img_scratch_put(IMG_SCRATCH_ROWS, tmp);
    tfrec_img_scratch_put(IMG_SCRATCH_SUMS, acc);
    axis_free(&ax);
    axis_free(&ay);
    return TFREC_OK;
}
