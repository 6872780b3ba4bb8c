export { installTokenExchangeGrant, type TokenExchangeOptions } from './grant.js';
export { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT_TYPE } from './constants.js';
