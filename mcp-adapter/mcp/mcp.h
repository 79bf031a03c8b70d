/* mcp/: the MCP methods: the protocol, tools, resources, owners.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "mcp/owners.h"
#include "mcp/resources.h"
#include "mcp/server.h"
#include "mcp/tools-ports.h"
#include "mcp/tools-run.h"
