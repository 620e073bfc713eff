import type { HelpedCommand } from '../common/command-start.js';
import {
  type FlagTable,
  flagList,
  HELP_FLAG,
  inGroup,
  type ParsedFlags,
} from '../common/flag-table.js';
import { KUBE_CLIENT_FLAGS } from '../common/kube-flags.js';

// Longer than one issuance attempt's deadline (60 s), so a renewal that runs into it is reported.
const DEFAULT_TIMEOUT = '2m';

/** The flags of `cert-csi renew` (its volume and its --certificate forms), in help order. */
export const RENEW_FLAGS = {
  'data-root': { type: 'string', value: 'DIR', description: "the plugin's --data-root" },
  'volume-id': {
    type: 'string',
    value: 'ID',
    description: 'the volume to renew (cert-csi status lists them)',
  },
  all: { type: 'boolean', description: 'renew every volume of this node' },
  certificate: {
    type: 'string',
    value: 'NAMESPACE/NAME',
    description: 'the Certificate to mark for issuance',
  },
  timeout: {
    type: 'string',
    value: 'DURATION',
    default: DEFAULT_TIMEOUT,
    description: [
      "how long to wait for the plugin's answer, Go syntax",
      `(default ${DEFAULT_TIMEOUT})`,
    ],
  },
  ...HELP_FLAG,
  ...inGroup('Cluster, with --certificate', KUBE_CLIENT_FLAGS),
} as const satisfies FlagTable;

/** What a `cert-csi renew` command line sets. */
export type RenewFlags = ParsedFlags<typeof RENEW_FLAGS>;

export const RENEW_HELP = `Usage: cert-csi renew --data-root DIR (--volume-id ID | --all) [--timeout DURATION]
       cert-csi renew --certificate NAMESPACE/NAME --data-root DIR [--timeout DURATION]
       cert-csi renew --certificate NAMESPACE/NAME --kubeconfig FILE [--context NAME]

Makes a running plugin renew now, whatever the renewal time, and waits until the new
certificate is written. The request goes over the unix socket DIR/..control.sock, which
the plugin serves; no plugin answering there fails at once. One line is printed per
volume, as soon as that volume is done (with --all, while the others are still renewing).

With --certificate, marks a cert-manager Certificate for issuance now, as "cmctl renew"
does: its Issuing condition becomes True with reason ManuallyTriggered and message
"Certificate re-issuance manually triggered" (observedGeneration = its generation, the
other conditions kept), written with a status update; a conflicting write is retried on
a fresh read. The Certificate controllers then issue it, whatever the renewal time and
any failure backoff. It prints "Manually triggered issuance of Certificate NAMESPACE/NAME".
A Certificate already issuing goes on with the issuance in progress (none is added): the
condition keeps its transition time, takes the new reason and message, and a note says so
on stderr.
  with --data-root DIR: a Certificate of the embedded plugin running with that data root;
    the request goes through DIR/..control.sock and the plugin, which owns the store,
    writes it.
  with --kubeconfig FILE or --context NAME: a Certificate in that cluster, written directly.

Exit codes: 0 every volume renewed, or the Certificate marked; 1 a renewal failed, the
Certificate does not exist or could not be written, or no plugin answered (none runs with
this data root, or it did not answer within --timeout); 2 bad flags (a malformed
NAMESPACE/NAME, an unusable kubeconfig), or the data root does not exist (no plugin ever
ran with it).

${flagList(RENEW_FLAGS)}`;

/** `cert-csi renew`, for its usage errors. */
export const RENEW_COMMAND: HelpedCommand<typeof RENEW_FLAGS> = {
  name: 'renew',
  help: RENEW_HELP,
  flags: RENEW_FLAGS,
};
