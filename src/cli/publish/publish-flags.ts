import type { HelpedCommand } from '../common/command-start.js';
import { CALL_TIMEOUT_FLAG } from '../common/csi-call.js';
import { type FlagTable, flagList, HELP_FLAG, type ParsedFlags } from '../common/flag-table.js';

/** The flags of `cert-csi publish`, in the order its help lists them. */
export const PUBLISH_FLAGS = {
  endpoint: {
    type: 'string',
    value: 'URL',
    description: "the plugin's CSI socket (unix://PATH; a relative PATH is resolved here)",
  },
  'volume-id': {
    type: 'string',
    value: 'ID',
    description: 'volume id (kubelet uses csi-<sha256>)',
  },
  target: {
    type: 'string',
    value: 'DIR',
    description: [
      'where the files appear (a relative DIR is resolved here: the',
      'plugin itself takes absolute paths only, as from kubelet)',
    ],
  },
  attr: {
    type: 'multiple',
    value: 'KEY=VALUE',
    default: [],
    description: [
      'a volume attribute; repeat it. A key without a prefix gets',
      'csi.cert-manager.io/ (issuer-name=x means csi.cert-manager.io/issuer-name=x);',
      'an unknown csi.cert-manager.io/ name is refused before the call',
    ],
  },
  'pod-name': {
    type: 'string',
    value: 'NAME',
    default: 'cert-csi-cli',
    description: '(default cert-csi-cli)',
  },
  'pod-namespace': {
    type: 'string',
    value: 'NS',
    default: 'default',
    description: 'namespace of the CertificateRequest (default default)',
  },
  'pod-uid': {
    type: 'string',
    value: 'UID',
    default: '',
    description: '(default: none, no owner reference)',
  },
  'service-account': {
    type: 'string',
    value: 'NAME',
    default: 'default',
    description: '(default default)',
  },
  'pod-ip': {
    type: 'multiple',
    value: 'IP',
    default: [],
    description: [
      `the pod's IP, for \${POD_IP} and \${POD_IPS} in ip-sans`,
      '(embedded mode); repeat it for a dual-stack pod, first',
      'one first. Sent as csi.storage.k8s.io/pod.ips; a plugin in',
      "Kubernetes mode ignores it and reads the pod's IPs from the API",
    ],
  },
  'fs-group': {
    type: 'string',
    value: 'GID',
    description: "the pod's fsGroup, sent as volume_mount_group",
  },
  ...CALL_TIMEOUT_FLAG,
  ...HELP_FLAG,
} as const satisfies FlagTable;

export const PUBLISH_HELP = `Usage: cert-csi publish --endpoint URL --volume-id ID --target DIR [flags] --attr KEY=VALUE...

Asks a running plugin to publish a volume, as kubelet does for a pod's inline CSI volume.

Prints the certificate's subject, issuer, SANs, expiry and next renewal, and every file
the volume holds (the key, certificate and CA, and the PKCS#12, JKS and combined PEM
files when their attributes ask for them).

Exit codes: 0 published; 1 the plugin refused, failed or did not answer within --timeout;
2 the command line cannot be used (nothing was sent).

${flagList(PUBLISH_FLAGS, 26)}`;

/** What a `cert-csi publish` command line sets. */
export type PublishFlags = ParsedFlags<typeof PUBLISH_FLAGS>;

/** `cert-csi publish` as startCommand runs it. */
export const PUBLISH_COMMAND: HelpedCommand<typeof PUBLISH_FLAGS> = {
  name: 'publish',
  help: PUBLISH_HELP,
  flags: PUBLISH_FLAGS,
};
