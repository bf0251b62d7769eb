/* intern: one lasting copy of a string, shared by every caller that asks for
 * it. Source positions (src_pos_t.file) point at file names that must outlive
 * the structures they were read into, e.g. host profiles named by many
 * builds of one scenario, from several threads at once. Interned strings are
 * never freed; the set is small (one per distinct file). */
#ifndef STALLSIM_INTERN_H
#define STALLSIM_INTERN_H

/* The interned copy of s, or NULL without memory. Thread-safe. */
const char *intern(const char *s);

#endif
