import {
  CONFIG_MAP_KEY_DOTS_RULE,
  CONFIG_MAP_KEY_ERROR,
  CONFIG_MAP_KEY_MAX_LENGTH,
  hasConfigMapKeyCharacters,
  isDotDirectoryKey,
} from '../api/kube-names.js';
import type { TrustBundleSource } from '../api/trust-bundle-source.js';
import { errorMessage } from '../base/error-message.js';
import { validateSignerName } from '../base/signer-name.js';
import { parseLabelSelector } from '../store/label-selector.js';
import { invalidValue, requiredValue, tooLong } from './attribute-errors.js';
import type { AttributeReader } from './attribute-reader.js';
import { dnsSubdomainProblem } from './object-names.js';

/** The forms the trust-bundle attribute takes, for error messages. */
export const TRUST_BUNDLE_FORMS =
  'configmap:<name>/<key>, clustertrustbundle:<name>, clustertrustbundle-signer:<signerName>[;<labelSelector>], bundle:<name>[/<key>]';

/** What the attribute's value names, or why it names nothing. */
export type ParsedTrustBundleSource =
  | { ok: true; source: TrustBundleSource }
  | { ok: false; problems: string[] };

/**
 * Parses the trust-bundle attribute: `configmap:<name>/<key>` and `bundle:<name>[/<key>]`
 * (trust-manager's target ConfigMap) in the pod's namespace, `clustertrustbundle:<name>`, or
 * `clustertrustbundle-signer:<signerName>[;<labelSelector>]` (every bundle of the signer, or
 * those the selector selects). Problems are field-error bodies with the value shortened.
 */
export function parseTrustBundleSource(text: string, namespace: string): ParsedTrustBundleSource {
  const colon = text.indexOf(':');
  const form = colon < 0 ? '' : text.slice(0, colon);
  const rest = text.slice(colon + 1);
  const problems: string[] = [];
  const fail = (detail: string) => {
    problems.push(invalidValue(text, detail));
    return { ok: false as const, problems };
  };
  switch (form) {
    case 'configmap':
    case 'bundle': {
      const slash = rest.indexOf('/');
      const name = slash < 0 ? rest : rest.slice(0, slash);
      const key = slash < 0 ? undefined : rest.slice(slash + 1);
      if (form === 'configmap' && key === undefined) return fail('must be configmap:<name>/<key>');
      problems.push(...objectNameProblems(name, `${form} name`));
      if (key !== undefined) problems.push(...configMapKeyProblems(key));
      if (problems.length > 0) return { ok: false, problems };
      if (form === 'configmap') {
        return { ok: true, source: { kind: 'configmap', namespace, name, key: key as string } };
      }
      return {
        ok: true,
        source: { kind: 'bundle', namespace, name, ...(key === undefined ? {} : { key }) },
      };
    }
    case 'clustertrustbundle':
      problems.push(...bundleNameProblems(rest));
      if (problems.length > 0) return { ok: false, problems };
      return { ok: true, source: { kind: 'clustertrustbundle', name: rest } };
    case 'clustertrustbundle-signer': {
      const semicolon = rest.indexOf(';');
      const signerName = semicolon < 0 ? rest : rest.slice(0, semicolon);
      const labelSelector = semicolon < 0 ? '' : rest.slice(semicolon + 1).trim();
      problems.push(...validateSignerName('signerName', signerName));
      try {
        parseLabelSelector(labelSelector);
      } catch (err) {
        problems.push(invalidValue(labelSelector, `not a label selector: ${errorMessage(err)}`));
      }
      if (problems.length > 0) return { ok: false, problems };
      return { ok: true, source: { kind: 'clustertrustbundle-signer', signerName, labelSelector } };
    }
    default:
      return fail(`must be one of ${TRUST_BUNDLE_FORMS}`);
  }
}

/** Reads the optional trust-bundle attribute; "" is an error, not a way to leave it unset. */
export function readTrustBundle(
  attrs: AttributeReader,
  namespace: string,
): TrustBundleSource | undefined {
  const text = attrs.value('trust-bundle');
  if (text === undefined) return undefined;
  if (text === '') {
    attrs.fail('trust-bundle', requiredValue(`one of ${TRUST_BUNDLE_FORMS}`));
    return undefined;
  }
  const parsed = parseTrustBundleSource(text, namespace);
  if (parsed.ok) return parsed.source;
  for (const problem of parsed.problems) attrs.fail('trust-bundle', problem);
  return undefined;
}

function objectNameProblems(name: string, what: string): string[] {
  if (name === '') return [requiredValue(`${what} is empty`)];
  const problem = dnsSubdomainProblem(name);
  return problem === undefined ? [] : [problem];
}

function configMapKeyProblems(key: string): string[] {
  if (key === '') return [requiredValue('the key is empty')];
  if (key.length > CONFIG_MAP_KEY_MAX_LENGTH) return [tooLong(key, CONFIG_MAP_KEY_MAX_LENGTH)];
  if (!hasConfigMapKeyCharacters(key)) return [invalidValue(key, CONFIG_MAP_KEY_ERROR)];
  if (isDotDirectoryKey(key)) return [invalidValue(key, CONFIG_MAP_KEY_DOTS_RULE)];
  return [];
}

// An unlinked bundle's name is a DNS subdomain; a signer-linked one is `<domain>:<path>:<name>`.
function bundleNameProblems(name: string): string[] {
  if (name === '') return [requiredValue('clustertrustbundle name is empty')];
  const parts = name.split(':');
  if (parts.length === 1) return objectNameProblems(name, 'clustertrustbundle name');
  if (parts.length !== 3) {
    return [
      invalidValue(
        name,
        'a ClusterTrustBundle name is a DNS subdomain, or <signer name with / as :>:<DNS subdomain>',
      ),
    ];
  }
  const [domain, path, own] = parts as [string, string, string];
  return [
    ...validateSignerName('signerName', `${domain}/${path}`),
    ...objectNameProblems(own, 'clustertrustbundle name'),
  ];
}
