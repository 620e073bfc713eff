import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import { type AttributeError, formatAttributeErrors } from './attribute-errors.js';
import { readIpSans, sanCountProblem } from './identity-attributes.js';
import { podIpVariables } from './volume-attributes.js';

/** A spec expanded with the pod's IPs, or why its attributes are invalid with them. */
export type PodIpExpansion =
  | { ok: true; spec: VolumeCertificateSpec }
  | { ok: false; message: string };

/**
 * The spec of a volume whose ip-sans use ${POD_IP} or ${POD_IPS}, with them expanded to the
 * pod's IPs: the one attribute that depends on them read again, under the checks it met at
 * publish (addresses that parse; no more SANs than a certificate holds). The rest of the spec
 * was parsed once, at publish or at start, and does not depend on the pod's IPs. A spec that
 * does not use them is returned as it is.
 */
export function expandPodIPs(
  spec: VolumeCertificateSpec,
  podIPs: readonly string[],
): PodIpExpansion {
  const sans = spec.podIpSans;
  if (sans === undefined) return { ok: true, spec };
  const { keys } = sans;
  const read = readIpSans(sans.template, podIpVariables(podIPs));
  const errors: AttributeError[] = read.problems.map((message) => ({ key: keys.ipSans, message }));
  const ipAddresses = read.ipAddresses;
  const tooMany = sanCountProblem(spec.dnsNames.length + ipAddresses.length + spec.uris.length);
  if (tooMany !== undefined) {
    // Named under each list that holds some, as the parse at publish names them.
    const lists: Array<[string, number]> = [
      [keys.dnsNames, spec.dnsNames.length],
      [keys.ipSans, ipAddresses.length],
      [keys.uriSans, spec.uris.length],
    ];
    for (const [key, count] of lists) if (count > 0) errors.push({ key, message: tooMany });
  }
  if (errors.length > 0) return { ok: false, message: formatAttributeErrors(errors) };
  return { ok: true, spec: { ...spec, ipAddresses, podIPs: [...podIPs] } };
}
