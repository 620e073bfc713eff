import { quoted } from '../api/echoed-value.js';

/**
 * Splits `--controllers` values as cert-manager's string-slice flag does: each value may be a
 * comma-separated list, and the flag may be repeated.
 */
export function parseControllersFlag(values: readonly string[]): string[] {
  return values
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter(Boolean);
}

/**
 * cert-manager's controller selection: `*` turns on every controller that is on by default,
 * a name turns that controller on (default or not), `-name` turns it off whatever else says.
 * A name that is not a known controller is refused with cert-manager's message.
 */
export function selectControllers(
  requested: readonly string[],
  known: readonly string[],
  enabledByDefault: readonly string[],
): Set<string> {
  const knownSet = new Set(known);
  const unknown = requested
    .filter((name) => name !== '*')
    .map((name) => (name.startsWith('-') ? name.slice(1) : name))
    .filter((name) => !knownSet.has(name));
  if (unknown.length > 0) {
    const problems = unknown.map(
      (name) => `${quoted(name)} is not in the list of known controllers`,
    );
    throw new Error(`validation failed for '--controllers': [${problems.join(' ')}]`);
  }
  const enabled = new Set<string>();
  const disabled = new Set<string>();
  for (const name of requested) {
    if (name === '*') for (const on of enabledByDefault) enabled.add(on);
    else if (name.startsWith('-')) disabled.add(name.slice(1));
    else enabled.add(name);
  }
  for (const name of disabled) enabled.delete(name);
  return enabled;
}
