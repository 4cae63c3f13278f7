import type { RequestHandler, Response } from 'express';
import type { ApiStore } from '../../stores/api/api-store';
import { ApiError } from '../../contract/errors';
import { hashApiKey, safeEqual } from '../crypto/keys';
import type { TenantRecord } from '../../stores/tenants/tenants';
import { MIN_ADMIN_TOKEN_LENGTH } from '../../config';

/**
 * Who a request acts as. A tenant key's `keyId` (`key:<tenant>#<12 hex of its hash>`, or
 * `approver:<tenant>#<12 hex>` for its approver key) names which key acted, for records such as a
 * gate's decision, and never reveals the key. `role` is `approver` for the tenant's approver key, which
 * reads runs and approvals and decides gates, and does nothing else.
 */
export type Principal =
  | { kind: 'admin' }
  | { kind: 'tenant'; tenant: string; record: TenantRecord; keyId: string; role: 'tenant' | 'approver' };

/** What an approver key may do: read runs and approvals, and approve or reject a run's gate. */
const APPROVER_ROUTES: readonly { methods: readonly string[]; path: RegExp }[] = [
  { methods: ['GET', 'HEAD'], path: /^\/v1\/(runs|approvals)(\/[^/]+(\/steps)?)?\/?$/ },
  { methods: ['POST'], path: /^\/v1\/runs\/[^/]+\/(approve|reject)\/?$/ },
];

/** 403 forbidden for an approver key outside what it may do. */
function refuseApproverOutside(method: string, url: string): void {
  const path = url.split('?')[0] ?? '';
  if (APPROVER_ROUTES.some((r) => r.methods.includes(method) && r.path.test(path))) return;
  throw new ApiError(
    'forbidden',
    "An approver key may only read runs and approvals and approve or reject gates; use the tenant's API key.",
  );
}

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
    const tenantRecord = await store.tenants.findByKeyHash(keyHash);
    const record = tenantRecord ?? (await store.tenants.findByApproverKeyHash(keyHash));
    if (!record) throw new ApiError('unauthorized', 'This API key is not valid (it may have been rotated).');
    refuseDisabled(record);
    const role = tenantRecord ? 'tenant' : 'approver';
    if (role === 'approver') refuseApproverOutside(req.method, req.originalUrl);
    const keyId = `${role === 'tenant' ? 'key' : 'approver'}:${record.tenant}#${keyHash.slice(0, 12)}`;
    res.locals.principal = { kind: 'tenant', tenant: record.tenant, record, keyId, role } satisfies Principal;
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
  if (principal.role !== 'tenant') {
    throw new ApiError('forbidden', `An approver key cannot ${action}; use the tenant's API key.`);
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

/**
 * 403 for a tenant's ordinary key deciding a gate once the tenant has an approver key: then only the
 * approver key (or the admin) decides, so the key that submitted a run cannot approve it.
 */
export function refuseUnlessMayDecide(res: Response): void {
  const principal = principalOf(res);
  if (principal.kind === 'tenant' && principal.role === 'tenant' && principal.record.approverKey) {
    throw new ApiError(
      'forbidden',
      `Tenant ${principal.tenant} has an approver key: only it (or the admin) may approve or reject gates.`,
    );
  }
}
