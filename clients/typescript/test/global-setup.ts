// Starts a real `hindsight serve` for the tests, with API keys, in a fresh home; stops
// it after. HINDSIGHT_URL (and HINDSIGHT_API_KEY) point the tests at a running server
// instead. HINDSIGHT_PYTHON is the interpreter with hindsight installed (default: the
// repository's .venv).
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import type {} from "vitest"; // makes the augmentation below see the module

declare module "vitest" {
  export interface ProvidedContext {
    url: string;
    apiKey: string;
    /** A second key that may decide on held memories; empty against an outside server. */
    reviewerKey: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? done(address.port) : fail(new Error("no port"))));
    });
  });
}

async function waitForHealth(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`hindsight serve exited (${server.exitCode}):\n${log()}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`hindsight serve did not answer /health within 120 s:\n${log()}`);
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const outside = process.env.HINDSIGHT_URL;
  if (outside) {
    project.provide("url", outside);
    project.provide("apiKey", process.env.HINDSIGHT_API_KEY ?? "");
    project.provide("reviewerKey", process.env.HINDSIGHT_REVIEWER_KEY ?? "");
    return undefined;
  }
  const home = mkdtempSync(join(tmpdir(), "hindsight-ts-"));
  const apiKey = randomBytes(24).toString("hex");
  const reviewerKey = randomBytes(24).toString("hex");
  const keysFile = join(home, "keys.json");
  writeFileSync(
    keysFile,
    JSON.stringify({
      keys: [
        { name: "ts-tests", key: apiKey, read: ["*"], write: ["*"], audit: true },
        { name: "ts-reviewer", key: reviewerKey, read: ["*"], write: ["*"], review: true },
      ],
    }),
  );
  const python = process.env.HINDSIGHT_PYTHON ?? fileURLToPath(new URL("../../../.venv/bin/python", import.meta.url));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawn(python, ["-m", "hindsight", "--home", home, "-q", "serve", "--port", String(port)], {
    env: { ...process.env, HINDSIGHT_API_KEYS_FILE: keysFile, HINDSIGHT_LLM_PROVIDER: "none" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  server.stdout?.on("data", keep);
  server.stderr?.on("data", keep);
  try {
    await waitForHealth(url, server, () => output);
  } catch (error) {
    server.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
  project.provide("url", url);
  project.provide("apiKey", apiKey);
  project.provide("reviewerKey", reviewerKey);
  return async () => {
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(home, { recursive: true, force: true });
  };
}
