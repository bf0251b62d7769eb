/* text: what user-given strings may hold, and how they are shown.
 *
 * Names and paths in a scenario (`name`, `host`, `prices`, a job's `name`
 * and `model`, a variant's name) end up in a terminal, a CSV and JSON.
 * stallsim refuses at input any that is not valid UTF-8 or holds a control
 * character (C0: bytes below 0x20, DEL 0x7f, C1: U+0080..U+009F), which a
 * terminal would obey (ESC sequences) and JSON could not carry; what it
 * prints from elsewhere (command-line arguments echoed in messages) goes
 * through text_put_escaped. */
#ifndef STALLSIM_TEXT_H
#define STALLSIM_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* The length of the well-formed UTF-8 sequence at s (1 for ASCII, 2-4),
 * or 0 when the bytes there are not one (overlong forms, surrogates and code
 * points past U+10FFFF included). s is NUL-terminated. */
int text_utf8_len(const char *s);

/* 0 when s is valid UTF-8 without control characters; otherwise -1 with the
 * reason in why ("byte 3 is a control character (0x1b)"). */
int text_check(const char *s, char *why, size_t n);

/* Writes s with each control character and each byte that is not part of
 * valid UTF-8 as \xHH (a backslash itself stays as it is). */
void text_put_escaped(FILE *out, const char *s);

/* The same into buf (always NUL-terminated, cut short when n is too small). */
void text_escape(char *buf, size_t n, const char *s);

#endif
