import { type NamespacedName, parseNamespacedName } from '../../api/namespaced-name.js';
import { type Secret, SecretKind, secretValue } from '../../api/secret.js';
import { errorMessage } from '../../base/error-message.js';
import { isStoreError } from '../../store/errors.js';
import { reportFailure } from '../common/command-failure.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand, usageError } from '../common/command-start.js';
import { objectSource } from '../common/object-source.js';
import { INSPECT_COMMAND } from './inspect-flags.js';
import { secretReport } from './secret-report.js';

/** `cert-csi inspect secret NAMESPACE/NAME` (cmctl inspect secret): describes a TLS Secret. */
export async function runInspect(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, INSPECT_COMMAND);
  if (typeof started === 'number') return started;
  const [what, name, ...extra] = started.positionals;
  if (what !== 'secret') {
    return usageError(
      out,
      INSPECT_COMMAND,
      'what to inspect: cert-csi inspect secret NAMESPACE/NAME',
    );
  }
  if (name === undefined || extra.length > 0) {
    return usageError(
      out,
      INSPECT_COMMAND,
      'give one Secret: cert-csi inspect secret NAMESPACE/NAME',
    );
  }
  let ref: NamespacedName;
  try {
    ref = parseNamespacedName(name);
  } catch (err) {
    return usageError(out, INSPECT_COMMAND, `secret: ${errorMessage(err)}`);
  }
  const source = await objectSource(started, out, INSPECT_COMMAND, {
    flag: 'inspect secret',
    what: 'a Secret',
  });
  if (typeof source === 'number') return source;
  let secret: Secret;
  try {
    secret = await source.get<Secret>(SecretKind, ref.name, ref.namespace);
  } catch (err) {
    const message = isStoreError(err, 'NotFound')
      ? `Secret ${ref.namespace}/${ref.name} not found`
      : errorMessage(err);
    return reportFailure(out.stderr, new Error(message), 'cert-csi inspect', 'inspect');
  }
  let report: string;
  try {
    report = secretReport(
      {
        'tls.crt': secretValue(secret, 'tls.crt'),
        'tls.key': secretValue(secret, 'tls.key'),
        'ca.crt': secretValue(secret, 'ca.crt'),
      },
      new Date(),
    );
  } catch (err) {
    return reportFailure(
      out.stderr,
      new Error(`Secret ${ref.namespace}/${ref.name}: ${errorMessage(err)}`),
      'cert-csi inspect',
      'inspect',
    );
  }
  out.stdout.write(report);
  return 0;
}
