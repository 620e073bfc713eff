import { resolve } from 'node:path';
import { errorMessage } from '../../base/error-message.js';
import type { ResourceStore } from '../../store/resource-store.js';
import { StateDirectoryReader } from '../../store/state-directory/state-directory-reader.js';
import type { CommandOutput } from './command-output.js';
import { type HelpedCommand, usageError } from './command-start.js';
import { isDirectory } from './is-directory.js';
import { KUBE_CLIENT_FLAG_NAMES } from './kube-flags.js';

/** The flags that name where objects are read (`status --certificate`, `status --requests`). */
export interface ObjectSourceFlags {
  values: {
    'data-root'?: string;
    'state-dir'?: string;
    kubeconfig?: string;
    context?: string;
    'kube-api-qps': string;
    'kube-api-burst': string;
    'kube-api-timeout': string;
  };
  explicit: ReadonlySet<string>;
}

/**
 * Where a view of objects reads them: the embedded plugin's --state-dir (read-only, without
 * its lock) or the cluster of --kubeconfig/--context. A usage error's exit status otherwise.
 */
export async function objectSource(
  { values, explicit }: ObjectSourceFlags,
  out: CommandOutput,
  command: HelpedCommand,
  view: { flag: string; what: string },
): Promise<Pick<ResourceStore, 'get' | 'list'> | number> {
  if (values['data-root'] !== undefined) {
    return usageError(
      out,
      command,
      `--data-root lists volumes: with ${view.flag} give --state-dir DIR (embedded plugin) or --kubeconfig FILE (cluster)`,
    );
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const stateDir = values['state-dir'];
  if (inCluster) {
    if (stateDir !== undefined) {
      return usageError(
        out,
        command,
        '--state-dir and --kubeconfig/--context name two places: give --state-dir for an embedded plugin, --kubeconfig (or --context) for a cluster',
      );
    }
    try {
      // client-node costs ~0.6 s to load: only the cluster form pays for it.
      return (await import('./cluster-store.js')).clusterStore(values);
    } catch (err) {
      return usageError(out, command, errorMessage(err));
    }
  }
  if (stateDir === undefined) {
    return usageError(
      out,
      command,
      `${view.flag} needs --state-dir DIR (${view.what} of the embedded plugin) or --kubeconfig FILE (${view.what} in a cluster)`,
    );
  }
  for (const flag of KUBE_CLIENT_FLAG_NAMES) {
    if (explicit.has(flag)) {
      return usageError(out, command, `--${flag}: only used with --kubeconfig or --context`);
    }
  }
  const dir = resolve(stateDir);
  if (!(await isDirectory(dir))) {
    return usageError(out, command, `state dir ${dir} does not exist or is not a directory`);
  }
  return new StateDirectoryReader(dir);
}
