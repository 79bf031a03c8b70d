/* A chunked bump allocator. Every string and array of a parsed oci_spec or oci_state
 * lives in one arena and is released at once with oci_arena_free(); nothing inside it
 * is freed individually. Allocations are zeroed and aligned for any type. */
#pragma once

#include <stddef.h>

typedef struct oci_arena oci_arena;

oci_arena *oci_arena_new(void);
/* NULL-safe; returns NULL. */
oci_arena *oci_arena_free(oci_arena *a);
/* Zeroed memory, or NULL on overflow/out of memory. size 0 returns a valid pointer. */
void *oci_arena_alloc(oci_arena *a, size_t size);
/* n * size with overflow check. */
void *oci_arena_calloc(oci_arena *a, size_t n, size_t size);
/* Copies; NULL on out of memory (s must not be NULL). */
char *oci_arena_strdup(oci_arena *a, const char *s);
char *oci_arena_strndup(oci_arena *a, const char *s, size_t n);
/* Bytes handed out so far (for tests and limits). */
size_t oci_arena_used(const oci_arena *a);

static inline void
oci_arena_freep(oci_arena **a)
{
        if (*a)
                oci_arena_free(*a);
}
#define _cleanup_arena_ __attribute__((cleanup(oci_arena_freep)))
