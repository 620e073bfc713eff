import type { ControllerDefinition } from '../controller/controller-definition.js';
import type { CertificateControllersConfig } from './certificate-controllers-config.js';
import { issuingController } from './issuing-controller.js';
import { keyManagerController } from './key-manager-controller.js';
import { readinessController } from './readiness-controller.js';
import { requestManagerController } from './request-manager-controller.js';
import { revisionManagerController } from './revision-manager-controller.js';
import { triggerController } from './trigger-controller.js';

/** cert-manager's Certificate controllers, under its names; all on by default. */
export const certificateControllers: readonly ControllerDefinition<CertificateControllersConfig>[] =
  [
    triggerController,
    issuingController,
    keyManagerController,
    requestManagerController,
    readinessController,
    revisionManagerController,
  ];
