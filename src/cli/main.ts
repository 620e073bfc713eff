#!/usr/bin/env node
/** The `cert-csi` command. The node plugin subcommand arrives with the node-plugin work. */
import { readFileSync } from 'node:fs';

const usage = `Usage: cert-csi <command> [options]

Commands:
  node      run the CSI node plugin (not yet available)
  version   print the version
`;

function packageVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  const parsed: unknown = JSON.parse(readFileSync(url, 'utf8'));
  return typeof parsed === 'object' && parsed !== null && 'version' in parsed
    ? String(parsed.version)
    : 'unknown';
}

const [command] = process.argv.slice(2);
switch (command) {
  case 'version':
    process.stdout.write(`${packageVersion()}\n`);
    break;
  case 'node':
    process.stdout.write(
      'cert-csi node: not yet. The issuing core (store, PKI, CA and SelfSigned controllers) is built; the CSI node plugin comes next.\n',
    );
    break;
  case undefined:
  case '--help':
  case '-h':
    process.stdout.write(usage);
    break;
  default:
    process.stderr.write(`cert-csi: unknown command "${command}"\n${usage}`);
    process.exitCode = 2;
}
