/* http_get: whole-object HTTP GETs for `stallsim measure --url`, the loader
 * reading from an object store (or any HTTP server) instead of files.
 *
 * A client is one libcurl easy handle, used by one thread: its GETs reuse one
 * kept-alive connection (TCP_NODELAY, no signals). A connect timeout, a
 * low-speed abort and a total time per object turn a dead, stalled or
 * trickling server into an error, not a hang; an object's size is capped.
 *
 * Use: http_global_init() once, before any thread starts (curl_global_init is
 *      not thread-safe); per thread c = http_open(err, n), then
 *      http_get(c, url, &buf, &cap, &len, err, n) per object, http_close(c);
 *      http_global_cleanup() at the end.
 */
#ifndef STALLSIM_HTTP_GET_H
#define STALLSIM_HTTP_GET_H

#include <stddef.h>

typedef struct http_client http_client;

/* 0, or -1 when libcurl cannot be initialised. */
int http_global_init(void);
void http_global_cleanup(void);

/* A client, or NULL with err set. */
http_client *http_open(char *err, size_t errlen);
/* GETs url whole into *buf (grown with realloc as needed, *cap its size, as
 * fileset_read_into does); *len the bytes received. expect is the object's
 * size (its file under --data), or -1: more is never received (nor more
 * than 4 GB), and the GET may take 10 s plus a second per 64 KB of it.
 * Returns 0; -1 when the transfer failed (no connection, a timeout, a
 * server that trickles, out of memory: err has libcurl's text and ours); -2
 * when the server answered with a status other than 200 or 206 (err says
 * which, what it means and the start of the server's text); -3 when the
 * object is not expect bytes long (a Content-Length, or a stream, past it). */
int http_get(http_client *c, const char *url, long expect, unsigned char **buf, size_t *cap,
             long *len, char *err, size_t errlen);
void http_close(http_client *c);

#endif
