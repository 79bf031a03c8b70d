/* base/: mechanisms that know nothing of MCP.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "base/child-call.h"
#include "base/fd-budget.h"
#include "base/fileio.h"
#include "base/jw.h"
#include "base/loop.h"
#include "base/proc.h"
#include "base/text.h"
