import { certificateControllers } from '../../certificates/certificate-controllers.js';
import {
  type CertificateControllersConfig,
  certificateControllersConfig,
} from '../../certificates/certificate-controllers-config.js';
import type { ControllerDefinition } from '../../controller/controller-definition.js';
import { issuerControllers } from '../../issuer/controllers.js';
import { type IssuerStackConfig, issuerStackConfig } from '../../issuer/stack-config.js';

/** What every controller of the stack is configured with. */
export type StackConfig = IssuerStackConfig & CertificateControllersConfig;

/** Every controller cert-csi runs, in start order: the issuer stack, then the Certificate controllers. */
export const stackControllers: readonly ControllerDefinition<StackConfig>[] = [
  ...issuerControllers,
  ...certificateControllers,
];

/** A stack configuration with cert-manager's defaults for what is not given. */
export function stackConfig(options: Partial<StackConfig> = {}): StackConfig {
  return { ...issuerStackConfig(options), ...certificateControllersConfig(options) };
}
