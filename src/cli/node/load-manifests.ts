import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CertificateKind } from '../../api/certificate.js';
import { ConfigMapKind } from '../../api/config-map.js';
import { quoted } from '../../api/echoed-value.js';
import { ClusterIssuerKind, IssuerKind } from '../../api/issuer.js';
import type { KubeObject, ResourceKind } from '../../api/meta.js';
import { SecretKind } from '../../api/secret.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import { errorMessage } from '../../base/error-message.js';
import { RefusedFileError, readRegularFile } from '../../fs/regular-file.js';
import type { AdmissionHook } from '../../store/admission.js';
import { isStoreError } from '../../store/errors.js';
import { invalidObject } from '../../store/object-rules.js';
import type { ResourceStore } from '../../store/resource-store.js';
import { embeddedAdmission } from './embedded-admission.js';

/**
 * The largest manifest file read: several documents of objects the API server would take
 * (each at most 3 MiB as a request body).
 */
export const MANIFEST_FILE_MAX_BYTES = 16 * 1024 * 1024;

const loadableKinds: ReadonlyMap<string, ResourceKind> = new Map([
  ['v1/Secret', SecretKind],
  ['v1/ConfigMap', ConfigMapKind],
  ['cert-manager.io/v1/Issuer', IssuerKind],
  ['cert-manager.io/v1/ClusterIssuer', ClusterIssuerKind],
  ['cert-manager.io/v1/Certificate', CertificateKind],
]);

export interface LoadManifestsOptions {
  /**
   * Checks every object before anything is written, as the store will on write; the embedded
   * store's admission (Certificate validation) by default.
   */
  admit?: AdmissionHook;
}

/** A manifest that cannot be loaded, with the file and document it came from. */
export class ManifestError extends Error {
  constructor(where: string, problem: string) {
    super(`${where}: ${problem}`);
    this.name = 'ManifestError';
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_MANIFEST_INVALID';
  }
}

interface Manifest {
  where: string;
  kind: ResourceKind;
  object: KubeObject;
}

/**
 * Reads every .yaml, .yml and .json file of dir (multi-document YAML, kubectl style),
 * checks all documents first (kinds, names, scope, and admission: an invalid Certificate is
 * refused with its field errors), then creates or replaces each object in the store.
 * A bad file stops everything before anything is written. Namespaced objects without a
 * namespace go to `default`, as kubectl does.
 */
export async function loadManifests(
  store: ResourceStore,
  dir: string,
  options: LoadManifestsOptions = {},
): Promise<number> {
  const admit = options.admit ?? embeddedAdmission;
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /\.(ya?ml|json)$/i.test(n)).sort();
  } catch (err) {
    throw new ManifestError(dir, `cannot read directory: ${(err as Error).message}`);
  }
  const manifests: Manifest[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const documents = parseAllDocuments(await readManifestFile(file));
    const list = Array.isArray(documents) ? documents : [documents];
    list.forEach((document, index) => {
      const where = list.length > 1 ? `${file} (document ${index + 1})` : file;
      if (document.errors.length > 0) {
        throw new ManifestError(where, `invalid YAML: ${document.errors[0]?.message ?? ''}`);
      }
      const value: unknown = document.toJS();
      if (value === null || value === undefined) return;
      manifests.push(checkManifest(where, value, admit));
    });
  }
  for (const manifest of manifests) await upsert(store, manifest);
  return manifests.length;
}

// A regular file, never a blocking open (see regular-file.ts). Links are followed: a ConfigMap
// mounted as the dir holds a link per file.
async function readManifestFile(file: string): Promise<string> {
  try {
    const content = await readRegularFile(file, {
      maxBytes: MANIFEST_FILE_MAX_BYTES,
      followSymlinks: true,
    });
    return content.toString('utf8');
  } catch (err) {
    if (err instanceof RefusedFileError) throw new ManifestError(file, err.problem);
    throw new ManifestError(file, `cannot read file: ${errorMessage(err)}`);
  }
}

function checkManifest(where: string, value: unknown, admit: AdmissionHook): Manifest {
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ManifestError(where, 'expected an object with apiVersion, kind and metadata');
  }
  const object = value as Partial<KubeObject>;
  const kind = loadableKinds.get(`${object.apiVersion}/${object.kind}`);
  if (!kind) {
    throw new ManifestError(
      where,
      `unsupported apiVersion/kind "${String(object.apiVersion)}/${String(object.kind)}": only v1 Secret and ConfigMap and cert-manager.io/v1 Issuer, ClusterIssuer and Certificate can be loaded`,
    );
  }
  if (typeof object.metadata?.name !== 'string' || object.metadata.name === '') {
    throw new ManifestError(where, 'metadata.name is required');
  }
  const metadata = { ...object.metadata, name: object.metadata.name };
  if (kind.namespaced) metadata.namespace = metadata.namespace || 'default';
  else if (metadata.namespace) {
    throw new ManifestError(where, `${kind.kind} is cluster-scoped: remove metadata.namespace`);
  }
  const loaded = { ...object, metadata } as KubeObject & { stringData?: unknown; data?: unknown };
  if (kind === SecretKind && loaded.stringData !== undefined) {
    // The API server folds stringData into data; the store keeps what it is given.
    const data = { ...(loaded.data as Record<string, string> | undefined) };
    for (const [key, text] of Object.entries(loaded.stringData as Record<string, unknown>)) {
      data[key] = Buffer.from(String(text), 'utf8').toString('base64');
    }
    loaded.data = data;
    delete loaded.stringData;
  }
  // As a create: the store checks an update of an existing object again, against it.
  let errors: readonly string[];
  try {
    errors = admit(kind, structuredClone(loaded), undefined, 'create');
  } catch (err) {
    // No CRD schema checks field types here: a list written as a string can trip a validator.
    throw new ManifestError(
      where,
      `cannot validate ${kind.kind} ${quoted(metadata.name)}: ${errorMessage(err)}`,
    );
  }
  if (errors.length > 0) {
    throw new ManifestError(where, invalidObject(kind, metadata.name, errors).message);
  }
  return { where, kind, object: loaded };
}

async function upsert(store: ResourceStore, manifest: Manifest): Promise<void> {
  const { kind, object, where } = manifest;
  try {
    try {
      await store.create(kind, object);
    } catch (err) {
      if (!isStoreError(err, 'AlreadyExists')) throw err;
      const { resourceVersion: _ignored, ...metadata } = object.metadata;
      await store.update(kind, { ...object, metadata });
    }
  } catch (err) {
    throw new ManifestError(where, (err as Error).message);
  }
}
