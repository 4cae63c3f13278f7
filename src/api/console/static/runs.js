/* The console's runs, failures, run detail and approvals inbox: all read from the public API (/v1/runs, /v1/approvals). */
(() => {
  'use strict';
  const { $, fmt, esc, when, meta, api, session, confirmAction, showError, keyPlace } = window.Fairway;
  const FAILURES_PAGE = 20;
  const VIEW_READS = 4;
  const VIEWS = ['fleet', 'runs', 'failures', 'approvals', 'run'];

  const runHref = (runId) => `#/runs/${encodeURIComponent(runId)}`;
  const runLink = (runId) =>
    `<a href="${runHref(runId)}" class="run-link" data-run="${esc(runId)}">${esc(runId)}</a>`;
  const statusBadge = (st) =>
    `<span class="status" data-status="${esc(st)}">${esc(st.replace('_', ' '))}</span>`;
  const json = (v) => `<pre class="json">${esc(JSON.stringify(v, null, 2))}</pre>`;
  const failed = (err) => err.status !== 401 && showError(err.message);

  /** The run's workflow in the Temporal Web UI, when the server says where the UI is. */
  function temporalUrl(runId) {
    const ui = meta('fairway-temporal-ui');
    const ns = meta('fairway-temporal-namespace') || 'default';
    return ui ? `${ui}/namespaces/${encodeURIComponent(ns)}/workflows/${encodeURIComponent(runId)}` : null;
  }

  /** Reads many runs' views, a few at a time. */
  async function views(ids) {
    const out = new Array(ids.length).fill(null);
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const i = next++;
        out[i] = await api('GET', `/v1/runs/${encodeURIComponent(ids[i])}`).catch(() => null);
      }
    };
    await Promise.all(Array.from({ length: Math.min(VIEW_READS, ids.length) }, worker));
    return out;
  }

  // ---- runs --------------------------------------------------------------------------------------
  let runsCursor = null;
  /** The list query from the filter form (empty fields are left out; times as ISO 8601). */
  function runsQuery() {
    const q = new URLSearchParams();
    const f = new FormData($('runs-filter'));
    for (const [k, v] of f) {
      const value = String(v).trim();
      if (!value) continue;
      if (k === 'createdAfter' || k === 'createdBefore') q.set(k, new Date(value).toISOString());
      else q.set(k, value);
    }
    return q;
  }
  async function loadRuns(more) {
    const q = runsQuery();
    q.set('limit', '50');
    if (more && runsCursor) q.set('cursor', runsCursor);
    const body = $('runs').tBodies[0];
    if (!more) body.innerHTML = '';
    $('runs-state').textContent = 'Loading…';
    try {
      const page = await api('GET', `/v1/runs?${q}`);
      runsCursor = page.nextCursor;
      body.insertAdjacentHTML(
        'beforeend',
        page.items
          .map(
            (r) => `<tr data-run="${esc(r.runId)}">
              <th scope="row">${runLink(r.runId)}</th>
              <td>${esc(r.tenant)}</td><td>${esc(r.agent)}</td><td>${esc(r.priority)}</td>
              <td>${statusBadge(r.status)}</td><td>${esc(when(r.createdAt))}</td>
            </tr>`,
          )
          .join(''),
      );
      $('runs-more').hidden = !runsCursor;
      $('runs-state').textContent = body.rows.length ? `${body.rows.length} runs` : 'No runs match.';
    } catch (err) {
      $('runs-state').textContent = '';
      failed(err);
    }
  }
  $('runs-filter').addEventListener('submit', (e) => {
    e.preventDefault();
    void loadRuns(false);
  });
  $('runs-more').addEventListener('click', () => void loadRuns(true));

  // ---- failures ----------------------------------------------------------------------------------
  async function loadFailures() {
    $('failures-state').textContent = 'Loading…';
    try {
      const page = await api('GET', `/v1/runs?status=failed&limit=${FAILURES_PAGE}`);
      const vs = await views(page.items.map((r) => r.runId));
      $('failures').tBodies[0].innerHTML = page.items
        .map((r, i) => {
          const v = vs[i];
          const e = v && v.error;
          return `<tr data-run="${esc(r.runId)}">
            <th scope="row">${runLink(r.runId)}</th>
            <td>${esc(r.tenant)}</td><td>${esc(r.agent)}</td><td>${esc(r.priority)}</td>
            <td>${esc(when(v ? v.finishedAt : null))}</td>
            <td class="err"><code>${esc(e ? e.code : '—')}</code> ${esc(e ? e.message : '')}</td>
          </tr>`;
        })
        .join('');
      $('failures-state').textContent = page.items.length
        ? `${page.items.length === 1 ? 'The latest failed run' : `The ${page.items.length} latest failed runs`}${page.nextCursor ? ' (older ones: Runs, status failed)' : ''}.`
        : 'No failed runs.';
    } catch (err) {
      $('failures-state').textContent = '';
      failed(err);
    }
  }

  // ---- one run -----------------------------------------------------------------------------------
  function gateBlock(run) {
    const g = run.gate;
    if (!g) return '';
    const rows = [
      ['Gate', g.gateId === undefined ? 'of an older worker: not numbered' : `${g.gateId} of this run`],
      ['Opened', when(g.openedAt)],
      [
        'Timeout',
        g.timeoutSeconds === null
          ? 'none: waits until decided'
          : `${g.timeoutSeconds} s, then ${g.onTimeout}`,
      ],
    ];
    if (g.decision) rows.push(['Decision', `${g.decision} by ${g.decidedBy} at ${when(g.decidedAt)}`]);
    if (g.note) rows.push(['Note', g.note]);
    return `<h3>Gate</h3>${dl(rows, 'gate-facts')}<h4>Proposal</h4>${json(g.proposal)}${
      run.status === 'awaiting_approval' && !g.decision ? decisionForm(run.runId, g.gateId) : ''
    }`;
  }
  const dl = (rows, id) =>
    `<dl class="explain"${id ? ` id="${id}"` : ''}>${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
  function toolCalls(calls) {
    if (!calls || !calls.length) return '';
    return `<h3>Tool calls</h3><div class="table-wrap"><table id="run-tools"><thead><tr><th>Tool</th><th>Acted as</th><th>Outcome</th><th>At</th></tr></thead><tbody>${calls
      .map(
        (c) => `<tr><td>${esc(c.tool)}</td><td>${esc(c.identity ?? '—')}</td>
          <td>${esc(c.outcome)}${c.reason ? `: ${esc(c.reason)}` : ''}</td><td>${esc(when(c.at))}</td></tr>`,
      )
      .join('')}</tbody></table></div>`;
  }
  function stepsTable(steps) {
    if (!steps.length) return '<p class="muted">No steps recorded yet.</p>';
    return `<div class="table-wrap"><table id="run-steps"><thead><tr><th>#</th><th>Kind</th><th>What</th><th class="num">Tokens</th><th>Outcome</th><th>At</th></tr></thead><tbody>${steps
      .map(
        (
          s,
          i,
        ) => `<tr data-kind="${esc(s.kind)}"><td>${i + 1}</td><td>${esc(s.kind)}</td><td>${esc(s.name)}</td>
          <td class="num">${s.tokens === null ? '—' : fmt(s.tokens)}</td>
          <td>${esc(s.outcome)}${s.error ? `: ${esc(s.error)}` : ''}</td><td>${esc(when(s.at))}</td></tr>`,
      )
      .join('')}</tbody></table></div>`;
  }
  async function loadRun(runId) {
    const out = $('run-out');
    $('run-title').textContent = `Run ${runId}`;
    out.innerHTML = '<p class="muted">Loading…</p>';
    try {
      const [run, steps] = await Promise.all([
        api('GET', `/v1/runs/${encodeURIComponent(runId)}`),
        api('GET', `/v1/runs/${encodeURIComponent(runId)}/steps`).catch(() => null),
      ]);
      const ui = temporalUrl(runId);
      const w = run.waitingOn;
      const facts = [
        ['Status', run.status],
        ['Tenant', run.tenant],
        ['Agent', run.agent],
        ['Lane', run.priority],
        ['Batch', run.batchId ?? '—'],
        ['Created', when(run.createdAt)],
        ['Admitted', when(run.admittedAt)],
        ['Finished', when(run.finishedAt)],
        ['Tokens used', fmt(run.usage && run.usage.tokens)],
        ['Waiting on', w ? `${w.code}: ${w.message}` : '—'],
        ['Fairness key', run.fairnessKey ?? (w && w.fairnessKey) ?? '(the tenant\u2019s default)'],
        ...(w && w.keyPosition ? [['Among its keys', keyPlace(w.keyPosition)]] : []),
      ];
      out.innerHTML = `
        <p class="links">${ui ? `<a id="temporal-link" href="${esc(ui)}" target="_blank" rel="noopener">Open in the Temporal Web UI</a>` : '<span class="muted">No Temporal Web UI configured (TEMPORAL_UI_URL).</span>'}</p>
        ${run.error ? `<p class="error banner" id="run-error"><code>${esc(run.error.code)}</code> ${esc(run.error.message)}</p>` : ''}
        ${dl(facts, 'run-facts')}
        <h3>Steps, model calls and effects</h3>
        ${steps ? stepsTable(steps.items) : '<p class="muted">The run\u2019s history could not be read.</p>'}
        ${toolCalls(run.toolCalls)}
        ${gateBlock(run)}
        ${run.result !== null && run.result !== undefined ? `<h3>Result</h3>${json(run.result)}` : ''}`;
    } catch (err) {
      out.innerHTML = `<p class="error" role="alert">${esc(err.message)}</p>`;
    }
  }

  // ---- approvals ---------------------------------------------------------------------------------
  /** The form decides the gate it was drawn for (`gateId`): a late click for a gate since replaced is 409. */
  function decisionForm(runId, gateId) {
    const gate = gateId === undefined || gateId === null ? '' : ` data-gate="${esc(String(gateId))}"`;
    return `<form class="decide" data-run="${esc(runId)}"${gate}>
      <label>Note (optional) <input name="note" maxlength="2000" autocomplete="off" /></label>
      <div class="actions left">
        <button type="submit" value="approve">Approve</button>
        <button type="submit" value="reject" class="danger">Reject</button>
      </div>
      <p class="decided" role="status"></p>
    </form>`;
  }
  async function loadApprovals() {
    $('approvals-state').textContent = 'Loading…';
    try {
      const page = await api('GET', '/v1/approvals?limit=50');
      $('approvals-list').innerHTML = page.items
        .map(
          (a) => `<article class="approval card" data-run="${esc(a.runId)}">
            <h3>${runLink(a.runId)}</h3>
            <p class="muted">${esc(a.tenant)} · ${esc(a.agent)} · ${esc(a.priority)} lane · waiting since ${esc(when(a.openedAt))}${
              a.timeout
                ? ` · ${esc(a.timeout.onTimeout)} at ${esc(when(a.timeout.expiresAt))} if undecided`
                : ''
            }</p>
            <h4>Proposal</h4>${json(a.proposal)}
            ${decisionForm(a.runId, a.gateId)}
          </article>`,
        )
        .join('');
      $('approvals-state').textContent = page.items.length
        ? `${page.items.length} waiting for a decision.`
        : 'Nothing waits for a decision.';
      $('approvals-count').textContent = page.items.length ? String(page.items.length) : '';
    } catch (err) {
      $('approvals-state').textContent = '';
      failed(err);
    }
  }
  document.addEventListener('submit', async (e) => {
    const form = e.target.closest('form.decide');
    if (!form) return;
    e.preventDefault();
    const decision = e.submitter ? e.submitter.value : 'approve';
    const runId = form.dataset.run;
    const as =
      session.role === 'admin'
        ? 'the admin token (recorded as “admin”)'
        : `this ${session.role} key (recorded by its id)`;
    if (
      !(await confirmAction(
        `${decision === 'approve' ? 'Approve' : 'Reject'} run ${runId} as ${as}?`,
        decision === 'approve' ? 'Approve' : 'Reject',
      ))
    )
      return;
    const note = new FormData(form).get('note');
    const gateId = form.dataset.gate === undefined ? undefined : Number(form.dataset.gate);
    const body = { ...(gateId !== undefined ? { gateId } : {}), ...(note ? { note } : {}) };
    // One decision per form: a double click sends it once.
    for (const b of form.querySelectorAll('button')) b.disabled = true;
    try {
      const r = await api('POST', `/v1/runs/${encodeURIComponent(runId)}/${decision}`, body);
      form.querySelector('.decided').textContent = `${r.decision} by ${r.by} at ${when(r.at)}`;
    } catch (err) {
      // A refusal (409: the gate was decided, or replaced by another) leaves the form spent.
      if (err.status !== 409) for (const b of form.querySelectorAll('button')) b.disabled = false;
      form.querySelector('.decided').textContent = err.message;
    }
  });

  // ---- navigation --------------------------------------------------------------------------------
  /** `#/runs`, `#/failures`, `#/approvals`, `#/runs/<id>`; the fleet otherwise (a tenant key: runs). */
  function route() {
    const h = decodeURIComponent(location.hash.replace(/^#\/?/, ''));
    const [first, ...rest] = h.split('/');
    let view = VIEWS.includes(first) ? first : session.role === 'admin' || !session.role ? 'fleet' : 'runs';
    if (first === 'runs' && rest.length) view = 'run';
    for (const v of VIEWS) $(`view-${v}`).hidden = v !== view;
    for (const a of document.querySelectorAll('nav.views a'))
      a.toggleAttribute('aria-current', a.dataset.view === (view === 'run' ? 'runs' : view));
    if (!session.role) return;
    showError('');
    if (view === 'runs') void loadRuns(false);
    if (view === 'failures') void loadFailures();
    if (view === 'approvals') void loadApprovals();
    if (view === 'run') void loadRun(rest.join('/'));
  }
  window.addEventListener('hashchange', route);
  for (const id of ['failures-refresh', 'approvals-refresh'])
    $(id).addEventListener('click', () => (id === 'failures-refresh' ? loadFailures() : loadApprovals()));
  document.addEventListener('fairway:signed-in', () => {
    $('runs-tenant-field').hidden = session.role !== 'admin';
    route();
  });
  route();
  void window.Fairway.signIn();
})();
