import { goQuoteValue } from '../../base/go-text.js';
import { formatGoDuration, parseGoDuration } from '../../pki/duration.js';
import type { ReadinessOptions } from '../../volume-manager/readiness/pod-readiness.js';
import { parseReadinessGates } from '../../volume-manager/readiness/readiness-gate.js';
import { DEFAULT_GATE_BACKOFF } from '../../volume-manager/settings.js';
import type { FlagTable } from '../common/flag-table.js';

const GATE_BACKOFF_DEFAULTS = {
  duration: formatGoDuration(DEFAULT_GATE_BACKOFF.initialMs),
  factor: String(DEFAULT_GATE_BACKOFF.factor),
  jitter: String(DEFAULT_GATE_BACKOFF.jitter),
  cap: formatGoDuration(DEFAULT_GATE_BACKOFF.capMs),
};

/** The readiness flags of `cert-csi node`, csi-driver's names and defaults (cmd/app/options). */
export const READINESS_FLAGS = {
  'continue-on-not-ready': {
    type: 'boolean',
    default: false,
    description: [
      'publish a volume whose pod is not ready (readiness gates)',
      'at once, empty, and issue it when the pod is ready',
    ],
  },
  'pod-readiness-gate': {
    type: 'multiple',
    value: 'GATE',
    description: [
      'repeatable, all must pass before issuance (needs',
      '--continue-on-not-ready): pod-ip:any|ipv4|ipv6,',
      'pod-condition:TYPE[=True|False|Unknown],',
      'pod-annotation:KEY (embedded mode: pod-ip only)',
    ],
  },
  'gate-backoff-duration': {
    type: 'string',
    value: 'D',
    default: GATE_BACKOFF_DEFAULTS.duration,
    description: [
      `first wait before gates are evaluated again (default ${GATE_BACKOFF_DEFAULTS.duration});`,
      'a change of the pod is seen at once anyway',
    ],
  },
  'gate-backoff-factor': {
    type: 'string',
    value: 'F',
    default: GATE_BACKOFF_DEFAULTS.factor,
    description: `wait multiplier per evaluation (default ${GATE_BACKOFF_DEFAULTS.factor})`,
  },
  'gate-backoff-jitter': {
    type: 'string',
    value: 'J',
    default: GATE_BACKOFF_DEFAULTS.jitter,
    description: `each wait stretched by up to J at random, 0-1 (default ${GATE_BACKOFF_DEFAULTS.jitter})`,
  },
  'gate-backoff-cap': {
    type: 'string',
    value: 'D',
    default: GATE_BACKOFF_DEFAULTS.cap,
    description: `longest wait, 0 for none (default ${GATE_BACKOFF_DEFAULTS.cap})`,
  },
} as const satisfies FlagTable;

/** The readiness flag values as node:util parseArgs gives them. */
export interface ReadinessFlagValues {
  'continue-on-not-ready'?: boolean;
  'pod-readiness-gate'?: string[];
  'gate-backoff-duration'?: string;
  'gate-backoff-factor'?: string;
  'gate-backoff-jitter'?: string;
  'gate-backoff-cap'?: string;
}

// "0 = uncapped" as a wait a timer and a Date can still hold.
const UNCAPPED_MS = 365 * 24 * 3600_000;

/**
 * The readiness options from the flags, with csi-driver's checks and messages; embedded mode
 * has no pods but those its volume contexts describe, so only pod-ip gates work there.
 */
export function readinessOptions(
  values: ReadinessFlagValues,
  mode: 'embedded' | 'kubernetes',
): ReadinessOptions {
  const specs = values['pod-readiness-gate'] ?? [];
  const continueOnNotReady = values['continue-on-not-ready'] ?? false;
  const gates = parseReadinessGates(specs);
  if (gates.length > 0 && !continueOnNotReady) {
    throw new Error('--pod-readiness-gate requires --continue-on-not-ready=true');
  }
  const podOnly = gates.findIndex((gate) => gate.type !== 'pod-ip');
  if (mode === 'embedded' && podOnly >= 0) {
    throw new Error(
      `--pod-readiness-gate ${specs[podOnly]}: only pod-ip gates work with --mode embedded, whose pods are described by their volume context alone`,
    );
  }
  const duration = durationFlag('gate-backoff-duration', values, DEFAULT_GATE_BACKOFF.initialMs);
  if (!(duration > 0)) {
    throw new Error(`--gate-backoff-duration must be > 0, got ${formatGoDuration(duration)}`);
  }
  const factor = floatFlag('gate-backoff-factor', values, DEFAULT_GATE_BACKOFF.factor);
  if (!(factor >= 1)) throw new Error(`--gate-backoff-factor must be >= 1, got ${factor}`);
  const jitter = floatFlag('gate-backoff-jitter', values, DEFAULT_GATE_BACKOFF.jitter);
  if (!(jitter >= 0 && jitter <= 1)) {
    throw new Error(`--gate-backoff-jitter must be between 0 and 1, got ${jitter}`);
  }
  const cap = durationFlag('gate-backoff-cap', values, DEFAULT_GATE_BACKOFF.capMs);
  if (cap !== 0 && cap < duration) {
    throw new Error(
      `--gate-backoff-cap must be 0 (uncapped) or >= --gate-backoff-duration (${formatGoDuration(duration)}), got ${formatGoDuration(cap)}`,
    );
  }
  return {
    continueOnNotReady,
    gates,
    gateBackoff: { initialMs: duration, factor, jitter, capMs: cap === 0 ? UNCAPPED_MS : cap },
  };
}

// pflag's words for a value it cannot parse.
function invalidArgument(flag: string, text: string, why: string): Error {
  return new Error(`invalid argument ${goQuoteValue(text)} for "--${flag}" flag: ${why}`);
}

function durationFlag(
  flag: 'gate-backoff-duration' | 'gate-backoff-cap',
  values: ReadinessFlagValues,
  fallback: number,
): number {
  const text = values[flag];
  if (text === undefined) return fallback;
  try {
    return parseGoDuration(text);
  } catch (err) {
    throw invalidArgument(flag, text, (err as Error).message);
  }
}

function floatFlag(
  flag: 'gate-backoff-factor' | 'gate-backoff-jitter',
  values: ReadinessFlagValues,
  fallback: number,
): number {
  const text = values[flag];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() !== text || text === '' || Number.isNaN(value)) {
    throw invalidArgument(
      flag,
      text,
      `strconv.ParseFloat: parsing ${goQuoteValue(text)}: invalid syntax`,
    );
  }
  return value;
}
