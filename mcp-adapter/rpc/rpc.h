/* rpc/: JSON-RPC 2.0: lines, ids, the writer and sinks.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "rpc/jsonrpc.h"
