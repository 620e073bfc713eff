import t from 'tap';
import { everyRemovalRefusesSomeRequest } from './rbac-scenario.js';

// A part of rbac.test.ts's scenario: see REMOVAL_PARTS in rbac-scenario.ts.
t.test(
  "removing any single rule, or any verb of one, makes some request fail with 403: the node plugin's rules on its requests, Events and pods",
  (t) => everyRemovalRefusesSomeRequest(t, 'node-requests'),
);
