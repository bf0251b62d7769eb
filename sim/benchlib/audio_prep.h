/* audio_prep: the CPU audio pipeline of a speech or music loader, as
 * torchaudio runs it: decode a WAV file (RIFF, 16-bit PCM, channels mixed to
 * mono), resample it (windowed-sinc, polyphase over the reduced rate ratio,
 * as torchaudio.functional.resample), and take a log-mel spectrogram (Hann
 * window, power spectrum by GSL's mixed-radix real FFT, triangular HTK mel
 * filters, natural log). Also writes the synthetic WAV clips calibrate
 * measures it on.
 *
 * Use: audio_ctx *a = audio_ctx_new(44100, 16000, 400, 160, 80);
 *      int frames = audio_run(a, wav, wav_len, out, out_cap, err, n);
 *      audio_ctx_free(a);
 * out holds n_mels x frames floats (mel-major).
 */
#ifndef STALLSIM_AUDIO_PREP_H
#define STALLSIM_AUDIO_PREP_H

#include <stddef.h>

typedef struct audio_ctx audio_ctx;

/* A context for one input rate (the WAV's must match) and the output's
 * rate, FFT size, hop and mel bins; NULL when out of memory or the
 * arguments are unusable. Not shared between threads. */
audio_ctx *audio_ctx_new(int rate_in, int rate_out, int n_fft, int hop, int n_mels);
void audio_ctx_free(audio_ctx *a);

/* Decodes a 16-bit PCM WAV into mono floats in [-1, 1): *x malloc'ed, *n
 * samples, *rate its rate. 0, or -1 with the reason in err. */
int wav_decode(const unsigned char *buf, size_t len, float **x, long *n, int *rate, char *err,
               size_t errlen);
/* Resamples n samples at the context's input rate; out has room for
 * audio_resampled_len(a, n). Returns the samples written. */
long audio_resampled_len(const audio_ctx *a, long n);
long audio_resample(audio_ctx *a, const float *x, long n, float *out);
/* Log-mel frames of n samples at the output rate (centred frames, zero
 * padded, torchaudio's center=True): n / hop + 1 frames into out
 * (n_mels x frames). Returns frames. */
long audio_logmel(audio_ctx *a, const float *x, long n, float *out);
/* The whole pipeline on one WAV: the frames written (at most out_cap
 * floats), or -1 with the reason in err. */
long audio_run(audio_ctx *a, const unsigned char *wav, size_t len, float *out, size_t out_cap,
               char *err, size_t errlen);

/* Writes a mono 16-bit WAV of `seconds` at `rate` (a chirp with harmonics
 * and noise, seeded) into a malloc'ed buffer; its length in *len. */
unsigned char *wav_synth(int rate, double seconds, unsigned long seed, size_t *len);

/* The mel scale (HTK): frequency in Hz to mel and back. */
double audio_hz_to_mel(double hz);
double audio_mel_to_hz(double mel);

#endif
