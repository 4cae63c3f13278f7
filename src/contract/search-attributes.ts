import { defineSearchAttributeKey } from '@temporalio/common';

/** Search attributes every run workflow carries, so the Web UI and the list API can filter by them. */
export const TenantIdKey = defineSearchAttributeKey('TenantId', 'KEYWORD');
export const PriorityKey = defineSearchAttributeKey('Priority', 'KEYWORD');
export const RunStatusKey = defineSearchAttributeKey('RunStatus', 'KEYWORD');
export const BatchIdKey = defineSearchAttributeKey('BatchId', 'KEYWORD');
export const AgentNameKey = defineSearchAttributeKey('AgentName', 'KEYWORD');

export const FAIRWAY_SEARCH_ATTRIBUTES = [TenantIdKey, PriorityKey, RunStatusKey, BatchIdKey, AgentNameKey];
