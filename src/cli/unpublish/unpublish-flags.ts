import type { HelpedCommand } from '../common/command-start.js';
import { CALL_TIMEOUT_FLAG } from '../common/csi-call.js';
import { type FlagTable, flagList, HELP_FLAG } from '../common/flag-table.js';

/** The flags of `cert-csi unpublish`, in the order its help lists them. */
export const UNPUBLISH_FLAGS = {
  endpoint: {
    type: 'string',
    value: 'URL',
    description: "the plugin's CSI socket (unix://PATH; a relative PATH is resolved here)",
  },
  'volume-id': { type: 'string', value: 'ID', description: 'the volume to unpublish' },
  target: {
    type: 'string',
    value: 'DIR',
    description: 'the target it was published to (a relative DIR is resolved here)',
  },
  ...CALL_TIMEOUT_FLAG,
  ...HELP_FLAG,
} as const satisfies FlagTable;

export const UNPUBLISH_HELP = `Usage: cert-csi unpublish --endpoint URL --volume-id ID --target DIR [--timeout DURATION]

Asks a running plugin to unpublish a volume: unmount, stop renewal, remove its files.
Only the target the volume is published at is unpublished. The plugin answers success
whatever it did, as kubelet needs; it tells this command whether anything was done.

Exit codes: 0 unpublished; 1 the plugin refused, failed or did not answer within
--timeout; 2 the command line cannot be used (nothing was sent); 3 nothing unpublished:
the volume is published at another target (which keeps it, and this command names it),
or this node has no such volume.

${flagList(UNPUBLISH_FLAGS, 23)}`;

/** The exit status of an unpublish that did nothing (see UNPUBLISH_HELP). */
export const NOTHING_UNPUBLISHED_EXIT = 3;

/** `cert-csi unpublish` as startCommand runs it. */
export const UNPUBLISH_COMMAND: HelpedCommand<typeof UNPUBLISH_FLAGS> = {
  name: 'unpublish',
  help: UNPUBLISH_HELP,
  flags: UNPUBLISH_FLAGS,
};
