import type { HelpedCommand } from '../common/command-start.js';
import { decisionFlags, decisionHelp } from '../common/request-decision-command.js';

/** The flags of `cert-csi deny`, in the order its help lists them. */
export const DENY_FLAGS = decisionFlags('deny');

export const DENY_HELP = decisionHelp('deny');

/** `cert-csi deny` as startCommand runs it: one argument, the request's name. */
export const DENY_COMMAND: HelpedCommand<typeof DENY_FLAGS> = {
  name: 'deny',
  help: DENY_HELP,
  flags: DENY_FLAGS,
  positionals: true,
};
