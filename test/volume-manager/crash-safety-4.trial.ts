import { crashSafetyPart } from './crash-storm.js';

// Part 4 of the 30 kill -9 crash-safety trials: see crash-storm.ts.
crashSafetyPart(4);
