/** The admin service's public face (the package entry re-exports these names). */
export { type AdminService, type AdminServiceOptions, createAdminService } from './service.js';
export {
  type Actor,
  AdminServiceError,
  type ClientOrigin,
  type ClientView,
  type ConnectionView,
  type CookieKeysView,
  type DisableUserResult,
  type GrantQuery,
  type GrantView,
  type NewUser,
  type SigningKeyView,
  type UserView,
} from './types.js';
