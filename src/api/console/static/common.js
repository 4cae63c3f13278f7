/* The console's shared parts: the sign-in, the API client, formatting, the confirm dialog. */
(() => {
  'use strict';
  const TOKEN_KEY = 'fairway.adminToken';
  const $ = (id) => document.getElementById(id);
  const fmt = (n) => (n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US'));
  const pct = (x) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);
  const esc = (s) =>
    String(s).replace(
      /[&<>"']/g,
      (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
    );
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
  const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') || '';

  /**
   * Who the console acts as: `admin` (the admin token: every view, and decisions record `admin`),
   * `tenant` or `approver` (a tenant's key: its runs and approvals; decisions record that key's id).
   */
  const session = { token: sessionStorage.getItem(TOKEN_KEY) || '', role: null, tenant: null };

  function askToken(message) {
    $('token-error').textContent = message || '';
    $('token-input').value = '';
    if (!$('token-dialog').open) $('token-dialog').showModal();
    $('token-input').focus();
  }

  class ApiError extends Error {
    constructor(status, code, message) {
      super(code ? `${code}: ${message}` : message);
      this.status = status;
      this.code = code;
    }
  }

  /** One API call with the session's token; a refused token (401) asks for another. */
  async function api(method, path, body) {
    const res = await fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${session.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      cache: 'no-store',
    });
    let json = null;
    try {
      json = await res.json();
    } catch {
      /* not JSON */
    }
    if (res.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      session.token = '';
      session.role = null;
      askToken(json && json.error ? json.error.message : 'The token was refused.');
      throw new ApiError(401, 'unauthorized', 'unauthorized');
    }
    if (!res.ok) {
      const e = json && json.error;
      throw new ApiError(res.status, e ? e.code : null, e ? e.message : `HTTP ${res.status}`);
    }
    return json;
  }

  /** Finds out what the token is: the admin's, a tenant's API key, or a tenant's approver key. */
  async function identify() {
    try {
      await api('GET', '/v1/admin/scheduler');
      return { role: 'admin', tenant: null };
    } catch (err) {
      if (err.status !== 403) throw err;
    }
    try {
      const me = await api('GET', '/v1/tenants/me');
      return { role: 'tenant', tenant: me.tenant };
    } catch (err) {
      if (err.status !== 403 || err.code === 'tenant_disabled') throw err;
      return { role: 'approver', tenant: null };
    }
  }

  const ROLE_TEXT = {
    admin: 'admin token: decisions record “admin”',
    tenant: 'tenant key: decisions record this key',
    approver: 'approver key: decisions record this key',
  };

  async function signIn() {
    if (!session.token) {
      askToken();
      return;
    }
    try {
      Object.assign(session, await identify());
    } catch (err) {
      if (err.status !== 401) $('updated').textContent = `cannot reach the API: ${err.message}`;
      return;
    }
    document.body.dataset.role = session.role;
    $('whoami').textContent =
      `Signed in with the ${ROLE_TEXT[session.role]}${session.tenant ? ` (tenant ${session.tenant})` : ''}`;
    document.dispatchEvent(new CustomEvent('fairway:signed-in', { detail: { ...session } }));
  }

  $('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const value = $('token-input').value.trim();
    if (!value) return;
    session.token = value;
    sessionStorage.setItem(TOKEN_KEY, value);
    $('token-dialog').close();
    void signIn();
  });
  $('token-dialog').addEventListener('cancel', (e) => {
    if (!session.token) e.preventDefault();
  });
  $('change-token').addEventListener('click', () => askToken());

  function confirmAction(text, okLabel) {
    return new Promise((resolve) => {
      const d = $('confirm-dialog');
      $('confirm-text').textContent = text;
      $('confirm-ok').textContent = okLabel;
      d.returnValue = '';
      d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
      d.showModal();
      $('confirm-cancel').focus();
    });
  }

  function showError(msg) {
    $('error').hidden = !msg;
    $('error').textContent = msg || '';
  }

  /** A queued run's place among its tenant's fairness keys (`waitingOn.keyPosition`), in words; '—' when none. */
  const keyPlace = (k) =>
    k
      ? `${fmt(k.keysAhead)} of ${fmt(k.keysQueued)} keys ahead; ${fmt(k.unitsAheadInTenant)} of the tenant's runs ahead, ${fmt(k.unitsAheadInKey)} of its own key${k.bucket ? `; shares hashed bucket ${k.bucket}` : ''}`
      : '—';
  window.Fairway = {
    $,
    fmt,
    pct,
    esc,
    when,
    meta,
    api,
    session,
    askToken,
    confirmAction,
    showError,
    signIn,
    keyPlace,
  };
})();
