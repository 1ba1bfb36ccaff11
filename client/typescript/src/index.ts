/**
 * `@panehost/client`: a client for the panehost host, for Node.js 20 and
 * later, as an ES module. It speaks the protocol's JSON encoding (protocol
 * 1, revision 3) over the host's Unix socket, on one connection per
 * client.
 *
 * Start with {@link connect}; follow a pane with {@link Client.events};
 * follow every pane with {@link Client.watch}.
 *
 * @packageDocumentation
 */

export {
  connect,
  Client,
  DEFAULT_ASK_TIMEOUT_MS,
  PROBE_RUN_LIMIT_MS,
  INPUT_CHUNK_BYTES,
  LABELS_REVISION,
  DEFAULT_WAIT_TIMEOUT_MS,
} from "./client.js";
export { defaultSocketPath, CLIENT_VERSION, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_MAX_SUBSCRIPTIONS } from "./options.js";
export type { ConnectOptions, ResolvedOptions } from "./options.js";
export { DEFAULT_RECONNECT_POLICY } from "./shared.js";
export type { ConnectionState, ReconnectPolicy } from "./shared.js";
export { PaneStream, DEFAULT_MAX_BUFFERED_EVENTS } from "./stream.js";
export type { EventsOptions, StreamItem } from "./stream.js";
export { PaneWatch, WATCH_REVISION } from "./watch.js";
export type { WatchOptions, WatchItem, WatchStartCause } from "./watch.js";
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
  HostRevisionError,
  RemoteError,
  RemoteTargetError,
  isConnectionLost,
} from "./errors.js";
export type { RemoteErrorReason } from "./errors.js";
export { RemoteLink } from "./remote.js";
export {
  checkDestination,
  checkRemoteProgram,
  checkSocketPath,
  DEFAULT_SSH_PROGRAM,
  DEFAULT_REMOTE_PROGRAM,
  DEFAULT_REMOTE_READY_TIMEOUT_MS,
  MAX_DESTINATION_LEN,
  MAX_PROGRAM_LEN,
  MAX_SOCKET_PATH_LEN,
} from "./remote_target.js";
export type { RemoteOptions, RemoteTarget } from "./remote_target.js";
export type { RemoteHost } from "./ssh.js";
export type * from "./types.js";
