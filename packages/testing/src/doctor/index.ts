/**
 * `@mcp-auth-kit/testing/doctor`: the deployment checks of `mcp-auth-kit doctor`, for a user's CI.
 * They live in the client package (the CLI uses them without the testing kit's authorization server).
 */
export {
  checkDeployment,
  type CheckDeploymentOptions,
  type DeploymentReport,
  type Finding,
  type FindingGroup,
  type FindingStatus,
  type RefreshCredentials,
  type ScopeProbe,
} from '@mcp-auth-kit/client/doctor';
