#include "oci/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Chunks are linked newest first; a request larger than a quarter of the default chunk
 * gets a chunk of its own so that big arrays do not waste the tail of the current one. */
#define ARENA_CHUNK_SIZE (16u * 1024)
#define ARENA_ALIGN alignof(max_align_t)

typedef struct arena_chunk {
        struct arena_chunk *next;
        size_t size;                    /* usable bytes in data */
        size_t used;
        alignas(max_align_t) unsigned char data[];
} arena_chunk;

struct oci_arena {
        arena_chunk *head;
        size_t total;
};

oci_arena *
oci_arena_new(void)
{
        return calloc(1, sizeof(oci_arena));
}

oci_arena *
oci_arena_free(oci_arena *a)
{
        if (!a)
                return NULL;
        arena_chunk *c = a->head;
        while (c) {
                arena_chunk *next = c->next;
                free(c);
                c = next;
        }
        free(a);
        return NULL;
}

static arena_chunk *
chunk_new(size_t size)
{
        if (size > SIZE_MAX - sizeof(arena_chunk))
                return NULL;
        arena_chunk *c = malloc(sizeof(arena_chunk) + size);
        if (!c)
                return NULL;
        c->next = NULL;
        c->size = size;
        c->used = 0;
        return c;
}

static size_t
align_up(size_t n)
{
        return (n + ARENA_ALIGN - 1) & ~(size_t) (ARENA_ALIGN - 1);
}

void *
oci_arena_alloc(oci_arena *a, size_t size)
{
        if (!a || size > SIZE_MAX / 2)
                return NULL;
        size = align_up(size ? size : 1);

        arena_chunk *c = a->head;
        if (!c || c->size - c->used < size) {
                if (size > ARENA_CHUNK_SIZE / 4) {
                        /* Dedicated chunk, linked behind the current one so the
                         * current chunk's free tail stays usable. */
                        arena_chunk *big = chunk_new(size);
                        if (!big)
                                return NULL;
                        big->used = size;
                        if (c) {
                                big->next = c->next;
                                c->next = big;
                        } else {
                                a->head = big;
                        }
                        a->total += size;
                        memset(big->data, 0, size);
                        return big->data;
                }
                c = chunk_new(ARENA_CHUNK_SIZE);
                if (!c)
                        return NULL;
                c->next = a->head;
                a->head = c;
        }
        void *p = c->data + c->used;
        c->used += size;
        a->total += size;
        memset(p, 0, size);
        return p;
}

void *
oci_arena_calloc(oci_arena *a, size_t n, size_t size)
{
        if (size && n > SIZE_MAX / size)
                return NULL;
        return oci_arena_alloc(a, n * size);
}

char *
oci_arena_strndup(oci_arena *a, const char *s, size_t n)
{
        if (n == SIZE_MAX)
                return NULL;
        char *p = oci_arena_alloc(a, n + 1);
        if (!p)
                return NULL;
        memcpy(p, s, n);
        p[n] = '\0';
        return p;
}

char *
oci_arena_strdup(oci_arena *a, const char *s)
{
        return oci_arena_strndup(a, s, strlen(s));
}

size_t
oci_arena_used(const oci_arena *a)
{
        return a ? a->total : 0;
}
