import type { HelpedCommand } from '../common/command-start.js';
import {
  type FlagTable,
  flagList,
  HELP_FLAG,
  inGroup,
  type ParsedFlags,
} from '../common/flag-table.js';
import { KUBE_CLIENT_FLAGS } from '../common/kube-flags.js';

/** The flags of `cert-csi status` (its volume, --certificate and --requests forms), in help order. */
export const STATUS_FLAGS = {
  'data-root': { type: 'string', value: 'DIR', description: "the plugin's --data-root (volumes)" },
  'volume-id': {
    type: 'string',
    value: 'ID',
    description: 'with --data-root: only this volume',
  },
  watch: {
    type: 'boolean',
    short: 'w',
    description: 'with --data-root: print again as volumes change',
  },
  certificate: {
    type: 'string',
    value: 'NAMESPACE/NAME',
    description: 'show this Certificate instead of the volumes',
  },
  'state-dir': {
    type: 'string',
    value: 'DIR',
    description: "the embedded plugin's --state-dir (with --certificate, --requests)",
  },
  requests: { type: 'boolean', description: 'list the CertificateRequests waiting for approval' },
  namespace: {
    type: 'string',
    short: 'n',
    value: 'NAMESPACE',
    description: 'with --requests: only this namespace',
  },
  json: { type: 'boolean', description: 'print JSON instead of text' },
  ...HELP_FLAG,
  ...inGroup('Cluster, with --certificate or --requests', KUBE_CLIENT_FLAGS),
} as const satisfies FlagTable;

/** What a `cert-csi status` command line sets. */
export type StatusFlags = ParsedFlags<typeof STATUS_FLAGS>;

export const STATUS_HELP = `Usage: cert-csi status --data-root DIR [--volume-id ID] [--watch] [--json]
       cert-csi status --certificate NAMESPACE/NAME --state-dir DIR [--json]
       cert-csi status --certificate NAMESPACE/NAME --kubeconfig FILE [--context NAME] [--json]
       cert-csi status --requests [-n NAMESPACE] (--state-dir DIR | --kubeconfig FILE) [--json]

Lists the volumes of this node: volume id, pod, issuer, state, certificate expiry,
next renewal and last error. It reads the files under the data root, so it works
whether the plugin runs or not; a running plugin adds, through <data-root>/..control.sock,
the last errors it could not write to metadata.json (a full data root).

Long values are shortened with "…" to keep each row to one readable line; --json has
them whole.

With --watch (-w), prints the table, then again each time it changes, until interrupted
(Ctrl-C): volumes published or removed, metadata.json rewritten (an issuance, a renewal, a
failure). Each table is headed by the time it was read; with --json, each is one JSON
array on one line. Woken by file events in the data root and its volume dirs, and read
again at least every 5 s for what no file announces (a failure the plugin holds in memory,
a certificate that expires).

States: ok; pending (an issuance or renewal is in flight or asked for); failing
(attempts fail and no valid certificate is served); expired; corrupt (metadata.json
unreadable, or moved aside by the plugin as metadata.json.corrupt-*); incomplete
(a volume dir without metadata); waiting (published without a new certificate until
its pod passes the readiness gates or has the IP its SANs use; the reason is shown).

With --certificate, shows a cert-manager Certificate as "cmctl status certificate"
does: name and namespace, conditions (type, status, reason, message), DNS names, the
issuer it names, its Secret (name, the issuer annotations, the certificate's subject,
issuer, serial, key, names and validity, whether tls.key matches it, ca.crt), not
before, not after, renewal time, revision, the current and the next CertificateRequest
(those it controls, annotated with revision and revision+1) with their conditions, and
the last failure (time, failed attempts). --json prints the same as one JSON object.
  with --state-dir DIR: a Certificate of the embedded plugin (cert-csi node without a
    cluster), read from the files of its --state-dir, read-only and without its lock,
    so it works whether the plugin runs or not.
  with --kubeconfig FILE or --context NAME: a Certificate in that cluster.

With --requests, lists the CertificateRequests waiting for approval (neither an Approved
nor a Denied condition): namespace, name, issuer, requester (spec.username, who created
it) and age, oldest first; every namespace, or the one of --namespace. From the embedded
plugin's --state-dir (read-only) or a cluster (--kubeconfig/--context), as --certificate.

Exit codes: 0 shown; 1 the Certificate does not exist or could not be read, or the
requests could not be listed; 2 bad flags (a malformed NAMESPACE/NAME, an unusable
kubeconfig, a missing directory).

${flagList(STATUS_FLAGS)}`;

/** `cert-csi status`, for its usage errors. */
export const STATUS_COMMAND: HelpedCommand<typeof STATUS_FLAGS> = {
  name: 'status',
  help: STATUS_HELP,
  flags: STATUS_FLAGS,
};
