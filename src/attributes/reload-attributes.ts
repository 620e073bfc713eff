import { isAbsolute, normalize } from 'node:path';
import type { ReloadSignalName, ReloadSpec } from '../api/volume-spec.js';
import { invalidValue, tooLong, unsupportedValue } from './attribute-errors.js';
import { ATTRIBUTE_PREFIX } from './attribute-keys.js';
import type { AttributeReader } from './attribute-reader.js';
import { dnsLabelProblem } from './object-names.js';

/** The signals reload-signal accepts, by the name it is written with. */
export const RELOAD_SIGNALS: Readonly<Record<string, ReloadSignalName>> = {
  HUP: 'SIGHUP',
  USR1: 'SIGUSR1',
  USR2: 'SIGUSR2',
  TERM: 'SIGTERM',
};

/** The one host a reload URL may name: the pod's own IP, filled in at each rewrite. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the variable as the attribute spells it
export const RELOAD_URL_HOST = '${POD_IP}';

// A URL is a line of a manifest; a longer one is no reload endpoint.
const RELOAD_URL_MAX_CHARACTERS = 1024;
const PATH_MAX_CHARACTERS = 4096;
// What ${POD_IP} stands for while the URL is checked (TEST-NET-1, never a pod's address).
const CHECK_IP = '192.0.2.1';

/**
 * The URL a reload is POSTed to, with the pod's IP in place of ${POD_IP} (IPv6 in brackets);
 * undefined when template is not a reload URL (checked at publish: never for a parsed spec).
 */
export function reloadUrl(template: string, podIP: string): URL | undefined {
  const host = podIP.includes(':') ? `[${podIP}]` : podIP;
  try {
    return new URL(template.replace(RELOAD_URL_HOST, host));
  } catch {
    return undefined;
  }
}

/**
 * Why text cannot be a reload URL, or undefined when it can: `http://${POD_IP}` with an
 * optional port and path, nothing else. The host is the pod's own IP by construction (no
 * name, no other address), so the node only ever POSTs to the pod that asked; no user
 * information, no fragment, no other variable.
 */
export function reloadUrlProblem(text: string): string | undefined {
  if (text.length > RELOAD_URL_MAX_CHARACTERS) return tooLong(text, RELOAD_URL_MAX_CHARACTERS);
  const prefix = `http://${RELOAD_URL_HOST}`;
  const detail = `must be ${prefix}[:<port>][/<path>]: a POST to the pod's own IP`;
  if (!text.startsWith(prefix)) return invalidValue(text, detail);
  const rest = text.slice(prefix.length);
  if (rest !== '' && !rest.startsWith(':') && !rest.startsWith('/')) {
    return invalidValue(text, detail);
  }
  if (rest.includes('$')) return invalidValue(text, `${detail}; no other variable`);
  const url = reloadUrl(text, CHECK_IP);
  if (url?.hostname !== CHECK_IP || url.username !== '' || text.includes('#')) {
    return invalidValue(text, detail);
  }
  return undefined;
}

/**
 * Reads reload-url, reload-signal, reload-container and reload-pid-file; undefined when the
 * volume asks for no reload. A container or PID file goes with a signal, and not both.
 */
export function readReloadAttributes(attrs: AttributeReader): ReloadSpec | undefined {
  const reload: ReloadSpec = {};
  const url = attrs.value('reload-url');
  if (url !== undefined) {
    const problem = reloadUrlProblem(url);
    if (problem !== undefined) attrs.fail('reload-url', problem);
    reload.url = url;
  }
  const signalText = attrs.value('reload-signal');
  const container = attrs.value('reload-container');
  const pidFile = attrs.value('reload-pid-file');
  if (signalText === undefined) {
    const needsSignal = `cannot use attribute without "${ATTRIBUTE_PREFIX}reload-signal"`;
    if (container !== undefined)
      attrs.fail('reload-container', invalidValue(container, needsSignal));
    if (pidFile !== undefined) attrs.fail('reload-pid-file', invalidValue(pidFile, needsSignal));
  } else {
    const name = Object.hasOwn(RELOAD_SIGNALS, signalText) ? RELOAD_SIGNALS[signalText] : undefined;
    if (name === undefined) {
      attrs.fail('reload-signal', unsupportedValue(signalText, Object.keys(RELOAD_SIGNALS)));
    }
    reload.signal = { name: name ?? 'SIGHUP' };
    if (container !== undefined) {
      const problem = dnsLabelProblem(container);
      if (problem !== undefined) attrs.fail('reload-container', problem);
      reload.signal.container = container;
    }
    if (pidFile !== undefined) {
      const problem = pidFileProblem(pidFile);
      if (problem !== undefined) attrs.fail('reload-pid-file', invalidValue(pidFile, problem));
      if (container !== undefined) {
        attrs.fail(
          'reload-pid-file',
          invalidValue(pidFile, `cannot be used with "${ATTRIBUTE_PREFIX}reload-container"`),
        );
      }
      reload.signal.pidFile = pidFile;
    }
  }
  return reload.url === undefined && reload.signal === undefined ? undefined : reload;
}

function pidFileProblem(path: string): string | undefined {
  if (path.length > PATH_MAX_CHARACTERS) return `must be at most ${PATH_MAX_CHARACTERS} characters`;
  if (path.includes('\0')) return 'must not include NUL characters';
  if (!isAbsolute(path) || normalize(path) !== path) return 'must be a normalized absolute path';
  return undefined;
}
