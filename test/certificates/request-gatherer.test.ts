import t from 'tap';
import { gatherRequests } from '../../src/certificates/request-gatherer.js';
import {
  certificate,
  certificateFrom,
  withNamespace,
  withSpec,
  withStatus,
  withUid,
} from '../support/builders/index.js';
import { revisionRequest } from './fixtures.js';

const web = certificate(
  'web',
  withNamespace('apps'),
  withUid('crt-uid'),
  withSpec({ secretName: 'web-tls', issuerRef: { name: 'ca' } }),
  withStatus({}),
);

const request = (
  name: string,
  revision: string | undefined,
  ownerUid = 'crt-uid',
  controller = true,
) => revisionRequest(name, revision, { uid: ownerUid, controller });

const names = (g: ReturnType<typeof gatherRequests>) => [
  g.current?.metadata.name,
  g.next?.metadata.name,
];

t.test('current and next requests', async (t) => {
  const all = [request('web-1', '1'), request('web-2', '2'), request('web-3', '3')];
  t.same(
    names(gatherRequests(certificateFrom(web), all)),
    [undefined, 'web-1'],
    'no revision: next is 1',
  );
  t.same(
    names(gatherRequests(certificateFrom(web, withStatus({ revision: 2 })), all)),
    ['web-2', 'web-3'],
    'revision 2: 2 and 3',
  );
  t.same(
    names(gatherRequests(certificateFrom(web, withStatus({ revision: 3 })), all)),
    ['web-3', undefined],
    'nothing for 4 yet',
  );
  t.same(
    names(
      gatherRequests(certificateFrom(web), [
        request('x', '01'),
        request('y', ' 1'),
        request('z', undefined),
      ]),
    ),
    [undefined, undefined],
    'the annotation must be the decimal revision exactly',
  );
  t.same(
    names(
      gatherRequests(certificateFrom(web), [
        request('not-owned', '1', 'other-uid'),
        request('not-controller', '1', 'crt-uid', false),
      ]),
    ),
    [undefined, undefined],
    'only requests the Certificate controls',
  );
});

t.test('duplicates of a revision stop the sync with cert-manager’s message', async (t) => {
  t.throws(
    () =>
      gatherRequests(certificateFrom(web, withStatus({ revision: 1 })), [
        request('a', '1'),
        request('b', '1'),
      ]),
    {
      name: 'DuplicateRequestsError',
      message:
        "multiple CertificateRequests were found for the 'current' revision 1, issuance is skipped until there are no more duplicates",
    },
  );
  t.throws(
    () =>
      gatherRequests(certificateFrom(web, withStatus({ revision: 1 })), [
        request('a', '2'),
        request('b', '2'),
      ]),
    {
      message:
        "multiple CertificateRequests were found for the 'next' revision 2, issuance is skipped until there are no more duplicates",
    },
  );
});
