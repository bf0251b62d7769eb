/* audio_prep: see audio_prep.h. */
#include "audio_prep.h"

#include <gsl/gsl_fft_real.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Zero crossings of the sinc on each side (torchaudio's lowpass_filter_width
 * default) and its roll-off (the cutoff as a share of the lower Nyquist). */
enum { SINC_WIDTH = 6 };
static const double ROLLOFF = 0.99;

struct audio_ctx {
    int rate_in, rate_out, n_fft, hop, n_mels;
    int up, down;        /* rates over their gcd: out sample k reads in k*down/up */
    int taps;            /* per phase */
    double *kernel;      /* [up][taps] */
    double *window;      /* [n_fft], Hann */
    double *frame;       /* [n_fft] scratch */
    int *mel_lo, *mel_n; /* each filter's first bin and count */
    double *mel_w;       /* [n_mels][n_fft/2+1] */
    gsl_fft_real_wavetable *wt;
    gsl_fft_real_workspace *ws;
};

static int gcd(int a, int b) {
    while (b) {
        int t = a % b;
        a = b, b = t;
    }
    return a;
}

double audio_hz_to_mel(double hz) {
    return 2595.0 * log10(1.0 + hz / 700.0);
}

double audio_mel_to_hz(double mel) {
    return 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
}

void audio_ctx_free(audio_ctx *a) {
    if (!a) return;
    free(a->kernel), free(a->window), free(a->frame);
    free(a->mel_lo), free(a->mel_n), free(a->mel_w);
    if (a->wt) gsl_fft_real_wavetable_free(a->wt);
    if (a->ws) gsl_fft_real_workspace_free(a->ws);
    free(a);
}

audio_ctx *audio_ctx_new(int rate_in, int rate_out, int n_fft, int hop, int n_mels) {
    if (rate_in < 1000 || rate_out < 1000 || n_fft < 16 || hop < 1 || n_mels < 1 ||
        n_mels > n_fft / 2)
        return NULL;
    audio_ctx *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    int g = gcd(rate_in, rate_out);
    *a = (audio_ctx){.rate_in = rate_in,
                     .rate_out = rate_out,
                     .n_fft = n_fft,
                     .hop = hop,
                     .n_mels = n_mels,
                     .up = rate_out / g,
                     .down = rate_in / g};
    /* The low-pass's cutoff, in cycles per input sample, and its half-width
     * in input samples. */
    double cutoff = ROLLOFF * (rate_out < rate_in ? (double)rate_out / rate_in : 1.0) / 2;
    double half = SINC_WIDTH / (2 * cutoff);
    a->taps = 2 * (int)ceil(half) + 1;
    int bins = n_fft / 2 + 1;
    a->kernel = malloc(sizeof *a->kernel * (size_t)a->up * (size_t)a->taps);
    a->window = malloc(sizeof *a->window * (size_t)n_fft);
    a->frame = malloc(sizeof *a->frame * (size_t)n_fft);
    a->mel_lo = calloc((size_t)n_mels, sizeof *a->mel_lo);
    a->mel_n = calloc((size_t)n_mels, sizeof *a->mel_n);
    a->mel_w = calloc((size_t)n_mels * (size_t)bins, sizeof *a->mel_w);
    a->wt = gsl_fft_real_wavetable_alloc((size_t)n_fft);
    a->ws = gsl_fft_real_workspace_alloc((size_t)n_fft);
    if (!a->kernel || !a->window || !a->frame || !a->mel_lo || !a->mel_n || !a->mel_w || !a->wt ||
        !a->ws) {
        audio_ctx_free(a);
        return NULL;
    }
    /* Phase p: output sample k = m*up + p sits at input position
     * (m*up + p) * down / up = m*down + p*down/up; tap j reads input
     * floor(that) - taps/2 + j. */
    int c = a->taps / 2;
    for (int p = 0; p < a->up; p++) {
        double pos = (double)p * a->down / a->up, frac = pos - floor(pos);
        for (int j = 0; j < a->taps; j++) {
            double t = (j - c) - frac; /* input sample minus position */
            double v = fabs(t) > half ? 0
                       : t == 0       ? 2 * cutoff
                                      : sin(2 * M_PI * cutoff * t) / (M_PI * t);
            double wv = fabs(t) > half ? 0 : 0.5 + 0.5 * cos(M_PI * t / half); /* Hann */
            a->kernel[(size_t)p * a->taps + j] = v * wv;
        }
    }
    for (int i = 0; i < n_fft; i++)
        a->window[i] = 0.5 - 0.5 * cos(2 * M_PI * i / n_fft); /* periodic, as torch.hann_window */
    double top = audio_hz_to_mel(rate_out / 2.0);
    for (int m = 0; m < n_mels; m++) {
        double lo = audio_mel_to_hz(top * m / (n_mels + 1));
        double mid = audio_mel_to_hz(top * (m + 1) / (n_mels + 1));
        double hi = audio_mel_to_hz(top * (m + 2) / (n_mels + 1));
        a->mel_lo[m] = -1;
        for (int b = 0; b < bins; b++) {
            double f = (double)b * rate_out / n_fft;
            double wv = f <= lo || f >= hi ? 0
                        : f <= mid         ? (f - lo) / (mid - lo)
                                           : (hi - f) / (hi - mid);
            if (wv <= 0) continue;
            if (a->mel_lo[m] < 0) a->mel_lo[m] = b;
            a->mel_n[m] = b - a->mel_lo[m] + 1;
            a->mel_w[(size_t)m * bins + (b - a->mel_lo[m])] = wv;
        }
        if (a->mel_lo[m] < 0) a->mel_lo[m] = 0; /* a filter narrower than a bin: empty */
    }
    return a;
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static unsigned le16(const unsigned char *p) {
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

int wav_decode(const unsigned char *buf, size_t len, float **x, long *n, int *rate, char *err,
               size_t errlen) {
    *x = NULL;
    if (len < 12 || memcmp(buf, "RIFF", 4) || memcmp(buf + 8, "WAVE", 4)) {
        snprintf(err, errlen, "not a RIFF/WAVE file");
        return -1;
    }
    unsigned channels = 0, bits = 0, format = 0;
    const unsigned char *data = NULL;
    size_t data_len = 0;
    for (size_t at = 12; at + 8 <= len;) {
        uint32_t size = le32(buf + at + 4);
        if (size > len - at - 8) size = (uint32_t)(len - at - 8); /* a truncated last chunk */
        if (!memcmp(buf + at, "fmt ", 4) && size >= 16) {
            format = le16(buf + at + 8);
            channels = le16(buf + at + 10);
            *rate = (int)le32(buf + at + 12);
            bits = le16(buf + at + 22);
        } else if (!memcmp(buf + at, "data", 4)) {
            data = buf + at + 8, data_len = size;
        }
        at += 8 + (size_t)size + (size & 1); /* chunks are padded to even sizes */
    }
    if (format != 1 || bits != 16 || channels < 1 || !data) {
        snprintf(err, errlen, "WAV: want 16-bit PCM with a data chunk (format %u, %u bits)", format,
                 bits);
        return -1;
    }
    *n = (long)(data_len / (2 * channels));
    *x = malloc(sizeof **x * (size_t)(*n > 0 ? *n : 1));
    if (!*x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (long i = 0; i < *n; i++) {
        long sum = 0; /* up to 65535 channels of 32768 */
        for (unsigned c = 0; c < channels; c++)
            sum += (int16_t)le16(data + 2 * ((size_t)i * channels + c));
        (*x)[i] = (float)sum / (32768.0f * (float)channels);
    }
    return 0;
}

long audio_resampled_len(const audio_ctx *a, long n) {
    return (long)(((int64_t)n * a->up + a->down - 1) / a->down);
}

long audio_resample(audio_ctx *a, const float *x, long n, float *out) {
    long len = audio_resampled_len(a, n);
    int c = a->taps / 2;
    for (long k = 0; k < len; k++) {
        int64_t num = (int64_t)k * a->down;
        long base = (long)(num / a->up);
        int p = (int)(k % a->up);
        const double *h = a->kernel + (size_t)p * a->taps;
        double acc = 0;
        long j0 = base - c;
        if (j0 >= 0 && j0 + a->taps <= n) {
            for (int j = 0; j < a->taps; j++)
                acc += h[j] * x[j0 + j];
        } else {
            for (int j = 0; j < a->taps; j++)
                if (j0 + j >= 0 && j0 + j < n) acc += h[j] * x[j0 + j];
        }
        /* The kernel's taps sum to 1 (a low-pass of unit gain at DC). */
        out[k] = (float)acc;
    }
    return len;
}

long audio_logmel(audio_ctx *a, const float *x, long n, float *out) {
    const int N = a->n_fft, bins = N / 2 + 1;
    long frames = n / a->hop + 1;
    double power[4097];
    if (bins > 4097) return 0;
    for (long f = 0; f < frames; f++) {
        long start = f * a->hop - N / 2; /* centred; zero padding outside */
        for (int i = 0; i < N; i++) {
            long t = start + i;
            a->frame[i] = (t >= 0 && t < n ? x[t] : 0) * a->window[i];
        }
        gsl_fft_real_transform(a->frame, 1, (size_t)N, a->wt, a->ws);
        /* GSL's half-complex order: r0, r1, i1, r2, i2, ..., (r_N/2 for even N). */
        power[0] = a->frame[0] * a->frame[0];
        for (int b = 1; b < bins; b++) {
            double re = a->frame[2 * b - 1], im = 2 * b < N ? a->frame[2 * b] : 0;
            power[b] = re * re + im * im;
        }
        for (int m = 0; m < a->n_mels; m++) {
            const double *w = a->mel_w + (size_t)m * bins;
            double e = 0;
            for (int b = 0; b < a->mel_n[m]; b++)
                e += w[b] * power[a->mel_lo[m] + b];
            out[(size_t)m * frames + f] = (float)log(e > 1e-10 ? e : 1e-10);
        }
    }
    return frames;
}

long audio_run(audio_ctx *a, const unsigned char *wav, size_t len, float *out, size_t out_cap,
               char *err, size_t errlen) {
    float *x;
    long n;
    int rate;
    if (wav_decode(wav, len, &x, &n, &rate, err, errlen)) return -1;
    if (rate != a->rate_in) {
        snprintf(err, errlen, "WAV at %d Hz, the pipeline's input is %d Hz", rate, a->rate_in);
        free(x);
        return -1;
    }
    long m = audio_resampled_len(a, n);
    float *y = malloc(sizeof *y * (size_t)(m > 0 ? m : 1));
    if (!y) {
        free(x);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    audio_resample(a, x, n, y);
    free(x);
    long frames = m / a->hop + 1;
    if ((size_t)frames * (size_t)a->n_mels > out_cap) {
        free(y);
        snprintf(err, errlen, "output buffer too small for %ld frames", frames);
        return -1;
    }
    audio_logmel(a, y, m, out);
    free(y);
    return frames;
}

unsigned char *wav_synth(int rate, double seconds, unsigned long seed, size_t *len) {
    long n = (long)(seconds * rate);
    size_t bytes = 44 + 2 * (size_t)n;
    unsigned char *b = malloc(bytes);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!b || !rng) {
        free(b);
        if (rng) gsl_rng_free(rng);
        return NULL;
    }
    gsl_rng_set(rng, seed);
    memcpy(b, "RIFF", 4);
    uint32_t v[] = {(uint32_t)(bytes - 8), 16, (uint32_t)rate, (uint32_t)rate * 2,
                    (uint32_t)(2 * n)};
    for (int i = 0; i < 4; i++)
        b[4 + i] = (unsigned char)(v[0] >> (8 * i));
    memcpy(b + 8, "WAVEfmt ", 8);
    for (int i = 0; i < 4; i++)
        b[16 + i] = (unsigned char)(v[1] >> (8 * i));
    b[20] = 1, b[21] = 0; /* PCM */
    b[22] = 1, b[23] = 0; /* mono */
    for (int i = 0; i < 4; i++) {
        b[24 + i] = (unsigned char)(v[2] >> (8 * i));
        b[28 + i] = (unsigned char)(v[3] >> (8 * i));
        b[40 + i] = (unsigned char)(v[4] >> (8 * i));
    }
    b[32] = 2, b[33] = 0;  /* block align */
    b[34] = 16, b[35] = 0; /* bits */
    memcpy(b + 36, "data", 4);
    double f0 = 110 + 330 * gsl_rng_uniform(rng), sweep = 2 + 6 * gsl_rng_uniform(rng);
    double phase = 0;
    for (long i = 0; i < n; i++) {
        double t = (double)i / rate, f = f0 * pow(2, sweep * t / (seconds > 0 ? seconds : 1) / 4);
        phase += 2 * M_PI * f / rate;
        double s = 0.4 * sin(phase) + 0.2 * sin(2 * phase) + 0.1 * sin(3 * phase) +
                   gsl_ran_gaussian(rng, 0.03);
        long q = lrint(s * 32767);
        q = q > 32767 ? 32767 : q < -32768 ? -32768 : q;
        b[44 + 2 * i] = (unsigned char)(q & 0xff);
        b[45 + 2 * i] = (unsigned char)((q >> 8) & 0xff);
    }
    gsl_rng_free(rng);
    *len = bytes;
    return b;
}
