// The runs page: one page of runs from GET /api/v1/runs, filtered by status and graph, newest first, paged.
(function () {
  const params = new URLSearchParams(location.search);
  const status = document.getElementById('status');
  const graph = document.getElementById('graph');
  status.value = params.get('status') || '';
  graph.value = params.get('graph') || '';
  let after = params.get('after') || '';

  Studio.get('/api/v1').then(a => { document.getElementById('store').textContent = a.store; });
  Studio.get('/api/v1/graphs').then(gs => {
    const list = document.getElementById('graphs');
    gs.forEach(g => { const o = document.createElement('option'); o.value = g.graphId; list.appendChild(o); });
  });

  // The fleet's view, when the studio has a fleet (GET /api/v1/fleet answers 404 otherwise).
  let fleet = false;
  function loadFleet() {
    return Studio.get('/api/v1/fleet').then(f => {
      fleet = true;
      document.querySelectorAll('.fleet-col').forEach(c => { c.hidden = false; });
      document.getElementById('fleet').hidden = false;
      document.getElementById('fleet-meta').textContent = f.tables
        ? 'The fleet\'s queue in schema ' + f.schema + '.'
        : 'No fleet tables in schema ' + f.schema + ' (yet).';
      const graphs = document.querySelector('#fleet-graphs tbody');
      graphs.innerHTML = '';
      f.graphs.forEach(g => graphs.appendChild(Studio.el('tr', { 'data-graph': g.graphId + '@' + g.graphVersion },
        Studio.el('td', {}, g.graphId + ' v' + g.graphVersion), Studio.el('td', {}, g.queued), Studio.el('td', {}, g.running),
        Studio.el('td', {}, g.paused), Studio.el('td', {}, g.completed), Studio.el('td', {}, g.failed))));
      const lost = document.querySelector('#lost-claims tbody');
      lost.innerHTML = '';
      f.lostClaims.forEach(r => lost.appendChild(Studio.el('tr', { 'data-run': r.runId },
        Studio.el('td', {}, Studio.el('a', { href: '/run?id=' + encodeURIComponent(r.runId) }, r.runId)),
        Studio.el('td', {}, r.graphId + ' v' + r.graphVersion), Studio.el('td', {}, r.worker || '—'), Studio.el('td', {}, r.attempt),
        Studio.el('td', {}, Studio.time(r.claimedAt)), Studio.el('td', {}, Studio.time(r.heartbeatAt)),
        Studio.el('td', {}, Studio.time(r.leaseUntil)))));
      if (!f.lostClaims.length) lost.appendChild(Studio.el('tr', {}, Studio.el('td', { colspan: 7, class: 'muted' }, 'none')));
      return Studio.get('/api/v1/fleet/runs?status=QUEUED');
    }).then(q => {
      if (!q) return;
      const queued = document.querySelector('#fleet-queued tbody');
      queued.innerHTML = '';
      q.runs.forEach(r => queued.appendChild(Studio.el('tr', { 'data-run': r.runId },
        Studio.el('td', {}, Studio.el('a', { href: '/run?id=' + encodeURIComponent(r.runId) }, r.runId)),
        Studio.el('td', {}, r.graphId + ' v' + r.graphVersion), Studio.el('td', {}, Studio.time(r.submittedAt)),
        Studio.el('td', {}, r.priority), Studio.el('td', {}, r.attempt))));
      if (!q.runs.length) queued.appendChild(Studio.el('tr', {}, Studio.el('td', { colspan: 5, class: 'muted' }, 'none')));
    }).catch(e => { if (e.status !== 404) Studio.showError(e); });
  }

  // A run's queue row, as the runs table shows it.
  function fleetCell(f) {
    if (!f) return '—';
    let text = f.status + (f.worker ? ' by ' + f.worker : '') + ' · attempt ' + f.attempt;
    if (f.lostClaims) text += ' · ' + f.lostClaims + ' lost claim' + (f.lostClaims > 1 ? 's' : '');
    if (f.claimLapsed) text += ' · claim lapsed';
    if (f.heartbeatAt && f.status === 'RUNNING') text += ' · heartbeat ' + Studio.time(f.heartbeatAt);
    return text;
  }

  function load() {
    const q = new URLSearchParams();
    if (status.value) q.set('status', status.value);
    if (graph.value) q.set('graph', graph.value);
    if (after) q.set('after', after);
    history.replaceState(null, '', '/?' + q.toString());
    Studio.get('/api/v1/runs?' + q.toString()).then(page => {
      const body = document.querySelector('#runs tbody');
      body.innerHTML = '';
      page.runs.forEach(r => body.appendChild(row(r)));
      document.getElementById('count').textContent = page.runs.length + ' run(s) on this page, ' +
        (page.order === 'newest' ? 'newest first' : 'by run id');
      const next = document.getElementById('next');
      next.disabled = !page.next;
      next.onclick = () => { after = page.next; load(); };
      document.getElementById('message').hidden = true;
      if (page.runs.some(r => r.status === 'RUNNING')) setTimeout(() => { load(); if (fleet) loadFleet(); }, 2000);
    }).catch(Studio.showError);
  }

  function row(r) {
    const tr = Studio.el('tr', { 'data-run': r.runId, 'data-status': r.status });
    const link = Studio.el('a', { href: '/run?id=' + encodeURIComponent(r.runId) }, r.runId);
    tr.appendChild(Studio.el('td', {}, link));
    tr.appendChild(Studio.el('td', {}, (r.graphId || '—') + (r.graphVersion != null ? ' v' + r.graphVersion : '')));
    tr.appendChild(Studio.el('td', {}, Studio.badge(r.cancelled ? 'CANCELLED' : r.status, r.live)));
    tr.appendChild(Studio.el('td', {}, Studio.time(r.startedAt)));
    tr.appendChild(Studio.el('td', {}, Studio.ms(r.durationMs)));
    tr.appendChild(Studio.el('td', { class: 'error-cell' }, r.error || ''));
    tr.appendChild(Studio.el('td', {}, r.interrupts.map(i => i.node + ': ' + i.payload).join('; ')));
    tr.appendChild(Studio.el('td', {}, r.owner ? r.owner + (r.leaseLive ? ' (until ' + Studio.time(r.leaseExpiresAt) + ')' : ' (lapsed)') : '—'));
    const f = Studio.el('td', { class: 'fleet-col', 'data-fleet-status': r.fleet ? r.fleet.status : '' }, fleetCell(r.fleet));
    f.hidden = !fleet;
    tr.appendChild(f);
    return tr;
  }

  document.getElementById('filters').onsubmit = e => { e.preventDefault(); after = ''; load(); };
  document.getElementById('first').onclick = () => { after = ''; load(); };
  loadFleet().then(load);
})();
