import { POD_NAMESPACE_KEY, sortVolumeContext } from '../../attributes/attribute-keys.js';
import { AttributeReader } from '../../attributes/attribute-reader.js';
import { readIssuerRef } from '../../attributes/issuer-attributes.js';
import type { SignedObject } from '../../issuer/ca-loss.js';
import type { DataRoot } from '../../volume/data-root.js';
import { readMetadata, type VolumeMetadata } from '../../volume/metadata.js';

/**
 * The volumes on the data root that hold a certificate, each with the issuer its context names
 * (and its pod's namespace, where an Issuer reference points): their pods trust that issuer's
 * CA. Only the issuer keys are read, not the whole context, so a volume whose other attributes
 * a newer version refuses still counts: its pod holds the CA all the same. A volume whose
 * metadata cannot be read is left out: rediscovery sets it aside and never renews it, so no CA
 * decision can help it; one still waiting for its first certificate holds nothing signed.
 */
export async function signedVolumes(dataRoot: DataRoot): Promise<SignedObject[]> {
  const signed: SignedObject[] = [];
  for (const id of await dataRoot.listVolumeIds()) {
    let meta: VolumeMetadata;
    try {
      meta = await readMetadata(dataRoot, id);
    } catch {
      continue; // Unreadable: see above.
    }
    if (meta.notAfter === undefined) continue;
    const sorted = sortVolumeContext(meta.volumeContext);
    signed.push({
      kind: 'volume',
      id,
      issuerRef: readIssuerRef(new AttributeReader(sorted.attributes)),
      namespace: sorted.kubelet.get(POD_NAMESPACE_KEY) ?? '',
    });
  }
  return signed;
}
