import { CERTIFICATE_REVISION_ANNOTATION } from '../api/certificate.js';
import type { CertificateRequest } from '../api/certificate-request.js';
import { parseGoInteger } from '../base/go-text.js';

/** A request's revision annotation as Go's strconv.Atoi reads it, or undefined when it is missing or no integer. */
export function requestRevision(request: CertificateRequest): number | undefined {
  const text = request.metadata.annotations?.[CERTIFICATE_REVISION_ANNOTATION];
  if (text === undefined) return undefined;
  const parsed = parseGoInteger(text, 'Atoi');
  return parsed.ok ? Number(parsed.value) : undefined;
}
