import {
  type ClusterTrustBundle,
  ClusterTrustBundleKind,
  trustBundleNamePrefix,
} from '../../api/cluster-trust-bundle.js';
import { type Issuer, issuerTypeOf } from '../../api/issuer.js';
import { isNamespacedIssuer, signerNameOfIssuer } from '../../api/issuer-signer-name.js';
import { apiVersionOf } from '../../api/meta.js';
import { type Secret, SecretKind } from '../../api/secret.js';
import { defineController, watchInformer } from '../../controller/controller-definition.js';
import { RecentWrites } from '../../controller/recent-writes.js';
import { isStoreError } from '../../store/errors.js';
import { readCAKeyPair } from '../ca-issuer.js';
import { resourceNamespaceOf } from '../issuer-lookup.js';
import type { IssuerStackConfig } from '../stack-config.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from './pod-certificate-policy.js';
import { signerIssuers } from './signer-issuers.js';
import { trustAnchorOf, trustBundleContent } from './trust-bundle-content.js';

/** The controller's name, as `--controllers` selects it. */
export const TRUST_BUNDLE_PUBLISHER = 'clustertrustbundles-publisher';

/** The label on every ClusterTrustBundle this controller owns (and may delete). */
export const TRUST_BUNDLE_LABEL = 'cert-csi.io/trust-bundle';

/** The name of a signer's bundle: `<signerName with / as :>:primary`. */
export function trustBundleNameOf(signerName: string): string {
  return `${trustBundleNamePrefix(signerName)}primary`;
}

/** True when the issuer can sign pod certificates for someone: a CA Issuer, or a CA ClusterIssuer that opted in. */
function servesPods(issuer: Issuer): boolean {
  if (issuerTypeOf(issuer) !== 'ca' || issuer.metadata.deletionTimestamp) return false;
  return (
    isNamespacedIssuer(issuer) ||
    issuer.metadata.annotations?.[POD_CERTIFICATE_NAMESPACES_ANNOTATION] !== undefined
  );
}

/**
 * Publishes the CA of every issuer that serves pod certificates as a signer-linked
 * ClusterTrustBundle (in the version the cluster serves: the store resolves it), so pods can trust it through a
 * `clusterTrustBundle` projection: kept current when the CA Secret changes (previous roots
 * stay while valid, see trustBundleContent), deleted when the issuer stops serving pods.
 * While the CA Secret is missing or unusable the bundle is left as it is: pods still need it.
 */
export const trustBundlePublisher = defineController<IssuerStackConfig>({
  name: TRUST_BUNDLE_PUBLISHER,
  setup({ store, informers, logger, now, config }) {
    const { issuers, clusterIssuers, issuerOf, signersOfSecret } = signerIssuers(
      informers,
      config.clusterResourceNamespace,
    );
    const secrets = informers.informer<Secret>(SecretKind);
    const bundles = informers.informer<ClusterTrustBundle>(ClusterTrustBundleKind);
    const written = new RecentWrites<ClusterTrustBundle>();
    const signerOf = (issuer: Issuer) => [signerNameOfIssuer(issuer)];
    const ownBundle = (bundle: ClusterTrustBundle) =>
      bundle.metadata.labels?.[TRUST_BUNDLE_LABEL] === 'true' && bundle.spec.signerName
        ? [bundle.spec.signerName]
        : [];

    return {
      watches: [
        watchInformer(issuers, signerOf, { deletes: true }),
        watchInformer(clusterIssuers, signerOf, { deletes: true }),
        watchInformer(secrets, signersOfSecret, { deletes: true }),
        watchInformer(bundles, ownBundle, { deletes: true }),
        {
          // A bundle deleted by someone must not live on as this controller's last write.
          subscribe: () =>
            bundles.on('delete', (bundle) => written.deleted(bundle.metadata.name, bundle)),
        },
      ],
      async sync(signerName) {
        const name = trustBundleNameOf(signerName);
        const existing = written.latest(name, bundles.get(name));
        const issuer = issuerOf(signerName);
        if (!issuer || !servesPods(issuer)) {
          if (existing?.metadata.labels?.[TRUST_BUNDLE_LABEL] !== 'true') return undefined;
          try {
            await store.delete(ClusterTrustBundleKind, name);
          } catch (err) {
            if (!isStoreError(err, 'NotFound')) throw err;
          }
          written.forget(name);
          logger.info(
            { signer: signerName, bundle: name },
            'trust bundle deleted: the issuer no longer serves pods',
          );
          return undefined;
        }
        const secret = secrets.get(
          issuer.spec.ca?.secretName ?? '',
          resourceNamespaceOf(issuer, config.clusterResourceNamespace),
        );
        let anchor: ReturnType<typeof trustAnchorOf>;
        try {
          anchor = secret ? trustAnchorOf(readCAKeyPair(secret).certificates) : undefined;
        } catch {
          anchor = undefined;
        }
        if (!anchor) return undefined;
        const trustBundle = trustBundleContent([anchor], existing?.spec.trustBundle, now());
        const labels = { ...existing?.metadata.labels, [TRUST_BUNDLE_LABEL]: 'true' };
        if (!existing) {
          const created = await store.create<ClusterTrustBundle>(ClusterTrustBundleKind, {
            apiVersion: apiVersionOf(ClusterTrustBundleKind),
            kind: ClusterTrustBundleKind.kind,
            metadata: { name, labels },
            spec: { signerName, trustBundle },
          });
          written.remember(name, created);
          logger.info({ signer: signerName, bundle: name }, 'trust bundle published');
          return undefined;
        }
        if (
          existing.spec.trustBundle === trustBundle &&
          existing.spec.signerName === signerName &&
          existing.metadata.labels?.[TRUST_BUNDLE_LABEL] === 'true'
        ) {
          return undefined;
        }
        let updated: ClusterTrustBundle;
        try {
          updated = await store.update<ClusterTrustBundle>(ClusterTrustBundleKind, {
            ...existing,
            metadata: { ...existing.metadata, labels },
            spec: { signerName, trustBundle },
          });
        } catch (err) {
          // Deleted by someone before the cache showed it: published again on the retry.
          if (isStoreError(err, 'NotFound')) written.forget(name);
          throw err;
        }
        written.remember(name, updated);
        logger.info({ signer: signerName, bundle: name }, 'trust bundle updated');
        return undefined;
      },
    };
  },
});
