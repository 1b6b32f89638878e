/**
 * The errors of the client, one tree, as the Python library's (hindsight.errors):
 *
 *     HindsightError
 *     ├── ValidationError          400, 413, 422: bad input, nothing was changed
 *     ├── NotFoundError            404: no such memory, session or owner
 *     ├── ConflictError            409: the write clashes with the store's state
 *     │   ├── EmbeddingMismatchError
 *     │   └── WriteRefusedError    a write checkpoint refused the write
 *     ├── AccessError              403
 *     │   ├── UnauthorizedError    401: no valid API key (Python: AuthenticationError)
 *     │   └── PermissionDeniedError  403: the key does not cover this owner
 *     ├── StoreError               503, or the server cannot be reached
 *     │   └── StoreTimeoutError    504, or no answer within the timeout
 *     └── EmbeddingError           503: the embedding provider failed
 *
 * The server names the class in each error body (`{"error": {"type", "message"}}`);
 * a type the client does not know falls back to the class of the status.
 */

export class HindsightError extends Error {
  /** The HTTP status of the answer; undefined when the server was not reached. */
  readonly status: number | undefined;
  /** The error type the server named (e.g. "PermissionDeniedError"), if it named one. */
  readonly type: string | undefined;

  constructor(message: string, options: { status?: number; type?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.type = options.type;
  }
}

export class ValidationError extends HindsightError {}
export class NotFoundError extends HindsightError {}
export class ConflictError extends HindsightError {}
export class EmbeddingMismatchError extends ConflictError {}
export class WriteRefusedError extends ConflictError {}
export class AccessError extends HindsightError {}
export class UnauthorizedError extends AccessError {}
export class PermissionDeniedError extends AccessError {}
export class StoreError extends HindsightError {}
export class StoreTimeoutError extends StoreError {}
export class EmbeddingError extends HindsightError {}

/** The Python library's name for {@link UnauthorizedError}. */
export const AuthenticationError = UnauthorizedError;

type ErrorClass = new (message: string, options?: { status?: number; type?: string; cause?: unknown }) => HindsightError;

const BY_TYPE: Record<string, ErrorClass> = {
  ValidationError,
  RequestTooLarge: ValidationError,
  NotFoundError,
  ConflictError,
  EmbeddingMismatchError,
  WriteRefusedError,
  AccessError,
  AuthenticationError: UnauthorizedError,
  PermissionDeniedError,
  StoreError,
  StoreTimeoutError,
  EmbeddingError,
};

const BY_STATUS: Record<number, ErrorClass> = {
  400: ValidationError,
  401: UnauthorizedError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: ValidationError,
  422: ValidationError,
  503: StoreError,
  504: StoreTimeoutError,
};

/** The error an error answer stands for. */
export function errorFrom(status: number, text: string): HindsightError {
  let type: string | undefined;
  let message = `HTTP ${status}: ${text.slice(0, 200)}`;
  try {
    const detail = (JSON.parse(text) as { error?: { type?: unknown; message?: unknown } }).error;
    if (detail && typeof detail.type === "string" && typeof detail.message === "string") {
      type = detail.type;
      message = detail.message;
    }
  } catch {
    // not JSON (a proxy's page, say): keep the status and the start of the text
  }
  const cls = (type !== undefined ? BY_TYPE[type] : undefined) ?? BY_STATUS[status] ?? HindsightError;
  return new cls(message, { status, ...(type === undefined ? {} : { type }) });
}
