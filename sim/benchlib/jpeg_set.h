/* jpeg_set: the JPEGs a calibration or a measured pipeline works on, read
 * into memory and checked, and the TurboJPEG decoder both use.
 *
 * decode_load reads every listed file and decodes it once; files that cannot
 * be read, are not JPEG, are corrupt or truncated (any libjpeg-turbo error or
 * warning), or carry more bytes than their pixels could need, are counted,
 * reported on stderr and left out of everything after.
 *
 * Use: jpeg_set s; decode_load(&files, &s, err, n); ... decode_set_free(&s);
 *      a thread's decoder: jpeg_decoder d; decoder_init(&d); decoder_run(&d, ...);
 */
#ifndef STALLSIM_JPEG_SET_H
#define STALLSIM_JPEG_SET_H

#include <stddef.h>

#include "fileset.h"

typedef struct {
    const char *path; /* borrowed from the file_list */
    unsigned char *jpeg;
    long size;
    int w, h;
} jpeg_item;

typedef struct {
    jpeg_item *v;
    int n;
    int bad; /* files left out */
} jpeg_set;

int decode_load(const file_list *fl, jpeg_set *out, char *err, size_t errlen);
void decode_set_free(jpeg_set *s);

/* A reusable decoder for a loader thread: one TurboJPEG handle and an RGB
 * buffer that grows to the largest image seen. */
typedef struct {
    void *tj; /* tjhandle */
    unsigned char *rgb;
    size_t cap;
} jpeg_decoder;

int decoder_init(jpeg_decoder *d);
void decoder_free(jpeg_decoder *d);
/* Reads only the header (is it a JPEG, how large); same returns as decoder_run. */
int decoder_header(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                   size_t whylen);
/* Decodes jpeg[0, size) to RGB in d->rgb (3 * w * h bytes). Returns 0, or -1
 * with the reason in why (the handle is renewed after a failure, since
 * TurboJPEG 2.1 keeps a stale state; on a renewal failure d->tj is NULL). */
int decoder_run(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                size_t whylen);

/* Decodes one item to a malloc'd RGB buffer of 3 * w * h bytes. */
int decode_rgb(const jpeg_item *it, unsigned char **rgb, char *err, size_t errlen);

/* Decodes it into rgb (room for 3 * w * h) with tj (a tjhandle): RGB,
 * default flags (accurate integer IDCT, fancy upsampling), the decode every
 * caller times. 0, or TurboJPEG's -1. */
int jpeg_item_decode(void *tj, const jpeg_item *it, unsigned char *rgb);

#endif
