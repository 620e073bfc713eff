import t from 'tap';
import { runNamespaceScenario } from '../support/mount-namespace.js';
import { scriptBeside } from '../support/project-files.js';

t.test(
  'as root, in a private mount namespace, `cert-csi node` on a disk-backed data root: keys on a tmpfs that a restart reuses with no new request; --data-root-medium disk keeps them on disk with a warning; a bad value is refused; across a simulated reboot the disk medium mounts the same certificates again (no request) and tmpfs issues each volume once; cert_csi_reissues_avoided_total counts the certificates kept at a first republish after a start',
  (t) =>
    runNamespaceScenario(t, {
      script: scriptBeside(import.meta.url, './fixtures/data-root-medium-plugin.ts'),
      what: 'data root medium checks',
      prefix: 'cert-csi-medium-',
      checks: { exactly: 40 },
      timeoutMs: 300_000,
    }),
);
