/* jpeg_gen: see jpeg_gen.h. */
#include "jpeg_gen.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#define NCLASSES   10
#define MAX_SHAPES 16
#define NOCTAVES   4

typedef struct {
    int ellipse;
    double cx, cy, rx, ry, cosa, sina;
    double col[3], shade[3]; /* colour at the centre and its change across the shape */
    double alpha;
} shape;

/* A lattice of random values per octave, smoothly interpolated: the texture. */
typedef struct {
    int cell, gw, gh;
    double amp;
    float *v; /* gw * gh * 3 values in [-1, 1] */
} octave;

static double smooth(double t) {
    return t * t * (3.0 - 2.0 * t);
}

static double octave_at(const octave *o, int x, int y, int c) {
    double gx = (double)x / o->cell, gy = (double)y / o->cell;
    int ix = (int)gx, iy = (int)gy;
    double tx = smooth(gx - ix), ty = smooth(gy - iy);
    const float *v = o->v;
    int gw = o->gw;
    double a = v[(iy * gw + ix) * 3 + c], b = v[(iy * gw + ix + 1) * 3 + c];
    double d = v[((iy + 1) * gw + ix) * 3 + c], e = v[((iy + 1) * gw + ix + 1) * 3 + c];
    return (a + (b - a) * tx) * (1.0 - ty) + (d + (e - d) * tx) * ty;
}

static double unif(gsl_rng *r, double lo, double hi) {
    return lo + (hi - lo) * gsl_rng_uniform(r);
}

/* Paints the shapes over pixel (x, y) of col, in order, with antialiased
 * edges. */
static void paint_shapes(const shape *sh, int n, int x, int y, double col[3]) {
    for (int i = 0; i < n; i++) {
        const shape *s = &sh[i];
        double dx = x - s->cx, dy = y - s->cy;
        double u = dx * s->cosa + dy * s->sina, v = -dx * s->sina + dy * s->cosa;
        double d; /* approximate signed distance to the edge, in pixels */
        if (s->ellipse) {
            double k = sqrt((u / s->rx) * (u / s->rx) + (v / s->ry) * (v / s->ry));
            d = (k - 1.0) * fmin(s->rx, s->ry);
        } else {
            d = fmax(fabs(u) - s->rx, fabs(v) - s->ry);
        }
        double cover = 0.5 - d / 1.5;
        if (cover <= 0.0) continue;
        if (cover > 1.0) cover = 1.0;
        double a = cover * s->alpha, along = u / s->rx;
        for (int c = 0; c < 3; c++)
            col[c] += a * (s->col[c] + s->shade[c] * along - col[c]);
    }
}

int jpeg_gen_pixels(unsigned long seed, int index, unsigned char **rgb, int *wp, int *hp) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return -1;
    /* One stream per image, so images are independent of generation order. */
    gsl_rng_set(r, seed * 1000003UL + (unsigned long)index * 7919UL + 1UL);
    int w = JPEG_GEN_MIN_W + (int)gsl_rng_uniform_int(r, JPEG_GEN_MAX_W - JPEG_GEN_MIN_W + 1);
    int h = JPEG_GEN_MIN_H + (int)gsl_rng_uniform_int(r, JPEG_GEN_MAX_H - JPEG_GEN_MIN_H + 1);
    double c0[3], c1[3];
    for (int c = 0; c < 3; c++) {
        c0[c] = unif(r, 20, 235);
        c1[c] = unif(r, 20, 235);
    }
    double ang = unif(r, 0, 2 * M_PI), gdx = cos(ang), gdy = sin(ang);
    int nshapes = 6 + (int)gsl_rng_uniform_int(r, MAX_SHAPES - 6 + 1);
    shape sh[MAX_SHAPES];
    for (int i = 0; i < nshapes; i++) {
        shape *s = &sh[i];
        s->ellipse = gsl_rng_uniform(r) < 0.6;
        s->cx = unif(r, 0, w);
        s->cy = unif(r, 0, h);
        s->rx = unif(r, 8, w / 3.0);
        s->ry = unif(r, 8, h / 3.0);
        double a = unif(r, 0, M_PI);
        s->cosa = cos(a);
        s->sina = sin(a);
        for (int c = 0; c < 3; c++) {
            s->col[c] = unif(r, 0, 255);
            s->shade[c] = unif(r, -60, 60);
        }
        s->alpha = unif(r, 0.55, 1.0);
    }
    static const int cells[NOCTAVES] = {64, 17, 5, 2};
    static const double amps[NOCTAVES] = {34, 20, 26, 32};
    octave oct[NOCTAVES];
    int ok = 1;
    for (int k = 0; k < NOCTAVES; k++) {
        oct[k].cell = cells[k];
        oct[k].amp = amps[k] * unif(r, 0.6, 1.4);
        oct[k].gw = w / cells[k] + 2;
        oct[k].gh = h / cells[k] + 2;
        size_t nv = (size_t)oct[k].gw * oct[k].gh * 3;
        oct[k].v = malloc(sizeof(float) * nv);
        if (!oct[k].v) {
            ok = 0;
            continue;
        }
        for (size_t i = 0; i < nv; i++)
            oct[k].v[i] = (float)unif(r, -1, 1);
    }
    unsigned char *px = ok ? malloc((size_t)w * h * 3) : NULL;
    if (px) {
        double grain = unif(r, 14, 36);
        double diag = sqrt((double)w * w + (double)h * h);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                double t = ((x - w / 2.0) * gdx + (y - h / 2.0) * gdy) / diag + 0.5;
                double dxc = (x - w / 2.0) / w, dyc = (y - h / 2.0) / h;
                double vig = 1.0 - 0.8 * (dxc * dxc + dyc * dyc);
                double col[3];
                for (int c = 0; c < 3; c++)
                    col[c] = (c0[c] + (c1[c] - c0[c]) * t) * vig;
                paint_shapes(sh, nshapes, x, y, col);
                double g = grain * (gsl_rng_uniform(r) - 0.5) * 2.0;
                for (int c = 0; c < 3; c++) {
                    double v = col[c] + g;
                    for (int k = 0; k < NOCTAVES; k++)
                        v += oct[k].amp * octave_at(&oct[k], x, y, c);
                    px[((size_t)y * w + x) * 3 + c] = (unsigned char)(v < 0.0     ? 0
                                                                      : v > 255.0 ? 255
                                                                                  : (int)(v + 0.5));
                }
            }
        }
    }
    for (int k = 0; k < NOCTAVES; k++)
        free(oct[k].v);
    gsl_rng_free(r);
    if (!px) return -1;
    *rgb = px;
    *wp = w;
    *hp = h;
    return 0;
}

int jpeg_gen_image(unsigned long seed, int index, unsigned char **jpeg, unsigned long *size, int *w,
                   int *h, char *err, size_t errlen) {
    unsigned char *px;
    if (jpeg_gen_pixels(seed, index, &px, w, h) != 0) {
        snprintf(err, errlen, "out of memory rendering image %d", index);
        return -1;
    }
    tjhandle tj = tjInitCompress();
    if (!tj) {
        free(px);
        snprintf(err, errlen, "tjInitCompress: %s", tjGetErrorStr2(NULL));
        return -1;
    }
    *jpeg = NULL;
    *size = 0;
    int rc = tjCompress2(tj, px, *w, 0, *h, TJPF_RGB, jpeg, size, TJSAMP_420, JPEG_GEN_QUALITY, 0);
    if (rc != 0) snprintf(err, errlen, "tjCompress2: %s", tjGetErrorStr2(tj));
    tjDestroy(tj);
    free(px);
    return rc == 0 ? 0 : -1;
}

typedef struct {
    const char *dir;
    int count;
    unsigned long seed;
    atomic_int next;
    atomic_int failed;
    pthread_mutex_t lock; /* guards err */
    char err[256];
} gen_job;

static int write_all(const char *path, const unsigned char *buf, unsigned long size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    unsigned long off = 0;
    while (off < size) {
        ssize_t n = write(fd, buf + off, size - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (unsigned long)n;
    }
    return close(fd);
}

static void *gen_worker(void *arg) {
    gen_job *job = arg;
    char err[256], path[4096];
    int i;
    while (!atomic_load(&job->failed) && (i = atomic_fetch_add(&job->next, 1)) < job->count) {
        unsigned char *jpeg;
        unsigned long size;
        int w, h, rc = jpeg_gen_image(job->seed, i, &jpeg, &size, &w, &h, err, sizeof err);
        if (rc == 0) {
            snprintf(path, sizeof path, "%s/class_%02d/img_%06d.jpg", job->dir, i % NCLASSES, i);
            if (write_all(path, jpeg, size) != 0) {
                snprintf(err, sizeof err, "cannot write %.180s: %.60s", path, strerror(errno));
                rc = -1;
            }
            tjFree(jpeg);
        }
        if (rc != 0) {
            pthread_mutex_lock(&job->lock);
            if (!atomic_exchange(&job->failed, 1)) memcpy(job->err, err, sizeof job->err);
            pthread_mutex_unlock(&job->lock);
        }
    }
    return NULL;
}

int jpeg_gen_dataset(const char *dir, int count, unsigned long seed, int threads, char *err,
                     size_t errlen) {
    char path[4096];
    for (int c = 0; c < NCLASSES && c < count; c++) {
        snprintf(path, sizeof path, "%s/class_%02d", dir, c);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
            return -1;
        }
    }
    gen_job job = {.dir = dir, .count = count, .seed = seed};
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    pthread_mutex_init(&job.lock, NULL);
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    pthread_t tid[64];
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, gen_worker, &job) != 0) break;
    if (started == 0) gen_worker(&job);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&job.lock);
    if (atomic_load(&job.failed)) {
        snprintf(err, errlen, "%s", job.err);
        return -1;
    }
    return 0;
}
