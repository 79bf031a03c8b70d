/* libFuzzer target for the oci/ parsers: the same bytes go to the config, process,
 * resources and state parsers. Beyond the sanitizers, it checks that a failure always
 * comes with an errno and a one-line, valid UTF-8 message, and that a parsed state survives a
 * write/parse round trip. Built only with clang (see tests/meson.build); run it with
 * tests/fuzz/run-fuzz.sh. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci/spec.h"
#include "oci/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Messages end up in JSON (logs, MCP replies): they must be valid UTF-8. */
static bool
valid_utf8(const unsigned char *s)
{
        while (*s) {
                size_t n = *s < 0x80 ? 1 : *s >= 0xc2 && *s <= 0xdf ? 2
                         : *s >= 0xe0 && *s <= 0xef ? 3 : *s >= 0xf0 && *s <= 0xf4 ? 4 : 0;
                if (n == 0)
                        return false;
                for (size_t i = 1; i < n; i++)
                        if ((s[i] & 0xc0) != 0x80)
                                return false;
                s += n;
        }
        return true;
}

static void
check_failure(int r, const msp_err *err)
{
        if (r >= 0)
                return;
        if (err->errnum != -r || err->msg[0] == '\0' || strchr(err->msg, '\n') ||
            !valid_utf8((const unsigned char *) err->msg))
                abort();
}

/* Touch the strings of a parsed spec so that a bad pointer shows up under ASan. */
static size_t
touch_spec(const oci_spec *s)
{
        size_t n = 0;
        if (s->process) {
                for (size_t i = 0; i < s->process->args.n; i++)
                        n += strlen(s->process->args.v[i]);
                for (size_t i = 0; i < s->process->env.n; i++)
                        n += strlen(s->process->env.v[i]);
                if (s->process->args.n && s->process->args.v[s->process->args.n])
                        abort();        /* strv must be NULL-terminated */
        }
        for (size_t i = 0; i < s->n_mounts; i++)
                n += strlen(s->mounts[i].destination);
        for (size_t i = 0; i < s->annotations.n; i++)
                n += strlen(s->annotations.v[i].key) + strlen(s->annotations.v[i].value);
        if (s->linux_ && s->linux_->seccomp)
                for (size_t i = 0; i < s->linux_->seccomp->n_syscalls; i++)
                        n += s->linux_->seccomp->syscalls[i].names.n;
        return n;
}

static void
state_round_trip(const oci_state *st)
{
        msp_err err = { 0 };
        char *json = NULL;
        size_t len = 0;
        int r = oci_state_to_json(st, OCI_STATE_JSON_PRIVATE, &json, &len, &err);
        check_failure(r, &err);
        if (r < 0)
                return;         /* e.g. invalid UTF-8 cannot come from a parse, but be lenient */
        oci_state *back = NULL;
        r = oci_state_parse_data("roundtrip", json, len, &back, &err);
        if (r < 0 || strcmp(back->id, st->id) != 0 || back->pid != st->pid ||
            back->pid_start_time != st->pid_start_time)
                abort();
        oci_state_free(back);
        free(json);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text = (const char *) data;
        msp_err err = { 0 };
        oci_spec *spec = NULL;

        int r = oci_spec_parse_data("config.json", text, size, &spec, &err);
        check_failure(r, &err);
        if (r >= 0 && touch_spec(spec) == SIZE_MAX)
                abort();
        spec = oci_spec_free(spec);

        r = oci_process_parse_data("process.json", text, size, &spec, &err);
        check_failure(r, &err);
        spec = oci_spec_free(spec);

        r = oci_resources_parse_data("resources.json", text, size, &spec, &err);
        check_failure(r, &err);
        spec = oci_spec_free(spec);

        oci_state *st = NULL;
        r = oci_state_parse_data("state.json", text, size, &st, &err);
        check_failure(r, &err);
        if (r >= 0)
                state_round_trip(st);
        oci_state_free(st);
        return 0;
}
