/**
 * `@panehost/client`: a client for the panehost host, for Node.js 20.19 or
 * 22.12 and later. It speaks the protocol's JSON encoding over the host's
 * Unix socket, on one connection per client.
 *
 * Start with {@link connect}; follow a pane with {@link Client.events}.
 *
 * @packageDocumentation
 */

export {
  connect,
  Client,
  defaultSocketPath,
  CLIENT_VERSION,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_ASK_TIMEOUT_MS,
  PROBE_RUN_LIMIT_MS,
  INPUT_CHUNK_BYTES,
  DEFAULT_MAX_SUBSCRIPTIONS,
} from "./client.js";
export type { ConnectOptions, ResolvedOptions } from "./client.js";
export { DEFAULT_RECONNECT_POLICY } from "./shared.js";
export type { ConnectionState, ReconnectPolicy } from "./shared.js";
export { PaneStream, DEFAULT_MAX_BUFFERED_EVENTS } from "./stream.js";
export type { EventsOptions, StreamItem } from "./stream.js";
export { FollowCursor } from "./cursor.js";
export type { CursorRequest } from "./cursor.js";
export { checkSocket, PROTOCOL_REVISION, PROTOCOL_VERSION } from "./connection.js";
export { FrameDecoder, encodeFrame, MAX_HOST_FRAME, MAX_CLIENT_FRAME, MAX_HELLO_FRAME } from "./frame.js";
export {
  PanehostError,
  ConnectionLostError,
  RequestTimeoutError,
  AbortError,
  FrameError,
  UntrustedHostError,
  isConnectionLost,
} from "./errors.js";
export type * from "./types.js";
