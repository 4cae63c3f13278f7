/* The console's fleet view: polls /v1/admin/console (the server samples the scheduler; this page only draws). */
(() => {
  'use strict';
  const { $, fmt, pct, esc, when, api, session, confirmAction, showError, keyPlace } = window.Fairway;
  const POLL_MS = 2000;
  const WINDOW_S = 15 * 60;
  const LANES = ['interactive', 'standard', 'batch'];
  const REASONS = ['queue_full', 'wait_too_long', 'rate_limited', 'budget_exhausted', 'draining'];
  const COLORS = ['#1f6feb', '#1a7f37', '#9a6700', '#cf222e', '#8250df'];

  let lastSeq = 0;
  let samples = [];
  let tenants = [];
  let status = null;
  /** Status from our own drain/resume reply wins over samples that may have been taken before it. */
  let actionSeq = -Infinity;
  let drainStartInFlight = null;
  let sortKey = 'tokenShare';
  let sortDir = -1;
  let timer = null;

  // ---- charts ----------------------------------------------------------------------------------
  const charts = {};
  /** Upper bound of a chart's y axis (null: fit the data). */
  const yMax = {};
  function makeChart(id, series) {
    const el = $(id);
    const opts = {
      width: Math.max(280, el.clientWidth - 16),
      height: 190,
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true },
        y: { range: (_u, min, max) => [0, yMax[id] ?? Math.max(1, max * 1.1, min)] },
      },
      axes: [
        { space: 80, values: (_u, ticks) => ticks.map(clock) },
        { size: 60, values: (_u, ticks) => ticks.map(shortNum) },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color || COLORS[i % COLORS.length],
          width: s.width || 1.5,
          dash: s.dash,
          spanGaps: false,
          points: { show: false },
        })),
      ],
    };
    const data = [[], ...series.map(() => [])];
    charts[id] = { el, plot: new uPlot(opts, data, el), series };
  }
  /** Axis labels as local wall-clock time, HH:MM:SS (one line; the date is today). */
  function clock(t) {
    return new Date(t * 1000).toLocaleTimeString([], {
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
  }
  function shortNum(v) {
    if (v === null || v === undefined) return '';
    const a = Math.abs(v);
    if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
    if (a >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
    return `${+v.toFixed(2)}`;
  }
  makeChart(
    'chart-admissions',
    LANES.map((l) => ({ label: l })),
  );
  makeChart('chart-tokens', [
    { label: 'served', color: COLORS[0], width: 2 },
    { label: 'governor target', color: COLORS[1], dash: [6, 4] },
    { label: 'provider quota', color: COLORS[3], dash: [2, 3] },
  ]);
  makeChart('chart-throttled', [{ label: 'throttled/s', color: COLORS[3] }]);
  makeChart(
    'chart-sheds',
    REASONS.map((r, i) => ({ label: r, color: COLORS[(i + 1) % COLORS.length] })),
  );

  const pick = {
    'chart-admissions': LANES.map((l) => (s) => (s.admissionsPerSecond ? s.admissionsPerSecond[l] : null)),
    'chart-tokens': [(s) => s.servedTpm, (s) => s.targetTpm, (s) => s.quotaTpm],
    'chart-throttled': [(s) => s.throttledPerSecond],
    'chart-sheds': REASONS.map((r) => (s) => (s.shedsPerSecond ? s.shedsPerSecond[r] : null)),
  };

  function drawCharts() {
    const xs = samples.map((s) => s.t / 1000);
    // The governor's initial allowance can be far above the provider's quota: once the quota is
    // known, scale the tokens chart to it so served tokens stay readable (the target line clips).
    const quota = Math.max(0, ...samples.map((s) => s.quotaTpm ?? 0));
    const served = Math.max(0, ...samples.map((s) => s.servedTpm ?? 0));
    yMax['chart-tokens'] = quota > 0 ? Math.max(quota, served) * 1.25 : undefined;
    for (const [id, fns] of Object.entries(pick)) {
      const c = charts[id];
      const cols = fns.map((f) => samples.map((s) => f(s)));
      c.plot.setData([xs, ...cols]);
      // For tests and screen readers: how many points carry a value, and how many are above zero.
      let points = 0;
      let nonZero = 0;
      for (const col of cols)
        for (const v of col) {
          if (v !== null && v !== undefined) points++;
          if (v > 0) nonZero++;
        }
      c.el.dataset.points = String(points);
      c.el.dataset.nonzero = String(nonZero);
    }
  }
  let resizeTimer = null;
  new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const c of Object.values(charts))
        c.plot.setSize({ width: Math.max(280, c.el.clientWidth - 16), height: 190 });
    }, 100);
  }).observe(document.querySelector('.charts'));

  // ---- fleet -----------------------------------------------------------------------------------
  function drawFleet() {
    if (!status) return;
    const mode = status.mode;
    $('mode').textContent = mode;
    $('mode').dataset.mode = mode;
    $('fleet-mode').textContent = mode;
    $('fleet-intake').textContent = status.intake;
    $('fleet-inflight').textContent = `${fmt(status.inFlight)} / ${fmt(status.config.concurrency)}`;
    // The governor's limit only matters below the fleet's own: say so then, and only then.
    const limit = status.governor.concurrencyLimit;
    $('fleet-governor').textContent =
      limit < status.config.concurrency
        ? `throttled: the governor holds it to ${fmt(limit)} in flight`
        : 'the governor sets no tighter limit';
    $('fleet-queued').textContent = LANES.map((l) => `${l} ${fmt(status.queued.byPriority[l])}`).join(' · ');
    const g = status.governor;
    $('fleet-tpm').textContent = `target ${shortNum(g.tokensPerMinute)} tpm`;
    const breaker = g.breaker && g.breaker.state !== 'closed' ? g.breaker : null;
    $('fleet-throttle').textContent = breaker
      ? `admission paused: ${breaker.reason === 'server_errors' ? 'the provider fails every call' : 'the provider refuses the API key'} · next probe ${breaker.nextProbeAt ?? '-'}`
      : (g.providerTokensPerMinute ? `quota ${shortNum(g.providerTokensPerMinute)} · ` : '') +
        (g.throttledRecently ? 'throttled recently' : 'not throttled');
    drawPools();
    for (const id of ['drain-refuse', 'drain-hold']) $(id).disabled = mode !== 'open';
    $('resume').disabled = mode === 'open';
    const box = $('drain-progress');
    if (mode === 'open') {
      box.hidden = true;
      drainStartInFlight = null;
    } else {
      box.hidden = false;
      if (drainStartInFlight === null || status.inFlight > drainStartInFlight)
        drainStartInFlight = status.inFlight;
      const start = drainStartInFlight;
      $('drain-bar').value = start > 0 ? (start - status.inFlight) / start : 1;
      $('drain-label').textContent =
        mode === 'drained'
          ? `Drained (intake: ${status.intake}); nothing in flight.`
          : `Draining (intake: ${status.intake}): ${fmt(status.inFlight)} in flight of ${fmt(start)}.`;
    }
  }

  /** A named pool's key breaker: closed, or its state and when the next probe goes. */
  function poolBreaker(b) {
    if (!b || b.state === 'closed') return 'closed';
    const why =
      b.reason === 'server_errors' ? 'the provider fails every call' : 'the provider refuses the API key';
    return `${b.state === 'open' ? 'open' : 'half-open'}: ${why} · next probe ${when(b.nextProbeAt)}`;
  }
  /** One row per named model pool (`status.pools`, absent when none is in use), beside the governor card. */
  function drawPools() {
    const pools = Object.entries(status.pools || {}).sort(([a], [b]) => (a < b ? -1 : 1));
    $('fleet-pools').hidden = pools.length === 0;
    $('pools').tBodies[0].innerHTML = pools
      .map(
        ([name, p]) => `<tr data-pool="${esc(name)}">
          <th scope="row">${esc(name)}</th>
          <td class="num">${esc(fmt(p.inFlight))} / ${esc(fmt(p.concurrencyLimit))}</td>
          <td class="num">${esc(shortNum(p.tokensPerMinute))}</td>
          <td>${esc(when(p.pausedUntil))}</td>
          <td data-state="${esc(p.breaker ? p.breaker.state : 'closed')}">${esc(poolBreaker(p.breaker))}</td>
        </tr>`,
      )
      .join('');
  }

  // ---- tenants ---------------------------------------------------------------------------------
  function shareCell(share, entitled) {
    const w = share === null ? 0 : Math.min(1, share) * 100;
    const mark = entitled === null ? '' : `<b style="left:${Math.min(1, entitled) * 100}%"></b>`;
    return `<span class="share"><span class="bar" aria-hidden="true"><i style="width:${w}%"></i>${mark}</span>${pct(share)}</span>`;
  }
  function drawTenants() {
    const rows = [...tenants].sort((a, b) => {
      const x = a[sortKey];
      const y = b[sortKey];
      if (x === y) return a.tenant < b.tenant ? -1 : 1;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * sortDir;
    });
    $('tenants').tBodies[0].innerHTML = rows
      .map(
        (t) => `<tr data-tenant="${esc(t.tenant)}">
          <th scope="row">${esc(t.tenant)}</th>
          <td class="num">${t.weight}</td>
          <td class="num">${shareCell(t.tokenShare, t.entitledShare)}</td>
          <td class="num">${pct(t.entitledShare)}</td>
          <td class="num">${fmt(t.queued)}</td>
          <td class="num">${fmt(t.inFlight)}</td>
          <td class="num">${fmt(t.spent)}</td>
          <td class="num">${t.budget === null ? 'unlimited' : fmt(t.remaining)}</td>
          <td class="hint" data-reason="${t.hint ? esc(t.hint.reason) : ''}">${t.hint ? `<b>${esc(t.hint.reason)}</b> ${esc(t.hint.text)}` : ''}</td>
        </tr>`,
      )
      .join('');
  }
  for (const th of document.querySelectorAll('#tenants th[data-key]')) {
    th.querySelector('button').addEventListener('click', () => {
      const key = th.dataset.key;
      sortDir = key === sortKey ? -sortDir : key === 'tenant' ? 1 : -1;
      sortKey = key;
      for (const other of document.querySelectorAll('#tenants th[data-key]'))
        other.setAttribute('aria-sort', 'none');
      th.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
      drawTenants();
    });
  }

  // ---- polling ---------------------------------------------------------------------------------
  async function poll() {
    clearTimeout(timer);
    if (!session.token || session.role !== 'admin') return;
    try {
      const st = await api('GET', `/v1/admin/console?since=${lastSeq}`);
      if (st.samples.length && st.samples[0].seq < lastSeq) samples = []; // server restarted
      samples = samples.concat(st.samples);
      if (samples.length) lastSeq = samples[samples.length - 1].seq;
      const cutoff = Date.now() / 1000 - WINDOW_S;
      samples = samples.filter((s) => s.t / 1000 >= cutoff);
      if (st.status && lastSeq >= actionSeq + 2) status = st.status;
      tenants = st.tenants;
      $('tenants-note').textContent =
        `Token share over the last ${Math.round(st.shareWindowMs / 60000)} minutes; the mark is the share the tenant's weight entitles it to among active tenants.`;
      $('updated').textContent = st.at ? `updated ${new Date(st.at).toLocaleTimeString()}` : 'no sample yet';
      showError(st.error ? `The scheduler could not be read: ${st.error}` : '');
      drawFleet();
      drawTenants();
      drawCharts();
    } catch (err) {
      if (err.status !== 401) showError(`Cannot reach the API: ${err.message}`);
    }
    if (session.token && session.role === 'admin') timer = setTimeout(poll, POLL_MS);
  }

  // ---- explain ---------------------------------------------------------------------------------
  $('explain-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const runId = $('explain-input').value.trim();
    const out = $('explain-out');
    if (!runId) return;
    out.textContent = 'Looking…';
    try {
      const run = await api('GET', `/v1/runs/${encodeURIComponent(runId)}`);
      const w = run.waitingOn;
      const rows = [
        ['Status', run.status],
        ['Tenant', run.tenant],
        ['Lane', run.priority],
        [
          'Waiting on',
          w ? `${w.code}: ${w.message}` : run.status === 'queued' ? 'nothing (admission imminent)' : '—',
        ],
        ['Position', w && w.position ? `${w.position} in the ${w.lane} lane` : '—'],
        ['Fairness key', run.fairnessKey ?? (w && w.fairnessKey) ?? '(the tenant\u2019s default)'],
        ['Among its keys', keyPlace(w && w.keyPosition)],
        ['Tokens used', fmt(run.usage && run.usage.tokens)],
      ];
      out.innerHTML = `<dl class="explain" id="explain-result">${rows
        .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`)
        .join(
          '',
        )}</dl><p><a href="#/runs/${encodeURIComponent(run.runId)}">The run's steps, gate and error</a></p>`;
    } catch (err) {
      out.innerHTML = `<p class="error" role="alert">${esc(err.message)}</p>`;
    }
  });

  // ---- drain -----------------------------------------------------------------------------------
  async function act(path, body, text, okLabel) {
    if (!(await confirmAction(text, okLabel))) return;
    try {
      actionSeq = lastSeq;
      status = await api('POST', path, body);
      drawFleet();
    } catch (err) {
      if (err.status !== 401) showError(`${okLabel} failed: ${err.message}`);
    }
  }
  $('drain-refuse').addEventListener('click', () =>
    act(
      '/v1/admin/drain',
      { intake: 'refuse' },
      'Drain the fleet, refusing new submissions with 503? In-flight runs finish; queued runs wait.',
      'Drain (refuse)',
    ),
  );
  $('drain-hold').addEventListener('click', () =>
    act(
      '/v1/admin/drain',
      { intake: 'hold' },
      'Drain the fleet, holding new submissions (accepted, not admitted until resume)?',
      'Drain (hold)',
    ),
  );
  $('resume').addEventListener('click', () =>
    act('/v1/admin/resume', undefined, 'Resume admissions and open the intake?', 'Resume'),
  );

  document.addEventListener('fairway:signed-in', () => {
    lastSeq = 0;
    samples = [];
    void poll();
  });
})();
