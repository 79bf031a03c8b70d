/* The SSE streams of the HTTP sessions, resumable with Last-Event-ID. Owner: http-stream.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "http/http-types.h"
#include "rpc/rpc.h"

/* x, a POST of s whose request sends notifications, becomes that request's stream. */
int mcp_http_stream_start(http_exchange *x, http_session *s);
/* The stream of request (not answered yet); the newest such; the GET stream. */
http_stream *mcp_http_stream_find(http_session *s, const mcp_rpc_id *request);
http_stream *mcp_http_stream_newest_call(http_session *s);
http_stream *mcp_http_stream_get(http_session *s);
/* One message as an event; response: the stream's last. -ENOBUFS: a droppable one dropped. */
int mcp_http_stream_push(http_stream *st, const char *json, size_t len, bool response,
                         bool droppable);
/* notifications/cancelled for request: its stream ends without a response. */
void mcp_http_stream_cancelled(http_session *s, const mcp_rpc_id *request);
/* A GET on the endpoint: x becomes s's GET stream, or resumes the stream of
 * last_event_id (may be NULL). 0, or the HTTP status to answer with *why. */
unsigned mcp_http_stream_open_get(http_exchange *x, http_session *s, const char *last_event_id,
                                  const char **why);
/* The content reader of an SSE response (x as cls). */
ssize_t mcp_http_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
/* x's connection is done: its stream waits for a resume (or goes when fully sent). */
void mcp_http_stream_detach(http_exchange *x);
/* A stream has a connection or a call without its response: the session is in use. */
bool mcp_http_streams_busy(const http_session *s);
/* The session ends: its streams go, their connections end. */
void mcp_http_streams_end(http_session *s);
/* Draining: the GET streams end (they never finish by themselves). */
void mcp_http_streams_drain(mcp_http *h);
/* The keepalive and expiry timer (stream_timer). */
void mcp_http_streams_start(mcp_http *h);
