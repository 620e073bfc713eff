import type { HelpedCommand } from '../common/command-start.js';
import { decisionFlags, decisionHelp } from '../common/request-decision-command.js';

/** The flags of `cert-csi approve`, in the order its help lists them. */
export const APPROVE_FLAGS = decisionFlags('approve');

export const APPROVE_HELP = decisionHelp('approve');

/** `cert-csi approve` as startCommand runs it: one argument, the request's name. */
export const APPROVE_COMMAND: HelpedCommand<typeof APPROVE_FLAGS> = {
  name: 'approve',
  help: APPROVE_HELP,
  flags: APPROVE_FLAGS,
  positionals: true,
};
