// The runs page: one page of runs from GET /api/v1/runs, filtered by status and graph, paged by run id.
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
      document.getElementById('count').textContent = page.runs.length + ' run(s) on this page';
      const next = document.getElementById('next');
      next.disabled = !page.next;
      next.onclick = () => { after = page.next; load(); };
      document.getElementById('message').hidden = true;
      if (page.runs.some(r => r.status === 'RUNNING')) setTimeout(load, 2000);
    }).catch(Studio.showError);
  }

  function row(r) {
    const tr = Studio.el('tr', { 'data-run': r.runId, 'data-status': r.status });
    const link = Studio.el('a', { href: '/run?id=' + encodeURIComponent(r.runId) }, r.runId);
    tr.appendChild(Studio.el('td', {}, link));
    tr.appendChild(Studio.el('td', {}, (r.graphId || '—') + (r.graphVersion != null ? ' v' + r.graphVersion : '')));
    tr.appendChild(Studio.el('td', {}, Studio.badge(r.status, r.live)));
    tr.appendChild(Studio.el('td', {}, Studio.time(r.startedAt)));
    tr.appendChild(Studio.el('td', {}, Studio.ms(r.durationMs)));
    tr.appendChild(Studio.el('td', { class: 'error-cell' }, r.error || ''));
    tr.appendChild(Studio.el('td', {}, r.interrupts.map(i => i.node + ': ' + i.payload).join('; ')));
    tr.appendChild(Studio.el('td', {}, r.owner ? r.owner + (r.leaseLive ? ' (until ' + Studio.time(r.leaseExpiresAt) + ')' : ' (lapsed)') : '—'));
    return tr;
  }

  document.getElementById('filters').onsubmit = e => { e.preventDefault(); after = ''; load(); };
  document.getElementById('first').onclick = () => { after = ''; load(); };
  load();
})();
