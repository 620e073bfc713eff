import type { JsonShapeLimits } from '../../base/json-shape-scan.js';

/**
 * What one client, or all of them together, can make the admission server hold and for how
 * long. The defaults (DEFAULT_SERVER_LIMITS) are what `cert-csi webhook` runs with; README's
 * "Webhook" section states them.
 */
export interface AdmissionServerLimits {
  /** A larger body is refused with 413, on its Content-Length before any of it is read. */
  maxBodyBytes: number;
  /**
   * The bytes of each body that do not count against the shared budget, so reviews of
   * ordinary size are served whatever large bodies are in flight.
   */
  bodyAllowanceBytes: number;
  /**
   * The bytes past each body's allowance that all requests in flight may hold together
   * (from the first byte read until the answer is sent); a body that would pass it is refused
   * with 503 and its connection closed.
   */
  sharedBodyBytes: number;
  /** Open connections; a new one past this is closed at once. */
  maxConnections: number;
  /** A TLS handshake not done by then closes the connection. */
  handshakeTimeoutMs: number;
  /** Request headers not all received by then, counted from the connection or the previous answer: closed. */
  headersTimeoutMs: number;
  /** A whole request (headers and body) not received by then: answered 408 and closed. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** How often the header and request timeouts are checked (Node's default is 30 s). */
  timeoutCheckIntervalMs: number;
  /** The structure a body may have; checked as it arrives, before it is parsed. */
  json: JsonShapeLimits;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * kube-apiserver refuses request bodies over 3 MiB, and etcd objects over 1.5 MiB: a review
 * (the object, its old version and the envelope) stays under 3 MiB plus some room for the
 * envelope. Every stalled connection is closed within handshake + request timeout + check
 * interval = 16 s of opening; an API server waits for a webhook at most timeoutSeconds (10 s
 * in the shipped configurations, 30 s at most), so nothing it waits for is cut.
 */
export const DEFAULT_SERVER_LIMITS: AdmissionServerLimits = {
  maxBodyBytes: 3 * MIB + 256 * KIB,
  bodyAllowanceBytes: 64 * KIB,
  sharedBodyBytes: 8 * MIB,
  maxConnections: 128,
  handshakeTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  timeoutCheckIntervalMs: 1_000,
  // Real objects nest under 20 levels and hold hundreds of objects and arrays; a list may hold
  // thousands of names. An empty object costs the parser ~50 bytes of heap for 3 of JSON.
  json: { maxDepth: 64, maxContainers: 50_000, maxEntries: 500_000 },
};
