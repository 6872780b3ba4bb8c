export {
  idJagConfigProblems,
  DEFAULT_ID_JAG_ALGORITHMS,
  type IdJagConfig,
  type TrustedIdpConfig,
  type IdJagAccountMatch,
} from './config.js';
export { installJwtBearerGrant, idJagSources, type IdJagGrantOptions, type JwtBearerGrantOptions } from './grant.js';
export {
  CLIENT_ASSERTION_ALGORITHMS,
  CLIENT_ASSERTION_CLOCK_TOLERANCE,
  CLIENT_ASSERTION_MAX_LIFETIME,
} from './client-assertion-verify.js';
export { ID_JAG_GRANT_PROFILE, ID_JAG_TYP, JWT_BEARER_GRANT_TYPE } from './constants.js';
