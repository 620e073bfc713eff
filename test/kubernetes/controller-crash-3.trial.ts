import { controllerCrashPart } from './controller-crash-storm.js';

// Part 3 of the 30 kill -9 trials of cert-csi controller: see controller-crash-storm.ts.
controllerCrashPart(3);
