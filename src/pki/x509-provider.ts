// @peculiar/x509 reads decorator metadata at import time, so the Reflect
// polyfill has to be evaluated first; every pki file imports x509 from here.
// It builds certificates and requests only (parsing is der.ts's), and with its ASN.1 schemas,
// tsyringe and the polyfill it costs ~0.3 s of CPU to load: certificate.ts and csr.ts import
// this module at their first certificate or request, so a start that signs nothing (a
// controller whose Certificates are issued, a plugin restarted with its CA) never loads it.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

export { x509 };
