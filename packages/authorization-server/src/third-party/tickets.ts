/**
 * The records behind a connection attempt, in the store every instance shares (`store.kv`):
 *
 * - the connect ticket (`<issuer>/connect/<ticket>`, the `connect_uri` of an `interaction_required`
 *   answer): random, bound to (sub, provider, resource), short-lived, used once — taken when the
 *   user confirms (or cancels), so a replayed URL finds nothing. Kept under its hash: the store
 *   never holds a usable ticket.
 * - the flow (after the confirmation): PKCE verifier and `state` for the provider, bound to the
 *   browser by a cookie handle and to the AS session that confirmed; taken once by the callback
 *   (MCP security best practices §OAuth State Parameter Validation: stored only after consent,
 *   single-use, about 10 minutes).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { KeyValueStore } from '../storage/types.js';

const TICKETS = 'connect-ticket';
const TAKEN = 'connect-ticket-taken';
const FLOWS = 'connect-flow';
/** From the confirmation to the provider's callback (the user signs in and consents there). */
export const FLOW_TTL = 600;

/** What a ticket is bound to. */
export interface Ticket {
  /** The account the MCP access token was issued to: only its session may connect. */
  sub: string;
  provider: string;
  /** The MCP server that asked (the calling client's `resource`). */
  resource: string;
  /** The MCP server's client id at this AS (audit). */
  clientId: string;
}

export interface ConnectFlow extends Ticket {
  /** oidc-provider's session uid at the confirmation: the callback must come in the same session. */
  sessionUid: string;
  state: string;
  codeVerifier: string;
}

const HANDLE = /^[A-Za-z0-9_-]{43}$/;
const random = () => randomBytes(32).toString('base64url');
const hash = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Only a value of our own shape reaches the store (a path segment or cookie is anything a browser sends). */
export const isHandle = (value: unknown): value is string => typeof value === 'string' && HANDLE.test(value);

export class ConnectRecords {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly ticketTtl: number,
  ) {}

  async issueTicket(ticket: Ticket): Promise<{ ticket: string; expiresIn: number }> {
    const value = random();
    await this.kv.set(TICKETS, hash(value), ticket, this.ticketTtl);
    return { ticket: value, expiresIn: this.ticketTtl };
  }

  /** The ticket's binding while it is live and not taken; the ticket stays usable. */
  async peekTicket(ticket: string): Promise<Ticket | undefined> {
    if (!isHandle(ticket)) return undefined;
    return this.kv.get<Ticket>(TICKETS, hash(ticket));
  }

  /** Takes the ticket: of concurrent takers exactly one gets it (count first, in the shared store). */
  async takeTicket(ticket: string): Promise<Ticket | undefined> {
    if (!isHandle(ticket)) return undefined;
    const key = hash(ticket);
    if ((await this.kv.increment(TAKEN, key, 1, this.ticketTtl)) !== 1) return undefined;
    const bound = await this.kv.get<Ticket>(TICKETS, key);
    await this.kv.delete(TICKETS, key);
    return bound;
  }

  /** Starts the provider flow: the handle goes into the browser's cookie. */
  async startFlow(flow: ConnectFlow): Promise<string> {
    const handle = random();
    await this.kv.set(FLOWS, handle, flow, FLOW_TTL);
    return handle;
  }

  /** The flow of this browser, once: the first callback takes it, a replay finds nothing. */
  async takeFlow(handle: unknown): Promise<ConnectFlow | undefined> {
    if (!isHandle(handle)) return undefined;
    if ((await this.kv.increment(TAKEN, `flow ${handle}`, 1, FLOW_TTL)) !== 1) return undefined;
    const flow = await this.kv.get<ConnectFlow>(FLOWS, handle);
    await this.kv.delete(FLOWS, handle);
    return flow;
  }
}
