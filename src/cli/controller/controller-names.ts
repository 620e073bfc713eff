import { parseControllersFlag, selectControllers } from '../../controller/controller-selection.js';
import type { FlagTable } from '../common/flag-table.js';
import { stackControllers } from './stack-controllers.js';

/** Every controller cert-csi can run, in start order (what `--controllers` may name). */
export const KNOWN_CONTROLLERS: readonly string[] = stackControllers.map((c) => c.name);

/** The controllers on when `--controllers` is not given (or is `*`). */
export const DEFAULT_CONTROLLERS: readonly string[] = KNOWN_CONTROLLERS;

/**
 * The controllers `--controllers` selects (cert-manager's syntax: `*`, `name`, `-name`, lists
 * and repeats; default `*`), with `extra` entries applied after (e.g. `--disable-approval`).
 * Unknown names are refused with cert-manager's message.
 */
export function controllerSelection(
  values: readonly string[] | undefined,
  extra: readonly string[] = [],
): Set<string> {
  const requested = parseControllersFlag(values && values.length > 0 ? values : ['*']);
  return selectControllers([...requested, ...extra], KNOWN_CONTROLLERS, DEFAULT_CONTROLLERS);
}

/** The `--controllers` flag, shared by `cert-csi node` and `cert-csi controller`. */
export const CONTROLLERS_FLAG = {
  controllers: {
    type: 'multiple',
    value: 'LIST',
    description: [
      'the controllers to run, cert-manager\'s syntax: "*" (every',
      'one on by default), a name, "-name" to turn one off;',
      'comma-separated or repeated (default "*"). Known:',
      ...KNOWN_CONTROLLERS,
    ],
  },
} as const satisfies FlagTable;
