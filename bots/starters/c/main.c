/*
 * A complete YINSH bot in C (C99 and POSIX), standard library only.
 *
 * The referee writes one JSON object per line to our standard input and reads one JSON object
 * per line from our standard output (docs/protocol.md). Standard error is our log: the referee
 * keeps its end in the game's transcript. Never print anything but protocol lines to stdout.
 *
 * C has no JSON in its standard library, so this file has a small reader for what the bot
 * needs: the message's "type", "color" and "seed", and the "actions" list. It walks the whole
 * line correctly (nested objects, escapes in strings) and skips every other field.
 *
 * Build it in this folder, then play it against the random bot from the arena's folder:
 *   gcc -O2 -Wall -o bot main.c
 *   .venv/bin/python manage.py match bots/starters/c bots/random
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "starter-c"
#define VERSION "1.0"

/* ---------------------------------------------------------------- the message we care about */

struct message {
    char *type;     /* "hello", "request", "end"... */
    char *color;    /* hello: "white" or "black" */
    long long seed; /* hello: the game's seed */
    char **actions; /* request: the legal action tokens */
    size_t n_actions;
};

static void free_message(struct message *m) {
    free(m->type);
    free(m->color);
    for (size_t i = 0; i < m->n_actions; i++) free(m->actions[i]);
    free(m->actions);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- a small JSON reader */

/* The reader walks a line with a pointer; each function returns 0 on success, -1 on an error. */
struct reader {
    const char *p;
};

static void skip_space(struct reader *r) {
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n') r->p++;
}

static int hex4(const char *s, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* Append the UTF-8 encoding of code point cp to out (which has room: see read_string). */
static char *put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) {
        *out++ = (char)cp;
    } else if (cp < 0x800) {
        *out++ = (char)(0xC0 | (cp >> 6));
        *out++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *out++ = (char)(0xE0 | (cp >> 12));
        *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *out++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *out++ = (char)(0xF0 | (cp >> 18));
        *out++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *out++ = (char)(0x80 | (cp & 0x3F));
    }
    return out;
}

/* Read a string ("..." with its escapes); store a malloc'ed copy in *out, or skip it if out
 * is NULL. */
static int read_string(struct reader *r, char **out) {
    if (*r->p != '"') return -1;
    /* Find the closing quote first. The decoded text is never longer than the quoted text
     * (\uXXXX is 6 bytes and gives at most 3; a surrogate pair is 12 and gives 4). */
    const char *s = r->p + 1, *end = s;
    while (*end != '"') {
        if (*end == '\0') return -1; /* unterminated */
        if (*end == '\\' && end[1] != '\0') end++;
        end++;
    }
    char *buf = malloc((size_t)(end - s) + 1), *w = buf;
    if (buf == NULL) return -1;
    while (s < end) {
        char c = *s++;
        if ((unsigned char)c < 0x20) goto bad; /* a raw control character */
        if (c != '\\') {
            *w++ = c;
            continue;
        }
        c = *s++;
        switch (c) {
        case '"': *w++ = '"'; break;
        case '\\': *w++ = '\\'; break;
        case '/': *w++ = '/'; break;
        case 'b': *w++ = '\b'; break;
        case 'f': *w++ = '\f'; break;
        case 'n': *w++ = '\n'; break;
        case 'r': *w++ = '\r'; break;
        case 't': *w++ = '\t'; break;
        case 'u': {
            unsigned cp, low;
            if (hex4(s, &cp) != 0) goto bad;
            s += 4;
            /* A character beyond U+FFFF comes as two escapes, a surrogate pair. */
            if (cp >= 0xD800 && cp < 0xDC00 && s[0] == '\\' && s[1] == 'u' &&
                hex4(s + 2, &low) == 0 && low >= 0xDC00 && low < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                s += 6;
            }
            w = put_utf8(w, cp);
            break;
        }
        default: goto bad;
        }
    }
    *w = '\0';
    r->p = end + 1;
    if (out != NULL) *out = buf;
    else free(buf);
    return 0;
bad:
    free(buf);
    return -1;
}

static int skip_value(struct reader *r);

/* Skip an object or an array: its members are values (and, in an object, "key": value). */
static int skip_container(struct reader *r, char open, char close) {
    r->p++; /* past open */
    skip_space(r);
    if (*r->p == close) {
        r->p++;
        return 0;
    }
    for (;;) {
        skip_space(r);
        if (open == '{') {
            if (read_string(r, NULL) != 0) return -1;
            skip_space(r);
            if (*r->p++ != ':') return -1;
        }
        if (skip_value(r) != 0) return -1;
        skip_space(r);
        if (*r->p == ',') r->p++;
        else if (*r->p == close) {
            r->p++;
            return 0;
        } else return -1;
    }
}

/* Skip any value: a string, a number, true, false, null, an object or an array. */
static int skip_value(struct reader *r) {
    skip_space(r);
    char c = *r->p;
    if (c == '"') return read_string(r, NULL);
    if (c == '{') return skip_container(r, '{', '}');
    if (c == '[') return skip_container(r, '[', ']');
    if (c == '\0') return -1;
    /* A number or a literal: everything up to the next delimiter. */
    const char *start = r->p;
    while (*r->p != '\0' && strchr(",:]} \t\r\n", *r->p) == NULL) r->p++;
    return r->p > start ? 0 : -1;
}

/* Read an array of strings into *items (malloc'ed) and *count. */
static int read_string_array(struct reader *r, char ***items, size_t *count) {
    size_t n = 0, cap = 16;
    char **list = malloc(cap * sizeof *list);
    if (list == NULL || *r->p != '[') goto bad;
    r->p++;
    skip_space(r);
    if (*r->p == ']') {
        r->p++;
        goto done;
    }
    for (;;) {
        skip_space(r);
        if (n == cap) {
            char **bigger = realloc(list, (cap *= 2) * sizeof *list);
            if (bigger == NULL) goto bad;
            list = bigger;
        }
        if (read_string(r, &list[n]) != 0) goto bad;
        n++;
        skip_space(r);
        if (*r->p == ',') r->p++;
        else if (*r->p == ']') {
            r->p++;
            goto done;
        } else goto bad;
    }
done:
    *items = list;
    *count = n;
    return 0;
bad:
    while (n > 0) free(list[--n]);
    free(list);
    return -1;
}

/* Parse one line (a JSON object) into m, keeping the fields we use. */
static int parse_message(const char *line, struct message *m) {
    struct reader r = {line};
    memset(m, 0, sizeof *m);
    skip_space(&r);
    if (*r.p != '{') return -1;
    r.p++;
    skip_space(&r);
    if (*r.p == '}') return 0;
    for (;;) {
        char *key;
        int ok;
        skip_space(&r);
        if (read_string(&r, &key) != 0) goto bad;
        skip_space(&r);
        if (*r.p++ != ':') {
            free(key);
            goto bad;
        }
        skip_space(&r);
        if (strcmp(key, "type") == 0 && m->type == NULL) ok = read_string(&r, &m->type);
        else if (strcmp(key, "color") == 0 && m->color == NULL) ok = read_string(&r, &m->color);
        else if (strcmp(key, "actions") == 0 && m->actions == NULL)
            ok = read_string_array(&r, &m->actions, &m->n_actions);
        else if (strcmp(key, "seed") == 0) {
            char *end;
            m->seed = strtoll(r.p, &end, 10);
            ok = end > r.p ? 0 : -1;
            r.p = end;
        } else ok = skip_value(&r);
        free(key);
        if (ok != 0) goto bad;
        skip_space(&r);
        if (*r.p == ',') r.p++;
        else if (*r.p == '}') return 0;
        else goto bad;
    }
bad:
    free_message(m);
    return -1;
}

/* ---------------------------------------------------------------- the bot */

/* A small seeded random generator (xorshift64*): the same seed gives the same game. */
static uint64_t rng_state;

static void seed_random(uint64_t seed) {
    /* xorshift needs a state that is not zero, and works best with many bits set. */
    rng_state = seed ^ 0x9E3779B97F4A7C15ULL;
    if (rng_state == 0) rng_state = 1;
}

static uint64_t next_random(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* The strategy: pick one of the legal action tokens. Make this smarter! The request also
 * carries "history", "position" and "clock" (see docs/protocol.md): read them in
 * parse_message when you need them. */
static const char *choose(char **actions, size_t n) {
    return actions[next_random() % n];
}

int main(void) {
    char *line = NULL;
    size_t size = 0;
    struct message m;

    seed_random(1);

    /* One message per line, until the referee closes our input (getline returns -1). */
    while (getline(&line, &size, stdin) != -1) {
        if (parse_message(line, &m) != 0 || m.type == NULL) {
            fprintf(stderr, NAME ": cannot read this line: %s", line);
            return 1;
        }
        if (strcmp(m.type, "hello") == 0) {
            int black = m.color != NULL && strcmp(m.color, "black") == 0;
            /* Mix our colour into the game's seed, so that the two sides play differently. */
            seed_random((uint64_t)m.seed * 2 + (uint64_t)black);
            fprintf(stderr, NAME ": playing %s\n", m.color ? m.color : "?");
            printf("{\"type\":\"ready\",\"name\":\"" NAME "\",\"version\":\"" VERSION "\"}\n");
        } else if (strcmp(m.type, "request") == 0) {
            if (m.n_actions == 0) {
                fprintf(stderr, NAME ": a request without actions\n");
                return 1;
            }
            /* Action tokens are letters, digits and '-': they need no escaping in JSON. */
            printf("{\"type\":\"action\",\"action\":\"%s\"}\n", choose(m.actions, m.n_actions));
        } else if (strcmp(m.type, "end") == 0) {
            fprintf(stderr, NAME ": game over\n");
            free_message(&m);
            break;
        }
        /* Any other type is from a later protocol version: ignore it. */
        fflush(stdout); /* the referee is waiting for the line: send it now */
        free_message(&m);
    }
    free(line);
    return 0;
}
