/**
 * A client of the hindsight REST API, with the methods of the Python `hindsight.Client`.
 *
 *     const memory = new Client("http://127.0.0.1:8765", { apiKey: "..." });
 *     await memory.retain("user:alice", "I live in Paris and I love jazz.");
 *     const hits = await memory.recall("user:alice", "where does she live?");
 *     hits[0].memory.content;
 *
 * Options are the REST API's own fields (snake_case), typed from its OpenAPI schema
 * (src/schema.ts). A read, or a write under an idempotency key (retain, observe and
 * importRecords always carry one), is sent again up to `retries` times after a dropped
 * connection or a 502/503/504. Needs only `fetch`.
 */

import {
  HindsightError,
  NotFoundError,
  StoreError,
  StoreTimeoutError,
  ValidationError,
  errorFrom,
} from "./errors.js";
import { ROUTES, type Operations } from "./schema.js";
import type * as S from "./schema.js";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_RETRIES = 2;
const RETRY_STATUSES = new Set([502, 503, 504]);

export interface ClientOptions {
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** Milliseconds to wait for each answer (default 30 s). */
  timeoutMs?: number;
  /** Times a safe request is sent again (default 2). */
  retries?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

type Op = keyof Operations;
type Query<K extends Op> = Operations[K]["query"] extends never ? undefined : Partial<Operations[K]["query"]>;

interface Request<K extends Op> {
  path?: Record<string, string>;
  query?: Query<K>;
  body?: Operations[K]["body"];
  /** Makes a write safe to send again: the server stores it once under this key. */
  idempotencyKey?: string;
}

/** What `retain`, `observe` and `importRecords` take besides their fields. */
export interface Once {
  /** The idempotency key (by default a new one per call): the same key sent again stores nothing. */
  request_id?: string;
}

export type RetainOptions = Omit<S.RetainIn, "owner" | "content"> & Once;
export type RecallOptions = Omit<S.RecallIn, "owners" | "query">;
export type ListOptions = Omit<Operations["list_memories"]["query"], "owner">;
export type ForgetFilter = S.ForgetIn;
export type ObserveOptions = Omit<S.ObserveIn, "owner" | "content"> & Once;

function backoffMs(attempt: number): number {
  return Math.min(4000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
}

function segment(value: string, what: string): string {
  if (typeof value !== "string" || value === "") {
    throw what === "memory" ? new NotFoundError(`no memory with id ${JSON.stringify(value)}`) : new ValidationError(`${what} is required`);
  }
  return encodeURIComponent(value);
}

export class Client {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(baseUrl: string, options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retries = options.retries ?? DEFAULT_RETRIES;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#headers = { accept: "application/json" };
    if (options.apiKey !== undefined) this.#headers.authorization = `Bearer ${options.apiKey}`;
  }

  // -- long-term memory ------------------------------------------------------------------

  /** Remember a message, a conversation (`messages`), or (with `kind`) one memory as given. */
  async retain(owner: string, content?: string | null, options: RetainOptions = {}): Promise<S.RetainOut> {
    const { request_id, ...fields } = options;
    return this.#call("retain", { body: { owner, content: content ?? null, ...fields }, idempotencyKey: once(request_id) });
  }

  /** The memories that best answer `query`, best first, each with its score and why it came back. */
  async recall(owners: S.RecallIn["owners"], query: string, options: RecallOptions = {}): Promise<S.RecallHit[]> {
    return (await this.#call("recall", { body: { owners, query, ...options } })).results;
  }

  /** One memory by id. */
  async get(memoryId: string): Promise<S.MemoryOut> {
    return this.#call("get", { path: { memory_id: segment(memoryId, "memory") } });
  }

  /** An owner's memories, newest observed first, a page at a time (`limit`, `offset`). */
  async listMemories(owner: string, options: ListOptions = {}): Promise<S.MemoryOut[]> {
    return (await this.listPage(owner, options)).memories;
  }

  /** A page of an owner's memories with `next_offset` (null on the last page). */
  async listPage(owner: string, options: ListOptions = {}): Promise<S.MemoryPage> {
    return this.#call("list_memories", { query: { owner, ...options } });
  }

  /** Change a memory in place: only the fields given; new content is re-embedded. */
  async update(memoryId: string, changes: S.UpdateIn): Promise<S.MemoryOut> {
    return this.#call("update", { path: { memory_id: segment(memoryId, "memory") }, body: changes });
  }

  /**
   * Delete one memory (by id; with `owner`, only if it is that owner's), or an owner's
   * memories (`{ owner, session_id?, since?, until?, source?, principal? }`); returns the receipt.
   */
  forget(memoryId: string, options?: { owner?: string; dry_run?: boolean }): Promise<S.ReceiptOut>;
  forget(filter: ForgetFilter): Promise<S.ReceiptOut>;
  async forget(target: string | ForgetFilter, options: { owner?: string; dry_run?: boolean } = {}): Promise<S.ReceiptOut> {
    if (typeof target === "string") {
      return this.#call("forget", { path: { memory_id: segment(target, "memory") }, query: options });
    }
    if (target === null || typeof target !== "object" || !target.owner) {
      throw new ValidationError("give a memory id or an owner");
    }
    return this.#call("forget_owner", { body: target });
  }

  /** Say whether a memory was of use; returns it as changed. */
  async feedback(memoryId: string, useful: boolean): Promise<S.MemoryOut> {
    return this.#call("feedback", { path: { memory_id: segment(memoryId, "memory") }, body: { useful } });
  }

  /** The versions of a memory, oldest first. */
  async history(memoryId: string): Promise<S.HistoryOut> {
    return this.#call("history", { path: { memory_id: segment(memoryId, "memory") } });
  }

  /** Pin a memory: it neither decays nor is archived until unpinned. */
  async pin(memoryId: string): Promise<S.MemoryOut> {
    return this.#call("pin", { path: { memory_id: segment(memoryId, "memory") } });
  }

  /** Let a pinned memory decay and archive again. */
  async unpin(memoryId: string): Promise<S.MemoryOut> {
    return this.#call("unpin", { path: { memory_id: segment(memoryId, "memory") } });
  }

  /** Make an archived memory active again. */
  async restore(memoryId: string): Promise<S.MemoryOut> {
    return this.#call("restore", { path: { memory_id: segment(memoryId, "memory") } });
  }

  /**
   * What lies ahead for an owner: open events, commitments, routines and goals due from
   * today to `days` days ahead (default 14), then the undated ones; soonest first.
   */
  async foresee(owner: string, options: { now?: string; days?: number } = {}): Promise<S.ForesightItemOut[]> {
    return (await this.#call("foresee", { query: { owner, ...options } })).items;
  }

  /**
   * The people, places, organisations, pets and projects an owner's memories name, most
   * spoken of first, each with its kind and aliases; `entity` gives one's page.
   */
  async entities(owner: string): Promise<S.EntitySummaryOut[]> {
    return (await this.#call("entities", { query: { owner } })).entities;
  }

  /**
   * The page of the entity an owner's memories call `name` (any of its names, in any case,
   * or a role such as "my uncle"): its facts and what it is linked with. NotFoundError if none.
   */
  async entity(owner: string, name: string): Promise<S.EntityOut> {
    if (typeof name !== "string" || name.trim() === "") throw new ValidationError("name must be a non-empty string");
    return this.#call("entity", { path: { name: encodeURIComponent(name) }, query: { owner } });
  }

  /** The owners that have memories and that the key may read, sorted. */
  async owners(): Promise<string[]> {
    return (await this.#call("owners", {})).owners;
  }

  /** Counts by kind and status, and the store's size and model: of one owner, or of all. */
  async stats(owner?: string): Promise<S.StatsOut> {
    return this.#call("stats", { query: owner === undefined ? {} : { owner } });
  }

  /** The embedding model (and its stored versions), reranker, LLM and store in use, and
   * whether each endpoint answers (a key that reads every owner). Never a key. */
  async doctor(options: { check_endpoints?: boolean } = {}): Promise<S.DoctorOut> {
    return this.#call("doctor", { query: options });
  }

  /** Every memory of `owner` as JSON-ready records, oldest first (what `importRecords` reads). */
  async export(owner: string, options: { include_history?: boolean } = {}): Promise<Record<string, unknown>[]> {
    const text = await this.#call("export", { query: { owner, ...options } }, "text");
    return text.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Load exported records, re-embedding them; ids the owner already holds are skipped. */
  async importRecords(records: S.ImportIn["records"], options: Once = {}): Promise<S.ImportOut> {
    return this.#call("import_records", { body: { records }, idempotencyKey: once(options.request_id) });
  }

  /** Run the maintenance pass over every owner (a key that writes every owner). */
  async maintain(asOf?: string): Promise<S.MaintainOut> {
    return this.#call("maintain", { body: { as_of: asOf ?? null } });
  }

  // -- working memory --------------------------------------------------------------------

  /** Add a turn to a session's working memory; `retained` says what moved to long-term memory. */
  async observe(owner: string, sessionId: string, content: string, options: ObserveOptions = {}): Promise<S.ObserveOut> {
    const { request_id, ...fields } = options;
    return this.#call("observe", {
      path: { session_id: segment(sessionId, "session_id") },
      body: { owner, content, ...fields },
      idempotencyKey: once(request_id),
    });
  }

  /** An owner's open sessions with their turn and token counts, latest first. */
  async sessions(owner: string): Promise<S.SessionOut[]> {
    return (await this.#call("sessions", { query: { owner } })).sessions;
  }

  /** A session's working memory, oldest turn first. */
  async window(owner: string, sessionId: string): Promise<S.TurnOut[]> {
    const path = { session_id: segment(sessionId, "session_id") };
    return (await this.#call("window", { path, query: { owner } })).turns;
  }

  /** Move a session's working memory into long-term memory and clear the window. */
  async consolidate(owner: string, sessionId: string): Promise<S.RetainOut> {
    return this.#call("consolidate", { path: { session_id: segment(sessionId, "session_id") }, body: { owner } });
  }

  /** End a session: consolidate what is left of its window. */
  async closeSession(owner: string, sessionId: string): Promise<S.RetainOut> {
    return this.#call("close_session", { path: { session_id: segment(sessionId, "session_id") }, body: { owner } });
  }

  /** Summarize a session into one long-term memory (needs an LLM on the server). */
  async summarize(owner: string, sessionId: string): Promise<S.MemoryOut> {
    return this.#call("summarize", { path: { session_id: segment(sessionId, "session_id") }, body: { owner } });
  }

  /** Reflect on an owner's memories (needs an LLM on the server); returns what was written. */
  async reflect(owner: string, options: Omit<S.ReflectIn, "owner"> = {}): Promise<S.MemoryOut[]> {
    return (await this.#call("reflect", { body: { owner, ...options } })).memories;
  }

  // -- review and audit ------------------------------------------------------------------

  /** What the guard held, newest first, each beside the memories it conflicts with. */
  async reviewQueue(owner?: string, options: { limit?: number; offset?: number } = {}): Promise<S.ReviewItemOut[]> {
    const query = owner === undefined ? options : { owner, ...options };
    return (await this.#call("review_queue", { query })).items;
  }

  /** Make a held memory active (with what was held with it); the memory first. */
  async approve(memoryId: string): Promise<S.MemoryOut[]> {
    return (await this.#call("approve", { path: { memory_id: segment(memoryId, "memory") } })).memories;
  }

  /** Turn down a held memory: kept as rejected history (the memories), or forgotten (the receipt). */
  async reject(memoryId: string, options: S.RejectIn = {}): Promise<S.MemoryOut[] | S.ReceiptOut> {
    const answer = await this.#call("reject", { path: { memory_id: segment(memoryId, "memory") }, body: options });
    return "memories" in answer ? answer.memories : answer;
  }

  /** Audit entries, newest first (a key with `"audit": true`). */
  async audit(options: Partial<Operations["audit"]["query"]> = {}): Promise<S.AuditPage> {
    return this.#call("audit", { query: options });
  }

  /** Check the audit log's hash chain. */
  async verifyAudit(): Promise<S.AuditCheckOut> {
    return this.#call("verify_audit", {});
  }

  // -- the wire --------------------------------------------------------------------------

  #url<K extends Op>(op: K, request: Request<K>): string {
    const path = ROUTES[op].path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = request.path?.[name];
      if (value === undefined) throw new ValidationError(`${name} is required`);
      return value;
    });
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
      if (value === undefined || value === null) continue;
      for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
    }
    const query = params.toString();
    return `${this.baseUrl}${path}${query ? `?${query}` : ""}`;
  }

  async #call<K extends Op>(op: K, request: Request<K>): Promise<Operations[K]["response"]>;
  async #call<K extends Op>(op: K, request: Request<K>, read: "text"): Promise<string>;
  async #call<K extends Op>(op: K, request: Request<K>, read: "json" | "text" = "json"): Promise<unknown> {
    const { method } = ROUTES[op];
    const url = this.#url(op, request);
    const headers: Record<string, string> = { ...this.#headers };
    let body: string | undefined;
    if (request.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.body);
    }
    if (request.idempotencyKey !== undefined) headers["idempotency-key"] = request.idempotencyKey;
    const retryable = method === "GET" || request.idempotencyKey !== undefined;
    const tries = 1 + (retryable ? Math.max(0, this.retries) : 0);
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt - 1)));
      const last = attempt + 1 >= tries;
      let response: Response;
      let text: string;
      try {
        response = await this.#fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
        text = await response.text();
      } catch (cause) {
        if (last) throw this.#unreachable(cause);
        continue;
      }
      if (!last && RETRY_STATUSES.has(response.status)) continue;
      if (response.status >= 400) throw errorFrom(response.status, text);
      return read === "text" ? text : (JSON.parse(text) as unknown);
    }
  }

  #unreachable(cause: unknown): HindsightError {
    const name = (cause as { name?: unknown } | null)?.name;
    if (name === "TimeoutError" || name === "AbortError") {
      return new StoreTimeoutError(`the hindsight server at ${this.baseUrl} did not answer within ${this.timeoutMs} ms`, { cause });
    }
    const why = cause instanceof Error ? cause.message : String(cause);
    return new StoreError(`cannot reach the hindsight server at ${this.baseUrl}: ${why}`, { cause });
  }
}

function once(requestId: string | undefined): string {
  return requestId ?? globalThis.crypto.randomUUID();
}
