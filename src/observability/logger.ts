import { pino } from 'pino';
import type { Logger } from '../api/logger.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// Defence in depth: no code path logs these, but a future one must not leak them either.
const REDACTED_PATHS = [
  'token',
  '*.token',
  'password',
  '*.password',
  'privateKey',
  '*.privateKey',
  'volumeContext["csi.storage.k8s.io/serviceAccount.tokens"]',
  'volumeContext["csi.cert-manager.io/pkcs12-password"]',
  'volumeContext["csi.certmanager.k8s.io/pkcs12-password"]',
  'volume_context["csi.storage.k8s.io/serviceAccount.tokens"]',
  'volume_context["csi.cert-manager.io/pkcs12-password"]',
  'volume_context["csi.certmanager.k8s.io/pkcs12-password"]',
  'volumeContext["csi.cert-manager.io/jks-password"]',
  'volumeContext["csi.certmanager.k8s.io/jks-password"]',
  'volume_context["csi.cert-manager.io/jks-password"]',
  'volume_context["csi.certmanager.k8s.io/jks-password"]',
];

/** A JSON logger (pino) on the given stream, stdout by default. */
export function createLogger(
  level: LogLevel,
  destination: NodeJS.WritableStream = process.stdout,
): Logger {
  return pino(
    {
      level,
      base: { component: 'cert-csi' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** True when text names a log level. */
export function isLogLevel(text: string): text is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(text);
}
