export {
  idJagConfigProblems,
  DEFAULT_ID_JAG_ALGORITHMS,
  type IdJagConfig,
  type TrustedIdpConfig,
  type IdJagAccountMatch,
} from './config.js';
export { installIdJagGrant, idJagSources, type IdJagGrantOptions } from './grant.js';
export { ID_JAG_GRANT_PROFILE, ID_JAG_TYP, JWT_BEARER_GRANT_TYPE } from './constants.js';
