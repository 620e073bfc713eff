import { resolve } from 'node:path';
import { type NamespacedName, namespacedNameProblem } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import { decideRequest, type RequestDecision } from '../../issuer/request-decision.js';
import { askRequestDecision } from '../../volume-manager/control/control-client.js';
import { reportFailure } from './command-failure.js';
import type { CommandOutput } from './command-output.js';
import { type HelpedCommand, startCommand, usageError } from './command-start.js';
import { controlCall, controlCallFailed } from './control-call.js';
import { type FlagTable, flagList, HELP_FLAG, inGroup } from './flag-table.js';
import { KUBE_CLIENT_FLAG_NAMES, KUBE_CLIENT_FLAGS } from './kube-flags.js';

// `cert-csi approve` and `cert-csi deny`: cmctl's verbs for a CertificateRequest, in the cluster
// of --kubeconfig (a status update through the API, as cmctl makes it) or in the embedded
// plugin of --data-root (through its control socket: the plugin owns its store, whose
// admission rules judge the write as the cluster's webhook would).

/** What the command does: approve or deny. */
export type DecisionVerb = 'approve' | 'deny';

/** cmctl's default reason, on the condition both commands set. */
export const DECISION_REASON = 'KubectlCertManager';

const PAST: Record<DecisionVerb, RequestDecision['decision']> = {
  approve: 'Approved',
  deny: 'Denied',
};

/** How long an embedded plugin has to answer by default. */
const DEFAULT_TIMEOUT = '30s';

/** The flags of `cert-csi approve` / `deny`, in help order. */
export function decisionFlags(verb: DecisionVerb) {
  return {
    namespace: {
      type: 'string',
      short: 'n',
      value: 'NAMESPACE',
      default: 'default',
      description: "the CertificateRequest's namespace (default default)",
    },
    reason: {
      type: 'string',
      value: 'TEXT',
      default: DECISION_REASON,
      description: `the condition's reason (default ${DECISION_REASON})`,
    },
    message: {
      type: 'string',
      value: 'TEXT',
      default: `manually ${verb === 'approve' ? 'approved' : 'denied'} by "cert-csi"`,
      description: `the condition's message (default: manually ${PAST[verb].toLowerCase()} by "cert-csi")`,
    },
    'data-root': {
      type: 'string',
      value: 'DIR',
      description: "the embedded plugin's --data-root: decide through it",
    },
    timeout: {
      type: 'string',
      value: 'DURATION',
      default: DEFAULT_TIMEOUT,
      description: `with --data-root: how long to wait for the plugin (default ${DEFAULT_TIMEOUT})`,
    },
    ...HELP_FLAG,
    ...inGroup('Cluster', KUBE_CLIENT_FLAGS),
  } as const satisfies FlagTable;
}

/** The help of `cert-csi approve` / `deny`. */
export function decisionHelp(verb: DecisionVerb): string {
  const condition = PAST[verb];
  return `Usage: cert-csi ${verb} NAME [-n NAMESPACE] [--reason TEXT] [--message TEXT] --data-root DIR
       cert-csi ${verb} NAME [-n NAMESPACE] [--reason TEXT] [--message TEXT] --kubeconfig FILE [--context NAME]

${verb === 'approve' ? 'Approves' : 'Denies'} a CertificateRequest, as cmctl ${verb} does: sets its ${condition} condition
True with the reason and message${verb === 'approve' ? ', so that its issuer may sign it' : ': its issuer never signs it'}. A request already
approved or denied is refused (the condition is final). With --data-root the embedded
plugin writes it, under its store's rules; with --kubeconfig the cluster's API server
(its RBAC, and cert-manager's webhook, which lets only those allowed to approve for the
issuer set the condition).

Prints: ${condition} CertificateRequest 'NAMESPACE/NAME'

Exit codes: 0 ${condition.toLowerCase()}; 1 refused (not found, decided already, not allowed) or no
answer; 2 the command line cannot be used.

${flagList(decisionFlags(verb), 30)}`;
}

/** Runs `cert-csi approve` or `deny` with args. */
export async function runDecision(
  command: HelpedCommand<ReturnType<typeof decisionFlags>>,
  verb: DecisionVerb,
  args: string[],
  out: CommandOutput,
): Promise<number> {
  const started = startCommand(args, out, command);
  if (typeof started === 'number') return started;
  const { values, explicit, positionals } = started;
  const [name, ...extra] = positionals;
  if (name === undefined) {
    return usageError(out, command, `give the CertificateRequest's name: cert-csi ${verb} NAME`);
  }
  if (extra.length > 0) {
    return usageError(out, command, 'give one CertificateRequest name only');
  }
  const ref: NamespacedName = { namespace: values.namespace, name };
  const problem = namespacedNameProblem(ref);
  if (problem) return usageError(out, command, problem);
  for (const flag of ['reason', 'message'] as const) {
    if (values[flag] === '') return usageError(out, command, `--${flag} must not be empty`);
  }
  const decision: RequestDecision = {
    ...ref,
    decision: PAST[verb],
    reason: values.reason,
    message: values.message,
  };
  const done = () => {
    out.stdout.write(`${decision.decision} CertificateRequest '${ref.namespace}/${ref.name}'\n`);
    return 0;
  };
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const dataRoot = values['data-root'];
  if (inCluster === (dataRoot !== undefined)) {
    return usageError(
      out,
      command,
      'give --data-root DIR (a request of the embedded plugin) or --kubeconfig FILE (a request in a cluster), one of them',
    );
  }
  if (inCluster) {
    if (explicit.has('timeout')) {
      return usageError(out, command, '--timeout: only used with --data-root');
    }
    let store: Awaited<ReturnType<typeof clusterStoreOf>>;
    try {
      store = await clusterStoreOf(values);
    } catch (err) {
      return usageError(out, command, errorMessage(err));
    }
    try {
      await decideRequest(store, decision, () => new Date());
    } catch (err) {
      return reportFailure(out.stderr, err, `cert-csi ${verb}`, verb);
    }
    return done();
  }
  for (const flag of KUBE_CLIENT_FLAG_NAMES) {
    if (explicit.has(flag)) {
      return usageError(out, command, `--${flag}: only used with --kubeconfig or --context`);
    }
  }
  const plugin = await controlCall(out, command, resolve(dataRoot ?? ''), values.timeout);
  if (typeof plugin === 'number') return plugin;
  try {
    await askRequestDecision(plugin.dataRoot, decision, { timeoutMs: plugin.timeoutMs });
  } catch (err) {
    return controlCallFailed(
      out,
      command,
      err,
      plugin,
      `the request may yet be ${decision.decision.toLowerCase()} (see cert-csi status --requests)`,
    );
  }
  return done();
}

// client-node costs ~0.6 s to load: only the cluster form pays for it.
async function clusterStoreOf(values: {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  'kube-api-qps': string;
  'kube-api-burst': string;
  'kube-api-timeout': string;
}) {
  return (await import('./cluster-store.js')).clusterStore(values);
}
