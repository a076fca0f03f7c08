"""The protocol layer: MCP as data and rules, with no I/O, threads or clocks (it imports only `errors`).

- `jsonrpc`: JSON-RPC messages: build, encode, decode, classify, and which ids a message asks or answers.
- `methods`: the method names and logging levels, as string constants.
- `types`: the wire shapes as `TypedDict`s, for type checkers (loaded only where annotations need it).
- `versions`: the revision table: one row per revision, its era, and negotiation per era.
- `capabilities`: which request needs which declared capability.
- `lifecycle`: the handshake as a state machine per role, one transition table per era.
- `http_rules`: MCP over HTTP per revision: header names, media types, and each message's route.
- `mcp_headers`: 2026-07-28's mirrored headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`): codec and checks.
- `sse`: the Server-Sent Events codec.
- `http11`: the HTTP/1.1 request grammar (RFC 9112) the standard-library server parses requests with.
- `envelope`: 2026-07-28's per-request `_meta` envelope: its keys, the era of a body, the inbound ladder, and
  the error code -> HTTP status table.
- `request_state`: 2026-07-28's `requestState`: the server's round state sealed and opened with HMAC, question
  digests.
- `input_rounds`: 2026-07-28's input rounds on the server: the bookkeeping of one execution of a handler that
  asks the client (`Round`), and the questions it asks (`Elicit`, `Sample`, ...).

This ``__init__`` imports nothing, so that loading one of them loads no other.
"""
