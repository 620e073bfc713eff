import { fileURLToPath } from 'node:url';
import {
  type GrpcObject,
  loadPackageDefinition,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

// src/driver and dist/driver are both two levels below the package root.
const protoPath = fileURLToPath(new URL('../../proto/csi.proto', import.meta.url));

/** The loaded csi.v1 package: Identity and Node service definitions and clients. */
export interface CsiPackage {
  Identity: ServiceClientConstructor;
  Node: ServiceClientConstructor;
}

let loaded: CsiPackage | undefined;

/** Loads proto/csi.proto once, with the options the handlers' message types assume. */
export function loadCsiPackage(): CsiPackage {
  if (loaded) return loaded;
  const definition = loadSync(protoPath, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const root = loadPackageDefinition(definition);
  const v1 = (root.csi as GrpcObject | undefined)?.v1 as GrpcObject | undefined;
  const Identity = v1?.Identity;
  const Node = v1?.Node;
  if (typeof Identity !== 'function' || typeof Node !== 'function') {
    throw new Error(`${protoPath} does not define csi.v1.Identity and csi.v1.Node`);
  }
  loaded = { Identity, Node };
  return loaded;
}
