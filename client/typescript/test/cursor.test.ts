// The resume bookkeeping, without IO (the same cases as the Rust client's).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FollowCursor, type PaneEvent, type ScreenSnapshot } from "../src/index.js";

function snapshot(offset: number): ScreenSnapshot {
  return {
    offset,
    size: { cols: 80, rows: 24 },
    text: "",
    formatted: new Uint8Array(),
    cursor: { row: 0, col: 0, visible: true },
    title: "",
    alternate_screen: false,
    modes: { bracketed_paste: false, mouse: false, application_keypad: false, application_cursor: false },
    trimmed: false,
  };
}

function output(offset: number, text: string): PaneEvent {
  return { kind: "output", offset, data: new Uint8Array(Buffer.from(text)) };
}

function text(event: PaneEvent | undefined): [number, string] | undefined {
  if (event === undefined || event.kind !== "output") return undefined;
  return [event.offset, Buffer.from(event.data).toString()];
}

describe("follow cursor", () => {
  test("before any stream it subscribes from the starting offset", () => {
    assert.deepEqual(new FollowCursor().resumeRequest("p1"), { events: { pane: "p1", from: null } });
    assert.deepEqual(new FollowCursor(42).resumeRequest("p1"), { events: { pane: "p1", from: 42 } });
    // With a saved generation, the first request is already a reconnect.
    assert.deepEqual(new FollowCursor(42, 3).resumeRequest("p1"), { reconnect: { pane: "p1", generation: 3, offset: 42 } });
    assert.deepEqual(new FollowCursor(undefined, 3).resumeRequest("p1"), { events: { pane: "p1", from: null } });
  });

  test("reconnects from the end of the last output handed on", () => {
    const cursor = new FollowCursor();
    cursor.onStart(3, { kind: "snapshot", snapshot: snapshot(100), skipped_from: null });
    assert.equal(cursor.offset, 100);
    assert.ok(cursor.admit(output(100, "hello")));
    assert.ok(cursor.admit(output(105, "!")));
    assert.deepEqual(cursor.resumeRequest("p1"), { reconnect: { pane: "p1", generation: 3, offset: 106 } });
  });

  test("each start kind sets the offset", () => {
    const cursor = new FollowCursor(7);
    cursor.onStart(1, { kind: "replay", from: 7 });
    assert.deepEqual([cursor.generation, cursor.offset], [1, 7]);
    cursor.onStart(1, { kind: "snapshot", snapshot: snapshot(500), skipped_from: 7 });
    assert.equal(cursor.offset, 500);
    cursor.onStart(2, { kind: "generation_changed", previous: 1, snapshot: snapshot(9) });
    assert.deepEqual([cursor.generation, cursor.offset], [2, 9]);
  });

  test("resync moves to the snapshot", () => {
    const cursor = new FollowCursor();
    cursor.onStart(1, { kind: "replay", from: 0 });
    cursor.admit(output(0, "abc"));
    cursor.admit({ kind: "resync", skipped_from: 3, snapshot: snapshot(4096) });
    assert.equal(cursor.offset, 4096);
  });

  test("duplicates are dropped and overlaps trimmed", () => {
    const cursor = new FollowCursor();
    cursor.onStart(1, { kind: "replay", from: 10 });
    assert.equal(cursor.admit(output(5, "abcde")), undefined);
    assert.deepEqual(text(cursor.admit(output(8, "xyZW"))), [10, "ZW"]);
    assert.equal(cursor.offset, 12);
    assert.deepEqual(text(cursor.admit(output(12, "q"))), [12, "q"]);
    assert.equal(cursor.offset, 13);
    // An empty output exactly at the offset passes; one before it is a duplicate.
    assert.ok(cursor.admit(output(13, "")));
    assert.equal(cursor.admit(output(11, "")), undefined);
  });

  test("a gap is handed on and followed", () => {
    const cursor = new FollowCursor();
    cursor.onStart(1, { kind: "replay", from: 0 });
    assert.deepEqual(text(cursor.admit(output(20, "ab"))), [20, "ab"]);
    assert.equal(cursor.offset, 22);
  });

  test("exit, resize and unknown events do not move the offset; ended is noted", () => {
    const cursor = new FollowCursor();
    cursor.onStart(1, { kind: "replay", from: 0 });
    cursor.admit(output(0, "ab"));
    cursor.admit({ kind: "resized", size: { cols: 100, rows: 30 } });
    cursor.admit({ kind: "exited", status: { code: 0, signal: null }, offset: 2 });
    cursor.admit({ kind: "other", name: "pane_renamed", body: { offset: 2 } });
    cursor.admit({ kind: "turn_started", offset: 2, source: "input" });
    assert.equal(cursor.offset, 2);
    assert.equal(cursor.ended, false);
    cursor.admit({ kind: "ended", reason: "exited" });
    assert.equal(cursor.ended, true);
  });

  test("a turn event a resume at its offset repeats is dropped, once per earlier one", () => {
    const unavailable = { kind: "unavailable", input_tokens: null, output_tokens: null, cost_micro_usd: null };
    const started: PaneEvent = { kind: "turn_started", offset: 2, source: "input" };
    const completed: PaneEvent = { kind: "turn_completed", offset: 2, source: "heuristic", usage: unavailable, exit_code: null };
    const cursor = new FollowCursor();
    cursor.onStart(1, { kind: "replay", from: 0 });
    cursor.admit(output(0, "ab"));
    assert.deepEqual(cursor.admit(started), started);
    assert.deepEqual(cursor.admit(completed), completed);
    // The connection drops; the host replays from 2, the turn events at 2
    // included, and the output carrying byte 2 may come first.
    cursor.onStart(1, { kind: "replay", from: 2 });
    assert.equal(cursor.admit(started), undefined);
    assert.deepEqual(text(cursor.admit(output(2, "cd"))), [2, "cd"]);
    assert.equal(cursor.admit(completed), undefined);
    // A new turn at the same offset is not a repeat: each earlier one is dropped once.
    assert.deepEqual(cursor.admit(started), started);
    const later: PaneEvent = { kind: "turn_completed", offset: 4, source: "terminal_notification", usage: unavailable, exit_code: null };
    assert.deepEqual(cursor.admit(later), later);
    assert.equal(cursor.offset, 4);
  });

  test("turn events are not dropped after a start elsewhere, or on the first start", () => {
    const started: PaneEvent = { kind: "turn_started", offset: 2, source: "input" };
    const cursor = new FollowCursor(2);
    cursor.onStart(1, { kind: "replay", from: 2 });
    assert.deepEqual(cursor.admit(started), started);
    // After a snapshot start (the resume offset was no longer held) nothing repeats.
    cursor.onStart(1, { kind: "snapshot", snapshot: snapshot(2), skipped_from: 2 });
    assert.deepEqual(cursor.admit(started), started);
    // Nor after the generation changed.
    cursor.onStart(2, { kind: "replay", from: 2 });
    assert.deepEqual(cursor.admit(started), started);
  });
});
