/* Small out/ files of fresh runs, kept for resources/read after their workspace is gone
 * (sandbox://runs/<id>/files/<path>): on the state dir's filesystem, <instance>/kept/<n>,
 * within one byte budget for the whole server (--kept-files-size, at most an eighth of the
 * space free there at start) and one per tenant (--kept-files-tenant-size), and at most
 * KEPT_FILES_MAX files (KEPT_FILES_TENANT_MAX of one tenant). A new file first drops its
 * tenant's oldest until the tenant's budget holds it, then the oldest of all until the
 * server's does; each drop is reported. Only the index (URI, type, tenant, size) is in
 * memory. Owner: keptfiles.c; used by engine.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"

#define KEPT_FILES_MAX 1024u
#define KEPT_FILES_TENANT_MAX 256u

typedef struct mcp_kept_file mcp_kept_file;

typedef struct mcp_keptfiles {
        int dirfd;                      /* <instance>/kept, owned; -1: nothing is kept */
        uint64_t budget, tenant_budget; /* bytes */
        uint64_t bytes;                 /* kept now */
        mcp_kept_file *files;           /* oldest first */
        size_t n;
        uint64_t next_name;
} mcp_keptfiles;

/* Why a file went: its URI, the tenant's it was, and the budget that pushed it out. */
typedef void (*mcp_kept_dropped_fn)(const char *uri, const char *tenant, const char *why,
                                    void *data);

/* Makes <instance>/kept (instance_fd: not owned). */
int mcp_keptfiles_init(mcp_keptfiles *k, int instance_fd, uint64_t budget,
                       uint64_t tenant_budget, msp_err *err);
void mcp_keptfiles_free(mcp_keptfiles *k);
/* Keeps a copy for tenant ("" for the stdio caller), dropping older ones to make room
 * (each reported to fn). -EFBIG when len is above a budget (nothing is dropped), -ENOSPC
 * or another -errno when it could not be written (err says why). */
int mcp_keptfiles_add(mcp_keptfiles *k, const char *tenant, const char *uri, const char *mime,
                      const void *data, size_t len, mcp_kept_dropped_fn fn, void *fn_data,
                      msp_err *err);
/* The file kept at uri for tenant: its bytes (malloc'd) and type (borrowed until the next
 * add). -ENOENT when there is none (never kept, dropped, or another tenant's). */
int mcp_keptfiles_read(const mcp_keptfiles *k, const char *tenant, const char *uri,
                       unsigned char **ret, size_t *ret_len, const char **ret_mime,
                       msp_err *err);
