import type { RequestHandler, Response } from 'express';
import type { ApiStore } from '../../stores/api/api-store';
import { ApiError } from '../../contract/errors';
import { hashApiKey, safeEqual } from '../crypto/keys';
import type { TenantRecord } from '../../stores/tenants/tenants';
import { MIN_ADMIN_TOKEN_LENGTH } from '../../config';

/**
 * Who a request acts as. A tenant key's `keyId` (`key:<tenant>#<12 hex of its hash>`) names which key
 * acted, for records such as a gate's decision, and never reveals the key.
 */
export type Principal =
  { kind: 'admin' } | { kind: 'tenant'; tenant: string; record: TenantRecord; keyId: string };

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * Resolves `Authorization: Bearer <key>` to the admin or a tenant; 401 when missing or unknown. Several
 * admin tokens (the current one and the next, while it rotates) are each accepted.
 */
export function authenticate(store: ApiStore, adminTokens: string | readonly string[]): RequestHandler {
  const tokens = typeof adminTokens === 'string' ? [adminTokens] : adminTokens;
  if (tokens.length === 0 || tokens.some((t) => t.length < MIN_ADMIN_TOKEN_LENGTH)) {
    throw new Error(`The admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters.`);
  }
  return async (req, res, next) => {
    const match = BEARER.exec(req.get('authorization') ?? '');
    const key = match?.[1];
    if (!key) {
      throw new ApiError('unauthorized', 'Send your API key as "Authorization: Bearer <key>".');
    }
    // Every token is compared: timing does not say which one matched.
    if (tokens.map((t) => safeEqual(key, t)).includes(true)) {
      res.locals.principal = { kind: 'admin' } satisfies Principal;
      next();
      return;
    }
    const keyHash = hashApiKey(key);
    const record = await store.tenants.findByKeyHash(keyHash);
    if (!record) throw new ApiError('unauthorized', 'This API key is not valid (it may have been rotated).');
    refuseDisabled(record);
    const keyId = `key:${record.tenant}#${keyHash.slice(0, 12)}`;
    res.locals.principal = { kind: 'tenant', tenant: record.tenant, record, keyId } satisfies Principal;
    next();
  };
}

/** 403 tenant_disabled for a tenant an admin disabled: its credentials open nothing until it is enabled. */
export function refuseDisabled(record: TenantRecord): void {
  if (record.disabled)
    throw new ApiError(
      'tenant_disabled',
      `Tenant ${record.tenant} is disabled; an admin can enable it again (POST /v1/admin/tenants/${record.tenant}/enable).`,
    );
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf called on a route without authenticate()');
  return principal;
}

/** The caller's tenant; 403 for the admin token, which acts on tenants but is none of them. */
export function tenantOf(res: Response, action: string): TenantRecord {
  const principal = principalOf(res);
  if (principal.kind !== 'tenant') {
    throw new ApiError('forbidden', `The admin token cannot ${action}; use the tenant's API key.`);
  }
  return principal.record;
}

/** Guards /v1/admin/* and /metrics: tenants get 403, naming what they asked for. */
export const requireAdmin: RequestHandler = (req, res, next) => {
  if (principalOf(res).kind !== 'admin') {
    const what = req.originalUrl.startsWith('/metrics') ? '/metrics' : '/v1/admin endpoints';
    throw new ApiError('forbidden', `Only the admin token may use ${what}.`);
  }
  next();
};

/** Who the caller is, as a record of who acted shows it: the tenant key's id, or `admin`. */
export function actorOf(res: Response): string {
  const principal = principalOf(res);
  return principal.kind === 'admin' ? 'admin' : principal.keyId;
}

/** True when the caller may see a resource of `owner` (its own, or anything for the admin). */
export function mayAccess(res: Response, owner: string): boolean {
  const principal = principalOf(res);
  return principal.kind === 'admin' || principal.tenant === owner;
}
