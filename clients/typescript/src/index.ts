export { Client, DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS } from "./client.js";
export type { ClientOptions, ForgetFilter, ListOptions, ObserveOptions, Once, RecallOptions, RetainOptions } from "./client.js";
export {
  AccessError,
  AuthenticationError,
  ConflictError,
  EmbeddingError,
  EmbeddingMismatchError,
  HindsightError,
  NotFoundError,
  PermissionDeniedError,
  StoreError,
  StoreTimeoutError,
  UnauthorizedError,
  ValidationError,
  WriteRefusedError,
} from "./errors.js";
export type * from "./schema.js";
export { ROUTES } from "./schema.js";
