// The public types of `types.ts` against the raw wire types that
// docs/protocol.schema.json generates (src/protocol.generated.ts, which
// protocol.test.ts keeps current): each public struct has exactly the
// fields of its wire struct, so a field the host adds fails this file's
// build until the public type (and wire.ts) carry it; and each field of an
// open vocabulary has the vocabulary's type. These checks are types: `npm
// test` builds this file, and a difference is a compile error here.

import assert from "node:assert/strict";
import { test } from "node:test";
import type * as Raw from "../src/protocol.generated.js";
import { RequestAnswers } from "../src/protocol.generated.js";
import type * as Public from "../src/types.js";

/** `true` exactly when `A` and `B` are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only when the two key sets are the same (the message names the difference). */
function sameFields<P, R>(
  check: Same<keyof P, keyof R> extends true ? "same" : { onlyPublic: Exclude<keyof P, keyof R>; onlyWire: Exclude<keyof R, keyof P> },
): void {
  void check;
}

/** Compiles only when the public field has the wire field's type. */
function sameType<P, R>(check: Same<P, R> extends true ? "same" : { public: P; wire: R }): void {
  void check;
}

/** The content of the externally tagged variant `K` of the wire enum `E`. */
type VariantOf<E, K extends string> = E extends { [key in K]: infer B } ? B : never;

test("each public struct has the fields of its wire struct", () => {
  sameFields<Public.Size, Raw.Size>("same");
  sameFields<Public.ExitStatus, Raw.ExitStatus>("same");
  sameFields<Public.PaneSummary, Raw.PaneSummary>("same");
  sameFields<Public.Cursor, Raw.Cursor>("same");
  sameFields<Public.InputModes, Raw.InputModes>("same");
  sameFields<Public.ScreenSnapshot, Raw.ScreenSnapshot>("same");
  sameFields<Public.PaneDetail, Raw.PaneDetail>("same");
  sameFields<Public.PaneHistory, Raw.PaneHistory>("same");
  sameFields<Public.WaitMatch, Raw.WaitMatch>("same");
  sameFields<Public.InterruptStep, Raw.InterruptStep>("same");
  sameFields<Public.InterruptReport, Raw.InterruptReport>("same");
  sameFields<Public.PaneSweep, Raw.PaneSweep>("same");
  sameFields<Public.Usage, Raw.Usage>("same");
  sameFields<Public.TurnReport, Raw.TurnReport>("same");
  sameFields<Public.RuntimeInfo, Raw.RuntimeInfo>("same");
  sameFields<Public.Receipt, Raw.Receipt>("same");
  sameFields<Public.Welcome, Raw.Welcome>("same");
  sameFields<Public.Watching, VariantOf<Raw.Response, "watching">>("same");
});

test("each field of an open vocabulary has the vocabulary's type", () => {
  sameType<Public.PaneSummary["activity"], Raw.Activity>("same");
  sameType<Public.PaneSummary["completion"], Raw.CompletionSource>("same");
  sameType<Public.PaneSummary["restored_by"], Raw.RestoredBy>("same");
  sameType<Public.RuntimeInfo["completion"], Raw.CompletionSource>("same");
  sameType<Public.RuntimeInfo["readiness"], Raw.Readiness>("same");
  sameType<Public.RuntimeInfo["sign_in"], Raw.SignIn>("same");
  sameType<Public.RuntimeInfo["login"], Raw.LoginForm>("same");
  sameType<Public.RuntimeInfo["evidence"], Raw.Evidence>("same");
  sameType<Public.RuntimeInfo["limitations"], Raw.LimitationCode[]>("same");
  sameType<Public.RuntimeInfo["resume_modes"], Raw.ResumeMode[]>("same");
  sameType<Public.RuntimeInfo["permission_profiles"], Raw.PermissionProfile[]>("same");
  sameType<Public.TurnReport["source"], Raw.TurnSource>("same");
  sameType<Public.Usage["kind"], Raw.UsageKind>("same");
  sameType<Public.InterruptReport["outcome"], Raw.InterruptOutcome>("same");
  sameType<Public.InterruptStep["action"], Raw.InterruptAction>("same");
  sameType<Public.PaneSweep["method"], Raw.SweepMethod>("same");
  sameType<Public.ErrorCode, Raw.ErrorCode>("same");
  sameType<Public.LimitationCode, Raw.LimitationCode>("same");
  sameType<Public.PermissionProfile, Raw.PermissionProfile>("same");
});

test("an open vocabulary keeps its literals and takes any other string", () => {
  const known: Public.Activity = "idle";
  const newer: Public.Activity = "thinking";
  assert.deepEqual([known, newer], ["idle", "thinking"]);
  // What `x-answer` says each request gets.
  assert.equal(RequestAnswers.ask, "answered");
  assert.equal(RequestAnswers.attach_terminal, "terminal_released");
});
