// `npm pack` yields a package that installs into another project and imports by name,
// with its type declarations.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, inject, it } from "vitest";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "hindsight-ts-pack-"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the packed package", () => {
  it("installs from its tarball and imports by name, in JavaScript and TypeScript", () => {
    run(npm, ["pack", "--silent", "--pack-destination", work], PACKAGE);
    const tarball = readdirSync(work).find((name) => name.endsWith(".tgz"));
    expect(tarball).toBeDefined();
    const project = join(work, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "uses-hindsight", private: true, type: "module" }));
    run(npm, ["install", "--no-audit", "--no-fund", "--offline", join(work, tarball!)], project);

    writeFileSync(
      join(project, "main.js"),
      [
        'import { Client, UnauthorizedError, HindsightError } from "@agent-hindsight/client";',
        "const [url, apiKey] = process.argv.slice(2);",
        'const owner = "user:packed";',
        'await new Client(url, { apiKey }).retain(owner, "I play the oboe.");',
        'const hits = await new Client(url, { apiKey }).recall(owner, "what instrument?");',
        "const denied = await new Client(url).owners().catch((e) => e);",
        "console.log(JSON.stringify({ content: hits[0].memory.content, unauthorized: denied instanceof UnauthorizedError && denied instanceof HindsightError }));",
      ].join("\n"),
    );
    const out = run("node", ["main.js", inject("url"), inject("apiKey")], project);
    expect(JSON.parse(out)).toEqual({ content: expect.stringContaining("oboe"), unauthorized: inject("apiKey") !== "" });

    writeFileSync(
      join(project, "main.ts"),
      [
        'import { Client, type RecallHit, type MemoryOut } from "@agent-hindsight/client";',
        'const client = new Client("http://127.0.0.1:8765", { apiKey: "k" });',
        "const hits: Promise<RecallHit[]> = client.recall(\"user:alice\", \"q\", { k: 3 });",
        "const content = (hit: RecallHit): string => hit.memory.content;",
        "const one: Promise<MemoryOut> = client.get(\"m_1\");",
        "export { hits, content, one };",
      ].join("\n"),
    );
    // the README's example, as a user runs it
    copyFileSync(join(PACKAGE, "examples", "quickstart.mjs"), join(project, "quickstart.mjs"));
    const printed = execFileSync("node", ["quickstart.mjs"], {
      cwd: project,
      encoding: "utf8",
      env: { ...process.env, HINDSIGHT_URL: inject("url"), HINDSIGHT_API_KEY: inject("apiKey") },
    });
    expect(printed).toContain("Paris");
    expect(printed).toMatch(/forgot [1-9]\d* memories/);
    expect(printed).toContain("gone:");

    const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
    const args = ["--noEmit", "--strict", "--module", "NodeNext", "--moduleResolution", "NodeNext", "--target", "ES2022", "--lib", "ES2022,DOM", "main.ts"];
    run("node", [tsc, ...args], project);
  }, 180_000);
});
