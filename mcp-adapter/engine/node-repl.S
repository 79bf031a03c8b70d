/* node-repl.js, built into msp-mcp (live-node.c writes it into a live session's sandbox),
 * found through the include path (mcp-adapter/), which gcc also passes to the assembler.
 * NUL-terminated. */
#include "node-repl-stamp.h"

        .section .rodata
        .global mcp_node_repl_js
        .type mcp_node_repl_js, @object
mcp_node_repl_js:
        .incbin "engine/node-repl.js"
        .byte 0
        .size mcp_node_repl_js, . - mcp_node_repl_js

        .section .note.GNU-stack, "", @progbits
