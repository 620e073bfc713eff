import { performance } from 'node:perf_hooks';
import { isObserved, publishFact } from '../../base/telemetry.js';

/** client-go's code label of a request that got no HTTP answer. */
export const NO_ANSWER_CODE = '<error>';

/**
 * One API request as seen by its client middleware: the method and URL when it is sent, the
 * status when it is answered; finish() publishes it as an `apiRequest` fact. A request that
 * was never sent (refused before, e.g. a missing namespace) publishes nothing.
 */
export class RequestObservation {
  private sentAs: { method: string; url: string } | undefined;
  private code = NO_ANSWER_CODE;
  private readonly began = performance.now();

  /** An observation when someone listens to API requests, else undefined (no cost). */
  static ifObserved(): RequestObservation | undefined {
    return isObserved('apiRequest') ? new RequestObservation() : undefined;
  }

  /** The request is sent. */
  sent(method: string, url: string): void {
    this.sentAs = { method, url };
  }

  /** The server answered with status. */
  answered(status: number): void {
    this.code = String(status);
  }

  /** Publishes the request, if it was sent. */
  finish(): void {
    if (this.sentAs === undefined) return;
    const url = new URL(this.sentAs.url);
    publishFact('apiRequest', {
      method: this.sentAs.method,
      host: url.host,
      code: this.code,
      resource: resourceOfPath(url.pathname),
      durationSeconds: (performance.now() - this.began) / 1000,
    });
  }
}

/**
 * The resource an API path names, `plural.group` (or `plural` for the core group):
 * `/apis/cert-manager.io/v1/namespaces/ns/certificaterequests/x` is
 * `certificaterequests.cert-manager.io`; a discovery path (`/apis/g/v`) is `discovery`.
 */
export function resourceOfPath(path: string): string {
  const parts = path.split('/').filter((part) => part !== '');
  const core = parts[0] === 'api';
  const group = core ? '' : (parts[1] ?? '');
  let rest = parts.slice(core ? 2 : 3);
  // A namespaced path names the namespace first; `namespaces/x` alone is the Namespace itself.
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const plural = rest[0];
  if (plural === undefined) return 'discovery';
  return group ? `${plural}.${group}` : plural;
}
