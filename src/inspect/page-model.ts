/**
 * The page's model, as browser JavaScript (no framework, no build step; the page is served as it
 * is): the records the feed brings become runs, each with lanes (its own, and one per sub-agent
 * `path`) of items (the prompt, requests, tool calls). page-view.ts draws it.
 */
export const pageModelScript = String.raw`
'use strict';
var token = new URLSearchParams(location.search).get('token') || '';
function api(path) { return path + '?token=' + encodeURIComponent(token); }

var model = { runs: new Map(), order: [], count: 0, settings: { mode: 'live', capture: true, approvals: false, title: '' }, connection: 'connecting' };
var dirty = { list: true, selection: true, runs: new Set() };

function zeroUsage() { return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }; }
function addUsage(total, usage) {
  if (!usage) return;
  for (var key in total) total[key] += Number(usage[key]) || 0;
}

function runOf(id, time) {
  var run = model.runs.get(id);
  if (run) return run;
  run = {
    id: id, number: ++model.count, start: time, model: '', ended: false, state: 'running', stoppedBy: undefined,
    error: undefined, usage: zeroUsage(), finalUsage: undefined, requests: 0, toolCalls: 0, lanes: new Map(),
    waiting: new Set(), pending: [], newItems: [], changed: new Set(), last: time,
  };
  model.runs.set(id, run);
  model.order.push(id);
  laneOf(run, undefined);
  forgetOldRuns();
  return run;
}

/**
 * Past the inspector's maxRuns, the page lets go of its oldest ended runs (not the one the page is to
 * show, selectedId() of page-view.ts, the same script: one the person chose, or the newest it follows),
 * as the inspector does: a page left open on a busy process stays small. (Not view.shown: runs that
 * came in one batch before a frame was drawn kept the first run shown, and dropped the next instead.)
 */
function forgetOldRuns() {
  var max = model.settings.maxRuns;
  if (!max || model.order.length <= max) return;
  var kept = selectedId();
  // Runs stopped for approval count apart, as the inspector counts them: max of them, beside max others.
  var count = { waiting: 0, other: 0 };
  model.order.forEach(function (id) { count[model.runs.get(id).state === 'waiting' ? 'waiting' : 'other']++; });
  for (var i = 0; i < model.order.length; ) {
    var old = model.runs.get(model.order[i]);
    var kind = old.state === 'waiting' ? 'waiting' : 'other';
    if (!old.ended || count[kind] <= max || old.id === kept) { i++; continue; }
    count[kind]--;
    model.order.splice(i, 1);
    model.runs.delete(old.id);
    if (old.listEl && old.listEl.parentNode) old.listEl.parentNode.remove();
  }
}

/**
 * The lane of a sub-agent path (the run's own for none), nested under the call that started it: the
 * call of id callPath's last (two calls of one agent at once have a lane each), or, in records
 * without callPath, the last call of the agent's name.
 */
function laneOf(run, path, callPath) {
  var ids = callPath && path && callPath.length === path.length ? callPath : null;
  var key = path && path.length ? (ids || path).join(' \u203a ') : '';
  var lane = run.lanes.get(key);
  if (lane) return lane;
  lane = { key: key, path: path || [], items: [], byKey: new Map(), state: 'running', anchor: null, parent: null, el: null, sawStreamedText: false };
  if (key !== '') {
    lane.parent = laneOf(run, path.slice(0, -1), ids && ids.slice(0, -1));
    var name = path[path.length - 1];
    var id = ids && ids[ids.length - 1];
    for (var i = lane.parent.items.length - 1; i >= 0; i--) {
      var item = lane.parent.items[i];
      if (item.kind === 'tool' && (id ? item.id === id : item.name === name)) { lane.anchor = item; break; }
    }
    // The call's card draws the lane, and lets go of it (page-view.ts drawLanesOf, forgetElement).
    if (lane.anchor) (lane.anchor.subLanes || (lane.anchor.subLanes = [])).push(lane);
  }
  run.lanes.set(key, lane);
  return lane;
}

function itemOf(run, lane, key, make) {
  var item = lane.byKey.get(key);
  if (item) { run.changed.add(item); return item; }
  item = make();
  item.key = key;
  item.lane = lane;
  item.el = null;
  item.index = lane.items.length;
  lane.items.push(item);
  lane.byKey.set(key, item);
  run.newItems.push(item);
  return item;
}

function requestItem(run, lane, id, time) {
  return itemOf(run, lane, 'request ' + id, function () {
    return { kind: 'request', requestId: id, purpose: 'turn', start: time, end: undefined, firstText: undefined, text: '', stopReason: undefined, usage: undefined, error: undefined, fallback: undefined, toolUses: [], model: '', messages: undefined, serverCompaction: false };
  });
}

function toolItem(run, lane, id, name, time) {
  return itemOf(run, lane, 'tool ' + id, function () {
    return { kind: 'tool', id: id, name: name, start: time, started: false, end: undefined, input: undefined, hasInput: false, result: undefined, isError: false, error: undefined, flags: [], pending: false, approval: null };
  });
}

function apply(record) {
  var run = runOf(record.run, record.time);
  var lane = laneOf(run, record.path, record.callPath);
  var own = lane.key === '';
  var item;
  run.last = Math.max(run.last, record.time);
  dirty.runs.add(run.id);
  switch (record.type) {
    case 'run.start':
      if (own) {
        run.ended = false; run.state = 'running'; run.error = undefined; run.stoppedBy = undefined; run.pending = [];
        if (record.model) run.model = record.model;
        // The tokens counted before this start (a run resumed from a snapshot): its usage so far, as runner.usage says.
        if (record.usage) { run.usage = zeroUsage(); addUsage(run.usage, record.usage); }
        // The run's prompt, and a later question (a chat's next message, pushed after the answer), where it came.
        if (record.prompt !== undefined) itemOf(run, lane, 'prompt ' + run.requests, function () { return { kind: 'prompt', text: record.prompt }; });
      } else {
        lane.state = 'running';
      }
      dirty.list = true;
      break;
    case 'run.end':
      if (own) {
        run.ended = true; run.end = record.time; run.state = record.state || (record.error ? 'failed' : 'finished');
        run.stoppedBy = record.stoppedBy; run.error = record.error; run.finalUsage = record.usage; run.pending = record.pending || [];
        for (var p = 0; p < run.pending.length; p++) {
          var held = lane.byKey.get('tool ' + run.pending[p].id);
          if (held) { held.pending = true; run.changed.add(held); }
        }
      } else {
        // A sub-agent that stopped for approval waits in its parent's call (the parent lists the call).
        lane.state = record.state === 'waiting' ? 'waiting for approval' : record.error ? 'failed' : 'finished';
      }
      lane.changed = true;
      dirty.list = true;
      break;
    case 'request.start':
      item = requestItem(run, lane, record.requestId, record.time);
      item.start = record.time; item.purpose = record.purpose; item.model = record.model || '';
      item.messages = record.messages; item.serverCompaction = record.serverCompaction === true;
      if (own && record.model && !run.model) run.model = record.model;
      run.requests++;
      dirty.list = true;
      break;
    case 'request.end':
      item = requestItem(run, lane, record.requestId, record.time);
      item.end = record.time; item.stopReason = record.stopReason; item.usage = record.usage; item.error = record.error;
      item.fallback = record.fallback; item.toolUses = record.toolUses || [];
      if (record.model) item.model = record.model;
      if (record.text !== undefined && item.text === '') item.text = record.text;
      addUsage(run.usage, record.usage);
      dirty.list = true;
      break;
    case 'request.text':
      item = requestItem(run, lane, record.requestId, record.time);
      if (item.firstText === undefined) item.firstText = record.time;
      item.text += record.text;
      lane.sawStreamedText = true;
      break;
    case 'agent.text':
      // A sub-agent's streamed text, when its requests' own text is not forwarded.
      if (lane.sawStreamedText) break;
      for (var r = lane.items.length - 1; r >= 0; r--) {
        if (lane.items[r].kind === 'request') { item = lane.items[r]; break; }
      }
      item = item || itemOf(run, lane, 'text', function () { return { kind: 'request', requestId: '', purpose: 'turn', start: record.time, text: '', toolUses: [], model: '' }; });
      run.changed.add(item);
      if (item.firstText === undefined) item.firstText = record.time;
      item.text += record.text;
      break;
    case 'tool.start':
      // A call that waited for approval starts again when its run goes on: counted once.
      if (!lane.byKey.has('tool ' + record.id)) run.toolCalls++;
      item = toolItem(run, lane, record.id, record.name, record.time);
      item.start = record.time; item.started = true;
      if ('input' in record) { item.input = record.input; item.hasInput = true; }
      dirty.list = true;
      break;
    case 'tool.end':
      item = toolItem(run, lane, record.id, record.name, record.time);
      if (record.pending) { item.pending = true; break; }
      item.end = record.time; item.pending = false; item.isError = record.isError === true; item.result = record.result;
      // What its handling threw (a hook, the approver): the run failed with it.
      item.error = record.error;
      item.flags = ['timedOut', 'truncated', 'aborted', 'denied'].filter(function (flag) { return record[flag] === true; });
      break;
    case 'approval.waiting':
      item = toolItem(run, lane, record.id, record.name, record.time);
      item.approval = { state: 'waiting', since: record.time, decided: undefined, edited: false, reason: undefined };
      if ('input' in record) { item.input = record.input; item.hasInput = true; }
      run.waiting.add(item);
      dirty.list = true;
      break;
    case 'approval.decided':
      item = toolItem(run, lane, record.id, '', record.time);
      item.approval = item.approval || { state: 'waiting', since: record.time };
      item.approval.state = record.decision; item.approval.decided = record.time;
      item.approval.edited = record.edited === true; item.approval.reason = record.reason;
      // The edited input that ran, in place of the one asked about.
      if ('input' in record) { item.input = record.input; item.hasInput = true; }
      run.waiting.delete(item);
      dirty.list = true;
      break;
    default:
      itemOf(run, lane, 'other ' + run.newItems.length + ' ' + record.time + ' ' + Math.random(), function () { return { kind: 'other', record: record }; });
  }
}

/** The run's state in words: running, waiting for approval, finished, failed (and why it stopped). */
function stateWords(run) {
  var words;
  if (!run.ended) words = run.waiting.size > 0 ? 'waiting for approval' : 'running';
  else if (run.state === 'failed') words = 'failed';
  else if (run.state === 'waiting') words = 'waiting for approval (the run stopped: decide with runner.approve / runner.deny, or durableApprovals in a durable run)';
  else words = 'finished';
  if (run.ended && run.stoppedBy) words += ' \u2014 stopped by ' + run.stoppedBy.replace(/_/g, ' ');
  return words;
}

function stateKey(run) {
  if (!run.ended) return run.waiting.size > 0 ? 'waiting' : 'running';
  return run.state;
}
`;
