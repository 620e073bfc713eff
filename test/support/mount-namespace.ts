import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { nodeArgsFor } from './project-files.js';
import { tempDir } from './temp-dir.js';

const run = promisify(execFile);

const UNSHARE = ['--mount', '--propagation', 'private'];

/** Why mount tests cannot run here, or undefined when a private mount namespace is available. */
export async function mountNamespaceUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not running as root';
  try {
    await run('unshare', [...UNSHARE, 'true']);
    return undefined;
  } catch (err) {
    return `unshare failed: ${(err as Error).message.trim()}`;
  }
}

/**
 * Runs a script (emitted JavaScript, or TypeScript under this process's loader: see
 * scriptBeside) in a new private mount namespace (`unshare --mount --propagation
 * private`): its mounts never reach the host and vanish when it exits. Resolves its stdout.
 */
export async function runInMountNamespace(
  script: string,
  args: readonly string[] = [],
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string }> {
  const { stdout, stderr } = await run(
    'unshare',
    [...UNSHARE, process.execPath, ...nodeArgsFor(script), script, ...args],
    { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
  );
  return { stdout, stderr };
}

/** A check reported by a namespace script: name, result and what was seen. */
export interface NamespaceCheck {
  name: string;
  ok: boolean;
  detail?: unknown;
}

/** What runNamespaceScenario needs to know about a scenario script. */
export interface NamespaceScenario {
  /**
   * The script (from scriptBeside), run with a fresh work dir as its one argument; its last
   * stdout line is `{checks}`.
   */
  script: string;
  /** Names the checks in the skip message when no mount namespace is available. */
  what: string;
  /** Prefix of the work dir under the OS temp dir (removed when the test ends). */
  prefix: string;
  /** How many checks the scenario must report: exactly `exactly`, or at least `atLeast`. */
  checks: { exactly: number } | { atLeast: number };
  timeoutMs: number;
}

/**
 * Runs a scenario script in a private mount namespace and asserts every check it reported;
 * without root or unshare the test passes with a skip that says why.
 */
export async function runNamespaceScenario(t: Test, scenario: NamespaceScenario): Promise<void> {
  const unavailable = await mountNamespaceUnavailable();
  if (unavailable) {
    t.pass(scenario.what, {
      skip: `skipped: needs root and unshare for a private mount namespace (${unavailable})`,
    });
    return;
  }
  const work = await tempDir(t, scenario.prefix);
  const { stdout } = await runInMountNamespace(scenario.script, [work], scenario.timeoutMs);
  const { checks } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
    checks: NamespaceCheck[];
  };
  if ('exactly' in scenario.checks) {
    t.equal(checks.length, scenario.checks.exactly, 'the scenario reported its checks');
  } else {
    t.ok(checks.length >= scenario.checks.atLeast, 'the scenario reported its checks');
  }
  for (const c of checks) t.ok(c.ok, c.name, c.ok ? {} : { detail: c.detail });
}
