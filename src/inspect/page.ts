/**
 * The inspector page: one HTML document with its style and script inline (served from the package:
 * no CDN, no framework, works offline), light or dark as the system asks.
 */
import { pageModelScript } from './page-model.js';
import { pageScrollScript } from './page-scroll.js';
import { pageViewScript } from './page-view.js';

const style = `
:root { color-scheme: light dark; --bg: #fbfbfa; --panel: #ffffff; --text: #1d1d1f; --muted: #5f6368; --line: #dadce0;
  --accent: #3b5bdb; --ok: #1e7d32; --bad: #c62828; --wait: #a35a00; --code: #f3f3f1; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #141416; --panel: #1d1d21; --text: #e8e8ea; --muted: #a0a3a8; --line: #33353b;
    --accent: #8ea2ff; --ok: #6fcf7f; --bad: #ff7b72; --wait: #f0b45a; --code: #26272c; }
}
* { box-sizing: border-box; }
body { margin: 0; height: 100vh; display: flex; flex-direction: column; background: var(--bg); color: var(--text); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
.top { display: flex; gap: 1rem; align-items: baseline; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel); }
.top h1 { font-size: 1rem; margin: 0; }
.top p { margin: 0; color: var(--muted); }
.layout { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(15rem, 20rem) 1fr; }
nav { border-right: 1px solid var(--line); padding: .5rem; overflow-y: auto; }
nav h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: .3rem .4rem; }
nav ol { list-style: none; margin: 0; padding: 0; }
nav a { display: grid; grid-template-columns: 1fr auto; gap: 0 .5rem; padding: .45rem .5rem; border-radius: 6px; color: inherit; text-decoration: none; }
nav a:hover { background: var(--code); }
nav a[aria-current="page"] { background: var(--code); outline: 1px solid var(--line); }
.run-name { font-weight: 600; }
.run-meta { grid-column: 1 / -1; color: var(--muted); font-size: .85em; }
.badge { font-size: .8em; padding: 0 .4rem; border-radius: 999px; border: 1px solid currentColor; }
[data-state="running"] { color: var(--accent); } [data-state="finished"] { color: var(--ok); }
[data-state="failed"] { color: var(--bad); } [data-state="waiting"] { color: var(--wait); }
main { padding: 1rem 1.5rem; min-width: 0; overflow-y: auto; }
.run-head h2 { margin: 0 0 .2rem; font-size: 1.2rem; }
.run-head p { margin: .2rem 0; }
.state { font-weight: 600; }
.usage, .meta { color: var(--muted); }
.items { margin-top: .8rem; }
.items > * + * { margin-top: .6rem; }
button.more { display: block; margin: 0 auto; color: var(--muted); background: var(--panel); }
.item { content-visibility: auto; contain-intrinsic-size: auto 8rem; background: var(--panel); border: 1px solid var(--line); border-left: 4px solid var(--line); border-radius: 6px; padding: .5rem .8rem; }
.item header { display: flex; flex-wrap: wrap; gap: .2rem .8rem; align-items: baseline; }
.item h3 { font-size: .95rem; margin: 0; }
.item p { margin: .25rem 0; }
.item.request { border-left-color: var(--accent); }
.item.tool[data-status="done"], .item.tool[data-status="allowed"] { border-left-color: var(--ok); }
.item.tool[data-status="error"], .item.tool[data-status="timed"], .item.tool[data-status="denied"], .item.tool[data-status="aborted"], .item[data-status="failed"] { border-left-color: var(--bad); }
.item.tool[data-status="waiting"] { border-left-color: var(--wait); }
.status { font-weight: 600; }
.model { color: var(--muted); }
.at { margin-left: auto; color: var(--muted); font-size: .85em; font-variant-numeric: tabular-nums; }
pre { background: var(--code); padding: .4rem .6rem; border-radius: 4px; margin: .3rem 0; white-space: pre-wrap; word-break: break-word; max-height: 24rem; overflow: auto; font: 12.5px/1.4 ui-monospace, "SFMono-Regular", Menlo, monospace; }
.error { color: var(--bad); }
summary { cursor: pointer; color: var(--muted); }
.approval { margin: .5rem 0; padding: .5rem; border: 1px dashed var(--wait); border-radius: 6px; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.approval .ask { flex-basis: 100%; margin: 0; font-weight: 600; color: var(--wait); }
.approval details { flex-basis: 100%; }
.approval textarea { width: 100%; font: 12.5px ui-monospace, Menlo, monospace; background: var(--code); color: var(--text); border: 1px solid var(--line); border-radius: 4px; }
.approval input { flex: 1; min-width: 10rem; padding: .3rem; background: var(--panel); color: var(--text); border: 1px solid var(--line); border-radius: 4px; }
button { font: inherit; padding: .3rem 1rem; border-radius: 6px; border: 1px solid var(--line); cursor: pointer; }
button.allow { background: var(--ok); color: #fff; border-color: var(--ok); }
button.deny { background: var(--bad); color: #fff; border-color: var(--bad); }
@media (prefers-color-scheme: dark) { button.allow, button.deny { color: #111; } }
button:disabled { opacity: .5; cursor: default; }
.approval .error { flex-basis: 100%; margin: 0; }
.lane { margin-top: .5rem; padding-left: .8rem; border-left: 2px dashed var(--accent); }
.lane-head { font-weight: 600; color: var(--accent); }
.empty { color: var(--muted); }
`;

/** The page, with the nonce its content security policy allows for its style and script. */
export function pageHtml(nonce: string, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${style}</style>
</head>
<body>
<header class="top"><h1>tool-runner inspector</h1><p id="connection">connecting…</p><p id="capture" hidden>contents hidden (captureContent is off)</p></header>
<div class="layout">
<nav aria-label="Runs"><h2>Runs</h2><ol id="runs"></ol></nav>
<main id="run"></main>
</div>
<script nonce="${nonce}">${pageModelScript}${pageViewScript}${pageScrollScript}</script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
