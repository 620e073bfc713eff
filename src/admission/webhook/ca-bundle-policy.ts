import type { X509Certificate } from 'node:crypto';
import type {
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
} from '../../api/webhook-configuration.js';
import { splitPemCertificates } from '../../pki/chain.js';

/** A Validating- or MutatingWebhookConfiguration: the keeper treats both alike. */
export type WebhookConfigurationObject =
  | ValidatingWebhookConfiguration
  | MutatingWebhookConfiguration;

/** The caBundle value of a PEM bundle (base64 of the PEM text, as the API's []byte is). */
export function caBundleOf(bundlePem: string): string {
  return Buffer.from(bundlePem, 'utf8').toString('base64');
}

/**
 * The configuration with every webhook's clientConfig.caBundle set to caBundle, or undefined
 * when each already has it (nothing to write). Nothing else changes.
 */
export function withCaBundle(
  configuration: WebhookConfigurationObject,
  caBundle: string,
): WebhookConfigurationObject | undefined {
  const webhooks = configuration.webhooks ?? [];
  if (webhooks.every((w) => w.clientConfig.caBundle === caBundle)) return undefined;
  return {
    ...configuration,
    webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle } })),
  };
}

function certificatesOf(caBundle: string | undefined): X509Certificate[] {
  if (!caBundle) return [];
  try {
    return splitPemCertificates(Buffer.from(caBundle, 'base64').toString('utf8'));
  } catch {
    return [];
  }
}

/** True when every webhook of the configuration trusts ca (its caBundle holds that certificate). */
export function configurationTrusts(
  configuration: WebhookConfigurationObject,
  ca: X509Certificate,
): boolean {
  return (configuration.webhooks ?? []).every((w) =>
    certificatesOf(w.clientConfig.caBundle).some((c) => c.raw.equals(ca.raw)),
  );
}
