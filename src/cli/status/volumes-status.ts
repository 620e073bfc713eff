import { resolve } from 'node:path';
import { DataRoot } from '../../volume/data-root.js';
import {
  readVolumeStatuses,
  type VolumeStatus,
} from '../../volume-manager/control/volume-status.js';
import type { CommandOutput } from '../common/command-output.js';
import { usageError } from '../common/command-start.js';
import { isDirectory } from '../common/is-directory.js';
import { KUBE_CLIENT_FLAG_NAMES } from '../common/kube-flags.js';
import { STATUS_COMMAND, type StatusFlags } from './status-flags.js';
import { watchStatus } from './status-watch.js';
import { formatTable, timeText } from './volumes-table.js';

/** `status --data-root DIR`: the volumes of this node, from their files; with --watch, until `until`. */
export async function volumesStatus(
  { values, explicit }: StatusFlags,
  out: CommandOutput,
  until: () => Promise<unknown>,
): Promise<number> {
  for (const flag of ['state-dir', 'namespace', ...KUBE_CLIENT_FLAG_NAMES]) {
    if (explicit.has(flag)) {
      return usageError(
        out,
        STATUS_COMMAND,
        flag === 'namespace'
          ? '--namespace: only used with --requests'
          : `--${flag}: only used with --certificate or --requests`,
      );
    }
  }
  const dataRoot = values['data-root'];
  if (!dataRoot) return usageError(out, STATUS_COMMAND, '--data-root is required');
  // Absolute, so every message names the same directory the plugin's logs do.
  const root = resolve(dataRoot);
  if (!(await isDirectory(root))) {
    return usageError(
      out,
      STATUS_COMMAND,
      `data root ${root} does not exist or is not a directory`,
    );
  }
  const only = volumeFilter(values['volume-id']);
  if (values.watch) return watchVolumes(root, values.json === true, out, until, only);
  const statuses = only(
    await readVolumeStatuses(new DataRoot(root), new Date(), (message) =>
      out.stderr.write(warningLine(message)),
    ),
  );
  if (values.json) {
    out.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
  } else {
    out.stdout.write(volumesText(root, statuses));
  }
  return 0;
}

/** The statuses --volume-id keeps: that volume's, or all without it. */
function volumeFilter(volumeId: string | undefined): (statuses: VolumeStatus[]) => VolumeStatus[] {
  return (statuses) =>
    volumeId === undefined ? statuses : statuses.filter((s) => s.volumeId === volumeId);
}

// A file status skipped, on stderr: the table (or JSON) on stdout stays as it is.
function warningLine(message: string): string {
  return `cert-csi status: warning: ${message}\n`;
}

function volumesText(root: string, statuses: readonly VolumeStatus[]): string {
  return statuses.length === 0 ? `no volumes in ${root}\n` : formatTable(statuses);
}

/**
 * `status --watch`: the table (or one JSON array per line), again each time it changes, until
 * interrupted. Text snapshots are headed by the time they were read.
 */
async function watchVolumes(
  root: string,
  json: boolean,
  out: CommandOutput,
  until: () => Promise<unknown>,
  only: (statuses: VolumeStatus[]) => VolumeStatus[],
): Promise<number> {
  const stop = new AbortController();
  void until().then(() => stop.abort());
  const dataRoot = new DataRoot(root);
  // The skipped files, printed again only when they change: not at each refresh.
  let lastWarnings = '';
  await watchStatus({
    root,
    render: async () => {
      const warnings: string[] = [];
      const statuses = only(
        await readVolumeStatuses(dataRoot, new Date(), (message) =>
          warnings.push(warningLine(message)),
        ),
      );
      const text = warnings.join('');
      if (text !== lastWarnings) out.stderr.write(text);
      lastWarnings = text;
      return json ? `${JSON.stringify(statuses)}\n` : volumesText(root, statuses);
    },
    print: (snapshot) =>
      out.stdout.write(json ? snapshot : `${timeText(new Date().toISOString())}\n${snapshot}\n`),
    fail: (message) => out.stderr.write(`cert-csi status: ${message}\n`),
    signal: stop.signal,
  });
  return 0;
}
