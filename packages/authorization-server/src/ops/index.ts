// @mcp-auth-kit/authorization-server/ops: the checks a program wrapping the AS (like
// apps/auth-server) runs itself before it starts anything (README "API").
export { validateConfig, resolveConfig } from '../config.js';
export { DEFAULTS } from '../config/defaults.js';
export { storageProblems } from '../storage/config.js';
export { productionProblems } from './production.js';
export { behindProxy, DEV_SWITCHES, devSwitchProblems, exposedListenHost, type DevSwitch, type DevSwitchExposure } from './dev-switches.js';
// Who made an account and which operator paths may claim it (README "Accounts").
export { DEMO_SOURCE, describeSource, operatorOwns, signInRefusal } from '../accounts/account-origin.js';
export { PRODUCTION_MARK } from '../accounts/accounts.js';
