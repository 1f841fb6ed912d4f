// The run page: the run (GET /api/v1/runs/{id}), its graph and timeline, checkpoints, states, diffs and actions.
// While the run is live in this studio, server-sent events update the graph's nodes as they start and end.
(function () {
  const runId = new URLSearchParams(location.search).get('id');
  const base = '/api/v1/runs/' + encodeURIComponent(runId);
  let run = null;
  let stream = null;
  let timer = null;
  let forkLoaded = null;

  function load() {
    return Studio.get(base).then(r => {
      run = r;
      document.getElementById('run-id').textContent = r.runId;
      const st = document.getElementById('run-status');
      // A run this studio cancelled is RUNNING in the store (no final checkpoint): shown as what it is.
      const shown = r.cancelled ? 'CANCELLED' : r.status;
      st.innerHTML = ''; st.appendChild(Studio.badge(shown, r.live)); st.setAttribute('data-status', shown);
      document.getElementById('meta').textContent = 'graph ' + r.graphId + (r.graphVersion != null ? ' v' + r.graphVersion : '') +
        ' · started ' + Studio.time(r.startedAt) + ' · ' + Studio.ms(r.durationMs) + ' · ' + r.checkpoints + ' checkpoint(s)' +
        (r.owner ? ' · owner ' + r.owner + (r.leaseLive ? ' (lease live)' : ' (lease lapsed)') : '') +
        (r.forkedFrom ? ' · forked from ' + r.forkedFrom : '');
      const errors = document.getElementById('errors');
      errors.hidden = !r.error; errors.textContent = r.error || '';
      if (r.graphSvg) { document.getElementById('graph').innerHTML = r.graphSvg; }
      else { document.getElementById('graph').textContent = 'Graph ' + r.graphId + ' is not registered with the studio: register it to draw it and act on its runs.'; }
      document.getElementById('mermaid').textContent = r.mermaid || '';
      fleetRow(r.fleet);
      actions(r);
      follow(r);
      return Promise.all([timeline(), checkpoints()]);
    }).catch(e => {
      // Not in the store (yet): a run of the fleet's queue that no worker has started shows its queue row.
      if (e.status !== 404) return Studio.showError(e);
      return Studio.get(base + '/fleet').then(f => {
        document.getElementById('run-id').textContent = runId;
        const st = document.getElementById('run-status');
        st.innerHTML = ''; st.appendChild(Studio.badge(f.status)); st.setAttribute('data-status', 'FLEET_' + f.status);
        document.getElementById('meta').textContent = 'graph ' + f.graphId + ' v' + f.graphVersion +
          ' · in the fleet\'s queue, no checkpoint yet';
        fleetRow(f);
        ['actions', 'timeline-section', 'checkpoints-section', 'fork-section'].forEach(id => {
          const x = document.getElementById(id); if (x) x.hidden = true;
        });
        document.getElementById('graph').textContent = '';
        clearTimeout(timer);
        timer = setTimeout(() => location.reload(), 2000);
      }).catch(() => Studio.showError(e));
    });
  }

  // The run's row in the fleet's queue, when the studio has a fleet and the queue has the run.
  function fleetRow(f) {
    const section = document.getElementById('fleet-section');
    section.hidden = !f;
    if (!f) return;
    const body = document.querySelector('#fleet-row tbody');
    body.innerHTML = '';
    const rows = [
      ['status', f.status], ['worker', f.worker || '—'], ['attempts', f.attempt], ['lost claims', f.lostClaims],
      ['claim lapsed', f.claimLapsed ? 'yes: another worker will take it over' : 'no'], ['priority', f.priority],
      ['submitted', Studio.time(f.submittedAt)], ['first claimed', Studio.time(f.startedAt)],
      ['claimed', Studio.time(f.claimedAt)], ['last heartbeat', Studio.time(f.heartbeatAt)],
      ['lease until', Studio.time(f.leaseUntil)], ['finished', Studio.time(f.finishedAt)], ['error', f.error || '—'],
    ];
    rows.forEach(([k, v]) => body.appendChild(Studio.el('tr', { 'data-field': k }, Studio.el('th', {}, k), Studio.el('td', {}, v))));
  }

  function actions(r) {
    const form = document.getElementById('answer-form');
    form.hidden = !(r.graphRegistered && r.interrupts.length > 0 && !r.live);
    if (!form.hidden) {
      const i = r.interrupts[0];
      document.getElementById('answer-prompt').textContent = i.node + ': ' + i.payload;
      document.getElementById('answer-node').value = i.node;
    }
    document.getElementById('resume-button').hidden =
      !(r.graphRegistered && !r.live && (r.status === 'INTERRUPTED' || r.status === 'DRAINED' || (r.status === 'RUNNING' && !r.leaseLive)));
    document.getElementById('cancel-button').hidden = !r.cancellable;
    document.getElementById('fork-section').hidden = !r.graphRegistered;
  }

  function follow(r) {
    if (r.live && !stream) {
      stream = new EventSource(base + '/events/stream');
      stream.addEventListener('run-event', e => onEvent(JSON.parse(e.data)));
      stream.addEventListener('end', () => { stream.close(); stream = null; setTimeout(load, 100); });
      stream.onerror = () => { if (stream) { stream.close(); stream = null; } };
    }
    clearTimeout(timer);
    if (!r.live && r.status === 'RUNNING' && r.leaseLive) timer = setTimeout(load, 1500);
    if (!r.live && r.checkpoints === 0) timer = setTimeout(load, 1000);
  }

  const STATUS_OF = { NodeStarted: 'EXECUTING', NodeCompleted: 'COMPLETED', NodeFailed: 'FAILED', NodeCancelled: 'CANCELLED' };
  let refresh = null;
  function onEvent(e) {
    const status = STATUS_OF[e.type];
    if (status && e.path === e.nodeId) {
      const g = document.querySelector('#graph g.gnode[data-node="' + CSS.escape(e.nodeId) + '"]');
      if (g) {
        g.setAttribute('data-status', status);
        g.setAttribute('class', 'gnode status-' + status.toLowerCase());
        const count = g.querySelector('.count');
        const n = Number(g.getAttribute('data-count') || 0) + (e.type === 'NodeStarted' ? 1 : 0);
        g.setAttribute('data-count', n);
        if (count) count.textContent = status + ' \u00d7' + n;
      }
    }
    if (!refresh) refresh = setTimeout(() => { refresh = null; timeline(); }, 400);
  }

  // The timeline's zoom: the window of the run it draws across the page, in microseconds after the run's start
  // (null: the whole run). Zooming in halves the window around its middle, out doubles it, the arrows move it.
  let win = null;
  const MIN_WINDOW_US = 1;

  function total() { return Math.max(lastTimeline ? lastTimeline.durationUs : 1, 1); }

  function setWindow(from, to) {
    const all = total();
    let width = Math.max(to - from, MIN_WINDOW_US);
    if (width >= all) { win = null; return timeline(); }
    from = Math.min(Math.max(from, 0), all - width);
    win = { from: Math.floor(from), to: Math.ceil(from + width) };
    return timeline();
  }

  function current() { return win || { from: 0, to: total() }; }

  function zoomBy(factor) {
    const w = current();
    const middle = (w.from + w.to) / 2;
    const half = (w.to - w.from) / factor / 2;
    return setWindow(middle - half, middle + half);
  }

  function pan(direction) {
    const w = current();
    const step = (w.to - w.from) / 2 * direction;
    return setWindow(w.from + step, w.to + step);
  }

  // Zooms so that execution x takes about a third of the view, in its middle.
  function zoomTo(x) {
    const width = Math.max(x.durationUs * 3, 30);
    const middle = x.startUs + x.durationUs / 2;
    return setWindow(middle - width / 2, middle + width / 2);
  }

  let lastTimeline = null;
  function timeline() {
    if (!run || !run.graphRegistered) { document.getElementById('timeline-section').hidden = true; return Promise.resolve(); }
    const q = win ? '?from=' + win.from + '&to=' + win.to : '';
    return Studio.get(base + '/timeline' + q).then(t => {
      lastTimeline = t;
      document.getElementById('timeline').innerHTML = t.svg +
        (t.approximate ? '<p class="note">Rebuilt from checkpoints: times are approximate (between checkpoints).</p>' : '');
      const zoom = t.window.zoom;
      const level = document.getElementById('zoom-level');
      level.textContent = '\u00d7' + (zoom < 10 ? Math.round(zoom * 10) / 10 : Math.round(zoom));
      level.setAttribute('data-zoom', zoom);
      level.setAttribute('data-from', t.window.fromUs);
      level.setAttribute('data-to', t.window.toUs);
      document.getElementById('zoom-out').disabled = win === null;
      document.getElementById('zoom-fit').disabled = win === null;
      document.getElementById('pan-left').disabled = win === null || t.window.fromUs <= 0;
      document.getElementById('pan-right').disabled = win === null || t.window.toUs >= t.durationUs;
      const body = document.querySelector('#executions tbody');
      body.innerHTML = '';
      t.executions.forEach((x, i) => {
        const go = Studio.el('button', { type: 'button', class: 'zoom-to', 'data-path': x.path, 'data-execution': x.execution }, 'zoom to');
        go.onclick = () => zoomTo(x);
        body.appendChild(Studio.el('tr', { 'data-path': x.path, 'data-row': x.row, 'data-status': x.status },
          Studio.el('td', {}, i + 1), Studio.el('td', {}, x.row), Studio.el('td', {}, x.path), Studio.el('td', {}, x.execution),
          Studio.el('td', { class: 'status-' + x.status.toLowerCase() }, x.status), Studio.el('td', {}, '+' + Studio.us(x.startUs)),
          Studio.el('td', {}, Studio.us(x.durationUs)), Studio.el('td', {}, t.approximate ? '?' : x.attempts),
          Studio.el('td', { class: 'error-cell' }, x.error || ''), Studio.el('td', {}, go)));
      });
    }).catch(Studio.showError);
  }

  function checkpoints() {
    return Studio.get(base + '/checkpoints').then(list => {
      const body = document.querySelector('#checkpoints tbody');
      body.innerHTML = '';
      const select = document.getElementById('fork-sequence');
      const chosen = select.value;
      select.innerHTML = '';
      list.forEach((c, i) => {
        const writes = c.writes.map(w => w.key + ' = ' + (w.value.json.length > 80 ? w.value.json.slice(0, 80) + '… (' + w.value.length + ' chars)' : w.value.json)).join('; ');
        const show = Studio.el('button', { type: 'button', class: 'state-button', 'data-sequence': c.sequence }, 'state');
        show.onclick = () => state(c.sequence);
        body.appendChild(Studio.el('tr', { 'data-sequence': c.sequence },
          Studio.el('td', {}, radio('from', c.sequence, i === 0)), Studio.el('td', {}, radio('to', c.sequence, i === list.length - 1)),
          Studio.el('td', {}, c.sequence), Studio.el('td', {}, Studio.time(c.createdAt)), Studio.el('td', {}, c.status),
          Studio.el('td', {}, c.kind.toLowerCase()), Studio.el('td', {}, c.executed.join(', ')),
          Studio.el('td', { class: 'writes' }, writes), Studio.el('td', {}, show)));
        select.appendChild(Studio.el('option', { value: c.sequence }, '#' + c.sequence + ' ' + c.status));
      });
      if (chosen) select.value = chosen;
      if (run.graphRegistered && list.length && forkLoaded === null) forkFields(select.value);
    });
  }

  function radio(name, sequence, checked) {
    const r = Studio.el('input', { type: 'radio', name: name, value: sequence, id: name + '-' + sequence });
    r.checked = checked;
    return r;
  }

  function value(v) {
    if (!v.folded) return Studio.el('code', {}, v.json);
    return Studio.el('details', { class: 'folded' }, Studio.el('summary', {}, v.json.slice(0, 120) + '… (' + v.length + ' chars)'),
      Studio.el('code', {}, v.full));
  }

  function diff() {
    const from = document.querySelector('input[name=from]:checked');
    const to = document.querySelector('input[name=to]:checked');
    if (!from || !to) return;
    Studio.get(base + '/diff?from=' + from.value + '&to=' + to.value).then(d => {
      const box = document.getElementById('diff');
      box.innerHTML = '';
      box.appendChild(Studio.el('h3', {}, 'State at #' + d.from + ' → #' + d.to));
      const table = Studio.el('table', { class: 'grid diff' });
      d.added.forEach(a => table.appendChild(Studio.el('tr', { class: 'added', 'data-key': a.key },
        Studio.el('td', {}, '+ added'), Studio.el('th', {}, a.key), Studio.el('td', {}), Studio.el('td', {}, value(a.value)))));
      d.changed.forEach(c => table.appendChild(Studio.el('tr', { class: 'changed', 'data-key': c.key },
        Studio.el('td', {}, '~ changed'), Studio.el('th', {}, c.key), Studio.el('td', {}, value(c.from)), Studio.el('td', {}, value(c.to)))));
      d.removed.forEach(r => table.appendChild(Studio.el('tr', { class: 'removed', 'data-key': r.key },
        Studio.el('td', {}, '− removed'), Studio.el('th', {}, r.key), Studio.el('td', {}, value(r.value)), Studio.el('td', {}))));
      if (!d.added.length && !d.changed.length && !d.removed.length) table.appendChild(Studio.el('tr', {}, Studio.el('td', {}, 'no difference')));
      box.appendChild(table);
      box.appendChild(Studio.el('p', { class: 'muted' }, 'unchanged: ' + (d.unchanged.join(', ') || 'none')));
    }).catch(Studio.showError);
  }

  function state(sequence) {
    Studio.get(base + '/checkpoints/' + sequence).then(c => {
      const box = document.getElementById('state');
      box.innerHTML = '';
      box.appendChild(Studio.el('h3', {}, 'State at checkpoint #' + c.sequence + ' (' + c.status + ')'));
      const table = Studio.el('table', { class: 'grid state', id: 'state-table' });
      Object.entries(c.state).forEach(([k, v]) => {
        const text = JSON.stringify(v);
        table.appendChild(Studio.el('tr', { 'data-key': k }, Studio.el('th', {}, k),
          Studio.el('td', {}, value({ json: text.length > 400 ? text.slice(0, 400) : text, folded: text.length > 400, full: text, length: text.length }))));
      });
      box.appendChild(table);
    }).catch(Studio.showError);
  }

  function forkFields(sequence) {
    forkLoaded = sequence;
    Studio.get(base + '/checkpoints/' + sequence).then(c => {
      const body = document.querySelector('#fork-fields tbody');
      body.innerHTML = '';
      run.keys.forEach(k => {
        const area = Studio.el('textarea', { rows: 1, cols: 60, 'data-key': k.name, name: k.name });
        area.value = k.name in c.state ? JSON.stringify(c.state[k.name]) : '';
        area.setAttribute('data-original', area.value);
        body.appendChild(Studio.el('tr', { 'data-key': k.name }, Studio.el('th', {}, k.name),
          Studio.el('td', { class: 'muted' }, k.type), Studio.el('td', {}, area),
          Studio.el('td', { class: 'field-error', 'data-key': k.name })));
      });
    }).catch(Studio.showError);
  }

  function fork(e) {
    e.preventDefault();
    document.querySelectorAll('.field-error').forEach(x => { x.textContent = ''; });
    const edits = {};
    const bad = [];
    document.querySelectorAll('#fork-fields textarea').forEach(a => {
      if (a.value === a.getAttribute('data-original') || a.value.trim() === '') return;
      try { edits[a.getAttribute('data-key')] = JSON.parse(a.value); }
      catch (x) { bad.push(a.getAttribute('data-key')); }
    });
    bad.forEach(k => { document.querySelector('.field-error[data-key="' + CSS.escape(k) + '"]').textContent = 'not JSON'; });
    if (bad.length) return;
    const result = document.getElementById('fork-result');
    Studio.post(base + '/fork', { sequence: Number(document.getElementById('fork-sequence').value), state: edits })
      .then(r => { result.textContent = 'forked as ' + r.runId; location.href = '/run?id=' + encodeURIComponent(r.runId); })
      .catch(err => {
        result.textContent = err.message;
        run.keys.forEach(k => {
          if (err.message.indexOf("key '" + k.name + "'") >= 0) {
            document.querySelector('.field-error[data-key="' + CSS.escape(k.name) + '"]').textContent = err.message;
          }
        });
      });
  }

  function act(path, body) {
    const out = document.getElementById('action-result');
    return Studio.post(base + path, body).then(r => { out.textContent = r.action; return load(); })
      .catch(err => { out.textContent = err.message; });
  }

  document.getElementById('diff-button').onclick = diff;
  document.getElementById('zoom-in').onclick = () => zoomBy(2);
  document.getElementById('zoom-out').onclick = () => zoomBy(0.5);
  document.getElementById('zoom-fit').onclick = () => { win = null; timeline(); };
  document.getElementById('pan-left').onclick = () => pan(-1);
  document.getElementById('pan-right').onclick = () => pan(1);
  document.getElementById('fork-form').onsubmit = fork;
  document.getElementById('fork-sequence').onchange = e => forkFields(e.target.value);
  document.getElementById('resume-button').onclick = () => act('/resume');
  document.getElementById('cancel-button').onclick = () => act('/cancel');
  document.getElementById('answer-form').onsubmit = e => {
    e.preventDefault();
    act('/answer', { node: document.getElementById('answer-node').value, answer: document.getElementById('answer-text').value });
  };
  load();
})();
