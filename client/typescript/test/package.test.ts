// The package as `npm pack` makes it: what it holds, where its exports
// point, and links in its README that work from inside the package.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
/** client/typescript, from dist/test. */
const packageDir = path.resolve(here, "..", "..");

/** The paths `npm pack` would put in the package (the build is not run again). */
function packedFiles(): string[] {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: packageDir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [report] = JSON.parse(output) as Array<{ files: Array<{ path: string }> }>;
  return report!.files.map((file) => file.path);
}

const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"));
const readme = fs.readFileSync(path.join(packageDir, "README.md"), "utf8");

test("the package holds its exports, their types and its README, and no tests", () => {
  const files = packedFiles();
  const exported = manifest.exports["."];
  for (const target of [exported.default, exported.types, manifest.main, manifest.types, "README.md", "package.json"]) {
    assert.ok(files.includes(path.posix.normalize(target)), `${target} is packed`);
  }
  assert.ok(!files.some((file) => file.startsWith("dist/test/") || file.startsWith("test/")), "no tests packed");
  // Source maps point at src/, which is packed with them.
  assert.ok(files.includes("src/index.ts"));
});

test("ES module only, for Node.js 20 and later: package.json and the README say the same", () => {
  assert.equal(manifest.type, "module");
  assert.equal(manifest.engines.node, ">=20");
  assert.equal(manifest.exports["."].require, undefined, "no CommonJS build is claimed");
  assert.match(readme, /Node\.js 20 and later/);
  assert.match(readme, /## ES module only/);
  assert.match(readme, /ships no CommonJS\s+build/);
});

test("every link in the README works from inside the packed package", () => {
  const files = packedFiles();
  const links = [...readme.matchAll(/\[[^\]]*\]\(([^)\s]+)[^)]*\)/g)].map((match) => match[1]!);
  for (const link of links) {
    if (/^(https?:|mailto:|#)/.test(link)) continue;
    const target = path.posix.normalize(link.split("#")[0]!);
    assert.ok(!target.startsWith(".."), `${link} leaves the package`);
    assert.ok(files.includes(target), `${link} is not in the package`);
  }
});
