export {
  idJagConfigProblems,
  DEFAULT_ID_JAG_ALGORITHMS,
  type IdJagConfig,
  type TrustedIdpConfig,
  type IdJagAccountMatch,
} from './config.js';
export { installIdJagGrant, idJagSources, JWT_BEARER_GRANT_TYPE, ID_JAG_GRANT_PROFILE, type IdJagGrantOptions } from './grant.js';
export { ID_JAG_TYP } from './verify.js';
