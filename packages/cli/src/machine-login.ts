// The CLI's non-interactive and enterprise logins: the client credentials extension (a secret from
// the environment or a file, or a private key that signs RFC 7523 §2.1 assertions) and
// enterprise-managed authorization (SSO at the enterprise IdP, then ID Token → ID-JAG → access
// token). Secrets and keys are never taken from the command line: arguments are visible to every
// user of the machine (`ps`).
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION } from '@mcp-auth-kit/protocol';
import {
  ERR,
  enterpriseManagedAssertion,
  enterpriseSignIn,
  McpAuthError,
  type EnterpriseSignIn,
  type McpAuthClientOptions,
  type PrivateKeyInput,
} from '@mcp-auth-kit/client';

/** The global options this file reads (program.ts declares the rest). */
export interface MachineOpts {
  clientId?: string;
  clientSecret?: string;
  clientSecretFile?: string;
  issuer?: string;
  clientCredentials?: boolean;
  privateKey?: string;
  enterprise?: boolean;
  idpIssuer?: string;
  idpClientId?: string;
  idpClientSecretFile?: string;
  timeout: string;
  requestTimeout: string;
}

export const SECRET_ENV = 'MCP_AUTH_KIT_CLIENT_SECRET';
export const IDP_SECRET_ENV = 'MCP_AUTH_KIT_IDP_CLIENT_SECRET';

/** Examples of the machine and enterprise logins, for `--help` and `login --help`. */
export const MACHINE_LOGIN_HELP = [
  '',
  'Machine and enterprise logins (secrets and keys never on the command line; options before or after the command):',
  `  ${SECRET_ENV}=… mcp-auth-kit login --client-credentials --client-id svc --issuer http://localhost:9000 http://localhost:3000/mcp`,
  '  mcp-auth-kit login --client-credentials --client-id svc --issuer http://localhost:9000 --private-key svc.pem http://localhost:3000/mcp',
  `  ${IDP_SECRET_ENV}=… mcp-auth-kit login --enterprise --idp-issuer https://idp.corp --idp-client-id mcp-cli \\`,
  '      --client-id mcp-cli --issuer http://localhost:9000 http://localhost:3000/mcp',
  'Give tools and call the same options.',
  '',
].join('\n');

/** Registers the machine and enterprise options on the program. */
export function addMachineOptions(program: Command): void {
  program
    .option('--client-secret-file <file>', `file holding the client secret (or $${SECRET_ENV}); only its owner may read it`)
    .option(
      '--private-key <file>',
      "with --client-credentials: the client's private key (a PEM or a private JWK; only its owner may read it) that signs RFC 7523 assertions instead of a secret",
    )
    .option(
      '--enterprise',
      'enterprise-managed authorization: sign in at your organization IdP (--idp-issuer) in the browser, then exchange the ID Token for an ID-JAG and that for an access token (with --client-id and --issuer)',
    )
    .option('--idp-issuer <url>', 'with --enterprise: the issuer of the enterprise IdP')
    .option('--idp-client-id <id>', "with --enterprise: this client's client_id at the IdP")
    .option('--idp-client-secret-file <file>', `with --enterprise: file holding the client secret at the IdP (or $${IDP_SECRET_ENV})`)
    .addHelpText('after', MACHINE_LOGIN_HELP);
}

/**
 * The grant options of `--client-credentials` or `--enterprise`; `undefined` for an interactive
 * login. `openAuthorizationUrl`, `onWaiting` and the limits are the interactive login's, so the
 * enterprise sign-in says and waits exactly as it does.
 */
export function machineOptions(
  opts: MachineOpts,
  env: NodeJS.ProcessEnv,
  interactive: { openAuthorizationUrl: (url: URL) => Promise<void>; onWaiting: (redirectUri: string) => void },
): Pick<McpAuthClientOptions, 'clientCredentials' | 'jwtBearer'> | undefined {
  if (opts.clientCredentials && opts.enterprise) throw invalid('--client-credentials and --enterprise cannot be used together');
  if (!opts.clientCredentials && !opts.enterprise) {
    if (opts.privateKey !== undefined) throw invalid('--private-key needs --client-credentials');
    return undefined;
  }
  const mode = opts.clientCredentials ? '--client-credentials' : '--enterprise';
  if (opts.clientSecret !== undefined) {
    throw invalid(
      `${mode} takes the client secret from $${SECRET_ENV} or --client-secret-file, never from the command line (other users can read it)`,
    );
  }
  if (!opts.clientId) throw invalid(`${mode} needs --client-id`);
  const secret = secretFrom(opts.clientSecretFile, env[SECRET_ENV], '--client-secret-file');
  if (opts.clientCredentials && secret === undefined && opts.privateKey === undefined) {
    throw invalid(`--client-credentials needs a client secret ($${SECRET_ENV} or --client-secret-file) or --private-key`);
  }
  if (opts.clientCredentials && secret !== undefined && opts.privateKey !== undefined) {
    throw invalid('--private-key and a client secret cannot be used together: the key signs the assertion');
  }
  if (!opts.issuer) throw invalid(`${mode} needs --issuer (the credentials are sent only to the authorization server that issued them)`);
  if (opts.enterprise) {
    if (opts.privateKey !== undefined) throw invalid('--private-key needs --client-credentials');
    return { jwtBearer: enterpriseGrant(opts, env, interactive, opts.clientId, opts.issuer, secret) };
  }
  if (opts.privateKey !== undefined) {
    return {
      clientCredentials: {
        client_id: opts.clientId,
        issuer: opts.issuer,
        grant: 'jwt_bearer',
        privateKey: readPrivateKey(opts.privateKey),
      },
    };
  }
  return { clientCredentials: { client_id: opts.clientId, client_secret: secret!, issuer: opts.issuer } };
}

/** The secret of a pre-registered client of the interactive login: `--client-secret-file`, else the environment. */
export function secretOf(opts: MachineOpts, env: NodeJS.ProcessEnv): string | undefined {
  return secretFrom(opts.clientSecretFile, env[SECRET_ENV], '--client-secret-file');
}

function enterpriseGrant(
  opts: MachineOpts,
  env: NodeJS.ProcessEnv,
  interactive: { openAuthorizationUrl: (url: URL) => Promise<void>; onWaiting: (redirectUri: string) => void },
  clientId: string,
  issuer: string,
  secret: string | undefined,
): NonNullable<McpAuthClientOptions['jwtBearer']> {
  if (!opts.idpIssuer || !opts.idpClientId) throw invalid('--enterprise needs --idp-issuer and --idp-client-id');
  const idpSecret = secretFrom(opts.idpClientSecretFile, env[IDP_SECRET_ENV], '--idp-client-secret-file');
  const common = {
    idpClientId: opts.idpClientId,
    ...(idpSecret !== undefined && { idpClientSecret: idpSecret }),
    requestTimeoutMs: Number(opts.requestTimeout) * 1000,
  };
  // One sign-in per process, and only when a new access token is needed: a stored or refreshable
  // one is used without opening the browser, as with the interactive login.
  let signedIn: Promise<EnterpriseSignIn> | undefined;
  const signIn = () => {
    signedIn ??= enterpriseSignIn({
      ...common,
      idpIssuer: opts.idpIssuer!,
      openAuthorizationUrl: interactive.openAuthorizationUrl,
      onWaiting: interactive.onWaiting,
      authorizationTimeoutMs: Number(opts.timeout) * 1000,
    });
    return signedIn;
  };
  return {
    client_id: clientId,
    issuer,
    ...(secret !== undefined && { client_secret: secret }),
    extension: ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION,
    assertion: async (ctx) => {
      const session = await signIn();
      return enterpriseManagedAssertion({ ...common, idpTokenEndpoint: session.tokenEndpoint, idToken: session.idToken })(ctx);
    },
  };
}

/** A secret from its file (trimmed of the final newline) or the environment; the file wins. */
function secretFrom(file: string | undefined, fromEnv: string | undefined, option: string): string | undefined {
  if (file === undefined) return fromEnv || undefined;
  const value = readOwnerOnly(file, option).replace(/\r?\n$/, '');
  if (!value) throw invalid(`${option}: ${file} is empty`);
  return value;
}

/**
 * A file only its owner can read, as ssh wants of its keys: a secret others can read is no
 * longer one. (Windows has no such mode bits: there the check is skipped.)
 */
function readOwnerOnly(file: string, option: string): string {
  try {
    if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
      throw invalid(`${option}: ${file} can be read by other users; make it private first (chmod 600 ${file})`);
    }
    return readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof McpAuthError) throw err;
    throw invalid(`${option}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/** The key of `--private-key`: a PEM (PKCS#8, SEC1 or PKCS#1) or a private JWK, with the JWS algorithm its type implies. */
function readPrivateKey(file: string): PrivateKeyInput {
  const text = readOwnerOnly(file, '--private-key');
  let key: KeyObject;
  let jwk: Record<string, unknown> | undefined;
  try {
    if (text.trimStart().startsWith('{')) {
      jwk = JSON.parse(text) as Record<string, unknown>;
      key = createPrivateKey({ key: jwk as never, format: 'jwk' });
    } else {
      key = createPrivateKey(text);
    }
  } catch {
    throw invalid(`--private-key: ${file} holds no private key (a PKCS#8, SEC1 or PKCS#1 PEM, or a private JWK)`);
  }
  const alg = typeof jwk?.alg === 'string' ? jwk.alg : algorithmOf(key);
  if (!alg) throw invalid(`--private-key: ${file} holds a ${key.asymmetricKeyType} key; use an EC (P-256, P-384), RSA or Ed25519 key`);
  const pem = key.export({ format: 'pem', type: 'pkcs8' }).toString();
  return { key: pem, alg, ...(typeof jwk?.kid === 'string' && { kid: jwk.kid }) };
}

function algorithmOf(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'ec':
      return details?.namedCurve === 'prime256v1' ? 'ES256' : details?.namedCurve === 'secp384r1' ? 'ES384' : undefined;
    case 'ed25519':
      return 'EdDSA';
    default:
      return undefined;
  }
}

function invalid(message: string): McpAuthError {
  return new McpAuthError(ERR.INVALID_ARGUMENT, message);
}
