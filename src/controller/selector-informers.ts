// The per-value informers that lived here gave way to one shared informer per kind with an
// index (a watch per issuer cost a connection each). Their users in renewal/ and admission/
// still import escapeFieldValue from this path; it now lives in store/field-selector.ts, and
// this file goes once those imports point there.
export { escapeFieldValue } from '../store/field-selector.js';
