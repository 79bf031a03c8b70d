/* lib/: the kernel mechanisms of the runtime, one module each.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "lib/container.h"
#include "lib/ctx.h"
#include "lib/execproc.h"
#include "lib/fileio.h"
#include "lib/landlock.h"
#include "lib/log.h"
#include "lib/lsm.h"
#include "lib/process.h"
#include "lib/procfs.h"
#include "lib/relay.h"
#include "lib/rootless.h"
#include "lib/seccomp.h"
#include "lib/selfexe.h"
#include "lib/statedir.h"
#include "lib/ttyproxy.h"
