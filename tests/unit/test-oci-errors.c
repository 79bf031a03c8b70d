/* Malformed inputs and their exact error messages, plus the input limits.
 * Each row: which parser, the JSON text, the expected errno and message (strcmp). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oci/logline.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "tests/lib/tap.h"

enum kind { SPEC, PROCESS, RESOURCES, STATE };

typedef struct row {
        enum kind kind;
        const char *json;
        int errnum;
        const char *expected;
} row;

#define BASE "\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"rootfs\"}"
#define SPEC_WITH(x) "{" BASE "," x "}"
#define PROC_WITH(x) "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]," x "}}"
#define LINUX_WITH(x) "{" BASE ",\"linux\":{" x "}}"
#define LL_WITH(x) PROC_WITH("\"landlock\":{" x "}")
#define SC_WITH(x) LINUX_WITH("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"," x "}")

static const row rows[] = {
        /* syntax */
        { SPEC, "", EINVAL, "config.json: invalid JSON: parse error: premature EOF" },
        { SPEC, "{\"ociVersion\":", EINVAL, "config.json: invalid JSON: parse error: premature EOF" },
        { SPEC, "{\"a\":1}}", EINVAL, "config.json: invalid JSON: parse error: trailing garbage" },
        { SPEC, "{\"a\":tru}", EINVAL, "config.json: invalid JSON: lexical error: invalid string in json text" },
        { SPEC, "{\"a\":01}", EINVAL, "config.json: invalid JSON: parse error: after key and value, inside map, I expect ',' or '}'" },
        { SPEC, "{\"a\":\"\xff\"}", EINVAL, "config.json: invalid JSON: lexical error: invalid bytes in UTF8 string" },
        { SPEC, "{\"a\":1} /* x */", EINVAL, "config.json: invalid JSON: comments are not allowed (at offset 8)" },
        { SPEC, "{\"a\":\"b\\u0000c\"}", EINVAL, "config.json: a: string \"b\" contains a NUL byte" },
        { SPEC, "{\"ociVersion\":\"1.0.0\",\"ociVersion\":\"1.0.0\"}", EINVAL, "config.json: (top level): duplicate key \"ociVersion\"" },
        { SPEC, "[]", EINVAL, "config.json: expected an object, got an array" },
        { SPEC, "\"config\"", EINVAL, "config.json: expected an object, got \"config\"" },
        /* top level */
        { SPEC, "{}", EINVAL, "config.json: ociVersion: required property missing" },
        { SPEC, "{\"ociVersion\":1}", EINVAL, "config.json: ociVersion: expected a string, got 1" },
        { SPEC, "{\"ociVersion\":\"2.0.0\"}", EINVAL, "config.json: ociVersion: unsupported version \"2.0.0\" (msp supports 1.0.0 to 1.3.x)" },
        { SPEC, "{\"ociVersion\":\"1.4.0\"}", EINVAL, "config.json: ociVersion: unsupported version \"1.4.0\" (msp supports 1.0.0 to 1.3.x)" },
        { SPEC, "{\"ociVersion\":\"1.0\"}", EINVAL, "config.json: ociVersion: invalid version \"1.0\", expected MAJOR.MINOR.PATCH" },
        { SPEC, "{\"ociVersion\":\"1.0.0\"}", EINVAL, "config.json: root: required property missing" },
        { SPEC, "{\"ociVersion\":\"1.0.0\",\"root\":{}}", EINVAL, "config.json: root.path: required property missing" },
        { SPEC, "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"\"}}", EINVAL, "config.json: root.path: must not be empty" },
        { SPEC, "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\",\"readonly\":\"yes\"}}", EINVAL, "config.json: root.readonly: expected a boolean, got \"yes\"" },
        { SPEC, SPEC_WITH("\"mounts\":{}"), EINVAL, "config.json: mounts: expected an array, got an object" },
        { SPEC, SPEC_WITH("\"mounts\":[{\"type\":\"tmpfs\"}]"), EINVAL, "config.json: mounts[0].destination: required property missing" },
        { SPEC, SPEC_WITH("\"mounts\":[{\"destination\":\"/x\",\"options\":[\"ro\",7]}]"), EINVAL, "config.json: mounts[0].options[1]: expected a string, got 7" },
        { SPEC, SPEC_WITH("\"mounts\":[{\"destination\":\"/x\",\"uidMappings\":[{\"containerID\":0,\"hostID\":1}]}]"), EINVAL, "config.json: mounts[0].uidMappings[0].size: required property missing" },
        { SPEC, SPEC_WITH("\"hooks\":{\"prestart\":[{\"path\":\"hook\"}]}"), EINVAL, "config.json: hooks.prestart[0].path: expected an absolute path, got \"hook\"" },
        { SPEC, SPEC_WITH("\"hooks\":{\"poststop\":[{\"path\":\"/h\",\"timeout\":0}]}"), EINVAL, "config.json: hooks.poststop[0].timeout: expected a positive integer, got 0" },
        { SPEC, SPEC_WITH("\"hooks\":{\"createRuntime\":[{}]}"), EINVAL, "config.json: hooks.createRuntime[0].path: required property missing" },
        { SPEC, SPEC_WITH("\"annotations\":{\"io.x\":1}"), EINVAL, "config.json: annotations[\"io.x\"]: expected a string, got 1" },
        /* process */
        { SPEC, SPEC_WITH("\"process\":{\"cwd\":\"/\"}"), EINVAL, "config.json: process.args: required property missing" },
        { SPEC, SPEC_WITH("\"process\":{\"cwd\":\"/\",\"args\":[]}"), EINVAL, "config.json: process.args: must not be empty" },
        { SPEC, SPEC_WITH("\"process\":{\"cwd\":\"/\",\"args\":[\"a\",\"b\",5]}"), EINVAL, "config.json: process.args[2]: expected a string, got 5" },
        { SPEC, SPEC_WITH("\"process\":{\"args\":[\"sh\"]}"), EINVAL, "config.json: process.cwd: required property missing" },
        { SPEC, SPEC_WITH("\"process\":{\"args\":[\"sh\"],\"cwd\":\"tmp\"}"), EINVAL, "config.json: process.cwd: expected an absolute path, got \"tmp\"" },
        { SPEC, PROC_WITH("\"env\":[\"A=1\",\"NOEQUALS\"]"), EINVAL, "config.json: process.env[1]: expected \"NAME=value\", got \"NOEQUALS\"" },
        { SPEC, PROC_WITH("\"env\":[\"=x\"]"), EINVAL, "config.json: process.env[0]: expected \"NAME=value\", got \"=x\"" },
        { SPEC, PROC_WITH("\"terminal\":1"), EINVAL, "config.json: process.terminal: expected a boolean, got 1" },
        { SPEC, PROC_WITH("\"user\":{\"uid\":0}"), EINVAL, "config.json: process.user.gid: required property missing" },
        { SPEC, PROC_WITH("\"user\":{\"uid\":-1,\"gid\":0}"), EINVAL, "config.json: process.user.uid: expected a non-negative integer, got -1" },
        { SPEC, PROC_WITH("\"user\":{\"uid\":4294967296,\"gid\":0}"), EINVAL, "config.json: process.user.uid: expected an integer from 0 to 4294967295, got 4294967296" },
        { SPEC, PROC_WITH("\"user\":{\"uid\":1.5,\"gid\":0}"), EINVAL, "config.json: process.user.uid: expected an integer, got 1.5" },
        { SPEC, PROC_WITH("\"user\":{\"uid\":1e3,\"gid\":0}"), EINVAL, "config.json: process.user.uid: expected an integer, got 1e3" },
        { SPEC, PROC_WITH("\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":[1,\"2\"]}"), EINVAL, "config.json: process.user.additionalGids[1]: expected an integer, got \"2\"" },
        { SPEC, PROC_WITH("\"consoleSize\":{\"height\":10}"), EINVAL, "config.json: process.consoleSize.width: required property missing" },
        { SPEC, PROC_WITH("\"capabilities\":{\"bounding\":[\"CAP_FOO\"]}"), EINVAL, "config.json: process.capabilities.bounding[0]: unknown capability \"CAP_FOO\"" },
        { SPEC, PROC_WITH("\"capabilities\":{\"ambient\":\"CAP_KILL\"}"), EINVAL, "config.json: process.capabilities.ambient: expected an array, got \"CAP_KILL\"" },
        { SPEC, PROC_WITH("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":10,\"soft\":10},{\"type\":\"RLIMIT_NOFILE\",\"hard\":1,\"soft\":1}]"), EINVAL, "config.json: process.rlimits[1].type: duplicate rlimit \"RLIMIT_NOFILE\"" },
        { SPEC, PROC_WITH("\"rlimits\":[{\"type\":\"RLIMIT_BOGUS\",\"hard\":1,\"soft\":1}]"), EINVAL, "config.json: process.rlimits[0].type: unknown rlimit \"RLIMIT_BOGUS\"" },
        { SPEC, PROC_WITH("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":1}]"), EINVAL, "config.json: process.rlimits[0].soft: required property missing" },
        { SPEC, PROC_WITH("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":1,\"soft\":2}]"), EINVAL, "config.json: process.rlimits[0].soft: soft limit 2 exceeds hard limit 1" },
        { SPEC, PROC_WITH("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":18446744073709551616,\"soft\":1}]"), EINVAL, "config.json: process.rlimits[0].hard: expected an integer from 0 to 18446744073709551615, got 18446744073709551616" },
        { SPEC, PROC_WITH("\"oomScoreAdj\":1001"), EINVAL, "config.json: process.oomScoreAdj: expected an integer from -1000 to 1000, got 1001" },
        { SPEC, PROC_WITH("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_NONE\"}"), EINVAL, "config.json: process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_NONE\"" },
        { SPEC, PROC_WITH("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_BE\",\"priority\":8}"), EINVAL, "config.json: process.ioPriority.priority: expected an integer from 0 to 7, got 8" },
        { SPEC, PROC_WITH("\"scheduler\":{\"nice\":1}"), EINVAL, "config.json: process.scheduler.policy: required property missing" },
        { SPEC, PROC_WITH("\"scheduler\":{\"policy\":\"SCHED_FAST\"}"), EINVAL, "config.json: process.scheduler.policy: unknown scheduler policy \"SCHED_FAST\"" },
        { SPEC, PROC_WITH("\"scheduler\":{\"policy\":\"SCHED_RR\",\"flags\":[\"SCHED_FLAG_X\"]}"), EINVAL, "config.json: process.scheduler.flags[0]: unknown scheduler flag \"SCHED_FLAG_X\"" },
        /* landlock */
        { SPEC, LL_WITH("\"enableBestEffort\":true"), EINVAL, "config.json: process.landlock: nothing to restrict: handledAccess and scoped are empty or absent" },
        { SPEC, LL_WITH("\"handledAccess\":{\"handledAccessFS\":[\"read_files\"]}"), EINVAL, "config.json: process.landlock.handledAccess.handledAccessFS[0]: unknown filesystem access right \"read_files\"" },
        { SPEC, LL_WITH("\"handledAccess\":{\"handledAccessFS\":[\"read_file\"]},\"rules\":{\"pathBeneath\":[{\"allowedAccess\":[\"read_file\",\"make_dir\"],\"paths\":[\"/\"]}]}"), EINVAL, "config.json: process.landlock.rules.pathBeneath[0].allowedAccess[1]: \"make_dir\" is not in handledAccess.handledAccessFS" },
        { SPEC, LL_WITH("\"handledAccess\":{\"handledAccessFS\":[\"read_file\"]},\"rules\":{\"pathBeneath\":[{\"allowedAccess\":[],\"paths\":[\"/\"]}]}"), EINVAL, "config.json: process.landlock.rules.pathBeneath[0].allowedAccess: must not be empty" },
        { SPEC, LL_WITH("\"handledAccess\":{\"handledAccessFS\":[\"read_file\"]},\"rules\":{\"pathBeneath\":[{\"allowedAccess\":[\"read_file\"]}]}"), EINVAL, "config.json: process.landlock.rules.pathBeneath[0].paths: required property missing" },
        { SPEC, LL_WITH("\"handledAccess\":{\"handledAccessNetwork\":[\"bind\"]},\"rules\":{\"networkPort\":[{\"allowedAccess\":[\"connect\"],\"ports\":[80]}]}"), EINVAL, "config.json: process.landlock.rules.networkPort[0].allowedAccess[0]: \"connect\" is not in handledAccess.handledAccessNetwork" },
        { SPEC, LL_WITH("\"handledAccess\":{\"handledAccessNetwork\":[\"bind\"]},\"rules\":{\"networkPort\":[{\"allowedAccess\":[\"bind\"],\"ports\":[\"80\",\"http\"]}]}"), EINVAL, "config.json: process.landlock.rules.networkPort[0].ports[1]: expected a port number from 0 to 65535, got \"http\"" },
        { SPEC, LL_WITH("\"handledAccess\":{\"handledAccessNetwork\":[\"bind\"]},\"rules\":{\"networkPort\":[{\"allowedAccess\":[\"bind\"],\"ports\":[65536]}]}"), EINVAL, "config.json: process.landlock.rules.networkPort[0].ports[0]: expected an integer from 0 to 65535, got 65536" },
        { SPEC, LL_WITH("\"scoped\":[\"ptrace\"]"), EINVAL, "config.json: process.landlock.scoped[0]: unknown scope \"ptrace\"" },
        { SPEC, LL_WITH("\"scoped\":[\"signal\"],\"logging\":{\"newExecOn\":\"yes\"}"), EINVAL, "config.json: process.landlock.logging.newExecOn: expected a boolean, got \"yes\"" },
        /* linux */
        { SPEC, LINUX_WITH("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pidd\"}]"), EINVAL, "config.json: linux.namespaces[1].type: unknown namespace type \"pidd\"" },
        { SPEC, LINUX_WITH("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"uts\"},{\"type\":\"pid\"}]"), EINVAL, "config.json: linux.namespaces[2].type: duplicate namespace type \"pid\"" },
        { SPEC, LINUX_WITH("\"namespaces\":[{\"path\":\"/proc/1/ns/pid\"}]"), EINVAL, "config.json: linux.namespaces[0].type: required property missing" },
        { SPEC, LINUX_WITH("\"namespaces\":[\"pid\"]"), EINVAL, "config.json: linux.namespaces[0]: expected an object, got \"pid\"" },
        { SPEC, LINUX_WITH("\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":-1}]"), EINVAL, "config.json: linux.uidMappings[0].size: expected a non-negative integer, got -1" },
        { SPEC, LINUX_WITH("\"devices\":[{\"type\":\"x\",\"path\":\"/dev/x\"}]"), EINVAL, "config.json: linux.devices[0].type: unknown device type \"x\"" },
        { SPEC, LINUX_WITH("\"devices\":[{\"type\":\"c\",\"path\":\"/dev/x\",\"major\":1}]"), EINVAL, "config.json: linux.devices[0].minor: required property missing" },
        { SPEC, LINUX_WITH("\"devices\":[{\"type\":\"c\",\"path\":\"dev/x\",\"major\":1,\"minor\":1}]"), EINVAL, "config.json: linux.devices[0].path: expected an absolute path, got \"dev/x\"" },
        { SPEC, LINUX_WITH("\"rootfsPropagation\":\"rshare\""), EINVAL, "config.json: linux.rootfsPropagation: unknown propagation \"rshare\"" },
        { SPEC, LINUX_WITH("\"sysctl\":{\"net.ipv4.ip_forward\":1}"), EINVAL, "config.json: linux.sysctl[\"net.ipv4.ip_forward\"]: expected a string, got 1" },
        { SPEC, LINUX_WITH("\"resources\":{\"memory\":{\"limit\":\"64m\"}}"), EINVAL, "config.json: linux.resources.memory.limit: expected an integer, got \"64m\"" },
        { SPEC, LINUX_WITH("\"resources\":{\"memory\":{\"limit\":9223372036854775808}}"), EINVAL, "config.json: linux.resources.memory.limit: expected an integer from -9223372036854775808 to 9223372036854775807, got 9223372036854775808" },
        { SPEC, LINUX_WITH("\"resources\":{\"devices\":[{\"allow\":true,\"access\":\"rwx\"}]}"), EINVAL, "config.json: linux.resources.devices[0].access: expected a combination of \"r\", \"w\" and \"m\", got \"rwx\"" },
        { SPEC, LINUX_WITH("\"resources\":{\"devices\":[{\"access\":\"r\"}]}"), EINVAL, "config.json: linux.resources.devices[0].allow: required property missing" },
        { SPEC, LINUX_WITH("\"resources\":{\"blockIO\":{\"weight\":65536}}"), EINVAL, "config.json: linux.resources.blockIO.weight: expected an integer from 0 to 65535, got 65536" },
        { SPEC, LINUX_WITH("\"resources\":{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0}]}}"), EINVAL, "config.json: linux.resources.blockIO.throttleReadBpsDevice[0].rate: required property missing" },
        { SPEC, LINUX_WITH("\"resources\":{\"hugepageLimits\":[{\"limit\":1}]}"), EINVAL, "config.json: linux.resources.hugepageLimits[0].pageSize: required property missing" },
        { SPEC, LINUX_WITH("\"resources\":{\"rdma\":{\"mlx5_1\":{\"hcaHandles\":true}}}"), EINVAL, "config.json: linux.resources.rdma.mlx5_1.hcaHandles: expected an integer, got true" },
        { SPEC, SC_WITH("\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_DENY\"}]"), EINVAL, "config.json: linux.seccomp.syscalls[0].action: unknown seccomp action \"SCMP_ACT_DENY\"" },
        { SPEC, LINUX_WITH("\"seccomp\":{\"syscalls\":[]}"), EINVAL, "config.json: linux.seccomp.defaultAction: required property missing" },
        { SPEC, SC_WITH("\"syscalls\":[{\"names\":[],\"action\":\"SCMP_ACT_ALLOW\"}]"), EINVAL, "config.json: linux.seccomp.syscalls[0].names: must not be empty" },
        { SPEC, SC_WITH("\"syscalls\":[{\"names\":[\"x\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]"), EINVAL, "config.json: linux.seccomp.syscalls[0].args[0].index: expected an integer from 0 to 5, got 6" },
        { SPEC, SC_WITH("\"syscalls\":[{\"names\":[\"x\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQUAL\"}]}]"), EINVAL, "config.json: linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator \"SCMP_CMP_EQUAL\"" },
        { SPEC, SC_WITH("\"flags\":[\"SECCOMP_FILTER_FLAG_NEW_LISTENER\"]"), EINVAL, "config.json: linux.seccomp.flags[0]: unknown seccomp flag \"SECCOMP_FILTER_FLAG_NEW_LISTENER\"" },
        { SPEC, SC_WITH("\"syscalls\":[{\"names\":[\"mount\"],\"action\":\"SCMP_ACT_NOTIFY\"}]"), EINVAL, "config.json: linux.seccomp.listenerPath: required property missing" },
        { SPEC, LINUX_WITH("\"timeOffsets\":{\"realtime\":{\"secs\":1}}"), EINVAL, "config.json: linux.timeOffsets.realtime: unknown clock (expected boottime or monotonic)" },
        { SPEC, LINUX_WITH("\"timeOffsets\":{\"boottime\":{\"secs\":1,\"nanosecs\":1000000000}}"), EINVAL, "config.json: linux.timeOffsets.boottime.nanosecs: expected an integer from 0 to 999999999, got 1000000000" },
        { SPEC, LINUX_WITH("\"netDevices\":{\"eth0\":{\"name\":\"a/b\"}}"), EINVAL, "config.json: linux.netDevices.eth0.name: invalid network interface name \"a/b\"" },
        { SPEC, LINUX_WITH("\"netDevices\":{\"averyveryverylongname\":{}}"), EINVAL, "config.json: linux.netDevices.averyveryverylongname: invalid network interface name \"averyveryverylongname\"" },
        { SPEC, LINUX_WITH("\"memoryPolicy\":{\"mode\":\"MPOL_FAST\"}"), EINVAL, "config.json: linux.memoryPolicy.mode: unknown memory policy mode \"MPOL_FAST\"" },
        { SPEC, LINUX_WITH("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"flags\":[\"MPOL_F_X\"]}"), EINVAL, "config.json: linux.memoryPolicy.flags[0]: unknown memory policy flag \"MPOL_F_X\"" },
        { SPEC, LINUX_WITH("\"personality\":{\"domain\":\"LINUX64\"}"), EINVAL, "config.json: linux.personality.domain: unknown personality domain \"LINUX64\"" },
        /* quoting of long and odd values: at most 64 input bytes, never half a character */
        { SPEC, PROC_WITH("\"env\":[\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9x\u00e9\"]"), EINVAL, "config.json: process.env[0]: expected \"NAME=value\", got \"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...\"" },
        { SPEC, PROC_WITH("\"capabilities\":{\"bounding\":[\"CAP_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"]}"), EINVAL, "config.json: process.capabilities.bounding[0]: unknown capability \"CAP_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA...\"" },
        { SPEC, PROC_WITH("\"env\":[\"tab\\there\\\"q\"]"), EINVAL, "config.json: process.env[0]: expected \"NAME=value\", got \"tab\\there\\\"q\"" },
        /* the other documents */
        { PROCESS, "{\"args\":[\"sh\"],\"cwd\":\"/\",\"user\":{\"uid\":\"root\",\"gid\":0}}", EINVAL, "process.json: user.uid: expected an integer, got \"root\"" },
        { PROCESS, "{\"cwd\":\"/\"}", EINVAL, "process.json: args: required property missing" },
        { RESOURCES, "{\"pids\":{\"limit\":\"max\"}}", EINVAL, "resources.json: pids.limit: expected an integer, got \"max\"" },
        { RESOURCES, "{\"cpu\":{\"shares\":-2}}", EINVAL, "resources.json: cpu.shares: expected a non-negative integer, got -2" },
        { STATE, "{\"ociVersion\":\"1.2.0\",\"id\":\"c\",\"status\":\"zombie\",\"bundle\":\"/b\"}", EINVAL, "state.json: status: unknown status \"zombie\"" },
        { STATE, "{\"ociVersion\":\"1.2.0\",\"status\":\"running\",\"bundle\":\"/b\"}", EINVAL, "state.json: id: required property missing" },
        { STATE, "{\"ociVersion\":\"1.2.0\",\"id\":\"c\",\"status\":\"running\",\"bundle\":\"/b\",\"pid\":-5}", EINVAL, "state.json: pid: expected an integer from 0 to 2147483647, got -5" },
        { STATE, "{\"ociVersion\":\"1.2.0\",\"id\":\"c\",\"status\":\"running\",\"bundle\":\"/b\",\"msp\":{\"pidStartTime\":\"1\"}}", EINVAL, "state.json: msp.pidStartTime: expected an integer, got \"1\"" },
};

static int
run_parser(enum kind kind, const char *data, size_t len, msp_err *err)
{
        oci_spec *spec = NULL;
        oci_state *st = NULL;
        int r;
        switch (kind) {
        case PROCESS:
                r = oci_process_parse_data("process.json", data, len, &spec, err);
                break;
        case RESOURCES:
                r = oci_resources_parse_data("resources.json", data, len, &spec, err);
                break;
        case STATE:
                r = oci_state_parse_data("state.json", data, len, &st, err);
                break;
        case SPEC:
        default:
                r = oci_spec_parse_data("config.json", data, len, &spec, err);
                break;
        }
        oci_spec_free(spec);
        oci_state_free(st);
        return r;
}

/* Prints expected vs got and marks the first differing column. */
static void
diff(const char *expected, const char *got)
{
        size_t i = 0;
        while (expected[i] && expected[i] == got[i])
                i++;
        tap_diag("expected: %s\ngot:      %s\n          %*s^ first difference at column %zu",
                 expected, got, (int) i, "", i);
}

static void
check_rows(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                const row *t = &rows[i];
                msp_err err = { 0 };
                int r = run_parser(t->kind, t->json, strlen(t->json), &err);
                bool ok = r == -t->errnum && strcmp(err.msg, t->expected) == 0;
                if (!ok) {
                        tap_diag("input: %s", t->json);
                        if (r >= 0)
                                tap_diag("parser accepted the input");
                        else if (r != -t->errnum)
                                tap_diag("errno: expected %d, got %d", t->errnum, -r);
                        diff(t->expected, err.msg);
                }
                tap_check(ok, "row %zu: %.60s", i, t->expected);
        }
}

/* ---- limits ---- */

static bool
expect_error(const char *what, int r, const msp_err *err, int errnum, const char *expected)
{
        bool ok = r == -errnum && strcmp(err->msg, expected) == 0;
        if (!ok) {
                tap_diag("%s: returned %d", what, r);
                diff(expected, err->msg);
        }
        return tap_check(ok, "%s", what);
}

static char *
repeat(const char *head, const char *unit, size_t n, const char *tail)
{
        size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
        char *s = malloc(hl + ul * n + tl + 1);
        if (!s)
                abort();
        memcpy(s, head, hl);
        for (size_t i = 0; i < n; i++)
                memcpy(s + hl + i * ul, unit, ul);
        memcpy(s + hl + ul * n, tail, tl + 1);
        return s;
}

static void
check_limits(void)
{
        msp_err err = { 0 };
        char expected[256];

        /* Data over OCI_CONFIG_MAX_BYTES: refused before parsing. */
        size_t big = OCI_CONFIG_MAX_BYTES + 1;
        char *data = malloc(big);
        memset(data, ' ', big);
        int r = run_parser(SPEC, data, big, &err);
        snprintf(expected, sizeof expected, "config.json: too large (%zu bytes, limit %u)", big,
                 OCI_CONFIG_MAX_BYTES);
        expect_error("oversize data", r, &err, E2BIG, expected);

        /* The same as a file. */
        char path[] = "/tmp/test-oci-errors.XXXXXX";
        int fd = mkstemp(path);
        bool wrote = fd >= 0 && write(fd, data, big) == (ssize_t) big;
        if (fd >= 0)
                close(fd);
        free(data);
        oci_spec *spec = NULL;
        r = wrote ? oci_spec_parse_file(path, &spec, &err) : -EIO;
        unlink(path);
        snprintf(expected, sizeof expected, "%s: too large (%zu bytes, limit %u)", path, big,
                 OCI_CONFIG_MAX_BYTES);
        expect_error("oversize file", r, &err, E2BIG, expected);
        oci_spec_free(spec);

        r = oci_spec_parse_file("/nonexistent/config.json", &spec, &err);
        expect_error("missing file", r, &err, ENOENT,
                     "/nonexistent/config.json: open: No such file or directory");

        /* 65 levels of nesting: refused by the pre-scan, before yajl builds a tree. */
        char *deep = repeat("{\"a\":", "[", OCI_MAX_DEPTH, "");
        r = run_parser(SPEC, deep, strlen(deep), &err);
        expect_error("nesting 65 deep", r, &err, E2BIG,
                     "config.json: JSON nested deeper than 64 levels (at offset 68)");
        free(deep);

        /* 64 levels are fine (the error is about content, not depth). */
        char *ok64 = repeat("{\"a\":", "[", OCI_MAX_DEPTH - 1, "");
        char *ok64c = repeat(ok64, "]", OCI_MAX_DEPTH - 1, "}");
        r = run_parser(SPEC, ok64c, strlen(ok64c), &err);
        expect_error("nesting 64 deep", r, &err, EINVAL,
                     "config.json: ociVersion: required property missing");
        free(ok64);
        free(ok64c);

        /* A million levels must not overflow any stack. */
        char *huge = repeat("", "[", 1000000, "");
        r = run_parser(SPEC, huge, strlen(huge), &err);
        expect_error("nesting 1000000 deep", r, &err, E2BIG,
                     "config.json: JSON nested deeper than 64 levels (at offset 64)");
        free(huge);

        /* An array one element over OCI_MAX_ARRAY. */
        char *arr = repeat("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"process\":"
                           "{\"cwd\":\"/\",\"args\":[\"a\"", ",\"a\"", OCI_MAX_ARRAY, "]}}");
        r = run_parser(SPEC, arr, strlen(arr), &err);
        snprintf(expected, sizeof expected,
                 "config.json: process.args: array has too many elements (%u, limit %u)",
                 OCI_MAX_ARRAY + 1, OCI_MAX_ARRAY);
        expect_error("array too long", r, &err, E2BIG, expected);
        free(arr);

        /* Found by the pre-scan, so the path is built from raw keys and indices. */
        arr = repeat("{\"x\":1,\"a\":[{},{\"b\":[[0", ",0", OCI_MAX_ARRAY, "]]}]}");
        r = run_parser(SPEC, arr, strlen(arr), &err);
        snprintf(expected, sizeof expected,
                 "config.json: a[1].b[0]: array has too many elements (%u, limit %u)",
                 OCI_MAX_ARRAY + 1, OCI_MAX_ARRAY);
        expect_error("nested array too long", r, &err, E2BIG, expected);
        free(arr);

        /* The pre-scan sees raw bytes: an invalid UTF-8 key is shown escaped. */
        arr = repeat("{\"\xff\":[0", ",0", OCI_MAX_ARRAY, "]}");
        r = run_parser(SPEC, arr, strlen(arr), &err);
        snprintf(expected, sizeof expected,
                 "config.json: [\"\\xff\"]: array has too many elements (%u, limit %u)",
                 OCI_MAX_ARRAY + 1, OCI_MAX_ARRAY);
        expect_error("array under a non-UTF-8 key", r, &err, E2BIG, expected);
        free(arr);

        /* ...also when the document ends before the container does. */
        arr = repeat("[", "0,", OCI_MAX_ARRAY + 1, "");
        r = run_parser(SPEC, arr, strlen(arr), &err);
        snprintf(expected, sizeof expected,
                 "config.json: (top level): array has too many elements (%u, limit %u)",
                 OCI_MAX_ARRAY + 2, OCI_MAX_ARRAY);
        expect_error("unterminated array too long", r, &err, E2BIG, expected);
        free(arr);

        /* An object with too many members. */
        size_t n = OCI_MAX_ARRAY + 1;
        char *obj = malloc(n * 16 + 128);
        size_t o = (size_t) sprintf(obj, "{\"ociVersion\":\"1.0.0\",\"annotations\":{");
        for (size_t i = 0; i < n; i++)
                o += (size_t) sprintf(obj + o, "%s\"k%zu\":\"\"", i ? "," : "", i);
        strcpy(obj + o, "}}");
        r = run_parser(SPEC, obj, strlen(obj), &err);
        snprintf(expected, sizeof expected,
                 "config.json: annotations: object has too many members (%zu, limit %u)", n,
                 OCI_MAX_ARRAY);
        expect_error("object too big", r, &err, E2BIG, expected);
        free(obj);

        /* A string one byte over OCI_MAX_STRING. */
        char *str = repeat("{\"hostname\":\"", "x", OCI_MAX_STRING + 1, "\"}");
        r = run_parser(SPEC, str, strlen(str), &err);
        snprintf(expected, sizeof expected,
                 "config.json: hostname: string is too long (%u bytes, limit %u)",
                 OCI_MAX_STRING + 1, OCI_MAX_STRING);
        expect_error("string too long", r, &err, E2BIG, expected);
        free(str);

        /* A raw NUL byte would make yajl stop early; it is refused instead. */
        static const char nul[] = "{\"ociVersion\":\"1.0.0\"}\0garbage";
        r = run_parser(SPEC, nul, sizeof nul - 1, &err);
        expect_error("raw NUL byte", r, &err, EINVAL,
                     "config.json: invalid JSON: NUL byte at offset 22");

        /* An escaped NUL in a key. */
        static const char nulkey[] = "{\"ociVersion\":\"1.0.0\",\"annotations\":{\"a\\u0000b\":\"x\"}}";
        r = run_parser(SPEC, nulkey, sizeof nulkey - 1, &err);
        expect_error("escaped NUL in a key", r, &err, EINVAL,
                     "config.json: annotations: key \"a\" contains a NUL byte");
}

/* ---- the text rule for what msp prints (oci_text_clean) ---- */

static void
check_text_clean(void)
{
        static const struct { const char *in, *out; } cases[] = {
                { "plain /usr/bin/python3 -c 'x'", "plain /usr/bin/python3 -c 'x'" },
                { "\x1b]0;owned\x07\x1b[2J\x1b[1;1H", "?]0;owned??[2J?[1;1H" },
                { "sleep\n0        4242     1        S    /bin/fake", "sleep?0        4242     1        S    /bin/fake" },
                { "tab\there\rcr\x7f\x01", "tab?here?cr??" },
                { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3" },
                { "csi\xc2\x9b" "2J c1\xc2\x80", "csi?2J c1?" },                      /* C1 controls */
                { "raw\x9b" "2J \xff\xfe end\xe2\x82", "raw?2J ?? end??" },            /* invalid UTF-8 */
                { "over\xc0\xaf long\xed\xa0\x80", "over?? long???" },              /* overlong, surrogate */
                { "bidi\xe2\x80\xae" "evil\xe2\x81\xa6x\xe2\x80\x8f", "bidi?evil?x?" },
                { "ls\xe2\x80\xa8ps", "ls?ps" },                                      /* U+2028 */
                { "", "" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char buf[128];
                snprintf(buf, sizeof buf, "%s", cases[i].in);
                size_t n = oci_text_clean(buf);
                bool ok = strcmp(buf, cases[i].out) == 0 && n == strlen(cases[i].out);
                if (!ok)
                        diff(cases[i].out, buf);
                tap_check(ok, "text clean %zu", i);
        }
}

int
main(void)
{
        check_rows();
        check_limits();
        check_text_clean();
        return tap_done();
}
