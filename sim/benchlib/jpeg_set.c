/* jpeg_set: see jpeg_set.h. */
#include "jpeg_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#define MAX_BAD_LINES 20
#define MAX_PIXELS    (256 << 20)

int jpeg_item_decode(void *tj, const jpeg_item *it, unsigned char *rgb) {
    return tjDecompress2(tj, it->jpeg, (unsigned long)it->size, rgb, it->w, 0, it->h, TJPF_RGB, 0);
}

static void report_bad(int *bad, const char *path, const char *why) {
    if (*bad < MAX_BAD_LINES) fprintf(stderr, "calibrate: skipping %s: %s\n", path, why);
    (*bad)++;
}

/* After an error TurboJPEG 2.1 leaves the handle mid-header, and later
 * calls fail with the stale message: start each file after a bad one afresh. */
static tjhandle renew(tjhandle tj) {
    tjDestroy(tj);
    return tjInitDecompress();
}

int decoder_init(jpeg_decoder *d) {
    memset(d, 0, sizeof *d);
    d->tj = tjInitDecompress();
    return d->tj ? 0 : -1;
}

void decoder_free(jpeg_decoder *d) {
    if (d->tj) tjDestroy(d->tj);
    free(d->rgb);
    memset(d, 0, sizeof *d);
}

int decoder_header(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                   size_t whylen) {
    int subsamp, colorspace;
    if (size <= 0) {
        snprintf(why, whylen, "empty file");
        return -1;
    }
    if (tjDecompressHeader3(d->tj, jpeg, (unsigned long)size, w, h, &subsamp, &colorspace) != 0) {
        snprintf(why, whylen, "%s", tjGetErrorStr2(d->tj));
        d->tj = renew(d->tj);
        return -1;
    }
    /* A header may claim up to 65535 x 65535 pixels (12 GB of RGB): refuse
     * what no training set holds before allocating it. */
    if ((double)*w * *h > MAX_PIXELS) {
        snprintf(why, whylen, "%d x %d pixels is over the %d-megapixel limit", *w, *h,
                 MAX_PIXELS >> 20);
        return -1;
    }
    return 0;
}

int decoder_run(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                size_t whylen) {
    if (decoder_header(d, jpeg, size, w, h, why, whylen) != 0) return -1;
    size_t need = (size_t)*w * (size_t)*h * 3;
    if (need > d->cap) {
        unsigned char *b = realloc(d->rgb, need);
        if (!b) {
            snprintf(why, whylen, "image too large to decode");
            return -1;
        }
        d->rgb = b;
        d->cap = need;
    }
    /* Warnings (e.g. a truncated file) make tjDecompress2 fail too: such a
     * file would not decode cleanly in a training loader either. */
    if (tjDecompress2(d->tj, jpeg, (unsigned long)size, d->rgb, *w, 0, *h, TJPF_RGB, 0) != 0) {
        snprintf(why, whylen, "%s", tjGetErrorStr2(d->tj));
        d->tj = renew(d->tj);
        return -1;
    }
    return 0;
}

int decode_load(const file_list *fl, jpeg_set *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->v = calloc((size_t)(fl->n > 0 ? fl->n : 1), sizeof *out->v);
    jpeg_decoder dec;
    int dok = decoder_init(&dec) == 0;
    if (!out->v || !dok) {
        snprintf(err, errlen, "cannot set up the decoder: %s",
                 dok ? "out of memory" : tjGetErrorStr2(NULL));
        free(out->v);
        out->v = NULL;
        decoder_free(&dec);
        return -1;
    }
    int bad = 0;
    for (int i = 0; i < fl->n && dec.tj; i++) {
        jpeg_item it = {.path = fl->v[i].path};
        char why[256];
        if (fileset_read(it.path, &it.jpeg, &it.size) != 0) {
            report_bad(&bad, it.path, errno == EINVAL ? "not a regular file" : strerror(errno));
            continue;
        }
        int ok = decoder_run(&dec, it.jpeg, it.size, &it.w, &it.h, why, sizeof why) == 0;
        /* Bytes past what the pixels could need (a tail of padding or other
         * data after the image) would count as decoded MB and put a rate
         * per MB into the profile that no real JPEG has. A megabyte of
         * slack keeps small images with large EXIF or ICC blocks. */
        if (ok && (double)it.size > 3.0 * it.w * it.h + (1 << 20)) {
            snprintf(why, sizeof why,
                     "%ld bytes for %d x %d pixels, more than their raw RGB: data after the image",
                     it.size, it.w, it.h);
            ok = 0;
        }
        if (!ok) {
            report_bad(&bad, it.path, why);
            free(it.jpeg);
        } else {
            out->v[out->n++] = it;
        }
    }
    if (!dec.tj) {
        snprintf(err, errlen, "tjInitDecompress: %s", tjGetErrorStr2(NULL));
        decode_set_free(out);
        decoder_free(&dec);
        return -1;
    }
    if (bad > MAX_BAD_LINES)
        fprintf(stderr, "calibrate: ... and %d more bad files\n", bad - MAX_BAD_LINES);
    out->bad = bad;
    decoder_free(&dec);
    return 0;
}

void decode_set_free(jpeg_set *s) {
    for (int i = 0; i < s->n; i++)
        free(s->v[i].jpeg);
    free(s->v);
    memset(s, 0, sizeof *s);
}

int decode_rgb(const jpeg_item *it, unsigned char **rgb, char *err, size_t errlen) {
    tjhandle tj = tjInitDecompress();
    if (!tj) {
        snprintf(err, errlen, "tjInitDecompress: %s", tjGetErrorStr2(NULL));
        return -1;
    }
    unsigned char *buf = malloc((size_t)it->w * it->h * 3);
    int rc = buf ? jpeg_item_decode(tj, it, buf) : -1;
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", it->path, buf ? tjGetErrorStr2(tj) : "out of memory");
        free(buf);
    } else {
        *rgb = buf;
    }
    tjDestroy(tj);
    return rc;
}
