#!/usr/bin/env node
import { runCommand } from './commands.js';
/** The `cert-csi` command. */
import { exitWithOutcome } from './common/command-exit.js';

exitWithOutcome(runCommand(process.argv.slice(2)));
