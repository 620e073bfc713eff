#!/usr/bin/env node
/** The `cert-csi` command. */
import { exitWithOutcome } from './command-exit.js';
import { runCommand } from './commands.js';

exitWithOutcome(runCommand(process.argv.slice(2)));
