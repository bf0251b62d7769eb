/* http_get: see http_get.h. */
#include "http_get.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_S 10L
/* Abort a transfer that moves less than LOW_SPEED_BYTES per second for
 * LOW_SPEED_S seconds (a server that accepted and then went silent). */
#define LOW_SPEED_BYTES 1024L
#define LOW_SPEED_S     20L

struct http_client {
    CURL *h;
    /* the transfer in progress */
    unsigned char **buf;
    size_t *cap;
    size_t len;
    int oom;
    char errbuf[CURL_ERROR_SIZE];
};

int http_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void http_global_cleanup(void) {
    curl_global_cleanup();
}

/* Grows the buffer to need bytes at least (to the announced length, when
 * known, so one object costs one realloc at most). 0, or -1 out of memory. */
static int reserve(http_client *c, size_t need) {
    if (need <= *c->cap) return 0;
    size_t cap = *c->cap ? *c->cap : 64 * 1024;
    while (cap < need)
        cap *= 2;
    unsigned char *b = realloc(*c->buf, cap);
    if (!b) return -1;
    *c->buf = b;
    *c->cap = cap;
    return 0;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg) {
    http_client *c = arg;
    size_t n = size * nmemb;
    if (c->len == 0) {
        curl_off_t cl = -1;
        if (curl_easy_getinfo(c->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK &&
            cl > 0 && (size_t)cl > *c->cap) {
            unsigned char *b = realloc(*c->buf, (size_t)cl);
            if (b) *c->buf = b, *c->cap = (size_t)cl;
        }
    }
    if (reserve(c, c->len + n) != 0) {
        c->oom = 1;
        return 0; /* libcurl fails the transfer with CURLE_WRITE_ERROR */
    }
    memcpy(*c->buf + c->len, data, n);
    c->len += n;
    return n;
}

http_client *http_open(char *err, size_t errlen) {
    http_client *c = calloc(1, sizeof *c);
    if (!c || !(c->h = curl_easy_init())) {
        free(c);
        snprintf(err, errlen, "cannot create an HTTP client (curl_easy_init)");
        return NULL;
    }
    CURL *h = c->h;
    int bad = 0;
    bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, LOW_SPEED_BYTES) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_S) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_USERAGENT, "stallsim-measure") != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, c) != CURLE_OK;
    if (bad) {
        snprintf(err, errlen, "cannot set up an HTTP client: libcurl %s lacks an option",
                 curl_version_info(CURLVERSION_NOW)->version);
        http_close(c);
        return NULL;
    }
    return c;
}

int http_get(http_client *c, const char *url, unsigned char **buf, size_t *cap, long *len,
             char *err, size_t errlen) {
    c->buf = buf;
    c->cap = cap;
    c->len = 0;
    c->oom = 0;
    c->errbuf[0] = '\0';
    *len = 0;
    if (reserve(c, 1) != 0) { /* a buffer even for an empty object, as fileset_read_into */
        snprintf(err, errlen, "out of memory for the object");
        return -1;
    }
    CURLcode rc = curl_easy_setopt(c->h, CURLOPT_URL, url);
    if (rc == CURLE_OK) rc = curl_easy_perform(c->h);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s",
                 c->oom         ? "out of memory for the object"
                 : c->errbuf[0] ? c->errbuf
                                : curl_easy_strerror(rc));
        return -1;
    }
    long status = 0;
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200 && status != 206) {
        snprintf(err, errlen, "HTTP status %ld", status);
        return -2;
    }
    *len = (long)c->len;
    return 0;
}

void http_close(http_client *c) {
    if (!c) return;
    if (c->h) curl_easy_cleanup(c->h);
    free(c);
}
