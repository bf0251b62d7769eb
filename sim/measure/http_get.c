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
/* ... and one that keeps above that but trickles (2 KB/s holds a 1 MB object
 * for 8 minutes): a GET of an object of B bytes may take TOTAL_BASE_S plus
 * B / MIN_AVG_BYTES_S seconds, at least 64 KB/s on average. */
#define TOTAL_BASE_S    10.0
#define MIN_AVG_BYTES_S 65536.0
/* The most one object may be when its size is not known in advance:
 * dataset.item_kb's bound, 4 GB. */
#define MAX_OBJECT_BYTES 4000000000L
/* Bytes of an error answer's body kept to quote (B8). */
#define ERR_BODY 512

struct http_client {
    CURL *h;
    /* the transfer in progress */
    unsigned char **buf;
    size_t *cap;
    size_t len;
    int oom;
    long expect;    /* its size, or -1 */
    long limit;     /* the most bytes accepted */
    long status;    /* the answer's, read at its first bytes */
    long announced; /* Content-Length when it was refused, else -1 */
    int too_long;   /* more bytes came than limit */
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

/* An object's bytes are capped by its expected size (or MAX_OBJECT_BYTES):
 * a Content-Length that says otherwise is refused before anything is
 * allocated, and a stream that runs past it is cut (a streaming server once
 * took one object to 1.6 GB). An error answer keeps ERR_BODY bytes to quote. */
static size_t on_data(char *data, size_t size, size_t nmemb, void *arg) {
    http_client *c = arg;
    size_t n = size * nmemb;
    if (c->len == 0 && c->status == 0) {
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->status);
        curl_off_t cl = -1;
        int ok = c->status == 200 || c->status == 206;
        if (!ok) c->limit = ERR_BODY;
        if (ok && curl_easy_getinfo(c->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK &&
            cl >= 0) {
            if (c->expect >= 0 ? cl != c->expect : cl > c->limit) {
                c->announced = (long)cl;
                return 0; /* libcurl fails the transfer with CURLE_WRITE_ERROR */
            }
            if ((size_t)cl > *c->cap) {
                unsigned char *b = realloc(*c->buf, (size_t)cl);
                if (b) *c->buf = b, *c->cap = (size_t)cl;
            }
        }
    }
    if (c->len + n > (size_t)c->limit) {
        if (c->status != 200 && c->status != 206) { /* enough of an error page */
            n = (size_t)c->limit - c->len;
            if (reserve(c, c->len + n) == 0) memcpy(*c->buf + c->len, data, n), c->len += n;
            return 0;
        }
        c->too_long = 1;
        return 0;
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

static const char *status_text(long status) {
    static const struct {
        long code;
        const char *text;
    } known[] = {
        {400, "Bad Request"},
        {401, "Unauthorized: the server wants credentials"},
        {403, "Forbidden: no permission (credentials, a bucket policy)"},
        {404, "Not Found"},
        {429, "Too Many Requests: the server is throttling"},
        {500, "Internal Server Error: a fault of the server, its log says more"},
        {502, "Bad Gateway: a proxy could not reach the server behind it"},
        {503, "Service Unavailable: the server is overloaded or down"},
        {504, "Gateway Timeout: a proxy gave up waiting for the server behind it"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].code == status) return known[i].text;
    return status >= 500 ? "a server error" : status >= 400 ? "a client error" : "not an object";
}

/* "HTTP status N (what it means); the server said: '...'" (B8): the body's
 * printable characters, runs of white space as one space. */
static void status_error(const http_client *c, char *err, size_t errlen) {
    char said[160];
    size_t k = 0;
    for (size_t i = 0; i < c->len && k + 1 < sizeof said; i++) {
        unsigned char ch = (*c->buf)[i];
        int space = ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
        if (space && (k == 0 || said[k - 1] == ' ')) continue;
        said[k++] = space ? ' ' : (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    while (k && said[k - 1] == ' ')
        k--;
    said[k] = 0;
    snprintf(err, errlen, "HTTP status %ld (%s)%s%s%s", c->status, status_text(c->status),
             k ? "; the server said: '" : "", said, k ? "'" : "");
}

int http_get(http_client *c, const char *url, long expect, unsigned char **buf, size_t *cap,
             long *len, char *err, size_t errlen) {
    c->buf = buf;
    c->cap = cap;
    c->len = 0;
    c->oom = 0;
    c->errbuf[0] = '\0';
    c->expect = expect;
    c->limit = expect >= 0 && expect < MAX_OBJECT_BYTES ? expect : MAX_OBJECT_BYTES;
    c->status = 0;
    c->announced = -1;
    c->too_long = 0;
    *len = 0;
    if (reserve(c, 1) != 0) { /* a buffer even for an empty object, as fileset_read_into */
        snprintf(err, errlen, "out of memory for the object");
        return -1;
    }
    double total_s = TOTAL_BASE_S + (double)c->limit / MIN_AVG_BYTES_S;
    CURLcode rc = curl_easy_setopt(c->h, CURLOPT_URL, url);
    if (rc == CURLE_OK) rc = curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, (long)(total_s * 1e3));
    if (rc == CURLE_OK) rc = curl_easy_perform(c->h);
    /* An answer without a body (a 302, 304, 204, an empty 403 or 503) never
     * reaches on_data: its status is read here, or it passed as an empty 200. */
    if (c->status == 0 && rc == CURLE_OK)
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->status);
    if (c->status && c->status != 200 && c->status != 206) {
        status_error(c, err, errlen);
        return -2;
    }
    if (c->announced >= 0 || c->too_long) {
        if (c->announced >= 0)
            snprintf(err, errlen, "the server announces %ld bytes, %s %ld", c->announced,
                     expect >= 0 ? "its file under --data has"
                                 : "more than the most an object "
                                   "may be,",
                     c->limit);
        else
            snprintf(err, errlen,
                     "the server sent more than %s %ld bytes (a stream, or other data)",
                     expect >= 0 ? "the file under --data has," : "the most an object may be,",
                     c->limit);
        return -3;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT && c->len > 0) {
        snprintf(err, errlen,
                 "%s: more than %.0f s for %ld bytes (a GET must average %.0f KB/s: the server "
                 "trickles)",
                 c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc), total_s, c->limit,
                 MIN_AVG_BYTES_S / 1024);
        return -1;
    }
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s",
                 c->oom         ? "out of memory for the object"
                 : c->errbuf[0] ? c->errbuf
                                : curl_easy_strerror(rc));
        return -1;
    }
    *len = (long)c->len;
    return 0;
}

void http_close(http_client *c) {
    if (!c) return;
    if (c->h) curl_easy_cleanup(c->h);
    free(c);
}
