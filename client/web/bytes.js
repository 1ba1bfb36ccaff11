// Bytes <-> base64, and text -> bytes, for the WebSocket's JSON messages.

const CHUNK = 0x8000;

/** Standard base64 of a Uint8Array. */
export function toBase64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/** The bytes of a standard base64 string. */
export function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of a string (what a keyboard or a paste typed). */
export function utf8(text) {
  return encoder.encode(text);
}

/** Bytes of a "binary" string, one byte per char (xterm's onBinary). */
export function latin1(text) {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    bytes[i] = text.charCodeAt(i) & 0xff;
  }
  return bytes;
}
