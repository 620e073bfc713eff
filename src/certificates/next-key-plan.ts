import type { KeyObject } from 'node:crypto';
import { type Certificate, CertificateCondition } from '../api/certificate.js';
import { isConditionTrue } from '../api/conditions.js';
import type { Secret } from '../api/secret.js';
import { goList, goQuote } from '../base/go-text.js';
import { privateKeyMismatches } from './private-key-match.js';

/** A Secret's `tls.key` as read: absent or empty, undecodable, or the key. */
export type StoredKey =
  | { state: 'missing' }
  | { state: 'undecodable' }
  | { state: 'key'; key: KeyObject };

/** An owned next-private-key Secret and its key. */
export interface NextKeySecret {
  secret: Secret;
  key: StoredKey;
}

/** An Event the keymanager emits. */
export interface KeyManagerEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** What cert-manager's keymanager controller does in one sync. */
export type NextKeyPlan =
  /** Nothing to change. */
  | { action: 'none'; events?: KeyManagerEvent[] }
  /** Not issuing: every next-key Secret goes, and the status forgets its name. */
  | { action: 'clean-up'; remove: Secret[]; clearStatusName: boolean }
  /** Store a new key (generated, or copied from spec.secretName under rotationPolicy Never). */
  | { action: 'create'; key: 'generate' | KeyObject; events: KeyManagerEvent[] }
  /** Delete Secrets that are not (or no longer) the next key. */
  | { action: 'remove'; remove: Secret[]; events: KeyManagerEvent[] }
  /** Record the one next-key Secret's name in the status. */
  | { action: 'adopt'; name: string };

/** The event after a next-key Secret is created; it names the new Secret, or spec.secretName when its key was reused. */
export function keyStoredEvent(reused: boolean, secretName: string): KeyManagerEvent {
  return reused
    ? {
        type: 'Normal',
        reason: 'Reused',
        message: `Reusing private key stored in existing Secret resource ${goQuote(secretName)}`,
      }
    : {
        type: 'Normal',
        reason: 'Generated',
        message: `Stored new private key in temporary Secret resource ${goQuote(secretName)}`,
      };
}

/**
 * Decides the keymanager's step: while the Certificate is issuing keep exactly one valid
 * next-private-key Secret (named in status.nextPrivateKeySecretName), otherwise none.
 * `current` is the key in spec.secretName, read only for rotationPolicy Never.
 */
export function nextKeyPlan(input: {
  certificate: Certificate;
  owned: readonly NextKeySecret[];
  current: StoredKey | undefined;
}): NextKeyPlan {
  const { certificate, owned } = input;
  const spec = certificate.spec;
  const named = certificate.status?.nextPrivateKeySecretName;
  if (!isConditionTrue(certificate.status?.conditions, CertificateCondition.Issuing)) {
    if (owned.length === 0 && named === undefined) return { action: 'none' };
    return {
      action: 'clean-up',
      remove: owned.map((o) => o.secret),
      clearStatusName: named !== undefined,
    };
  }
  // Applied here, not stored: cert-manager's runtime default since v1.18.
  const policy = spec.privateKey?.rotationPolicy ?? 'Always';
  if (owned.length === 0) {
    if (policy === 'Always') return { action: 'create', key: 'generate', events: [] };
    if (policy !== 'Never') return { action: 'none' };
    const current = input.current ?? { state: 'missing' };
    if (current.state === 'missing') return { action: 'create', key: 'generate', events: [] };
    if (current.state === 'undecodable')
      return {
        action: 'create',
        key: 'generate',
        events: [
          {
            type: 'Warning',
            reason: 'DecodeFailed',
            message: `Failed to decode private key stored in Secret ${goQuote(spec.secretName)} - generating new key`,
          },
        ],
      };
    const mismatches = privateKeyMismatches(current.key, spec.privateKey);
    if (mismatches.length > 0)
      return {
        action: 'none',
        events: [
          {
            type: 'Warning',
            reason: 'CannotRegenerateKey',
            message: `User intervention required: existing private key in Secret ${goQuote(spec.secretName)} does not match requirements on Certificate resource, mismatching fields: ${goList(mismatches)}, but cert-manager cannot create new private key as the Certificate's .spec.privateKey.rotationPolicy is unset or set to Never. To allow cert-manager to create a new private key you can set .spec.privateKey.rotationPolicy to 'Always' (this will result in the private key being regenerated every time a cert is renewed) `,
          },
        ],
      };
    return { action: 'create', key: current.key, events: [] };
  }
  if (owned.length > 1) {
    const remove = owned.filter((o) => o.secret.metadata.name !== named).map((o) => o.secret);
    return { action: 'remove', remove, events: [] };
  }
  const [only] = owned as [NextKeySecret];
  const name = only.secret.metadata.name;
  if (named === undefined) return { action: 'adopt', name };
  if (named !== name || only.key.state !== 'key')
    return { action: 'remove', remove: [only.secret], events: [] };
  const mismatches = privateKeyMismatches(only.key.key, spec.privateKey);
  if (mismatches.length > 0)
    return {
      action: 'remove',
      remove: [only.secret],
      events: [
        {
          type: 'Normal',
          reason: 'Deleted',
          message: `Regenerating private key due to change in fields: ${goList(mismatches)}`,
        },
      ],
    };
  return { action: 'none' };
}
