import { definedFields, scheduleIdOf } from '../../contract/schedules';
import type { ScheduleDefinition, ScheduleView, SchedulesPort } from '../../contract/schedules';

interface Kept {
  def: ScheduleDefinition;
  view: ScheduleView;
}

/**
 * Schedules kept in memory, which never fire on their own (`trigger` records an action): the API's
 * default when no Temporal is at hand (its tests). The pause rules are those of the Temporal port.
 */
export class MemorySchedules implements SchedulesPort {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly scope = 'memory',
  ) {}

  async put(tenant: string, name: string, def: ScheduleDefinition, opts: { drained: boolean }) {
    const scheduleId = scheduleIdOf(this.scope, tenant, name);
    const before = this.kept.get(scheduleId);
    const view: ScheduleView = {
      name,
      tenant,
      scheduleId,
      ...definedFields(def),
      paused: def.paused ? 'tenant' : opts.drained ? 'drain' : null,
      recentActions: before?.view.recentActions ?? [],
      nextActionTimes: [],
      actionsTaken: before?.view.actionsTaken ?? 0,
      actionsSkippedOverlap: 0,
    };
    this.kept.set(scheduleId, { def, view });
    return { created: before === undefined, view: structuredClone(view) };
  }

  async get(tenant: string, name: string) {
    const kept = this.kept.get(scheduleIdOf(this.scope, tenant, name));
    return kept ? structuredClone(kept.view) : null;
  }

  async list(tenant?: string) {
    return [...this.kept.values()]
      .filter((k) => tenant === undefined || k.view.tenant === tenant)
      .map((k) => structuredClone(k.view))
      .sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
  }

  async delete(tenant: string, name: string) {
    return this.kept.delete(scheduleIdOf(this.scope, tenant, name));
  }

  async trigger(tenant: string, name: string) {
    const kept = this.kept.get(scheduleIdOf(this.scope, tenant, name));
    if (!kept) return false;
    const at = new Date(this.now()).toISOString();
    kept.view.recentActions.push({
      scheduledAt: at,
      takenAt: at,
      workflowId: `${kept.view.scheduleId}-${at}`,
    });
    kept.view.actionsTaken++;
    return true;
  }

  async pauseForDrain() {
    const running = [...this.kept.values()].filter((k) => k.view.paused === null);
    for (const k of running) k.view.paused = 'drain';
    return running.length;
  }

  async resumeAfterDrain() {
    const drained = [...this.kept.values()].filter((k) => k.view.paused === 'drain');
    for (const k of drained) k.view.paused = null;
    return drained.length;
  }
}
