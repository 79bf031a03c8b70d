/* The default profiles of contrib/profiles/, built into msp-mcp so that it never depends on
 * files at run time. The paths are found through the include path (the source root's
 * mcp-adapter/ directory), which gcc also passes to the assembler. NUL-terminated. */
#include "profiles-stamp.h"

        .section .rodata
        .global mcp_profile_seccomp
        .type mcp_profile_seccomp, @object
mcp_profile_seccomp:
        .incbin "../contrib/profiles/seccomp-default.json"
        .byte 0
        .size mcp_profile_seccomp, . - mcp_profile_seccomp

        .global mcp_profile_landlock
        .type mcp_profile_landlock, @object
mcp_profile_landlock:
        .incbin "../contrib/profiles/landlock-default.json"
        .byte 0
        .size mcp_profile_landlock, . - mcp_profile_landlock

        .section .note.GNU-stack, "", @progbits
