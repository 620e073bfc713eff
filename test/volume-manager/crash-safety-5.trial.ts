import { crashSafetyPart } from './crash-storm.js';

// Part 5 of the 30 kill -9 crash-safety trials: see crash-storm.ts.
crashSafetyPart(5);
