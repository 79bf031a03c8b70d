/* observe/: the server log, the audit log and metrics.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "observe/audit.h"
#include "observe/log.h"
#include "observe/metrics.h"
