import type { ResolvedOptions } from './config/types.js';
import { extractCredentials, type Credentials } from './credentials.js';
import { confirmationJkt, verifyDpopProof, type VerifiedDpopProof } from './dpop.js';
import type { DpopNonces } from './dpop-nonce.js';
import { replayKey } from './dpop-replay.js';
import { ResourceServerError } from './errors.js';
import type { AccessTokenVerifier, AuthenticatedRequest, AuthenticateRequest, DpopReplayStore, VerifiedAccessToken } from './types.js';

/** What {@link createRequestAuth} needs besides the options: the verifier and the DPoP state. */
export interface RequestAuthParts {
  verifier: AccessTokenVerifier;
  /** Set when DPoP nonces are on. */
  nonces: DpopNonces | undefined;
  /** Set when DPoP is on. */
  replay: DpopReplayStore | undefined;
}

/**
 * `authenticate` and `authenticateFromCache` of the core: credentials, DPoP proof (RFC 9449
 * §4.3), token, sender constraint (§7.1 / §7.2) and proof replay (§11.1).
 */
export function createRequestAuth(options: ResolvedOptions, { verifier, nonces, replay }: RequestAuthParts) {
  const { dpop } = options;

  /** A verified token presented with the Bearer scheme: the one rule both paths share. */
  function acceptBearer(verified: VerifiedAccessToken): AuthenticatedRequest {
    // RFC 9449 §7.2: a DPoP-bound token is never accepted as a bearer token (downgrade)
    if (confirmationJkt(verified.claims) !== undefined) throw new ResourceServerError('dpop_bound_token_as_bearer');
    return { verified, scheme: 'bearer' };
  }

  /** Before the token: local checks only, no network I/O for a bad proof. */
  function checkProof(request: AuthenticateRequest, token: string): Promise<VerifiedDpopProof> {
    const proofs = request.dpop === undefined ? [] : typeof request.dpop === 'string' ? [request.dpop] : request.dpop;
    const d = dpop!;
    return verifyDpopProof(
      { proofs, method: request.method, accessToken: token },
      {
        algorithms: d.algorithms,
        htu: d.htu,
        maxAgeSeconds: d.maxAgeSeconds,
        clockToleranceSeconds: d.clockToleranceSeconds,
        nonces,
        now: options.now,
      },
    );
  }

  /** RFC 9449 §4.3 check 13 / §7.1 and §11.1: the token is bound to the proof's key, the proof is new. */
  async function acceptDpop(verified: VerifiedAccessToken, proof: VerifiedDpopProof): Promise<AuthenticatedRequest> {
    const jkt = confirmationJkt(verified.claims);
    if (jkt === undefined) throw new ResourceServerError('dpop_token_not_bound');
    if (jkt !== proof.jkt) throw new ResourceServerError('dpop_key_mismatch', { detail: { expected: jkt, actual: proof.jkt } });
    // recorded only now, so only holders of a valid bound token fill the store
    if (!(await replay!.add(replayKey(proof.jkt, proof.jti), proof.replayUntil))) throw new ResourceServerError('dpop_replayed');
    return { verified, scheme: 'dpop', jkt, ...(proof.nextNonce !== undefined ? { dpopNonce: proof.nextNonce } : {}) };
  }

  async function authenticate(request: AuthenticateRequest, credentials?: Credentials): Promise<AuthenticatedRequest> {
    const { scheme, token } =
      credentials ??
      extractCredentials(
        {
          authorization: request.authorization,
          ...(request.url !== undefined ? { url: request.url } : {}),
          ...(request.tokenInBody !== undefined ? { tokenInBody: request.tokenInBody } : {}),
        },
        dpop !== undefined,
      );
    // a DPoP-only server refuses Bearer before spending any work on the token
    if (scheme === 'bearer' && dpop?.required === true) throw new ResourceServerError('dpop_required');
    const proof = scheme === 'dpop' && dpop !== undefined ? await checkProof(request, token) : undefined;
    const verified = await verifier.verify(token);
    return scheme === 'bearer' ? acceptBearer(verified) : acceptDpop(verified, proof!);
  }

  // The same steps as `authenticate` for a Bearer token, when the verifier answers from its cache:
  // a warm request then costs no promise at all. (A verifier without `cached`, e.g. one wrapped
  // with extra checks, always takes the full path.)
  const cachedLookup = verifier.cached?.bind(verifier);
  function authenticateFromCache({ scheme, token }: Credentials, connection?: object): AuthenticatedRequest | undefined {
    if (scheme !== 'bearer' || cachedLookup === undefined) return undefined;
    if (dpop?.required === true) throw new ResourceServerError('dpop_required');
    const verified = cachedLookup(token, connection);
    return verified === undefined ? undefined : acceptBearer(verified);
  }

  return { authenticate, authenticateFromCache };
}
