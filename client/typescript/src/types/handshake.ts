/**
 * The host's welcome, and the codes of its errors and limitations
 * (section 10).
 *
 * @module
 */

/** The host's reply to a successful handshake. */
export interface Welcome {
  /** The host's protocol version. */
  protocol: number;
  /**
   * The host's revision of that version (PROTOCOL.md, section 11); 1 from
   * a host that predates revisions. A JSON client is served whatever its
   * own revision; check this before relying on something a later revision
   * added.
   */
  revision: number;
  /** The host's name and version, for people and logs, such as `panehost 0.1.0`. */
  host: string;
  /** The encoding in force; always `json` for this client. */
  encoding: string;
}

export type { ErrorCode, LimitationCode } from "./vocabularies.js";
