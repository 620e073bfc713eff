import { ClusterIssuerKind } from '../api/issuer.js';
import { CERT_MANAGER_GROUP } from '../api/issuer-ref.js';
import { specFromVolumeContext } from '../attributes/stored-spec.js';
import { EMBEDDED_CA_ISSUER } from '../issuer/embedded-issuers.js';
import type { DataRoot } from '../volume/data-root.js';
import { readMetadata } from '../volume/metadata.js';

/**
 * Ids of the volumes on the data root that the embedded CA signed (issuer `embedded-ca`, kind
 * ClusterIssuer): their pods trust that CA only. A volume whose metadata cannot be read is left
 * out: rediscovery sets it aside and never renews it, so no CA decision can help it.
 */
export async function volumesSignedByEmbeddedCa(dataRoot: DataRoot): Promise<string[]> {
  const ids: string[] = [];
  for (const id of await dataRoot.listVolumeIds()) {
    try {
      const meta = await readMetadata(dataRoot, id);
      const ref = specFromVolumeContext(meta.volumeContext, meta.volumeMountGroup).issuerRef;
      if (
        ref.name === EMBEDDED_CA_ISSUER &&
        ref.kind === ClusterIssuerKind.kind &&
        ref.group === CERT_MANAGER_GROUP
      ) {
        ids.push(id);
      }
    } catch {
      // Unreadable or no longer valid: see above.
    }
  }
  return ids;
}
