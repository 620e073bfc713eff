import type { HelpedCommand } from '../common/command-start.js';
import { type FlagTable, flagList, HELP_FLAG, inGroup } from '../common/flag-table.js';
import { KUBE_CLIENT_FLAGS } from '../common/kube-flags.js';

/** The flags of `cert-csi check api`, in the order its help lists them. */
export const CHECK_FLAGS = {
  wait: {
    type: 'string',
    value: 'DURATION',
    default: '0s',
    description: 'check again until ready or this long has passed (default 0s: once)',
  },
  interval: {
    type: 'string',
    value: 'DURATION',
    default: '5s',
    description: 'time between checks while waiting (default 5s)',
  },
  namespace: {
    type: 'string',
    short: 'n',
    value: 'NAMESPACE',
    default: 'default',
    description: 'with --kubeconfig: where CertificateRequests are listed (default default)',
  },
  'data-root': {
    type: 'string',
    value: 'DIR',
    description: "the embedded plugin's --data-root: check that the plugin answers",
  },
  ...HELP_FLAG,
  ...inGroup('Cluster', KUBE_CLIENT_FLAGS),
} as const satisfies FlagTable;

export const CHECK_HELP = `Usage: cert-csi check api --kubeconfig FILE [--context NAME] [--wait DURATION] [--interval DURATION]
       cert-csi check api --data-root DIR [--wait DURATION] [--interval DURATION]

Checks that the cert-manager API is ready, as cmctl check api does. In a cluster: the API
server serves cert-manager.io/v1 Certificates, CertificateRequests, Issuers and
ClusterIssuers (the CRDs are installed), and this user can list CertificateRequests.
Unlike cmctl it makes no dry-run create, so the webhook is not reached: cert-csi webhook
is optional (see its help). Embedded: the plugin of --data-root answers on its control
socket (its store is the API). Prints "The cert-manager API is ready".

Exit codes: 0 ready; 1 not ready (the line says what is missing) after --wait;
2 the command line cannot be used.

${flagList(CHECK_FLAGS, 30)}`;

/** `cert-csi check` as startCommand runs it: its argument is what to check (`api`). */
export const CHECK_COMMAND: HelpedCommand<typeof CHECK_FLAGS> = {
  name: 'check',
  help: CHECK_HELP,
  flags: CHECK_FLAGS,
  positionals: true,
};
