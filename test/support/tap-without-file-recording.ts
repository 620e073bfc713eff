import module from 'node:module';

// `npm test` loads this first into tap and every test process and child (NODE_OPTIONS), before
// tap's own --import of @tapjs/processinfo. processinfo registers an ES module loader hook only
// to record which files each process loaded (for `tap --changed`, which we do not use); coverage
// comes from the V8 inspector and does not need it. On Node 20 any such hook sends every import
// through a loader thread: a test process that only loads tap costs 1.0 s of CPU instead of
// 0.5 s, and a test of the CSI volumes 20-30% more. This skips that one registration; every
// other loader (tap's mock loader behind t.mockImport) registers as usual. On Node >= 24.13
// processinfo uses the synchronous registerHooks instead, which this leaves alone.
const register = module.register;
module.register = ((...args: unknown[]): void => {
  if (String(args[0]).includes('/@tapjs/processinfo/')) return;
  Reflect.apply(register, module, args);
}) as typeof module.register;
