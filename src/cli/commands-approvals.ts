import type { Approval } from '../client/types';
import type { Ctx } from './commands';
import { printJson } from './commands';
import { table } from './table';

interface ApprovalPage {
  items: Approval[];
  nextCursor: string | null;
}

export interface ApprovalFilter {
  tenant?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

function renderApprovals(page: ApprovalPage): string {
  if (page.items.length === 0) return 'No runs awaiting approval.';
  const rows = table(page.items, [
    { title: 'RUN', value: (a) => a.runId },
    { title: 'TENANT', value: (a) => a.tenant },
    { title: 'AGENT', value: (a) => a.agent },
    { title: 'GATE', value: (a) => (a.gateId === null ? '-' : String(a.gateId)) },
    { title: 'OPENED', value: (a) => a.openedAt ?? '-' },
    {
      title: 'ON TIMEOUT',
      value: (a) => (a.timeout ? `${a.timeout.onTimeout} at ${a.timeout.expiresAt ?? '?'}` : '-'),
    },
  ]);
  return page.nextCursor ? `${rows}\n\nMore: --cursor ${page.nextCursor}` : rows;
}

/** `fairway approvals list`: the gates waiting for a human (GET /v1/approvals), each with the gate id a decision names. */
export async function listApprovals({ api, io, json }: Ctx, f: ApprovalFilter): Promise<void> {
  const q = new URLSearchParams();
  if (f.tenant) q.set('tenant', f.tenant);
  if (f.limit) q.set('limit', String(f.limit));
  if (f.cursor) q.set('cursor', f.cursor);
  const page = await api.get<ApprovalPage>(`/v1/approvals${q.size ? `?${q}` : ''}`);
  if (json) printJson(io, page);
  else io.out(renderApprovals(page));
}
