import type { HelpedCommand } from '../common/command-start.js';
import { type FlagTable, flagList, HELP_FLAG, inGroup } from '../common/flag-table.js';
import { KUBE_CLIENT_FLAGS } from '../common/kube-flags.js';

/** The flags of `cert-csi inspect secret`, in the order its help lists them. */
export const INSPECT_FLAGS = {
  'state-dir': {
    type: 'string',
    value: 'DIR',
    description: "the embedded plugin's --state-dir: read the Secret there",
  },
  ...HELP_FLAG,
  ...inGroup('Cluster', KUBE_CLIENT_FLAGS),
} as const satisfies FlagTable;

export const INSPECT_HELP = `Usage: cert-csi inspect secret NAMESPACE/NAME --state-dir DIR
       cert-csi inspect secret NAMESPACE/NAME --kubeconfig FILE [--context NAME]

Describes the certificate of a kubernetes.io/tls Secret, as cmctl inspect secret does: the
names it is valid for, its validity period, issuer and subject, serial and fingerprint;
then three checks: is it valid now, does tls.crt verify through its chain to a certificate
of ca.crt, does tls.key match it. The Secret is read from the embedded plugin's state dir
(read-only, the plugin may run) or from the cluster.

Exit codes: 0 described (whatever the checks say: read them); 1 no such Secret, or no
certificate in its tls.crt; 2 the command line cannot be used.

${flagList(INSPECT_FLAGS, 30)}`;

/** `cert-csi inspect` as startCommand runs it: its arguments are `secret NAMESPACE/NAME`. */
export const INSPECT_COMMAND: HelpedCommand<typeof INSPECT_FLAGS> = {
  name: 'inspect',
  help: INSPECT_HELP,
  flags: INSPECT_FLAGS,
  positionals: true,
};
