import { randomBytes } from 'node:crypto';
import { HeadlessBrowser, matchesRedirectUri } from '@mcp-auth-kit/test-utils';

/**
 * An `OAuthClientProvider` for the MCP SDK clients (v1 and v2 share the shape) whose
 * "browser" is a headless user agent. It records what crossed the front channel so the
 * test itself can check `state` and `iss`: the SDK v1 client checks neither.
 */
export class HeadlessSdkOAuthProvider {
  readonly redirectUrl: string;
  readonly ua = new HeadlessBrowser();
  authorizationUrls: URL[] = [];
  callbacks: URL[] = [];
  private client: Record<string, unknown> | undefined;
  private tokenSet: Record<string, unknown> | undefined;
  private verifier = '';
  private lastState = '';

  constructor(
    private readonly name: string,
    // Nothing listens here: the user agent stops at this URL and hands the callback over.
    callbackPort = 1,
  ) {
    this.redirectUrl = `http://127.0.0.1:${callbackPort}/callback`;
  }

  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }

  clientInformation() {
    return this.client as never;
  }

  saveClientInformation(info: Record<string, unknown>) {
    this.client = info;
  }

  tokens() {
    return this.tokenSet as never;
  }

  saveTokens(tokens: Record<string, unknown>) {
    this.tokenSet = tokens;
  }

  async redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(new URL(url));
    this.callbacks.push(await this.ua.followToCallback(url, matchesRedirectUri(this.redirectUrl)));
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  // SDK v2 (SEP-2352): the discovery result recorded at redirect time binds the callback
  // leg to the same authorization server. SDK v1 never calls these.
  private discovery: unknown;
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }

  get accessToken(): string | undefined {
    return this.tokenSet?.access_token as string | undefined;
  }

  /** The latest callback, after checking it answers the latest authorization request. */
  lastCallback(expectedIssuer: string): URLSearchParams {
    const callback = this.callbacks.at(-1);
    const request = this.authorizationUrls.at(-1);
    if (!callback || !request) throw new Error('no authorization happened');
    const params = callback.searchParams;
    if (params.get('state') !== request.searchParams.get('state') || params.get('state') !== this.lastState) {
      throw new Error('state mismatch');
    }
    if (params.get('iss') !== expectedIssuer) throw new Error(`iss mismatch: ${params.get('iss')}`);
    return params;
  }
}
