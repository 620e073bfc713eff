// @peculiar/x509 reads decorator metadata at import time, so the Reflect
// polyfill has to be evaluated first; every pki file imports x509 from here.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

export { x509 };
