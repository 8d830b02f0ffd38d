/* Plan bookkeeping, the shuffle and the shard layout: shard k of S over n
 * images gets plan positions [k*n/S, (k+1)*n/S), so shard sizes differ by
 * at most one (the reference used ceil(n/S)-sized chunks, which can leave
 * the last shards empty). */
#include "imagenet/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/vec.h"

char *tfrec_in_plan_own(in_plan *p, char *s)
{
    return tfrec_strlist_take(&p->pool, s);
}

char *tfrec_in_plan_strdup(in_plan *p, const char *s)
{
    return tfrec_in_plan_own(p, strdup(s));
}

int tfrec_in_list_push(in_list *l, const in_item *it)
{
    if (tfrec_vec_reserve(&l->v, &l->cap, l->n + 1, 256))
        return tfrec_fail(NULL, TFREC_E_NOMEM, "out of memory");
    l->v[l->n++] = *it;
    return TFREC_OK;
}

in_split *tfrec_in_plan_split(in_plan *p, const char *name, tfrec_err *err)
{
    for (int i = 0; i < p->nsplits; i++)
        if (!strcmp(p->splits[i].name, name))
            return &p->splits[i];
    if (p->nsplits == IN_MAX_SPLITS) {
        tfrec_fail(err, TFREC_E_INVALID, "more than %d splits", IN_MAX_SPLITS);
        return NULL;
    }
    /* The name becomes a directory of the output: no '/', and no leading
     * '.' (".", "..", or a name hidden like the staging directory). */
    if (strlen(name) >= IN_SPLIT_NAME_MAX || !*name || strchr(name, '/') || name[0] == '.') {
        tfrec_fail(err, TFREC_E_INVALID, "bad split name \"%s\"", name);
        return NULL;
    }
    in_split *s = &p->splits[p->nsplits++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

void tfrec_in_plan_free(in_plan *p)
{
    for (int i = 0; i < p->nsplits; i++)
        free(p->splits[i].items.v);
    tfrec_strlist_free(&p->pool);
    free(p->classes);
    free(p->order);
    free(p->shards);
    for (int i = 0; i < p->nfds; i++)
        close(p->fds[i]);
    for (int i = 0; i < p->nios; i++)
        p->ios[i].close(p->ios[i].ctx, 0);
    p->nios = 0;
    tfrec_strlist_free(&p->skipped);
    tfrec_strlist_free(&p->skipped_why);
    memset(p, 0, sizeof *p);
}

/* Output order of splits: train, validation, then the rest by name. */
static int split_rank(const char *name)
{
    if (!strcmp(name, "train"))
        return 0;
    if (!strcmp(name, "validation"))
        return 1;
    return 2;
}

static int cmp_split(const void *a, const void *b)
{
    const in_split *x = a, *y = b;
    int rx = split_rank(x->name), ry = split_rank(y->name);
    return rx != ry ? rx - ry : strcmp(x->name, y->name);
}

int tfrec_in_plan_finish(in_plan *p, const in_opts *o, tfrec_err *err)
{
    qsort(p->splits, (size_t)p->nsplits, sizeof p->splits[0], cmp_split);
    size_t total = 0, nshards = 0;
    for (int s = 0; s < p->nsplits; s++) {
        in_split *sp = &p->splits[s];
        sp->shards = !strcmp(sp->name, "validation") ? o->o.validation_shards : o->o.train_shards;
        if (!strcmp(sp->name, "train") && !o->o.no_shuffle)
            tfrec_in_shuffle(sp->items.v, sp->items.n, o->o.seed);
        total += sp->items.n;
        nshards += (size_t)sp->shards;
    }
    p->order = malloc((total ? total : 1) * sizeof *p->order);
    p->shards = calloc(nshards ? nshards : 1, sizeof *p->shards);
    if (!p->order || !p->shards)
        return tfrec_fail(err, TFREC_E_NOMEM, "out of memory planning %zu images", total);
    size_t pos = 0, k = 0;
    for (int s = 0; s < p->nsplits; s++) {
        in_split *sp = &p->splits[s];
        size_t n = sp->items.n, S = (size_t)sp->shards;
        for (size_t i = 0; i < n; i++)
            p->order[pos + i] = &sp->items.v[i];
        for (size_t j = 0; j < S; j++, k++) {
            in_shard *sh = &p->shards[k];
            sh->split = s;
            /* 128-bit-safe for any realistic n and S */
            size_t lo = (size_t)((unsigned __int128)j * n / S);
            size_t hi = (size_t)((unsigned __int128)(j + 1) * n / S);
            sh->first = pos + lo;
            sh->count = hi - lo;
            snprintf(sh->name, sizeof sh->name, "%s-%05zu-of-%05zu", sp->name, j, S);
            /* imagenet_to_gcs.py's layout: OUT/train/train-*, so a glob of
             * the shards never matches the manifest at the top. */
            if (o->o.flat_output)
                snprintf(sh->file, sizeof sh->file, "%s", sh->name);
            else
                snprintf(sh->file, sizeof sh->file, "%s/%s", sp->name, sh->name);
        }
        pos += n;
    }
    p->nitems = total;
    p->nshards = nshards;
    p->share_begin = 0;
    p->share_end = nshards;
    return TFREC_OK;
}
