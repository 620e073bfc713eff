import {
  aBoolean,
  anInteger,
  aString,
  listOf,
  mapOf,
  objectOf,
  type Shape,
} from './object-shape.js';

// The types of the cert-manager.io/v1 fields the webhook's rules read (cert-manager's CRDs),
// checked before the rules run. Fields no rule reads are left unchecked.

const strings = listOf(aString, 'a list of strings');
const stringMap = mapOf(aString, 'an object of strings');

const metadata = objectOf({
  name: aString,
  namespace: aString,
  generateName: aString,
  annotations: stringMap,
  labels: stringMap,
});

const issuerRef = objectOf({ name: aString, kind: aString, group: aString });

const condition = objectOf({
  type: aString,
  status: aString,
  reason: aString,
  message: aString,
  lastTransitionTime: aString,
  observedGeneration: anInteger,
});

const secretKeySelector = objectOf({ name: aString, key: aString });

const nameConstraintItem = objectOf({
  dnsDomains: strings,
  ipRanges: strings,
  emailAddresses: strings,
  uriDomains: strings,
});

/** A Certificate: spec and metadata. */
export const certificateShape: Shape = objectOf({
  metadata,
  spec: objectOf({
    secretName: aString,
    issuerRef,
    commonName: aString,
    literalSubject: aString,
    subject: objectOf({
      organizations: strings,
      organizationalUnits: strings,
      countries: strings,
      provinces: strings,
      localities: strings,
      streetAddresses: strings,
      postalCodes: strings,
      serialNumber: aString,
    }),
    dnsNames: strings,
    ipAddresses: strings,
    uris: strings,
    emailAddresses: strings,
    otherNames: listOf(objectOf({ oid: aString, utf8Value: aString }), 'a list of objects'),
    duration: aString,
    renewBefore: aString,
    renewBeforePercentage: anInteger,
    renewal: objectOf({
      policy: aString,
      windows: listOf(
        objectOf({ cron: aString, timezone: aString, windowDuration: aString }),
        'a list of objects',
      ),
    }),
    isCA: aBoolean,
    usages: strings,
    encodeUsagesInRequest: aBoolean,
    privateKey: objectOf({
      rotationPolicy: aString,
      encoding: aString,
      algorithm: aString,
      size: anInteger,
    }),
    signatureAlgorithm: aString,
    secretTemplate: objectOf({ annotations: stringMap, labels: stringMap }),
    keystores: objectOf({
      jks: objectOf({
        create: aBoolean,
        alias: aString,
        password: aString,
        passwordSecretRef: secretKeySelector,
      }),
      pkcs12: objectOf({
        create: aBoolean,
        profile: aString,
        password: aString,
        passwordSecretRef: secretKeySelector,
      }),
    }),
    additionalOutputFormats: listOf(objectOf({ type: aString }), 'a list of objects'),
    nameConstraints: objectOf({
      critical: aBoolean,
      permitted: nameConstraintItem,
      excluded: nameConstraintItem,
    }),
    revisionHistoryLimit: anInteger,
  }),
});

/** A CertificateRequest: spec (identity included), status conditions and metadata. */
export const certificateRequestShape: Shape = objectOf({
  metadata,
  spec: objectOf({
    request: aString,
    issuerRef,
    duration: aString,
    isCA: aBoolean,
    usages: strings,
    username: aString,
    uid: aString,
    groups: strings,
    extra: mapOf(strings, 'an object of lists of strings'),
  }),
  status: objectOf({
    conditions: listOf(condition, 'a list of objects'),
    certificate: aString,
    ca: aString,
    failureTime: aString,
  }),
});

/** An Issuer or ClusterIssuer: its issuer types; the CA issuer's fields. */
export const issuerShape: Shape = objectOf({
  metadata,
  spec: objectOf({
    acme: objectOf({}),
    ca: objectOf({
      secretName: aString,
      crlDistributionPoints: strings,
      ocspServers: strings,
      issuingCertificateURLs: strings,
    }),
    selfSigned: objectOf({ crlDistributionPoints: strings }),
    vault: objectOf({}),
    venafi: objectOf({}),
  }),
});
