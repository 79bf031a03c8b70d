/* Which detected languages the server lists: a language whose program fails in the sandbox
 * (langprobe.h) is left out. Running the programs takes seconds (a compiler, R), so each
 * verdict is kept in a cache file under a key naming everything the result depends on: the
 * interpreter's path and identity (device, inode, size, mtime), msp-mcp's, the runtime's
 * and the sandbox init's, the seccomp and Landlock profiles' and the effective uid. A start
 * whose keys are all in the cache runs no program; a new key (an install, an upgrade, a
 * rebuild, another policy) runs the programs of the languages it names once, in a child
 * process (its engine is its own: namespaces entered for it do not touch the server), and
 * writes their verdicts. Only a conclusive verdict is kept: a program that ran and printed
 * "ok" works; one that ran and failed does not. A timeout or a sandbox that failed to start
 * says nothing about the language: it stays listed and is probed again at the next start.
 * Owner: langcache.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"

typedef struct mcp_lang_verdicts {
        size_t n_broken;
        const char *broken[MCP_LANG_MAX];       /* language names (static strings) */
        char why[MCP_LANG_MAX][320];
        size_t n_probed;                        /* programs run at this start */
        char note[320];                         /* why the cache could not be read or written */
} mcp_lang_verdicts;

/* The cache file: as root /var/cache/msp-mcp/languages; run by a user
 * $XDG_CACHE_HOME/msp-mcp/languages (default ~/.cache). Empty when neither is known. */
void mcp_langcache_path(char *buf, size_t size);

/* The verdicts of the languages detected in host, from cache_path or probed now (and
 * cached). */
int mcp_langcache_verdicts(const mcp_config *cfg, const mcp_host *host, const char *cache_path,
                           mcp_lang_verdicts *ret, msp_err *err);
