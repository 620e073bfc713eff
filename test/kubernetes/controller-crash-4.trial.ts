import { controllerCrashPart } from './controller-crash-storm.js';

// Part 4 of the 30 kill -9 trials of cert-csi controller: see controller-crash-storm.ts.
controllerCrashPart(4);
