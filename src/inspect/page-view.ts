/**
 * The page's view, as browser JavaScript: the list of runs, and the selected run as a timeline.
 * Items are drawn once and updated in place (an approval's edited input survives new records);
 * every text goes in as text, never as HTML.
 */
export const pageViewScript = String.raw`
var view = { shown: null, frame: 0, timer: 0, last: 0, status: '', arrived: 0, follow: true, upAt: 0 };
/** At most ten frames a second (a fast run must not keep the page busy)... */
var FRAME_MS = 100;
/** ...and two after a frame that brought more than BUSY_ITEMS new items (more than a person reads). */
var BUSY_FRAME_MS = 500;
var BUSY_ITEMS = 50;
/** Items of a lane kept on the page; older ones are behind a "Show earlier" button. */
var KEEP = 200;
/** ...and while a frame brings more than BUSY_ITEMS new ones, only this many new ones are drawn. */
var BUSY_KEEP = 50;

function h(tag, props) {
  var el = document.createElement(tag);
  if (props) for (var key in props) {
    if (key === 'text') el.textContent = props[key];
    else if (key === 'className') el.className = props[key];
    else if (props[key] !== undefined && props[key] !== null) el.setAttribute(key, props[key]);
  }
  for (var i = 2; i < arguments.length; i++) if (arguments[i]) el.appendChild(arguments[i]);
  return el;
}
function ms(value) {
  if (value === undefined || value === null || isNaN(value)) return '';
  return value < 1000 ? Math.round(value) + ' ms' : (value / 1000).toFixed(value < 10000 ? 2 : 1) + ' s';
}
function num(value) { return Number(value || 0).toLocaleString('en-US'); }
function clock(time) { return new Date(time).toLocaleTimeString('en-GB'); }
function json(value) {
  if (typeof value === 'string') return value;
  try { return JSON.stringify(value, null, 2); } catch (e) { return String(value); }
}
function tokens(usage) {
  if (!usage) return '';
  return num(usage.input_tokens) + ' in \u00b7 ' + num(usage.output_tokens) + ' out \u00b7 cache ' + num(usage.cache_read_input_tokens) + ' read, ' + num(usage.cache_creation_input_tokens) + ' written';
}

function schedule() {
  if (view.frame || view.timer) return;
  var wait = view.last + (view.arrived > BUSY_ITEMS ? BUSY_FRAME_MS : FRAME_MS) - Date.now();
  if (wait <= 0) view.frame = requestAnimationFrame(render);
  else view.timer = setTimeout(function () { view.timer = 0; view.frame = requestAnimationFrame(render); }, wait);
}

function selectedId() {
  var match = /^#run=(.+)$/.exec(location.hash);
  var id = null;
  // A hand-typed hash may not decode (a stray %): the newest run, as for a run not known.
  if (match) try { id = decodeURIComponent(match[1]); } catch (error) { id = null; }
  if (id !== null && model.runs.has(id)) return id;
  // Following the newest run, the page stays on one with a call waiting for a decision here (not over a recorded file,
  // where none is taken): a run that started meanwhile took the page away, an input being edited was lost, and a click
  // meant for Allow landed on the new run's.
  var shown = view.shown;
  if (model.settings.approvals && shown && shown.waiting.size > 0 && model.runs.get(shown.id) === shown) return shown.id;
  return model.order.length ? model.order[model.order.length - 1] : null;
}

function render() {
  view.frame = 0;
  view.last = Date.now();
  view.arrived = 0;
  renderStatus();
  var id = selectedId();
  var run = id ? model.runs.get(id) : null;
  // The page moves to another run of itself (the newest, once the shown one has no call waiting): its entry is marked.
  if (run !== view.shown) dirty.list = dirty.selection = true;
  if (dirty.list) renderList();
  var main = document.getElementById('run');
  resumeFollowing(main);
  if (run !== view.shown) {
    buildRun(run);
    // A run still going opens at its end, where its new items come, and follows them.
    view.follow = !!run && !run.ended;
  } else if (run && dirty.runs.has(run.id)) {
    updateRun(run, view.follow);
  }
  if (view.follow) main.scrollTop = main.scrollHeight;
  dirty.list = false;
  dirty.runs.clear();
}

function renderStatus() {
  var s = model.settings;
  var words = s.mode === 'recorded' ? 'recorded file' + (s.title ? ': ' + s.title : '') : 'live';
  if (model.connection === 'reconnecting') words += ' \u2014 connection lost, reconnecting\u2026';
  if (model.connection === 'closed') words += ' \u2014 the inspector stopped';
  if (words + s.capture === view.status) return;
  view.status = words + s.capture;
  document.getElementById('connection').textContent = words;
  document.getElementById('capture').hidden = s.capture !== false;
}

/** The list of runs, newest first: an entry is made once and its text updated when its run changes. */
function renderList() {
  var list = document.getElementById('runs');
  var selected = selectedId();
  var empty = list.querySelector('.empty');
  if (model.order.length && empty) empty.remove();
  if (!model.order.length && !empty) list.appendChild(h('li', { className: 'empty', text: 'No runs yet: pass onEvent: inspect.onEvent to a runner.' }));
  for (var i = 0; i < model.order.length; i++) {
    var run = model.runs.get(model.order[i]);
    if (!run.listEl) {
      run.listEl = h('a', { href: '#run=' + encodeURIComponent(run.id) });
      list.insertBefore(h('li', null, run.listEl), list.firstChild);
    } else if (!dirty.runs.has(run.id) && !dirty.selection) {
      continue;
    }
    var link = run.listEl;
    link.textContent = '';
    if (run.id === selected) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
    link.appendChild(h('span', { className: 'run-name', text: 'Run ' + run.number }));
    link.appendChild(h('span', { className: 'badge', 'data-state': stateKey(run), text: stateWords(run).split(' (')[0] }));
    link.appendChild(h('span', { className: 'run-meta', text: (run.model || '') + ' \u00b7 ' + clock(run.start) + ' \u00b7 ' + run.requests + ' req \u00b7 ' + run.toolCalls + ' calls' }));
  }
  dirty.selection = false;
}

function buildRun(run) {
  var main = document.getElementById('run');
  main.textContent = '';
  // The run shown before lets go of its elements.
  if (view.shown) letGo(view.shown);
  view.shown = run;
  if (!run) { main.appendChild(h('p', { className: 'empty', text: 'Waiting for a run\u2026' })); return; }
  letGo(run);
  run.head = h('header', { className: 'run-head' });
  run.timeline = h('div', { className: 'items' });
  main.appendChild(run.head);
  main.appendChild(h('section', { 'aria-label': 'Timeline' }, run.timeline));
  run.lanes.get('').el = run.timeline;
  run.newItems = [];
  run.changed.clear();
  // A sub-agent's lane is drawn with its call's card (drawLanesOf); one whose call is not known, with its parent lane.
  run.lanes.forEach(function (lane) { if (!lane.anchor && drawable(lane)) drawLane(run, lane); });
  renderHead(run);
}

/** Draws a lane's last KEEP items (the rest behind its button). */
function drawLane(run, lane) {
  lane.hidden = Math.max(0, lane.items.length - KEEP);
  for (var i = lane.hidden; i < lane.items.length; i++) placeItem(run, lane.items[i]);
  showMore(run, lane);
}
/** The sub-agents' lanes of a call whose card was just drawn (a card drawn again, by "Show earlier items", had none). */
function drawLanesOf(run, item) { if (item.subLanes) item.subLanes.forEach(function (lane) { drawLane(run, lane); }); }
/** Whether a lane has a place on the page: its call's card is drawn (else its items went apart, at the timeline's end). */
function drawable(lane) { return lane.key === '' || (lane.anchor ? !!lane.anchor.el : drawable(lane.parent)); }

/**
 * A run off the page lets go of every element it drew, and an item off the page of its parts too (a call's header,
 * body...): a part kept its detached card, and the card every element in it, so a long run's page held each call it
 * ever drew, thousands of elements past the 200 on the page, and a run shown once held its whole timeline.
 */
function letGo(run) {
  run.head = run.timeline = null;
  run.lanes.forEach(forgetLane);
}
/** A call's card let go of lets go of its sub-agents' lanes too (a lane held its detached section, and drew into it). */
function forgetElement(item) { item.el = null; item.parts = null; if (item.subLanes) item.subLanes.forEach(forgetLane); }
function forgetLane(lane) { lane.el = lane.head = lane.more = null; lane.items.forEach(forgetElement); }

function updateRun(run, follow) {
  var fresh = run.newItems; run.newItems = [];
  // A long run keeps its last items on the page, not all of them; it drops to the last KEEP (the last
  // BUSY_KEEP while records pour in) before drawing, so that the items of a fast run that would go
  // at once are never drawn (a run of a thousand quick turns kept the page's renderer busy a third
  // of the time, drawing them).
  var keep = fresh.length > BUSY_ITEMS ? BUSY_KEEP : KEEP;
  var trimmed = [];
  run.lanes.forEach(function (lane) {
    if (!follow || !lane.el || lane.items.length - (lane.hidden || 0) <= 2 * keep) return;
    var hidden = lane.items.length - keep;
    for (var i = lane.hidden || 0; i < hidden; i++) {
      var item = lane.items[i];
      if (item.el) { item.el.remove(); forgetElement(item); }
    }
    lane.hidden = hidden;
    trimmed.push(lane);
  });
  view.arrived += fresh.length;
  // (Not one its call's card drew already, nor one of a lane whose card is not on the page.)
  fresh.forEach(function (item) { if (!item.el && item.index >= (item.lane.hidden || 0) && drawable(item.lane)) placeItem(run, item); });
  run.changed.forEach(function (item) { if (item.el) fillItem(run, item); });
  run.changed.clear();
  run.lanes.forEach(function (lane) { if (lane.changed && lane.head) { fillLaneHead(lane); lane.changed = false; } });
  trimmed.forEach(function (lane) { showMore(run, lane); });
  renderHead(run);
}

/** The button that shows a lane's earlier items, when some are not on the page. */
function showMore(run, lane) {
  if (!lane.hidden) { if (lane.more) { lane.more.remove(); lane.more = null; } return; }
  var text = 'Show ' + Math.min(KEEP, lane.hidden) + ' earlier items (' + lane.hidden + ' not shown)';
  if (!lane.more) {
    lane.more = h('button', { type: 'button', className: 'more' });
    lane.more.addEventListener('click', function () { showEarlier(run, lane); });
    var container = laneElement(run, lane);
    container.insertBefore(lane.more, container.firstChild);
  }
  lane.more.textContent = text;
}

/**
 * The KEEP items before the first one shown, above it: a long run's earlier items a page at a time (all of them at once,
 * 45,000 of a 50 MB recording, kept the page busy 12 s and held over a million elements). The person reads: the page
 * stops following the end, and lets go of them again once they are back there.
 */
function showEarlier(run, lane) {
  view.follow = false;
  view.upAt = Date.now();
  var container = laneElement(run, lane);
  var first = lane.more.nextSibling;
  var from = Math.max(0, lane.hidden - KEEP);
  for (var i = from; i < lane.hidden; i++) placeItem(run, lane.items[i], first);
  lane.hidden = from;
  showMore(run, lane);
}

function renderHead(run) {
  var usage = run.ended && run.finalUsage ? run.finalUsage : run.usage;
  var duration = (run.ended ? run.end : run.last) - run.start;
  run.head.textContent = '';
  run.head.appendChild(h('h2', { text: 'Run ' + run.number + (run.model ? ' \u00b7 ' + run.model : '') }));
  run.head.appendChild(h('p', { className: 'state', 'data-state': stateKey(run), role: 'status', text: 'State: ' + stateWords(run) }));
  if (run.error) run.head.appendChild(h('p', { className: 'error', text: run.error.name + ': ' + run.error.message }));
  run.head.appendChild(h('p', { className: 'usage', text: 'Usage so far: ' + tokens(usage) + ' \u00b7 ' + run.requests + ' requests \u00b7 ' + run.toolCalls + ' tool calls \u00b7 ' + ms(duration) }));
}

function laneElement(run, lane) {
  if (lane.el) return lane.el;
  var parent = laneElement(run, lane.parent);
  lane.head = h('header', { className: 'lane-head' });
  lane.el = h('div', { className: 'items' });
  var section = h('section', { className: 'lane', 'aria-label': 'Sub-agent ' + lane.path.join(' \u203a ') }, lane.head, lane.el);
  fillLaneHead(lane);
  if (lane.anchor && lane.anchor.el) lane.anchor.el.querySelector('.lanes').appendChild(section);
  else parent.appendChild(section);
  return lane.el;
}

function fillLaneHead(lane) {
  lane.head.textContent = 'Sub-agent ' + lane.path[lane.path.length - 1] + ' \u2014 ' + lane.state;
}

/** Draws an item at the end of its lane, or before an element of it. */
function placeItem(run, item, before) {
  var container = laneElement(run, item.lane);
  item.el = h('article', { className: 'item ' + item.kind });
  container.insertBefore(item.el, before || null);
  fillItem(run, item);
}

function fillItem(run, item) {
  if (item.kind === 'request') fillRequest(run, item);
  else if (item.kind === 'tool') fillTool(run, item);
  else if (item.kind === 'prompt') { item.el.textContent = ''; item.el.appendChild(h('h3', { text: 'Prompt' })); item.el.appendChild(h('pre', { text: item.text })); }
  else { item.el.textContent = ''; item.el.appendChild(h('p', { className: 'meta', text: 'Event ' + item.record.type + ' ' + JSON.stringify(item.record) })); }
}

function at(run, time) { return h('span', { className: 'at', text: '+' + ms(time - run.start) }); }

function fillRequest(run, item) {
  var el = item.el;
  el.textContent = '';
  var title = item.purpose === 'compaction' ? 'Compaction summary' : item.serverCompaction ? 'Server compaction' : 'Request ' + item.requestId;
  var status = item.error ? 'failed' : item.end === undefined ? 'waiting for the reply' : 'stop reason: ' + item.stopReason;
  el.setAttribute('data-status', item.error ? 'failed' : item.end === undefined ? 'running' : 'done');
  el.appendChild(h('header', null, h('h3', { text: title }), h('span', { className: 'model', text: item.model }), h('span', { className: 'status', text: status }), at(run, item.start)));
  var meta = [];
  if (item.usage) meta.push(tokens(item.usage));
  if (item.end !== undefined) meta.push('latency ' + ms(item.end - item.start));
  if (item.firstText !== undefined) meta.push('first text after ' + ms(item.firstText - item.start));
  if (item.messages !== undefined) meta.push(item.messages + (item.messages === 1 ? ' message' : ' messages') + ' sent');
  if (typeof item.fallback === 'number') meta.push((item.error ? 'failed on fallback #' : 'answered by fallback #') + item.fallback);
  if (meta.length) el.appendChild(h('p', { className: 'meta', text: meta.join(' \u00b7 ') }));
  if (item.text) el.appendChild(h('pre', { className: 'text', text: item.text }));
  if (item.toolUses && item.toolUses.length) el.appendChild(h('p', { className: 'meta', text: 'asks for: ' + item.toolUses.map(function (use) { return use.name; }).join(', ') }));
  if (item.error) el.appendChild(h('p', { className: 'error', text: item.error.name + ': ' + item.error.message }));
}

/** The status of a call seen only through its approval, by how its wait ended. */
var UNSEEN_CALL = { allow: 'allowed', deny: 'denied', aborted: 'aborted', timedOut: 'timed out', closed: 'denied' };
var DECIDED = { allow: 'allowed', deny: 'denied', aborted: 'approval ended by an abort', timedOut: 'approval ended: no decision in time', closed: 'approval ended: the inspector closed' };
/** A table's words for a decision, or the decision's own (a recorded file of a newer version: none, or 'constructor'), never undefined. */
function decisionWords(table, decision) { return Object.prototype.hasOwnProperty.call(table, decision) ? table[decision] : String(decision); }

function toolStatus(item) {
  if (item.approval && item.approval.state === 'waiting') return 'waiting for approval';
  if (item.end === undefined) {
    if (item.pending) return 'waiting for approval (run stopped)';
    // A call known only by its approval (approve without onEvent): no tool.start or tool.end of it comes, its decision is
    // all there is to show (a call denied showed as running, for ever).
    if (item.approval && !item.started) return decisionWords(UNSEEN_CALL, item.approval.state);
    return 'running';
  }
  if (item.flags.indexOf('timedOut') >= 0) return 'timed out';
  if (item.flags.indexOf('denied') >= 0) return 'denied';
  if (item.flags.indexOf('aborted') >= 0) return 'aborted';
  return item.isError ? 'error' : 'done';
}

function fillTool(run, item) {
  var el = item.el;
  if (!el.firstChild) {
    item.parts = { head: h('header'), approval: h('div', { className: 'approval-slot' }), body: h('div'), lanes: h('div', { className: 'lanes' }) };
    el.appendChild(item.parts.head); el.appendChild(item.parts.approval); el.appendChild(item.parts.body); el.appendChild(item.parts.lanes);
    drawLanesOf(run, item);
  }
  var status = toolStatus(item);
  el.setAttribute('data-status', status.split(' ')[0]);
  var times = [];
  var ran = item.approval && item.approval.decided ? item.approval.decided : item.start;
  if (item.approval && item.approval.decided) times.push(decisionWords(DECIDED, item.approval.state) + (item.approval.edited ? ' with edited input' : '') + ' after ' + ms(item.approval.decided - item.approval.since) + (item.approval.reason ? ' (' + item.approval.reason + ')' : ''));
  if (item.end !== undefined) times.push('took ' + ms(item.end - ran));
  if (item.flags.indexOf('truncated') >= 0) times.push('result truncated');
  item.parts.head.textContent = '';
  item.parts.head.appendChild(h('h3', null, h('span', { text: 'Tool call ' }), h('code', { text: item.name })));
  item.parts.head.appendChild(h('span', { className: 'status', text: status }));
  if (times.length) item.parts.head.appendChild(h('span', { className: 'meta', text: times.join(' \u00b7 ') }));
  item.parts.head.appendChild(at(run, item.start));
  item.parts.body.textContent = '';
  if (item.hasInput) item.parts.body.appendChild(h('details', { open: '' }, h('summary', { text: 'Input' }), h('pre', { text: json(item.input) })));
  if (item.result !== undefined) item.parts.body.appendChild(h('details', { open: '' }, h('summary', { text: item.isError ? 'Error' : 'Result' }), h('pre', { className: item.isError ? 'error' : '', text: item.result })));
  if (item.error) item.parts.body.appendChild(h('p', { className: 'error', text: item.error.name + ': ' + item.error.message }));
  var waiting = item.approval && item.approval.state === 'waiting';
  if (waiting && !item.parts.approval.firstChild) item.parts.approval.appendChild(approvalBox(run, item));
  if (!waiting) item.parts.approval.textContent = '';
}

function approvalBox(run, item) {
  if (!model.settings.approvals) return h('p', { className: 'meta', text: 'Was waiting for approval when recorded.' });
  var reason = h('input', { type: 'text', 'aria-label': 'Reason for Deny', placeholder: 'Reason (for Deny)' });
  var original = item.hasInput ? json(item.input) : '';
  var edit = h('textarea', { 'aria-label': 'Input to allow', rows: '6' });
  edit.value = original;
  var problem = h('p', { className: 'error', role: 'alert' });
  var allow = h('button', { type: 'button', className: 'allow', text: 'Allow' });
  var deny = h('button', { type: 'button', className: 'deny', text: 'Deny' });
  function send(body) {
    allow.disabled = deny.disabled = true;
    problem.textContent = '';
    body.run = run.id; body.id = item.id;
    fetch(api('api/decide'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (response) { return response.ok ? null : response.text().then(function (text) { throw new Error(text); }); })
      .catch(function (error) { problem.textContent = 'Not decided: ' + error.message; allow.disabled = deny.disabled = false; });
  }
  allow.addEventListener('click', function () {
    var body = { decision: 'allow' };
    if (item.hasInput && edit.value !== original) {
      try { body.input = JSON.parse(edit.value); } catch (error) { problem.textContent = 'The edited input is not valid JSON: ' + error.message; return; }
    }
    send(body);
  });
  deny.addEventListener('click', function () { send({ decision: 'deny', reason: reason.value }); });
  var editor = item.hasInput ? h('details', null, h('summary', { text: 'Edit input' }), edit) : null;
  return h('div', { className: 'approval', role: 'group', 'aria-label': 'Approval of ' + item.name },
    h('p', { className: 'ask', text: 'Waiting for approval: allow this call to ' + item.name + '?' }), editor, reason, allow, deny, problem);
}

function connect() {
  var source = new EventSource(api('api/events'));
  source.addEventListener('settings', function (event) { model.settings = JSON.parse(event.data); dirty.list = true; schedule(); });
  source.addEventListener('closed', function () { source.close(); model.connection = 'closed'; schedule(); });
  // The recorded file was read again from its start (recorded again, or cut shorter): the page starts over.
  source.addEventListener('reset', function () { source.close(); location.reload(); });
  source.onmessage = function (event) {
    var records = JSON.parse(event.data);
    // One record the page cannot show (a newer version's, say) leaves the others shown.
    for (var i = 0; i < records.length; i++) {
      try { apply(records[i]); } catch (error) { console.warn('tool-runner inspector: a record could not be shown', records[i], error); }
    }
    schedule();
  };
  source.onopen = function () { model.connection = 'live'; schedule(); };
  source.onerror = function () { model.connection = source.readyState === 2 ? 'closed' : 'reconnecting'; schedule(); };
}

window.addEventListener('hashchange', function () { dirty.list = true; dirty.selection = true; schedule(); });
watchScrolling();
connect();
schedule();
`;
