// Retries, through the client's own fetch seam: no server needed.
import { describe, expect, it } from "vitest";
import { Client, StoreError, StoreTimeoutError } from "../src/index.js";

function answering(statuses: number[]) {
  const seen: { method: string; key: string | null }[] = [];
  const fake: typeof fetch = async (_input, init) => {
    const headers = new Headers(init?.headers);
    seen.push({ method: init?.method ?? "GET", key: headers.get("idempotency-key") });
    const status = statuses.shift() ?? 200;
    const body = status === 200 ? { results: [], episodes: [], created: [], updated: [], superseded: [] } : { error: { type: "StoreError", message: "busy" } };
    return new Response(JSON.stringify(body), { status });
  };
  return { fake, seen };
}

describe("retries", () => {
  it("sends a write again under the same idempotency key after a 503", async () => {
    const { fake, seen } = answering([503, 502]);
    const client = new Client("http://hindsight.test", { fetch: fake });
    await client.retain("user:alice", "hello");
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("does not send a write without an idempotency key again", async () => {
    const { fake, seen } = answering([503]);
    const client = new Client("http://hindsight.test", { fetch: fake });
    await expect(client.recall("user:alice", "q")).rejects.toBeInstanceOf(StoreError);
    expect(seen).toHaveLength(1);
  });

  it("gives up after `retries` and raises what the last answer said", async () => {
    const { fake, seen } = answering([503, 503, 503, 503]);
    const client = new Client("http://hindsight.test", { fetch: fake, retries: 2 });
    await expect(client.listMemories("user:alice")).rejects.toBeInstanceOf(StoreError);
    expect(seen).toHaveLength(3);
  });

  it("a timeout is a StoreTimeoutError", async () => {
    const slow: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));
    const client = new Client("http://hindsight.test", { fetch: slow, timeoutMs: 50, retries: 0 });
    await expect(client.owners()).rejects.toBeInstanceOf(StoreTimeoutError);
  });
});
