import { isIPv4, isIPv6 } from 'node:net';
import { type Pod, podIPsOf } from '../../api/pod.js';
import { goQuoteValue } from '../../base/go-text.js';
import { ipAddressBytes } from '../../pki/san.js';

// csi-driver's --pod-readiness-gate (its pkg/readinessgate): its syntax, its parse
// errors and its reasons, word for word; evaluated against a Pod object, nothing else.

/** The address families a pod-ip gate can ask for. */
export const POD_IP_FAMILIES = ['any', 'ipv4', 'ipv6'] as const;
export type PodIpFamily = (typeof POD_IP_FAMILIES)[number];

const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/** One parsed --pod-readiness-gate: all of them must pass before a volume's issuance. */
export type ReadinessGate =
  | { type: 'pod-ip'; family: PodIpFamily }
  | { type: 'pod-condition'; condition: string; status: ConditionStatus }
  | { type: 'pod-annotation'; key: string };

/** The gate a volume using ${POD_IP} or ${POD_IPS} implies: the pod has an address. */
export const POD_HAS_IP_GATE: ReadinessGate = { type: 'pod-ip', family: 'any' };

/** Parses one --pod-readiness-gate value; throws with csi-driver's message. */
export function parseReadinessGate(spec: string): ReadinessGate {
  const fail = (detail: string): never => {
    throw new Error(`invalid --pod-readiness-gate ${goQuoteValue(spec)}: ${detail}`);
  };
  const colon = spec.indexOf(':');
  const type = colon < 0 ? '' : spec.slice(0, colon);
  const value = colon < 0 ? '' : spec.slice(colon + 1);
  if (type === '' || value === '') {
    return fail(`expected <type>:<value>, got ${goQuoteValue(spec)}`);
  }
  switch (type) {
    case 'pod-ip': {
      const family = POD_IP_FAMILIES.find((f) => f === value);
      if (!family)
        return fail(`pod-ip: unsupported family ${goQuoteValue(value)}; use any, ipv4, or ipv6`);
      return { type, family };
    }
    case 'pod-condition': {
      const equals = value.indexOf('=');
      const condition = equals < 0 ? value : value.slice(0, equals);
      if (condition === '') return fail('pod-condition: condition type must not be empty');
      if (equals < 0) return { type, condition, status: 'True' };
      const wanted = value.slice(equals + 1);
      const status = CONDITION_STATUSES.find((s) => s.toLowerCase() === wanted.toLowerCase());
      if (!status) {
        return fail(
          `pod-condition: invalid status ${goQuoteValue(wanted)}; must be True, False, or Unknown`,
        );
      }
      return { type, condition, status };
    }
    case 'pod-annotation':
      return { type, key: value };
    default:
      return fail(
        `unknown type ${goQuoteValue(type)}; supported types: pod-ip, pod-condition, pod-annotation`,
      );
  }
}

/** Parses every --pod-readiness-gate; the first bad one throws. */
export function parseReadinessGates(specs: readonly string[]): ReadinessGate[] {
  return specs.map(parseReadinessGate);
}

/** Why one gate does not pass for pod; undefined when it passes. */
export function gateProblem(gate: ReadinessGate, pod: Pod): string | undefined {
  switch (gate.type) {
    case 'pod-ip':
      return podIPsOf(pod).some((ip) => familyOf(ip) !== undefined && matches(gate.family, ip))
        ? undefined
        : `pod has no ${FAMILY_WORDS[gate.family]} address yet`;
    case 'pod-condition': {
      const condition = pod.status?.conditions?.find((c) => c.type === gate.condition);
      if (!condition) return `pod condition ${goQuoteValue(gate.condition)} not yet present`;
      if (condition.status === gate.status) return undefined;
      return `pod condition ${gate.condition} is ${goQuoteValue(condition.status)}, want ${goQuoteValue(gate.status)}`;
    }
    case 'pod-annotation':
      return pod.metadata.annotations?.[gate.key]
        ? undefined
        : `pod does not yet have annotation ${goQuoteValue(gate.key)} with a non-empty value`;
  }
}

/** Every failing gate's reason, joined with `; ` as csi-driver does; undefined when all pass. */
export function gatesProblem(gates: readonly ReadinessGate[], pod: Pod): string | undefined {
  const reasons = gates.flatMap((gate) => gateProblem(gate, pod) ?? []);
  return reasons.length > 0 ? reasons.join('; ') : undefined;
}

/** The reason when the pod is not in the node's pod cache (yet, or any more). */
export function podNotObserved(namespace: string, name: string): string {
  return `pod ${namespace}/${name} not yet observed by informer`;
}

// csi-driver words the reason with the family it asked for; "any" reads as "IP".
const FAMILY_WORDS: Record<PodIpFamily, string> = { any: 'IP', ipv4: 'IPv4', ipv6: 'IPv6' };

function matches(family: PodIpFamily, ip: string): boolean {
  return family === 'any' || familyOf(ip) === family;
}

/** ipv4 or ipv6, an IPv4-mapped IPv6 address (::ffff:a.b.c.d) counting as IPv4; undefined when no address. */
export function familyOf(ip: string): 'ipv4' | 'ipv6' | undefined {
  if (isIPv4(ip)) return 'ipv4';
  if (!isIPv6(ip) || ip.includes('%')) return undefined;
  // ipAddressBytes gives an IPv4-mapped address as its 4 IPv4 bytes, as Go's To4 does.
  return ipAddressBytes(ip).length === 4 ? 'ipv4' : 'ipv6';
}
