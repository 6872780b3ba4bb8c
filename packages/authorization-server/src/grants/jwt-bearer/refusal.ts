/**
 * Refusals of the ID-JAG grant: the grants' one refusal type (grants/refusal.ts) under the names
 * this grant's modules use.
 */
export {
  GrantRefusal as IdJagRefusal,
  providerError,
  refuse,
  type GrantErrorCode as IdJagErrorCode,
} from '../refusal.js';
