/**
 * The oidc-provider adapter, written once over a `ModelBackend`.
 * Semantics follow oidc-provider's own memory adapter and its adapter documentation:
 * `upsert` replaces the row (and its indexes), `expiresIn` is seconds from now (absent =
 * forever), `consume` stamps `consumed` with epoch seconds, `revokeByGrantId` removes every
 * token-like row of the grant, and an expired row is never returned.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { type Clock, epochSeconds } from './clock.js';
import { type ModelBackend, toRow } from './model-rows.js';

export class ModelAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly backend: ModelBackend,
    private readonly clock: Clock,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    await this.backend.upsert(toRow(this.model, id, payload, expiresIn, this.clock()));
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (typeof id !== 'string' || id === '') return undefined;
    return this.backend.find(this.model, id, this.clock());
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (typeof uid !== 'string' || uid === '') return undefined;
    return this.backend.findBy(this.model, 'uid', uid, this.clock());
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (typeof userCode !== 'string' || userCode === '') return undefined;
    return this.backend.findBy(this.model, 'userCode', userCode, this.clock());
  }

  async consume(id: string): Promise<void> {
    const now = this.clock();
    await this.backend.consume(this.model, id, epochSeconds(now), now);
  }

  async destroy(id: string): Promise<void> {
    await this.backend.destroy(this.model, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    if (typeof grantId !== 'string' || grantId === '') return;
    await this.backend.revokeByGrantId(grantId);
  }
}
