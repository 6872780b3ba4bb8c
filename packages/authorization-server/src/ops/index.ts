// @mcp-auth-kit/authorization-server/ops: the checks a program wrapping the AS (like
// apps/auth-server) runs itself before it starts anything (README "API").
export { validateConfig } from '../config.js';
export { productionProblems } from './production.js';
export { DEV_SWITCHES, devSwitchProblems, exposedListenHost, type DevSwitch, type DevSwitchExposure } from './dev-switches.js';
