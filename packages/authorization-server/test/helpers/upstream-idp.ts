/**
 * A second oidc-provider on 127.0.0.1 acting as the upstream OpenID Connect provider, with
 * tiny interaction handlers of its own (oidc-provider's devInteractions page loads a web font
 * from the internet; tests never leave loopback). Any login name signs in as that subject.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export const UPSTREAM_CLIENT_ID = 'mcp-auth-kit';
export const UPSTREAM_CLIENT_SECRET = 'upstream-client-secret-0123456789';
/** A public client (PKCE only) registered at the same provider. */
export const UPSTREAM_PUBLIC_CLIENT_ID = 'mcp-auth-kit-public';

export interface UpstreamIdp {
  issuer: string;
  /** Registers the AS callback as the client's redirect URI and starts answering. */
  configure(redirectUri: string): Promise<void>;
  /** Number of token requests served (to prove the code was redeemed). */
  tokenRequests: number;
  close(): Promise<void>;
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startUpstreamIdp(): Promise<UpstreamIdp> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: UpstreamIdp = {
    issuer,
    tokenRequests: 0,
    async configure(redirectUri: string) {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'idp-1' };
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: UPSTREAM_CLIENT_ID,
            client_secret: UPSTREAM_CLIENT_SECRET,
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
          {
            client_id: UPSTREAM_PUBLIC_CLIENT_ID,
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
          },
        ],
        jwks: { keys: [jwk] },
        cookies: {
          keys: ['upstream-idp-cookie-key-0123456789'],
          names: { session: 'idp_session', interaction: 'idp_interaction', resume: 'idp_resume' },
        },
        claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        async findAccount(_ctx, sub) {
          return {
            accountId: sub,
            async claims() {
              // A login that is an address is vouched for (email_verified), as a provider that
              // owns the address would: the AS's own rules, not the provider's word, must then hold.
              const address = sub.includes('@');
              return {
                sub,
                preferred_username: sub,
                name: `Upstream ${sub}`,
                email: address ? sub : `${sub}@upstream.test`,
                email_verified: address,
              };
            },
          };
        },
      });
      provider.on('grant.success', () => idp.tokenRequests++);
      const callback = provider.callback();
      handler = async (req, res) => {
        const match = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
        if (!match) return callback(req, res);
        try {
          const details = await provider.interactionDetails(req, res);
          if (details.prompt.name === 'consent') {
            const grant = new provider.Grant({ accountId: details.session!.accountId!, clientId: String(details.params.client_id) });
            grant.addOIDCScope(String(details.params.scope));
            const grantId = await grant.save();
            await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
            return;
          }
          if (req.method === 'POST') {
            const login = (await formBody(req)).get('login') || 'anonymous';
            await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
            return;
          }
          res.setHeader('content-type', 'text/html; charset=utf-8');
          res.end(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Upstream IdP</title></head><body>
<h1>Upstream IdP</h1><form method="post" action="/interaction/${esc(details.uid)}">
<label for="login">Upstream login</label><input id="login" name="login" required>
<button type="submit">Sign in at the upstream IdP</button></form></body></html>`);
        } catch (err) {
          res.statusCode = 400;
          res.end(String((err as Error).message));
        }
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return idp;
}
