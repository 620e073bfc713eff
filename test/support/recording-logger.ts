import type { Logger } from '../../src/api/logger.js';

/** One log call: level, bindings object and message. */
export type LogRecord = [level: string, obj: object, msg: string | undefined];

/** A Logger that keeps every record (children share the list), for asserting on log output. */
export function recordingLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const logger = {
    records,
    debug: (o: object, m?: string) => void records.push(['debug', o, m]),
    info: (o: object, m?: string) => void records.push(['info', o, m]),
    warn: (o: object, m?: string) => void records.push(['warn', o, m]),
    error: (o: object, m?: string) => void records.push(['error', o, m]),
    child: () => logger,
  };
  return logger;
}
