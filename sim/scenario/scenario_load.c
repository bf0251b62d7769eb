/* scenario_load: YAML files (scenarios and host profiles) to flat lists of
 * dotted "key = value" assignments with their positions. Nesting, dotted keys
 * and flow style are all flattened the same way, so the schema sees one form
 * whatever the user wrote; `jobs:` is a list (jobs.0.*, jobs.1.*, ...) and
 * `variants:` a mapping of named override sets. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "intern.h"
#include "scenario.h"
#include "schema.h"
#include "text.h"

int assign_push(assign_list_t *l, const char *key, const char *value, src_pos_t pos,
                src_pos_t keypos, int is_scalar) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        assign_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v, l->cap = cap;
    }
    assign_t *a = &l->v[l->n];
    if (strlen(key) >= sizeof a->key || strlen(value) >= sizeof a->value) {
        diag_error(
            pos,
            "key '%.60s...' or its value is too long (keys %zu, values %zu characters at most)",
            key, sizeof a->key - 1, sizeof a->value - 1);
        return -1;
    }
    snprintf(a->key, sizeof a->key, "%s", key);
    snprintf(a->value, sizeof a->value, "%s", value);
    a->pos = pos;
    a->keypos = keypos;
    a->is_scalar = is_scalar;
    l->n++;
    return 0;
}

void assign_list_free(assign_list_t *l) {
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int assign_parse_key(assign_list_t *l, const char *key, const char *value) {
    /* Errors name the option the user typed (--epochs), not --set. */
    char opt[SCN_STR + 2];
    snprintf(opt, sizeof opt, "--%s", key);
    const char *name = intern(opt);
    if (!name) return EXIT_RUNTIME;
    src_pos_t at = {name, 0, 0};
    return assign_push(l, key, value, at, at, 1) ? EXIT_INPUT : 0;
}

int assign_parse_set(assign_list_t *l, const char *arg) {
    static const src_pos_t cmdline = {"--set", 0, 0};
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        diag_error(cmdline, "'%s': expected key=value (e.g. --set server.cpus=12)", arg);
        return EXIT_INPUT;
    }
    char key[SCN_STR];
    if ((size_t)(eq - arg) >= sizeof key) {
        diag_error(cmdline, "'%s': key too long", arg);
        return EXIT_INPUT;
    }
    memcpy(key, arg, (size_t)(eq - arg));
    key[eq - arg] = 0;
    return assign_push(l, key, eq + 1, cmdline, cmdline, 1) ? EXIT_INPUT : 0;
}

/* Keys one file may hold. YAML aliases share nodes, so a few lines of
 * anchors can expand to 2^30 keys ("billion laughs"); real scenarios have a
 * few hundred, and a measured profile of 1000 epochs (compare's most)
 * about 12,000: stallsim.watch writes 11 keys an epoch (4096 refused a
 * profile past epoch 408). */
enum { MAX_FILE_KEYS = 16384 };

/* Size and nesting of one YAML file. libyaml's time grows with the square of
 * the nesting depth (100,000 levels of `[` in 500 KB take over a minute) and
 * its loader and our walk recurse on it; a real scenario nests 4 deep and is a
 * few KB. Both are checked before the file is loaded (read_text, check_events). */
enum { MAX_FILE_BYTES = 16 << 20, MAX_DEPTH = 64 };
/* Nodes (scalars, aliases, mappings, lists) one file may hold: libyaml's
 * loader holds about 85 bytes a node, so a 16 MiB flat list of `- 1` took
 * 1.4 GB and 25 s before its first key was looked at. A scenario holds at
 * most MAX_FILE_KEYS keys; this leaves room for lists of values. */
enum { MAX_NODES = 1 << 16 };

typedef struct {
    const char *file;
    yaml_document_t *doc;
    int errors;
    int keys;      /* pairs visited, aliases expanded */
    int empty_job; /* an empty job was reported (once per file) */
} walk_t;

static src_pos_t pos_of(const walk_t *w, const yaml_node_t *n) {
    src_pos_t p = {w->file, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
    return p;
}

static const char *node_kind(const yaml_node_t *n) {
    return n->type == YAML_MAPPING_NODE    ? "a mapping"
           : n->type == YAML_SEQUENCE_NODE ? "a list"
                                           : "a value";
}

static void join(char *out, size_t n, const char *prefix, const char *key) {
    snprintf(out, n, "%s%s%s", prefix, prefix[0] ? "." : "", key);
}

static void flatten(walk_t *w, yaml_node_t *node, const char *prefix, assign_list_t *out,
                    src_pos_t keypos);
static void flatten_mapping(walk_t *w, yaml_node_t *node, const char *prefix, assign_list_t *out);

static void flatten_pair(walk_t *w, yaml_node_t *k, yaml_node_t *v, const char *prefix,
                         assign_list_t *out) {
    if (++w->keys > MAX_FILE_KEYS) {
        if (w->keys == MAX_FILE_KEYS + 1) {
            diag_error(pos_of(w, k),
                       "more than %d keys in one file, a YAML alias's keys counted again "
                       "wherever it is used (stallsim's limit on one file's keys)",
                       MAX_FILE_KEYS);
            w->errors++;
        }
        return;
    }
    if (k->type != YAML_SCALAR_NODE) {
        diag_error(pos_of(w, k), "expected a key name, got %s", node_kind(k));
        w->errors++;
        return;
    }
    if (strlen((const char *)k->data.scalar.value) != k->data.scalar.length) {
        diag_error(pos_of(w, k), "a key name contains a NUL character");
        w->errors++;
        return;
    }
    char path[SCN_STR * 2];
    join(path, sizeof path, prefix, (const char *)k->data.scalar.value);
    if (strlen(path) >= SCN_STR) {
        diag_error(pos_of(w, k), "key '%.40s...' is too long", path);
        w->errors++;
        return;
    }
    /* Duplicate keys are legal YAML to libyaml, but one of the two values would be lost. */
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->v[i].key, path) == 0 && out->v[i].pos.file == w->file) {
            diag_error(pos_of(w, k), "duplicate key '%s' (first set at line %d, column %d)", path,
                       out->v[i].keypos.line, out->v[i].keypos.col);
            w->errors++;
            break; /* once: a key aliased n times must not print n^2 lines */
        }
    if (v->type == YAML_SCALAR_NODE) {
        /* An escaped \0 would silently cut the value short. */
        if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length) {
            diag_error(pos_of(w, v), "key '%s': the value contains a NUL character", path);
            w->errors++;
            return;
        }
        if (assign_push(out, path, (const char *)v->data.scalar.value, pos_of(w, v), pos_of(w, k),
                        1))
            w->errors++;
    } else {
        flatten(w, v, path, out, pos_of(w, k));
    }
}

/* A key that appears twice in one mapping: reported with both positions, and
 * the second pair skipped. Two `jobs:` lists or two `server:` sections would
 * otherwise merge silently (or one value would be lost). Only the first
 * MAX_FILE_KEYS pairs are compared, so a huge mapping costs no more than
 * 16384^2/2 comparisons (about a second); past that the key count stops the file anyway. */
static int duplicate_pair(walk_t *w, yaml_node_t *map, yaml_node_pair_t *p, const char *prefix) {
    yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
    if (!k || k->type != YAML_SCALAR_NODE || p - map->data.mapping.pairs.start >= MAX_FILE_KEYS)
        return 0;
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
        yaml_node_t *e = yaml_document_get_node(w->doc, q->key);
        if (e && e->type == YAML_SCALAR_NODE && e->data.scalar.length == k->data.scalar.length &&
            memcmp(e->data.scalar.value, k->data.scalar.value, k->data.scalar.length) == 0) {
            char path[SCN_STR * 2];
            join(path, sizeof path, prefix, (const char *)k->data.scalar.value);
            diag_error(pos_of(w, k), "duplicate key '%.*s' (first set at line %d, column %d)",
                       SCN_STR, path, (int)e->start_mark.line + 1, (int)e->start_mark.column + 1);
            w->errors++;
            return 1;
        }
    }
    return 0;
}

/* Whether scalar key k is YAML's merge key, `<<` written plain. */
static int is_merge_key(const yaml_node_t *k) {
    return k && k->type == YAML_SCALAR_NODE && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           strcmp((const char *)k->data.scalar.value, "<<") == 0;
}

/* Whether mapping map sets key (a merge key's pairs aside). */
static int mapping_sets(yaml_document_t *doc, const yaml_node_t *map, const yaml_node_t *key) {
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !is_merge_key(k) &&
            k->data.scalar.length == key->data.scalar.length &&
            memcmp(k->data.scalar.value, key->data.scalar.value, key->data.scalar.length) == 0)
            return 1;
    }
    return 0;
}

/* `<<: *base` or `<<: [*a, *b]` (YAML 1.1 merge keys, B6): the merged
 * mappings' pairs, except those host sets itself or an earlier merged
 * mapping set (the spec's precedence). One level: a merged mapping's own
 * `<<` is not followed. */
static void merge_pairs(walk_t *w, yaml_node_t *host, yaml_node_t *k, yaml_node_t *v,
                        const char *prefix, assign_list_t *out) {
    yaml_node_t *one[1] = {v};
    yaml_node_item_t *items = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
    int n = items ? (int)(v->data.sequence.items.top - items) : 1;
    for (int i = 0; i < n; i++) {
        yaml_node_t *m = items ? yaml_document_get_node(w->doc, items[i]) : one[0];
        if (!m || m->type != YAML_MAPPING_NODE) {
            diag_error(pos_of(w, m ? m : k),
                       "'<<' (a YAML merge key) takes a mapping or a list of mappings "
                       "(<<: *anchor), got %s",
                       m ? node_kind(m) : "nothing");
            w->errors++;
            return;
        }
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
             p++) {
            yaml_node_t *mk = yaml_document_get_node(w->doc, p->key);
            yaml_node_t *mv = yaml_document_get_node(w->doc, p->value);
            if (!mk || !mv || is_merge_key(mk)) continue;
            int earlier = mk->type == YAML_SCALAR_NODE && mapping_sets(w->doc, host, mk);
            for (int j = 0; j < i && !earlier && mk->type == YAML_SCALAR_NODE; j++) {
                yaml_node_t *e = yaml_document_get_node(w->doc, items[j]);
                earlier = e && e->type == YAML_MAPPING_NODE && mapping_sets(w->doc, e, mk);
            }
            if (!earlier) flatten_pair(w, mk, mv, prefix, out);
        }
    }
}

static void flatten_mapping(walk_t *w, yaml_node_t *node, const char *prefix, assign_list_t *out) {
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        if (w->keys < MAX_FILE_KEYS && duplicate_pair(w, node, p, prefix)) continue;
        if (k && v && is_merge_key(k))
            merge_pairs(w, node, k, v, prefix, out);
        else if (k && v)
            flatten_pair(w, k, v, prefix, out);
    }
}

/* An empty job (`{}`) sets nothing, so it would vanish: the scenario would
 * then say 'jobs' is missing, or quietly run the other jobs. Reported once,
 * naming the first key a job must have. */
static void empty_job(walk_t *w, yaml_node_t *e, int i) {
    if (w->empty_job++) return;
    int n;
    const key_def_t *k = schema_keys(SCOPE_JOB, &n);
    const key_def_t *req = NULL;
    for (int r = 0; r < n && !req; r++)
        if (!k[r].def) req = &k[r];
    if (req)
        diag_error(pos_of(w, e), "jobs[%d] is empty: missing required key 'jobs.%d.%s' (%s)", i, i,
                   req->name, req->help);
    else
        diag_error(pos_of(w, e), "jobs[%d] is empty", i);
    w->errors++;
}

static void flatten(walk_t *w, yaml_node_t *node, const char *prefix, assign_list_t *out,
                    src_pos_t keypos) {
    if (node->type == YAML_MAPPING_NODE) {
        flatten_mapping(w, node, prefix, out);
    } else if (node->type == YAML_SEQUENCE_NODE && strcmp(prefix, "jobs") == 0) {
        int i = 0;
        for (yaml_node_item_t *it = node->data.sequence.items.start;
             it < node->data.sequence.items.top; it++, i++) {
            yaml_node_t *e = yaml_document_get_node(w->doc, *it);
            char path[64];
            snprintf(path, sizeof path, "jobs.%d", i);
            if (i == SCN_MAX_JOBS) {
                diag_error(pos_of(w, e), "jobs[%d]: more than %d jobs", i, SCN_MAX_JOBS);
                w->errors++;
                break;
            }
            if (e->type == YAML_MAPPING_NODE &&
                e->data.mapping.pairs.top == e->data.mapping.pairs.start) {
                empty_job(w, e, i);
                continue;
            }
            if (e->type != YAML_MAPPING_NODE) {
                diag_error(pos_of(w, e), "jobs[%d]: expected a mapping of job keys, got %s", i,
                           node_kind(e));
                w->errors++;
                continue;
            }
            flatten_mapping(w, e, path, out);
        }
    } else {
        /* A list or scalar where the schema wants something else; the schema check reports it
         * with the key's expected type. */
        if (assign_push(out, prefix, "", pos_of(w, node), keypos, 0)) w->errors++;
    }
}

/* Where a YAML text comes from: a file (path) or a buffer (text, len). */
typedef struct {
    const char *path;
    const unsigned char *text;
    size_t len;
} yaml_src_t;

/* The line and column of byte `at` of text (1-based). */
static src_pos_t pos_at(const char *display, const unsigned char *text, size_t at) {
    int line = 1, col = 1;
    for (size_t i = 0; i < at; i++)
        if (text[i] == '\n')
            line++, col = 1;
        else
            col++;
    src_pos_t p = {display, line, col};
    return p;
}

/* libyaml's reader (bytes that are not UTF-8) gives a byte offset, not a
 * mark: the line and column are counted from the text. */
static void malformed(const yaml_parser_t *parser, const char *display, const unsigned char *text,
                      size_t len) {
    src_pos_t p = {display, (int)parser->problem_mark.line + 1,
                   (int)parser->problem_mark.column + 1};
    if (parser->error == YAML_READER_ERROR && parser->problem_offset <= len)
        p = pos_at(display, text, parser->problem_offset);
    if (parser->error == YAML_MEMORY_ERROR) {
        /* libyaml says nothing more than "syntax error" at 1:1 here. */
        p.line = p.line > 0 ? p.line : 1, p.col = p.col > 0 ? p.col : 1;
        diag_error(p,
                   "out of memory while loading the YAML (%zu bytes): the machine or its "
                   "memory limit (ulimit -v, a cgroup) left too little",
                   len);
        return;
    }
    diag_error(p, "malformed YAML: %s%s%s", parser->problem ? parser->problem : "syntax error",
               parser->context ? " " : "", parser->context ? parser->context : "");
}

/* Reads a whole file (a pipe too: it is read once) into *text, refusing a
 * folder and anything past MAX_FILE_BYTES. */
static int read_text(const char *path, const char *display, unsigned char **text, size_t *len) {
    src_pos_t top = {display, 0, 0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_error(top, "cannot read file: %s", strerror(errno));
        return EXIT_INPUT;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        diag_error(top, "is a directory; expected a YAML file");
        fclose(f);
        return EXIT_INPUT;
    }
    size_t cap = 0, n = 0;
    unsigned char *buf = NULL;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 65536;
            if (nc > (size_t)MAX_FILE_BYTES + 1) nc = (size_t)MAX_FILE_BYTES + 1;
            unsigned char *b = realloc(buf, nc);
            if (!b) {
                rc = EXIT_RUNTIME;
                break;
            }
            buf = b, cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n > (size_t)MAX_FILE_BYTES) {
            diag_error(pos_at(display, buf, MAX_FILE_BYTES),
                       "the file is larger than %d MiB, the most a YAML file may hold",
                       MAX_FILE_BYTES >> 20);
            rc = EXIT_INPUT;
            break;
        }
        if (got == 0) {
            if (ferror(f)) {
                diag_error(top, "cannot read file: %s", strerror(errno));
                rc = EXIT_INPUT;
            }
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *text = buf, *len = n;
    return 0;
}

/* Every file loaded by path, read once per process and kept: a sweep builds
 * hundreds of configurations from the same few host profiles and price files,
 * a pipe (`host: <(generate)`) can be read only once, and the text every
 * configuration was built from is then the text the sweep's resume key hashes
 * (scenario_file_hash), even if the file changes meanwhile. Sweep workers
 * build configurations at once: the lock. */
typedef struct {
    char *path;
    unsigned char *text;
    size_t len;
    uint64_t hash;
    int regular;    /* a regular file: read again when it changed (below) */
    struct stat st; /* as it was when read */
} file_text_t;

/* A regular file changed since it was read (rewritten in place or replaced):
 * its newer text is read, as another entry (the old text may still be being
 * parsed by another thread, so it is never freed). A pipe is read once. */
static int changed(const file_text_t *t, const struct stat *now) {
    return t->regular &&
           (now->st_dev != t->st.st_dev || now->st_ino != t->st.st_ino ||
            now->st_size != t->st.st_size || now->st_mtim.tv_sec != t->st.st_mtim.tv_sec ||
            now->st_mtim.tv_nsec != t->st.st_mtim.tv_nsec ||
            now->st_ctim.tv_sec != t->st.st_ctim.tv_sec ||
            now->st_ctim.tv_nsec != t->st.st_ctim.tv_nsec);
}

static file_text_t *file_texts;
static int nfile_texts;
static pthread_mutex_t file_texts_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* The text of path, read on first use; NULL after an error (not kept: a
 * file that appears later is read then). */
static const file_text_t *file_text(const char *path, const char *display) {
    pthread_mutex_lock(&file_texts_lock);
    const file_text_t *found = NULL;
    struct stat now;
    memset(&now, 0, sizeof now);
    int have = stat(path, &now) == 0; /* stat never blocks, even on a FIFO */
    for (int i = nfile_texts - 1; i >= 0; i--)
        if (strcmp(file_texts[i].path, path) == 0) { /* the newest text of path */
            if (!have || !changed(&file_texts[i], &now)) found = &file_texts[i];
            break;
        }
    file_text_t t = {0};
    file_text_t *grown = NULL;
    if (!found && read_text(path, display, &t.text, &t.len) == 0) {
        t.regular = have && S_ISREG(now.st_mode);
        t.st = now;
        t.path = strdup(path);
        t.hash = fnv1a(t.text, t.len);
        grown = t.path ? realloc(file_texts, (size_t)(nfile_texts + 1) * sizeof *grown) : NULL;
        if (grown) {
            file_texts = grown;
            file_texts[nfile_texts] = t;
            found = &file_texts[nfile_texts++];
        } else {
            diag_error((src_pos_t){display, 0, 0}, "out of memory");
            free(t.path);
            free(t.text);
        }
    }
    pthread_mutex_unlock(&file_texts_lock);
    return found;
}

int scenario_file_hash(const char *path, uint64_t *hash) {
    const file_text_t *t = file_text(path, path);
    if (!t) return EXIT_INPUT;
    *hash = t->hash;
    return 0;
}

/* Walks the events of the text before it is loaded: nesting past MAX_DEPTH
 * stops at the collection that passes it (before libyaml's cost grows), and a
 * second document (`---`, or text after `...`) is refused, since it would be
 * ignored. libyaml's own syntax errors are reported as the loader would. */
static int check_events(const unsigned char *text, size_t len, const char *display) {
    static const char second_doc[] =
        "a second YAML document ('---', or text after '...'); a file holds one";
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, text, len);
    int depth = 0, docs = 0, ended = 0, rc = 0, nodes = 0;
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&parser, &e)) {
            /* libyaml wants `---` after `...`: text there is a second document too. */
            if (ended) {
                src_pos_t at = {display, (int)parser.problem_mark.line + 1,
                                (int)parser.problem_mark.column + 1};
                diag_error(at, "%s", second_doc);
            } else {
                malformed(&parser, display, text, len);
            }
            rc = EXIT_INPUT;
            break;
        }
        src_pos_t at = {display, (int)e.start_mark.line + 1, (int)e.start_mark.column + 1};
        yaml_event_type_t t = e.type;
        if ((t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT || t == YAML_MAPPING_START_EVENT ||
             t == YAML_SEQUENCE_START_EVENT) &&
            ++nodes > MAX_NODES) {
            diag_error(at,
                       "more than %d YAML nodes (keys, values, list items) in one file, the most "
                       "stallsim loads (libyaml holds ~85 bytes a node); a scenario holds a few "
                       "hundred",
                       MAX_NODES);
            rc = EXIT_INPUT;
        } else if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
            if (++depth > MAX_DEPTH) {
                diag_error(at, "nested more than %d levels deep (mappings and lists)", MAX_DEPTH);
                rc = EXIT_INPUT;
            }
        } else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
            depth--;
        } else if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            diag_error(at, "%s", second_doc);
            rc = EXIT_INPUT;
        }
        if (t == YAML_DOCUMENT_END_EVENT) ended = 1;
        yaml_event_delete(&e);
        if (rc || t == YAML_STREAM_END_EVENT) break;
    }
    yaml_parser_delete(&parser);
    return rc;
}

/* Loads YAML into a document; prints libyaml's own error with its position. */
static int load_yaml(const yaml_src_t *src, const char *display, yaml_document_t *doc) {
    const unsigned char *text = src->text;
    size_t len = src->len;
    if (src->path) {
        /* Read once per process and kept (file_text): the text is not ours to free. */
        const file_text_t *t = file_text(src->path, display);
        if (!t) return EXIT_INPUT;
        text = t->text, len = t->len;
    } else if (len > (size_t)MAX_FILE_BYTES) {
        diag_error(pos_at(display, text, MAX_FILE_BYTES),
                   "the file is larger than %d MiB, the most a YAML file may hold",
                   MAX_FILE_BYTES >> 20);
        return EXIT_INPUT;
    }
    int rc = check_events(text ? text : (const unsigned char *)"", text ? len : 0, display);
    if (rc) return rc;
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, text ? text : (const unsigned char *)"", text ? len : 0);
    int ok = yaml_parser_load(&parser, doc);
    if (!ok) malformed(&parser, display, text ? text : (const unsigned char *)"", text ? len : 0);
    yaml_parser_delete(&parser);
    if (!ok) return EXIT_INPUT;
    if (!yaml_document_get_root_node(doc)) {
        src_pos_t p = {display, 1, 1};
        diag_error(p, "empty file: expected a mapping of scenario keys");
        yaml_document_delete(doc);
        return EXIT_INPUT;
    }
    return 0;
}

static yaml_node_t *mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key,
                                yaml_node_t **keynode) {
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0) {
            if (keynode) *keynode = k;
            return yaml_document_get_node(doc, p->value);
        }
    }
    return NULL;
}

static int doc_load(scenario_doc_t *d, const char *name, const yaml_src_t *src) {
    memset(d, 0, sizeof *d);
    d->path = strdup(name);
    if (!d->path) return EXIT_RUNTIME;
    yaml_document_t doc;
    int rc = load_yaml(src, d->path, &doc);
    if (rc) return rc;
    walk_t w = {d->path, &doc, 0, 0, 0};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root->type != YAML_MAPPING_NODE) {
        diag_error(pos_of(&w, root), "expected a mapping of scenario keys at the top, got %s",
                   node_kind(root));
        yaml_document_delete(&doc);
        return EXIT_INPUT;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&doc, p->value);
        if (!k || !v) continue;
        if (p - root->data.mapping.pairs.start == MAX_FILE_KEYS) {
            diag_error(pos_of(&w, k), "more than %d keys in one file", MAX_FILE_KEYS);
            w.errors++;
            break;
        }
        if (w.keys < MAX_FILE_KEYS && duplicate_pair(&w, root, p, "")) continue;
        if (k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, "variants") == 0) {
            if (v->type != YAML_MAPPING_NODE) {
                diag_error(pos_of(&w, v),
                           "variants: expected a mapping of NAME: {key: value, ...}");
                w.errors++;
                continue;
            }
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top;
                 q++) {
                yaml_node_t *vk = yaml_document_get_node(&doc, q->key);
                yaml_node_t *vv = yaml_document_get_node(&doc, q->value);
                if (!vk || !vv) continue;
                if (vk->type != YAML_SCALAR_NODE || vv->type != YAML_MAPPING_NODE) {
                    diag_error(
                        pos_of(&w, vk),
                        "variants: each variant is NAME: {key: value, ...} (use {} for none)");
                    w.errors++;
                    continue;
                }
                if (d->nvariants == SCN_MAX_VARIANTS) {
                    diag_error(pos_of(&w, vk), "too many variants (at most %d)", SCN_MAX_VARIANTS);
                    w.errors++;
                    break;
                }
                variant_t *var = &d->variants[d->nvariants];
                const char *name = (const char *)vk->data.scalar.value;
                for (int i = 0; i < d->nvariants; i++)
                    if (strcmp(d->variants[i].name, name) == 0) {
                        diag_error(pos_of(&w, vk), "duplicate variant '%s'", name);
                        w.errors++;
                    }
                if (strlen(name) >= sizeof var->name || !name[0]) {
                    diag_error(pos_of(&w, vk), "variant name must be 1 to %zu characters",
                               sizeof var->name - 1);
                    w.errors++;
                    continue;
                }
                char why[128] = "a NUL character is not allowed";
                if (strlen(name) != vk->data.scalar.length || text_check(name, why, sizeof why)) {
                    diag_error(pos_of(&w, vk), "variant name '%s': %s", name, why);
                    w.errors++;
                    continue;
                }
                snprintf(var->name, sizeof var->name, "%s", name);
                var->pos = pos_of(&w, vk);
                d->nvariants++;
                flatten_mapping(&w, vv, "", &var->set);
            }
            continue;
        }
        if (is_merge_key(k))
            merge_pairs(&w, root, k, v, "", &d->base);
        else
            flatten_pair(&w, k, v, "", &d->base);
    }
    yaml_document_delete(&doc);
    return w.errors ? EXIT_INPUT : 0;
}

int scenario_doc_load(scenario_doc_t *d, const char *path) {
    yaml_src_t src = {path, NULL, 0};
    return doc_load(d, path, &src);
}

int scenario_doc_load_mem(scenario_doc_t *d, const char *name, const void *text, size_t len) {
    yaml_src_t src = {NULL, text, len};
    return doc_load(d, name, &src);
}

/* The files of ours that layer into a scenario: a version key that must say
 * 1, the scalar keys they must name, and the mapping whose keys become
 * assignments (under prefix); the rest is for people. version NULL: any
 * mapping, read whole (importers). */
typedef struct {
    const char *version, *what, *hint;
    const char *body, *prefix;
    const char *required[3];
    const char *required_why;
} layer_file_t;

static const layer_file_t host_profile = {"profile_version",
                                          "host profile",
                                          "(write one with `stallsim calibrate --out FILE`)",
                                          "scenario",
                                          "",
                                          {NULL},
                                          NULL};
static const layer_file_t price_file = {"prices_version",
                                        "price file",
                                        "(scenarios/prices/ has an example)",
                                        "prices",
                                        "prices",
                                        {"source", "date", NULL},
                                        "where and when the prices were read"};
static const layer_file_t any_mapping = {NULL, NULL, NULL, NULL, "", {NULL}, NULL};

static int layer_load(const yaml_src_t *src, const char *display, const layer_file_t *k,
                      assign_list_t *out) {
    yaml_document_t doc;
    int rc = load_yaml(src, display, &doc);
    if (rc) return rc;
    walk_t w = {display, &doc, 0, 0, 0};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    int map = root->type == YAML_MAPPING_NODE;
    yaml_node_t *ver = map && k->version ? mapping_get(&doc, root, k->version, NULL) : NULL;
    yaml_node_t *body = !map ? NULL : k->body ? mapping_get(&doc, root, k->body, NULL) : root;
    if (!k->version && !map) {
        diag_error(pos_of(&w, root), "expected a mapping at the top, got %s", node_kind(root));
        w.errors++;
    } else if (k->version && (!ver || ver->type != YAML_SCALAR_NODE ||
                              strcmp((const char *)ver->data.scalar.value, "1") != 0)) {
        diag_error(pos_of(&w, ver ? ver : root), "not a stallsim %s: expected '%s: 1' %s", k->what,
                   k->version, k->hint);
        w.errors++;
    } else if (!body || body->type != YAML_MAPPING_NODE) {
        diag_error(pos_of(&w, body ? body : root), "%s: expected a '%s:' mapping", k->what,
                   k->body);
        w.errors++;
    } else {
        for (int i = 0; k->required[i]; i++) {
            yaml_node_t *n = mapping_get(&doc, root, k->required[i], NULL);
            if (!n || n->type != YAML_SCALAR_NODE || !n->data.scalar.length) {
                diag_error(pos_of(&w, n ? n : root), "%s: expected '%s:' (%s)", k->what,
                           k->required[i], k->required_why);
                w.errors++;
            }
        }
        if (!w.errors) flatten_mapping(&w, body, k->prefix, out);
    }
    yaml_document_delete(&doc);
    return w.errors ? EXIT_INPUT : 0;
}

int scenario_prices_load(const char *path, const char *display, assign_list_t *out) {
    yaml_src_t src = {path, NULL, 0};
    return layer_load(&src, display, &price_file, out);
}

int scenario_flat_load(const char *path, const char *display, assign_list_t *out) {
    yaml_src_t src = {path, NULL, 0};
    return layer_load(&src, display, &any_mapping, out);
}

int scenario_flat_section_load(const char *path, const char *display, const char *section,
                               assign_list_t *out) {
    yaml_src_t src = {path, NULL, 0};
    yaml_document_t doc;
    int rc = load_yaml(&src, display, &doc);
    if (rc) return rc;
    walk_t w = {display, &doc, 0, 0, 0};
    yaml_node_t *node = yaml_document_get_root_node(&doc);
    char part[SCN_STR];
    /* Down the dotted path; a part that is missing (or no mapping) leaves
     * the list empty: only what lies under it is read, so the rest of the
     * file (a profile's long descriptions) is never flattened. */
    for (const char *p = section; node && node->type == YAML_MAPPING_NODE && *p;) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        node = mapping_get(&doc, node, part, NULL);
        p += n + (p[n] == '.');
    }
    if (node && node->type == YAML_MAPPING_NODE) flatten_mapping(&w, node, section, out);
    yaml_document_delete(&doc);
    return w.errors ? EXIT_INPUT : 0;
}

static int profile_load(const yaml_src_t *src, const char *display, assign_list_t *out) {
    return layer_load(src, display, &host_profile, out);
}

int scenario_profile_load(const char *path, const char *display, assign_list_t *out) {
    yaml_src_t src = {path, NULL, 0};
    return profile_load(&src, display, out);
}

int scenario_profile_load_mem(const void *text, size_t len, const char *display,
                              assign_list_t *out) {
    yaml_src_t src = {NULL, text, len};
    return profile_load(&src, display, out);
}

void scenario_doc_free(scenario_doc_t *d) {
    assign_list_free(&d->base);
    for (int i = 0; i < d->nvariants; i++)
        assign_list_free(&d->variants[i].set);
    free(d->path);
    memset(d, 0, sizeof *d);
}
