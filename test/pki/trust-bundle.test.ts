import t from 'tap';
import { trustBundlePem } from '../../src/pki/trust-bundle.js';
import { makeCA } from '../support/issuer-fixtures.js';

t.test(
  'a CA file from PEM sources: certificates only, duplicates dropped, order kept or sorted',
  async (t) => {
    const [a, b] = await Promise.all([makeCA(), makeCA()]);
    const pemA = a.certificatePem.endsWith('\n') ? a.certificatePem : `${a.certificatePem}\n`;
    const pemB = b.certificatePem.endsWith('\n') ? b.certificatePem : `${b.certificatePem}\n`;
    const given = trustBundlePem(
      [{ name: 'x', pem: `# roots\n${pemB}junk\n${pemA}${pemB}` }],
      'given',
    );
    t.equal(given, pemB + pemA, 'text between blocks and the duplicate are dropped, order kept');
    const sortedOnce = trustBundlePem(
      [
        { name: 'one', pem: pemA },
        { name: 'two', pem: pemB + pemA },
      ],
      'sorted',
    );
    const sortedAgain = trustBundlePem(
      [
        { name: 'two', pem: pemB },
        { name: 'one', pem: pemA },
      ],
      'sorted',
    );
    t.equal(sortedOnce, sortedAgain, 'merged sources do not depend on the listing order');
    t.equal(sortedOnce.length, pemA.length + pemB.length);

    t.throws(() => trustBundlePem([{ name: 'cm', pem: 'no pem here' }], 'given'), {
      message: 'no PEM CERTIFICATE block in cm',
    });
    t.throws(() => trustBundlePem([], 'sorted'), { message: 'no object holds the bundle' });
    t.throws(() => trustBundlePem([{ name: 'cm', pem: pemA + a.keyPem }], 'given'), {
      message: /^cm: PEM block 2 is "(EC )?PRIVATE KEY", not a certificate$/,
    });
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    t.throws(() => trustBundlePem([{ name: 'cm', pem: broken }], 'given'), {
      message: /^cm: cannot parse certificate 1:/,
    });
  },
);
