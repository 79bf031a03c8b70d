/* Container statistics as `events` prints them, and the pid list of `ps --format json`.
 * The JSON has the shape of runc's events ("type", "id", "data"), so tools written for
 * runc's output read it unchanged. The runtime fills oci_stats from the cgroup files;
 * only this module writes the JSON. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/err.h"

/* Bytes. limit is UINT64_MAX when unlimited (v2 "max"); v1 reports its own huge value. */
typedef struct oci_stats_memory_entry {
        uint64_t limit;
        uint64_t usage;
        uint64_t max;                   /* peak usage; 0 when the kernel does not track it */
        uint64_t failcnt;               /* times the limit was hit */
} oci_stats_memory_entry;

typedef struct oci_stats {
        const char *id;
        struct {
                struct {
                        uint64_t total;         /* nanoseconds */
                        uint64_t kernel;
                        uint64_t user;
                } usage;
                struct {
                        uint64_t periods;
                        uint64_t throttled_periods;
                        uint64_t throttled_time;        /* nanoseconds */
                } throttling;
        } cpu;
        struct {
                uint64_t cache;                 /* page cache bytes (v1 "cache", v2 "file") */
                oci_stats_memory_entry usage;
                bool has_swap;                  /* swap accounting available */
                oci_stats_memory_entry swap;
        } memory;
        struct {
                uint64_t current;
                uint64_t limit;                 /* 0: unlimited */
        } pids;
} oci_stats;

/* {"type":"stats","id":ID,"data":{"cpu":...,"memory":...,"pids":...}}: one line, no
 * trailing newline. *ret is malloc'd. */
int oci_stats_to_json(const oci_stats *s, char **ret, size_t *len, msp_err *err);
/* A data-less event, e.g. {"type":"oom","id":ID}. */
int oci_event_to_json(const char *type, const char *id, char **ret, size_t *len, msp_err *err);
/* [1,2,3]: `ps --format json`. */
int oci_pid_list_to_json(const pid_t *pids, size_t n, char **ret, size_t *len, msp_err *err);
