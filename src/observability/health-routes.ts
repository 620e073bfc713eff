import { plain, type RouteAnswer } from './http-endpoint.js';

/** One readiness check: its name and whether it passes now. */
export interface ReadinessCheck {
  name: string;
  ready(): boolean;
}

/**
 * The health routes: `/livez` answers 200 while the process serves HTTP at all; `/readyz`
 * answers 200 when every check passes and 503 otherwise, listing each check as Kubernetes'
 * own endpoints do (`[+]name ok`, `[-]name not ready`).
 */
export function healthRoutes(checks: readonly ReadinessCheck[]): Map<string, () => RouteAnswer> {
  return new Map([
    ['/livez', () => plain(200, 'ok\n')],
    [
      '/readyz',
      () => {
        const results = checks.map((check) => ({ name: check.name, ok: check.ready() }));
        const lines = results.map(
          (r) => `[${r.ok ? '+' : '-'}]${r.name} ${r.ok ? 'ok' : 'not ready'}`,
        );
        const ready = results.every((r) => r.ok);
        return plain(
          ready ? 200 : 503,
          `${lines.join('\n')}\n${ready ? 'ok' : 'readyz check failed'}\n`,
        );
      },
    ],
  ]);
}
