/* text: see text.h. */
#include "text.h"

#include <string.h>

int text_utf8_len(const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    int n;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* past U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

/* A control character at s, whose valid sequence is len bytes: C0, DEL or C1. */
static int is_control(const char *str, int len) {
    const unsigned char *s = (const unsigned char *)str;
    if (len == 1) return s[0] < 0x20 || s[0] == 0x7f;
    return len == 2 && s[0] == 0xc2 && s[1] <= 0x9f;
}

int text_check(const char *s, char *why, size_t n) {
    for (size_t i = 0; s[i];) {
        int len = text_utf8_len(s + i);
        if (len == 0) {
            snprintf(why, n, "not valid UTF-8 (byte %zu is 0x%02x)", i + 1, (unsigned char)s[i]);
            return -1;
        }
        if (is_control(s + i, len)) {
            unsigned cp = len == 1 ? (unsigned char)s[i] : (unsigned char)s[i + 1];
            snprintf(why, n, "control characters are not allowed (U+%04X at byte %zu)", cp, i + 1);
            return -1;
        }
        i += (size_t)len;
    }
    return 0;
}

void text_escape(char *buf, size_t n, const char *s) {
    size_t used = 0;
    if (n == 0) return;
    for (size_t i = 0; s[i];) {
        int len = text_utf8_len(s + i);
        int bad = len == 0 || is_control(s + i, len);
        if (len == 0) len = 1;
        for (int k = 0; k < len; k++) {
            char piece[8];
            size_t plen;
            if (bad)
                plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x", (unsigned char)s[i + k]);
            else
                piece[0] = s[i + k], plen = 1;
            if (used + plen >= n) {
                buf[used] = 0;
                return;
            }
            memcpy(buf + used, piece, plen);
            used += plen;
        }
        i += (size_t)len;
    }
    buf[used] = 0;
}

void text_put_escaped(FILE *out, const char *s) {
    for (size_t i = 0; s[i];) {
        int len = text_utf8_len(s + i);
        if (len == 0 || is_control(s + i, len)) {
            int k = len ? len : 1;
            for (int j = 0; j < k; j++)
                fprintf(out, "\\x%02x", (unsigned char)s[i + (size_t)j]);
            i += (size_t)k;
        } else {
            fwrite(s + i, 1, (size_t)len, out);
            i += (size_t)len;
        }
    }
}
