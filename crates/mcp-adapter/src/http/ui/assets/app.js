// The web view's one script. It reads the server's data documents and puts every value in the page
// as text: elements are made with createElement and filled with textContent, never from a string of
// markup, so a title that looks like HTML, a Mermaid directive or a link is shown as the characters
// it holds. The page's Content-Security-Policy forbids any other script and any markup sink
// (Trusted Types), so a mistake here would fail loudly rather than run someone's text.
'use strict';

(function () {
  const byId = (id) => document.getElementById(id);

  // An element: `props` are our own attribute names (never a value's), `text` its text content;
  // children are elements, strings or numbers (as text), or nothing.
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // Appends the children that are something (an element, or text), skipping null and false.
  function put(node, ...children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  let session = null; // { agent, csrf, renew_seconds }
  let current = null; // the last data document
  let offset = 0; // the server's clock minus ours, in ms
  let stream = null;
  let ended = false;
  let retry = null;

  const serverNow = () => Date.now() + offset;

  // Durations as the terminal view writes them: 42s, 4m 05s, 2h 14m, 3d 04h.
  function duration(ms) {
    const s = Math.floor(Math.abs(ms) / 1000);
    const days = Math.floor(s / 86400);
    const hours = Math.floor(s / 3600) % 24;
    const minutes = Math.floor(s / 60) % 60;
    const seconds = s % 60;
    const two = (n) => String(n).padStart(2, '0');
    if (days > 0) return `${days}d ${two(hours)}h`;
    if (hours > 0) return `${hours}h ${two(minutes)}m`;
    if (minutes > 0) return `${minutes}m ${two(seconds)}s`;
    return `${seconds}s`;
  }

  function formatter(zone) {
    try {
      return new Intl.DateTimeFormat(undefined, {
        weekday: 'short', hour: '2-digit', minute: '2-digit', timeZone: zone, timeZoneName: 'short',
      });
    } catch (e) {
      return null;
    }
  }
  const viewerZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local';
  const viewerTime = formatter(undefined);
  let serverTime = null;

  // An instant in the viewer's zone, and in the server's when that differs.
  function when(ms) {
    const date = new Date(ms);
    const mine = viewerTime ? viewerTime.format(date) : date.toISOString();
    if (!current || !serverTime || current.zone === viewerZone) return mine;
    return `${mine} (${serverTime.format(date)} server)`;
  }

  // A live countdown to `ms` (or the time since it, with `since`), kept current every second.
  function countdown(ms, label, urgentUnder) {
    return el('span', {
      class: 'countdown',
      'data-at': ms,
      'data-label': label || 'left',
      'data-urgent': urgentUnder || null,
    });
  }
  function since(ms) {
    return el('span', { class: 'countdown', 'data-since': ms });
  }

  function tick() {
    const now = serverNow();
    for (const node of document.querySelectorAll('[data-at]')) {
      const left = Number(node.dataset.at) - now;
      node.textContent = left > 0 ? `${duration(left)} ${node.dataset.label}` : (node.dataset.label === 'left' ? 'expired' : 'now');
      if (node.dataset.urgent) node.classList.toggle('urgent', left < Number(node.dataset.urgent));
    }
    for (const node of document.querySelectorAll('[data-since]')) {
      node.textContent = `${duration(now - Number(node.dataset.since))} ago`;
    }
  }

  const chip = (text, tone) => el('span', { class: `chip tone-${tone || 'muted'}`, text });

  function counts(list) {
    return el('p', { class: 'chips' }, list.map((c) => chip(`${c.status} ${c.count}`, c.tone)));
  }

  function table(caption, headers, rows) {
    if (!rows.length) return null;
    return el('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': caption },
      el('table', {},
        el('caption', { text: caption }),
        el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, rows.map((cells) => el('tr', {}, cells.map((c) => el('td', {}, c)))))));
  }

  function contractButton(id) {
    return el('button', { type: 'button', class: 'link', 'data-contract': id, 'data-key': `contract:${id}`, text: id.slice(0, 13) + '…', 'aria-label': `Contract ${id}` });
  }

  function agentName(name) {
    return session && name === session.agent ? el('span', {}, name, ' ', el('span', { class: 'you', text: '(you)' })) : name;
  }

  // ---------------------------------------------------------------- sections

  function hoursSection(hours) {
    if (!hours) return [el('p', { class: 'muted', text: 'No hours are configured on this server (--ui-hours).' })];
    const open = hours.in_hours;
    const out = [el('p', { class: 'gate' },
      chip(open ? 'open' : 'closed', open ? 'good' : 'warn'), ' ',
      el('span', { text: hours.expression }))];
    if (hours.next_change !== null) {
      out.push(el('p', {}, open ? 'Closes ' : 'Opens ', when(hours.next_change), ' — ', countdown(hours.next_change, open ? 'until it closes' : 'until it opens')));
    } else {
      out.push(el('p', { text: open ? 'Always open.' : 'Never open.' }));
    }
    return out;
  }

  function unitLine(u) {
    const parts = [u.status, u.role];
    if (u.agent) parts.push(u.agent);
    if (u.in_flight) parts.push('in flight');
    if (u.is_held) parts.push('held');
    if (u.is_cursor) parts.push('cursor');
    return el('li', { class: u.is_cursor ? 'cursor' : null },
      el('strong', { text: u.id }), ' — ', el('span', { text: u.title }), ' ',
      el('span', { class: `muted tone-text-${u.tone}`, text: `(${parts.join(' · ')})` }),
      u.depends_on.length ? el('span', { class: 'muted', text: ` after ${u.depends_on.join(', ')}` }) : null);
  }

  function jobSection(pane, index) {
    const article = el('article', { class: 'job', 'aria-labelledby': `job-${index}-h` });
    if (pane.error !== undefined) {
      put(article, el('h3', { id: `job-${index}-h`, text: pane.checkpoint }), el('p', { class: 'error', text: pane.error }));
      return article;
    }
    const job = pane.job;
    put(article, 
      el('h3', { id: `job-${index}-h` }, 'Job ', el('span', { text: job.id })),
      el('p', { class: 'muted' }, 'Checkpoint ', el('code', { text: pane.checkpoint })),
      job.goal ? el('p', { text: job.goal }) : null,
      el('p', {}, 'Cursor: ', el('strong', { text: job.cursor || '—' })),
      counts(job.counts));
    if (job.plan_refusal) put(article, el('p', { class: 'error', text: `The plan is refused: ${job.plan_refusal}` }));
    const units = job.waves.flat().length + job.unplanned.length + job.finished.length + job.units_left_out;
    const src = (scheme) => `/ui/plan/${index}.svg?scheme=${scheme}&v=${encodeURIComponent(pane.picture)}`;
    put(article, el('figure', { class: 'graph' },
      el('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': `Dependency graph of job ${job.id}, scrollable` },
        el('picture', {},
          el('source', { media: '(prefers-color-scheme: dark)', srcset: src('dark') }),
          el('img', { src: src('light'), alt: `Dependency graph of job ${job.id}: ${units} units in ${job.waves.length} waves. The same plan is listed as text below.` }))),
      el('figcaption', {}, 'The plan as a graph (the picture of ', el('code', { text: 'plan --format mermaid' }), '). ',
        el('a', { href: `/ui/plan/${index}.mmd`, download: 'plan.mmd', text: 'Download it as Mermaid' }), '.')));
    const waves = el('ol', { class: 'waves' });
    job.waves.forEach((wave, i) => {
      put(waves, el('li', {}, el('span', { class: 'wave', text: i === 0 ? 'Wave 1 · ready' : `Wave ${i + 1}` }), el('ul', {}, wave.map(unitLine))));
    });
    put(article, el('h4', { text: 'Waves' }), job.waves.length ? waves : el('p', { class: 'muted', text: 'No unit is left to run.' }));
    if (job.unplanned.length) put(article, el('h4', { text: 'Not planned' }), el('ul', {}, job.unplanned.map(unitLine)));
    if (job.finished.length) put(article, el('details', { 'data-key': `finished:${index}` }, el('summary', { 'data-key': `summary:finished:${index}`, text: `Finished (${job.finished.length})` }), el('ul', {}, job.finished.map(unitLine))));
    if (job.units_left_out) put(article, el('p', { class: 'muted', text: `${job.units_left_out} more units are not listed here.` }));
    if (job.held.length) {
      put(article, el('h4', { text: 'Holds on shared files' }), el('ul', {}, job.held.map((h) =>
        el('li', {}, el('strong', { text: h.unit }), ' waits for ', el('strong', { text: h.by }), ' · ', el('code', { text: h.path }), ` (wave ${h.wave})`))));
    }
    if (job.budget) {
      put(article, el('h4', { text: 'Budget' }), table('Budget: spent, reserved by the units in flight, and left', ['dimension', 'limit', 'spent', 'in flight', 'left'],
        job.budget.dimensions.map((d) => [d.name, d.limit, d.spent, d.in_flight, el('span', { class: d.left < 0 ? 'tone-text-bad' : null, text: d.left })])),
      el('p', { class: 'muted', text: `${job.budget.affordable} more units fit (${job.budget.per_unit} tokens each, assumed).` }));
    }
    if (job.clock_outs.length) {
      put(article, el('h4', { text: 'Last clock-outs' }), table('The last clock-outs and what they cost, newest first', ['when', 'unit', 'status', 'agent', 'tokens', 'took', 'model'],
        job.clock_outs.map((c) => [Number.isNaN(Date.parse(c.at)) ? c.at : when(Date.parse(c.at)), c.unit, c.status, c.agent ? agentName(c.agent) : '—', c.tokens === null ? '—' : c.tokens,
          c.duration_ms === null ? '—' : duration(c.duration_ms), c.model || '—'])));
    }
    if (job.questions.length) put(article, el('h4', { text: 'Open questions' }), el('ul', {}, job.questions.map((q) => el('li', {}, el('span', { text: q.text }), el('span', { class: 'muted', text: ` (${q.kind})` })))));
    if (job.history.length) {
      put(article, el('details', { 'data-key': `history:${index}` }, el('summary', { 'data-key': `summary:history:${index}`, text: `History (${job.history.length})` }), el('ul', {}, job.history.map((h) =>
        el('li', {}, el('strong', { text: h.unit }), ` ${h.outcome}`, h.notes ? el('span', { class: 'muted', text: ` — ${h.notes}` }) : null)))));
    }
    return article;
  }

  function jobsSection(doc) {
    if (!doc.shown.jobs) return [el('p', { class: 'muted', text: 'This server does not serve the shift-work tools.' })];
    if (!doc.jobs.length) return [el('p', { class: 'muted', text: 'No job: name checkpoints with --ui-checkpoints, or start one at .shiftwork/checkpoint.json in a root.' })];
    return doc.jobs.map((pane, i) => jobSection(pane, i));
  }

  function contractsSection(doc) {
    const c = doc.contracts;
    if (!doc.shown.contracts || !c) return [el('p', { class: 'muted', text: 'This server does not serve the contracts tools.' })];
    if (c.error !== undefined) return [el('p', { class: 'error', text: c.error })];
    const out = [counts(c.counts)];
    if (c.past_deadline) out.push(el('p', { class: 'tone-text-warn', text: `${c.past_deadline} past their deadline (the next sweep ends them).` }));
    // The queue per agent: what waits for it (oldest first) and what it holds (soonest lease end first).
    const agents = new Map();
    const of = (name) => { if (!agents.has(name)) agents.set(name, { waiting: [], claimed: [] }); return agents.get(name); };
    c.waiting.forEach((w) => of(w.target).waiting.push(w));
    c.claimed.forEach((x) => of(x.holder).claimed.push(x));
    const names = [...agents.keys()].sort((a, b) => (session && a === session.agent ? -1 : session && b === session.agent ? 1 : a.localeCompare(b)));
    if (!names.length) out.push(el('p', { class: 'muted', text: 'Nothing waits and nothing is claimed.' }));
    for (const name of names) {
      const queue = agents.get(name);
      const block = el('article', { class: 'agent' }, el('h3', {}, 'Queue of ', agentName(name)));
      put(block, table(`Waiting for ${name}, oldest first`, ['contract', 'title', 'from', 'waiting', 'deliveries'],
        queue.waiting.map((w) => [contractButton(w.id), w.title, agentName(w.requester), since(w.queued_at),
          w.deliveries ? el('span', {}, `redelivered ${w.deliveries}/${w.max_deliveries}`, w.available_at ? el('span', {}, ', claimable in ', countdown(w.available_at, '')) : null) : '—'])));
      put(block, table(`Claimed by ${name}, soonest lease end first`, ['contract', 'title', 'from', 'epoch', 'lease'],
        queue.claimed.map((x) => [contractButton(x.id), x.title, agentName(x.requester), x.epoch,
          x.lease_ends === null ? 'no deadline' : countdown(x.lease_ends, 'left', 60000)])));
      out.push(block);
    }
    if (c.claimed_left_out) out.push(el('p', { class: 'muted', text: `${c.claimed_left_out} more claimed contracts are not listed.` }));
    out.push(el('h3', { text: 'Ended lately' }));
    out.push(table('The contracts that ended lately, latest first', ['contract', 'title', 'for', 'status', 'why', 'ended'],
      c.ended.map((x) => [contractButton(x.id), x.title, agentName(x.target), chip(x.status, x.tone),
        [x.reason, x.why].filter(Boolean).join(': ') || '—', x.ended_at === null ? '—' : since(x.ended_at)])) ||
      el('p', { class: 'muted', text: 'None.' }));
    return out;
  }

  function worklogSection(doc) {
    const log = doc.worklog;
    if (!doc.shown.worklog || !log) return [el('p', { class: 'muted', text: 'This server does not serve the work-log tools.' })];
    if (log.error !== undefined) return [el('p', { class: 'error', text: log.error })];
    if (log.status === 'no_dir') return [el('p', { class: 'muted', text: 'No work log is set up on this server.' })];
    if (log.status === 'no_file') return [el('p', { class: 'muted', text: "Today's work log is not started yet." })];
    const out = [el('p', {}, el('code', { text: log.file }), ` — ${log.count} items`)];
    if (log.items === null) {
      out.push(el('p', { class: 'muted', text: 'The server lists the items only with --ui-worklog-items.' }));
    } else {
      if (log.items_left_out) out.push(el('p', { class: 'muted', text: `${log.items_left_out} earlier items are not listed.` }));
      out.push(el('ul', { class: 'checklist' }, log.items.map((i) =>
        el('li', { class: `depth-${i.depth}` }, el('span', { class: 'box', 'aria-label': i.checked ? 'done' : 'not done', text: i.checked ? '☑' : '☐' }), ' ', el('span', { text: i.text })))));
    }
    return out;
  }

  function render(doc) {
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    // What the reader opened stays open across updates.
    const open = new Set([...document.querySelectorAll('details[open][data-key]')].map((d) => d.dataset.key));
    current = doc;
    serverTime = formatter(doc.zone);
    byId('server-zone').textContent = doc.zone;
    byId('viewer-zone').textContent = viewerZone;
    byId('hours-body').replaceChildren(...hoursSection(doc.hours));
    byId('hours').hidden = !doc.shown.hours;
    byId('jobs-body').replaceChildren(...jobsSection(doc).filter(Boolean));
    byId('contracts-body').replaceChildren(...contractsSection(doc).filter(Boolean));
    byId('worklog-body').replaceChildren(...worklogSection(doc).filter(Boolean));
    document.body.dataset.version = String(doc.version);
    for (const details of document.querySelectorAll('details[data-key]')) details.open = open.has(details.dataset.key);
    tick();
    if (focused) {
      const again = document.querySelector(`[data-key="${CSS.escape(focused)}"]`);
      if (again) again.focus();
    }
  }

  // ---------------------------------------------------------------- one contract

  async function showContract(id, opener) {
    const section = byId('contract');
    const body = byId('contract-body');
    section.hidden = false;
    section.dataset.opener = opener ? opener.dataset.key : '';
    body.replaceChildren(el('p', { class: 'muted', text: 'Reading the contract…' }));
    byId('contract-h').focus();
    let response;
    try {
      response = await fetch(`/ui/contract/${encodeURIComponent(id)}`, { credentials: 'same-origin', cache: 'no-store' });
    } catch (e) {
      body.replaceChildren(el('p', { class: 'error', text: 'The server cannot be reached.' }));
      return;
    }
    if (response.status === 401) return sessionEnded('the session ended');
    const record = await response.json().catch(() => ({ error: 'the answer is not readable' }));
    if (!response.ok) {
      body.replaceChildren(el('p', { class: 'error', text: record.error || 'The contract cannot be read.' }));
      return;
    }
    const rows = [
      ['title', record.title], ['status', chip(record.status, record.tone)], ['task type', record.task_type],
      ['from', agentName(record.requester)], ['for', agentName(record.target)], ['epoch', record.epoch],
      ['deliveries', `${record.deliveries} of ${record.max_deliveries}`], ['renewals', record.extends],
      ['releases', record.releases], ['refused deliveries', record.retries],
      ['workspace', el('code', { text: record.workspace_root })],
      ['pinned files', record.pointer_count ? el('ul', {}, record.pointers.map((p) => el('li', {}, el('code', { text: p })))) : 'none'],
      ['why it ended', record.end_reason || '—'], ['fail reason', record.fail_reason || '—'],
      ['cancel reason', record.cancel_reason || '—'], ['result', record.result_summary || '—'],
      ['context', record.context_summary || '—'],
    ];
    body.replaceChildren(
      el('p', {}, el('code', { text: record.id }), record.past_deadline ? el('span', { class: 'tone-text-warn', text: ' · past its deadline' }) : null),
      el('dl', { class: 'record' }, rows.map(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)])),
      el('h3', { text: 'Timeline' }),
      table('When each step happened', ['step', 'when'], record.times.map((t) => [t.name, when(t.at)])),
      el('h3', { text: 'History' }),
      record.history.length ? el('ol', {}, record.history.map((h) => el('li', { text: h }))) : el('p', { class: 'muted', text: 'No error recorded.' }));
  }

  function closeContract() {
    const section = byId('contract');
    section.hidden = true;
    const key = section.dataset.opener;
    const opener = key ? document.querySelector(`[data-key="${CSS.escape(key)}"]`) : null;
    if (opener) opener.focus();
  }

  // ---------------------------------------------------------------- the connection

  function setConnection(state, text) {
    const node = byId('connection');
    node.dataset.state = state;
    node.textContent = text;
  }

  function sessionEnded(reason) {
    if (ended) return;
    ended = true;
    if (stream) stream.close();
    if (retry) clearTimeout(retry);
    setConnection('ended', 'Signed out.');
    // What the session could see goes with it.
    for (const id of ['hours-body', 'jobs-body', 'contracts-body', 'worklog-body', 'contract-body']) byId(id).replaceChildren();
    document.querySelector('.who').hidden = true;
    const notice = byId('ended');
    notice.replaceChildren(el('p', {}, `Your session ended: ${reason}. `, el('a', { href: '/ui', text: 'Sign in again' }), '.'));
    notice.hidden = false;
    document.body.dataset.ended = 'true';
  }

  function apply(envelope) {
    offset = envelope.now - Date.now();
    if (envelope.state) render(envelope.state);
  }

  function connect() {
    if (ended) return;
    stream = new EventSource('/ui/events');
    stream.addEventListener('open', () => setConnection('live', 'Live: updates arrive as they happen.'));
    stream.addEventListener('state', (e) => {
      setConnection('live', 'Live: updates arrive as they happen.');
      apply(JSON.parse(e.data));
    });
    stream.addEventListener('signed-out', (e) => {
      let reason = 'the token is no longer accepted';
      try { reason = JSON.parse(e.data).reason || reason; } catch (err) { /* the default */ }
      sessionEnded(reason);
    });
    stream.addEventListener('error', () => {
      if (ended) return;
      const at = new Date().toLocaleTimeString();
      setConnection('lost', `Lost the connection to the server at ${at}; trying again…`);
      if (stream.readyState === EventSource.CLOSED) {
        // The server refused the stream (the session ended, or it is busy): ask why, then retry.
        if (retry) clearTimeout(retry);
        retry = setTimeout(probe, 2000);
      }
    });
  }

  async function probe() {
    retry = null;
    try {
      const response = await fetch('/ui/session', { credentials: 'same-origin', cache: 'no-store' });
      if (response.status === 401) return sessionEnded('the token was revoked, or the session expired');
      if (response.ok) {
        session = await response.json();
        connect();
        return;
      }
    } catch (e) { /* still unreachable */ }
    retry = setTimeout(probe, 2000);
  }

  async function start() {
    document.addEventListener('click', (e) => {
      const button = e.target.closest('[data-contract]');
      if (button) showContract(button.dataset.contract, button);
    });
    byId('contract-close').addEventListener('click', closeContract);
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !byId('contract').hidden) closeContract();
    });
    try {
      const response = await fetch('/ui/session', { credentials: 'same-origin', cache: 'no-store' });
      if (response.status === 401) return sessionEnded('it is not signed in');
      session = await response.json();
      byId('agent').textContent = session.agent;
      byId('csrf').value = session.csrf;
      setInterval(async () => {
        const renewed = await fetch('/ui/session', { credentials: 'same-origin', cache: 'no-store' }).catch(() => null);
        if (renewed && renewed.status === 401) sessionEnded('the token was revoked, or the session expired');
      }, Math.max(60, session.renew_seconds) * 1000);
      const first = await fetch('/ui/state', { credentials: 'same-origin', cache: 'no-store' });
      if (first.ok) apply(await first.json());
    } catch (e) {
      setConnection('lost', 'The server cannot be reached; trying again…');
    }
    connect();
    setInterval(tick, 1000);
  }

  start();
}());
