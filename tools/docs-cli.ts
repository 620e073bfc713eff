// `npm run docs:cli`: writes docs/cli.md, the command reference, from the command table and
// each command's help (test/cli/cli-reference.test.ts fails while the file differs from it).
import { writeFile } from 'node:fs/promises';
import { commandReferences, renderCliReference } from '../src/cli/cli-reference.js';

const target = new URL('../docs/cli.md', import.meta.url);
await writeFile(target, renderCliReference(await commandReferences()));
process.stdout.write(`wrote ${target.pathname}\n`);
