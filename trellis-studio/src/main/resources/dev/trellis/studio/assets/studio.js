// Shared helpers of the studio's pages: JSON calls, small DOM builders, formatting.
window.Studio = (function () {
  function call(method, url, body) {
    const init = { method: method, headers: { 'Accept': 'application/json' }, credentials: 'same-origin' };
    if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(url, init).then(r => r.json().then(j => {
      if (!r.ok) { const e = new Error(j.error || ('HTTP ' + r.status)); e.status = r.status; throw e; }
      return j;
    }));
  }
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => { if (v !== undefined && v !== null) e.setAttribute(k, v); });
    children.forEach(c => { if (c !== undefined && c !== null) e.append(c instanceof Node ? c : String(c)); });
    return e;
  }
  function badge(status, live) {
    return el('span', { class: 'badge status-' + String(status).toLowerCase() }, status + (live ? ' · live' : ''));
  }
  function time(iso) { return iso ? new Date(iso).toLocaleString() : '—'; }
  function ms(v) {
    if (v === null || v === undefined) return '—';
    return v < 10000 ? v + ' ms' : (v / 1000).toFixed(1) + ' s';
  }
  // A time in microseconds: µs below a millisecond, else as ms() shows it.
  function us(v) {
    if (v === null || v === undefined) return '—';
    return v < 1000 ? v + ' \u00b5s' : (v < 10000 ? (v / 1000).toFixed(2) + ' ms' : ms(Math.round(v / 1000)));
  }
  function showError(e) {
    const m = document.getElementById('message');
    if (m) { m.textContent = e.message; m.hidden = false; } else { alert(e.message); }
  }
  return {
    get: url => call('GET', url), post: (url, body) => call('POST', url, body || {}),
    el: el, badge: badge, time: time, ms: ms, us: us, showError: showError,
  };
})();
