// Generates src/protocol.generated.ts from the protocol's JSON Schema
// (docs/protocol.schema.json): one exported type per `$defs` entry, named
// as the entry, describing the raw JSON that goes on the wire.
//
//   node scripts/protocol-types.mjs [--schema FILE] [--out FILE]
//
// `npm run generate:protocol` runs it with the defaults; the test
// test/protocol.test.ts runs it into a temporary file and fails while the
// committed file differs.

import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const { values } = parseArgs({
  options: {
    schema: { type: "string", default: path.resolve(packageDir, "..", "..", "docs", "protocol.schema.json") },
    out: { type: "string", default: path.join(packageDir, "src", "protocol.generated.ts") },
  },
});

const schema = JSON.parse(fs.readFileSync(values.schema, "utf8"));
const defs = schema.$defs;
if (defs === null || typeof defs !== "object") throw new Error(`${values.schema} has no $defs`);

/**
 * The schema with every `$ref` to `#/$defs/Name` replaced by the type
 * `Name`: each definition is compiled on its own, and a reference names
 * the type generated for it instead of a copy (json-schema-to-typescript
 * would make `Size1`, `Size2`, ... of a `$ref` that carries its own
 * `description`).
 */
function namedRefs(node) {
  if (Array.isArray(node)) return node.map(namedRefs);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref") {
      const match = /^#\/\$defs\/([A-Za-z0-9_]+)$/.exec(value);
      if (!match || !(match[1] in defs)) throw new Error(`unexpected $ref ${value}`);
      out.tsType = match[1];
    } else {
      out[key] = namedRefs(value);
    }
  }
  return out;
}

const options = {
  bannerComment: "",
  // The types are closed: a field this client reads or writes must be in
  // the schema. The client still ignores fields it does not know at run
  // time (PROTOCOL.md section 11).
  additionalProperties: false,
  strictIndexSignatures: true,
  unknownAny: true,
  format: true,
};

const parts = [
  [
    "/**",
    " * The raw JSON messages of the protocol, as the host writes and reads",
    " * them: one type per `$defs` entry of docs/protocol.schema.json,",
    ` * ${JSON.stringify(schema.title ?? "")}.`,
    " * `wire.ts` turns them into the types of `types.ts`.",
    " *",
    " * Generated from the schema by `npm run generate:protocol`",
    " * (scripts/protocol-types.mjs); do not edit.",
    " *",
    " * @module",
    " * @internal",
    " */",
    "",
  ].join("\n"),
];
/**
 * An open vocabulary (`"x-open-vocabulary": true`: a string of a known list
 * that a newer host may extend) as a literal union of its known values
 * with an open fallback, `(string & {})`, which keeps the literals for
 * completion and narrowing while any other string still type-checks; and
 * its known values as a constant array.
 */
function openVocabulary(name, definition) {
  const known = definition.anyOf?.[0]?.enum;
  if (!Array.isArray(known) || definition.anyOf.length !== 2 || definition.anyOf[1].type !== "string") {
    throw new Error(`${name} is marked x-open-vocabulary but is not anyOf [enum, string]`);
  }
  const doc = String(definition.description ?? "").split("\n").map((line) => ` * ${line}`.trimEnd());
  const values = known.map((value) => JSON.stringify(value));
  return [
    "/**",
    ...doc,
    " *",
    " * An open vocabulary: the values this revision's host sends, and any",
    " * other string a newer host may add.",
    " */",
    `export type ${name} =`,
    ...values.map((value) => `  | ${value}`),
    "  | (string & {});",
    "",
    `/** The known values of {@link ${name}}, in the order the host declares them. */`,
    `export const ${name}Values = [${values.join(", ")}] as const;`,
    "",
  ].join("\n");
}

for (const name of Object.keys(defs).sort()) {
  if (defs[name]["x-open-vocabulary"] === true) {
    parts.push(openVocabulary(name, defs[name]));
    continue;
  }
  const definition = { ...namedRefs(defs[name]), title: name };
  parts.push((await compile(definition, name, options)).trim() + "\n");
}

/** A constant of each variant of the enum `name` and its `keyword`. */
function variantTable(name, keyword, constant, doc) {
  const rows = (defs[name]?.oneOf ?? []).map((variant) => {
    const variantName = variant.const ?? variant.required?.[0];
    if (typeof variantName !== "string" || !(keyword in variant)) throw new Error(`${name}: a variant without ${keyword}`);
    return `  ${variantName}: ${JSON.stringify(variant[keyword]).replaceAll(",", ", ")},`;
  });
  return [`/** ${doc} */`, `export const ${constant} = {`, ...rows, "} as const;", ""].join("\n");
}

parts.push(
  variantTable(
    "Request",
    "x-answer",
    "RequestAnswers",
    "Each request with the `Response` variant that answers it when it succeeds (the schema's `x-answer`).",
  ),
);
parts.push(
  variantTable(
    "Event",
    "x-streams",
    "EventStreams",
    "Each event with the subscriptions it travels on, `pane` (`events`, `reconnect`) and `watch` (the schema's `x-streams`).",
  ),
);

const text = parts.join("\n");
fs.mkdirSync(path.dirname(values.out), { recursive: true });
fs.writeFileSync(values.out, text);
